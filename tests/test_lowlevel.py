"""The Numba intrinsics behind the batch kernels' speed (core/intrinsics.py) and the guard that
keeps Numba's on-disk cache consistent with the sources (fzmj_env/_numba_cache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import njit

import fzmj_env._numba_cache as cache_guard
from fzmj_env.core.intrinsics import borrow, load8, prefetch, store8
from fzmj_env.core.state import new_state


@njit
def _load_all(a, offsets, out):
    for i in range(offsets.shape[0]):
        out[i] = load8(a, offsets[i])


@njit
def _store(a, offset, value):
    store8(a, offset, value)


@njit
def _load_hand(buf, t, seat):
    tb = buf[t]
    return load8(tb.hand, seat * 27 + 19)


@njit
def _borrow_and_write(a):
    b = borrow(a)
    row = b[1]
    row[2] = 7
    return b.sum()


@njit
def _prefetch_rows(a):
    for i in range(a.shape[0]):
        prefetch(a, i, a.shape[1] * a.itemsize)
    return a.sum()


def test_load8_is_little_endian_bytes_at_any_offset():
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, size=(5, 27), dtype=np.int8)
    offsets = np.arange(0, a.size - 7)
    got = np.zeros(len(offsets), dtype=np.uint64)
    _load_all(a, offsets, got)
    flat = a.reshape(-1).view(np.uint8)
    want = [int.from_bytes(flat[o : o + 8].tobytes(), "little") for o in offsets]
    assert [int(x) for x in got] == want


def test_store8_writes_exactly_eight_bytes():
    for offset in (0, 5, 19, 27 * 3 - 8):
        a = np.full((3, 27), 9, dtype=np.int8)
        _store(a, offset, np.uint64(0x0807060504030201))
        flat = a.reshape(-1)
        assert list(flat[offset : offset + 8]) == [1, 2, 3, 4, 5, 6, 7, 8]
        rest = np.delete(flat, np.arange(offset, offset + 8))
        assert (rest == 9).all()


def test_load8_reads_record_fields():
    buf = new_state(2)
    buf["hand"][1, 2] = np.arange(27) % 5
    word = _load_hand(buf, 1, 2)
    assert int(word) == int.from_bytes((np.arange(19, 27) % 5).astype(np.uint8).tobytes(), "little")


def test_borrowed_view_is_the_same_memory():
    a = np.zeros((3, 4), dtype=np.int64)
    assert _borrow_and_write(a) == 7
    assert a[1, 2] == 7


def test_prefetch_changes_nothing():
    a = np.arange(40, dtype=np.int64).reshape(4, 10)
    before = a.copy()
    assert _prefetch_rows(a) == before.sum()
    assert np.array_equal(a, before)


def test_cache_guard_clears_numba_files_when_a_source_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")  # the in-tree cache (__pycache__)
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    src = pkg / "mod.py"
    src.write_text("x = 1\n")
    stale = [pkg / "__pycache__" / "mod.f-1.py311.nbi", pkg / "__pycache__" / "mod.f-1.py311.1.nbc"]
    keep = pkg / "__pycache__" / "mod.cpython-311.pyc"
    for f in stale + [keep]:
        f.write_bytes(b"x")
    dep = tmp_path / "dep"
    dep.mkdir()
    (dep / "kernels.py").write_text("y = 1\n")

    def clear():
        return cache_guard.clear_stale_cache(pkg, depends_on=(dep,))

    assert clear()  # no stamp yet: cleared
    assert not any(f.exists() for f in stale) and keep.exists()
    for f in stale:
        f.write_bytes(b"x")
    assert not clear()  # same sources: kept
    assert all(f.exists() for f in stale)
    src.write_text("x = 2\n")
    assert clear()  # a source changed: cleared
    assert not any(f.exists() for f in stale) and keep.exists()
    for f in stale:
        f.write_bytes(b"x")
    (dep / "kernels.py").write_text("y = 2\n")
    assert clear()  # a package its kernels call changed: cleared too
    assert not any(f.exists() for f in stale)


def _run_python(code: str, **env) -> subprocess.CompletedProcess:
    root = Path(__file__).resolve().parent.parent
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]), **env)
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=full, capture_output=True, text=True, timeout=300)


def test_cache_guard_hashes_each_folder_once_per_process():
    # each package's guard names the packages below it: fzmj_env was hashed three times before
    p = _run_python(
        "import fzmj.train; from fzmj_env import _numba_cache as c\n"
        "print(sorted((f.name, n) for f, n in c.hash_counts.items()))"
    )
    assert p.returncode == 0, p.stderr
    counts = dict(eval(p.stdout))
    assert set(counts) == {"fzmj_env", "agents", "train"} and set(counts.values()) == {1}, counts


def test_cache_guard_memo_sees_a_file_changed_in_the_process(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    src = pkg / "mod.py"
    src.write_text("x = 1\n")
    old = time.time_ns() - 10 * cache_guard._RACY_NS
    os.utime(src, ns=(old, old))  # an old file: its digest is memoised
    first = cache_guard.source_fingerprint([pkg])
    assert cache_guard.source_fingerprint([pkg]) == first
    assert cache_guard.hash_counts[pkg.resolve()] == 1  # the second call used the memo
    src.write_text("x = 22\n")
    assert cache_guard.source_fingerprint([pkg]) != first


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
def test_a_damaged_numba_cache_file_is_rebuilt(tmp_path, suffix):
    # a truncated cache file used to fail every command with a bare "EOFError: Ran out of input"
    code = "from fzmj_env.seeding import game_seed; print(game_seed(1, 2, 3))"
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "FZMJ_COMPILE_NOTICE": "0"}
    first = _run_python(code, **env)
    assert first.returncode == 0, first.stderr
    (damaged,) = tmp_path.rglob(f"seeding.game_seed-*{suffix}")
    data = damaged.read_bytes()
    damaged.write_bytes(data[: len(data) // 2] if suffix == ".nbi" else b"")
    again = _run_python(code, **env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    (line,) = again.stderr.splitlines()
    assert "could not be read" in line and damaged.name in line and "compiling it again" in line
    third = _run_python(code, **env)  # rebuilt and cached again: silent
    assert third.returncode == 0 and third.stdout == first.stdout and third.stderr == ""
