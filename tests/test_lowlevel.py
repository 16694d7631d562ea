"""The Numba intrinsics behind the batch kernels' speed (core/intrinsics.py) and the guard that
keeps Numba's on-disk cache consistent with the sources (fzmj_env/_numba_cache.py)."""

from __future__ import annotations

import numba
import numpy as np
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
