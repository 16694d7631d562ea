"""Cold start: ``fzmj-warmup``, the compile notice, where the Numba cache lives, one compile per
kernel (fzmj_env/warmup.py, fzmj_env/_numba_cache.py, fzmj_env/core/jit.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import fzmj_env
import fzmj_env._numba_cache as cache_guard
from fzmj_env import warmup
from fzmj_env.core.jit import njit
from fzmj_env.observe import _oracle_into

PKG = Path(fzmj_env.__file__).resolve().parent


def _usage_error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as e:
        warmup.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-warmup: error: "), err
    return err[0]


def test_warmup_rejects_bad_arguments(capsys):
    assert "unknown target 'nope'" in _usage_error(capsys, ["nope"])
    assert "not both" in _usage_error(capsys, ["--all", "hand"])
    assert "unrecognized arguments" in _usage_error(capsys, ["--frobnicate"])
    with pytest.raises(ValueError, match="unknown warm-up target 'x'"):
        warmup.warmup(["x"])


def test_warmup_help_lists_the_targets(capsys):
    with pytest.raises(SystemExit) as e:
        warmup.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--check" in out and all(t in out for t in warmup.TARGETS)


def test_warmup_runs_a_target_and_summarises(capsys):
    assert warmup.main(["hand"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fzmj-warmup: Numba cache in ")
    assert out[1].split()[0] == "hand" and "kernel versions compiled" in out[1]
    assert out[-1].startswith("fzmj-warmup: ") and "compiled in" in out[-1]
    # the hand kernels are now in memory (and in the cache): nothing left to compile
    assert warmup.main(["hand", "--check"]) == 0
    rows = warmup.warmup(["hand"])
    assert rows[0]["target"] == "hand" and rows[0]["compiled"] == 0


def test_targets_above_warm_the_networks_and_the_trainer():
    """``heuristic``, ``policy``, ``train`` and ``belief`` come from the layers above (pyproject's
    fzmj.warmup entry points): they are default targets, and they reach the kernels a first
    fzmj-train, fzmj-eval or fzmj-belief would compile."""
    from fzmj.agents.binary_linear import _gather_sum, _scatter_sum, active_indices
    from fzmj.agents.heuristic import heuristic_kernel
    from fzmj.train.belief_data import hidden_labels
    from fzmj.train.selfplay_buffer import gae_chains

    above = ["heuristic", "policy", "train", "belief"]
    assert warmup.all_targets()[: len(warmup.TARGETS)] == list(warmup.TARGETS)
    assert set(above) <= set(warmup.default_targets()) and "threads" not in warmup.default_targets()
    warmup.warmup(above)
    for kernel in (heuristic_kernel, active_indices, _gather_sum, _scatter_sum, gae_chains, hidden_labels):
        assert kernel.signatures, kernel
    assert [r["compiled"] for r in warmup.warmup(above)] == [0] * 4


def test_made_up_batch_gives_the_types_of_real_play():
    """The ``features`` and ``heuristic`` targets run on :func:`warmup.synthetic_batch` (so they
    compile apart from the engine): real observations then need no other kernel version."""
    code = (
        "from fzmj_env import warmup, features as F; from fzmj.agents import heuristic as H\n"
        "from fzmj_env.vector import VectorEnv\n"
        "warmup.warmup(['features', 'heuristic'])\n"
        "kernels = [F.feature_planes_batch, F.feature_planes_one, H.heuristic_kernel]\n"
        "before = [list(k.signatures) for k in kernels]\n"
        "obs, mask, _ = VectorEnv(3, seed=1).reset()\n"
        "F.with_hand_features(obs); F.feature_planes(obs); H.HeuristicAgent().act(obs, mask)\n"
        "assert [list(k.signatures) for k in kernels] == before, 'real play needed another kernel version'\n"
        "print('same')"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "same", res.stderr[-800:]


def test_has_cached_code_of_a_cold_cache_without_compiling(tmp_path):
    """The trainer's cold-cache check (``_shipped_kernels.has_cached_code``) reads the cache index:
    an empty cache (shipped kernels off) has no code for the batched step, and nothing compiles."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "FZMJ_SHIPPED_KERNELS": "0", "FZMJ_WARM_AHEAD": "0"}
    code = (
        "from fzmj_env import _shipped_kernels as S; from fzmj_env.vector import _step_range\n"
        "print(S.has_cached_code(_step_range), len(_step_range.signatures))"
    )
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert res.stdout.split() == ["False", "0"]
    from fzmj_env.vector import VectorEnv, _step_range

    v = VectorEnv(1, seed=0)
    v.step(v.reset()[1].argmax(axis=1))
    assert fzmj_env._shipped_kernels.has_cached_code(_step_range)  # this session's cache is warm


def test_jobs_warm_in_child_processes(capsys):
    assert "--jobs: a positive whole number or auto" in _usage_error(capsys, ["--jobs", "0"])
    assert "--jobs: a positive whole number or auto" in _usage_error(capsys, ["--jobs", "two"])
    assert warmup.main(["--jobs", "2", "hand", "policy"]) == 0
    out = capsys.readouterr().out
    assert "2 processes compiled in" in out and "fzmj-warmup: 0 kernel versions compiled" in out
    with pytest.raises(RuntimeError, match="unknown target 'nope'"):
        warmup.warm_in_processes([["hand"], ["nope"]])


def test_cache_dirs_follow_numba_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "shared"))
    dirs = cache_guard.numba_cache_dirs(PKG)
    assert dirs and all(d.parent == tmp_path / "shared" for d in dirs)
    assert {d.name.rsplit("_", 1)[0] for d in dirs} >= {"fzmj_env", "core"}


def test_header_names_the_cache_of_kernels_warmed_above_fzmj_env(tmp_path, monkeypatch):
    """``threads`` warms the heuristic's kernel (fzmj/agents): its cache folder is named too."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "shared"))
    (agents,) = warmup._dirs_above(["threads"])
    assert Path(agents).parent == tmp_path / "shared" and Path(agents).name.startswith("agents_")
    assert warmup._dirs_above(["hand", "features"]) == set()


def test_cache_guard_clears_a_stale_numba_cache_dir(tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR set, the guard checks the cache files there, not in __pycache__."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text("x = 1\n")
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "shared"))
    (cache_dir,) = cache_guard.numba_cache_dirs(pkg)
    stale = cache_dir / "mod.f-1.py311.nbi"
    assert cache_guard.clear_stale_cache(pkg)  # no stamp yet
    stale.write_bytes(b"x")
    assert not cache_guard.clear_stale_cache(pkg) and stale.exists()
    (pkg / "mod.py").write_text("x = 2\n")
    assert cache_guard.clear_stale_cache(pkg) and not stale.exists()
    assert not (pkg / "__pycache__").exists() or not any((pkg / "__pycache__").glob("*.nb*"))


def test_compile_notice_only_when_compiling(tmp_path):
    """One stderr line in a process whose kernels compile; none once they are cached."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"))
    env.pop("FZMJ_COMPILE_NOTICE", None)
    code = "import fzmj_env; print(fzmj_env.is_win('11m', '5s'))"
    cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert cold.stdout.strip() == "True"
    assert cold.stderr.count("fzmj: compiling the rules engine") == 1, cold.stderr
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "compiling" not in warm.stderr, warm.stderr
    quiet = dict(env, NUMBA_CACHE_DIR=str(tmp_path / "nc2"), FZMJ_COMPILE_NOTICE="0")
    res = subprocess.run([sys.executable, "-c", code], env=quiet, capture_output=True, text=True, check=True)
    assert "compiling" not in res.stderr


@njit
def _add(a, b):
    return a + b


@njit
def _calls_with_mixed_ints(x32, flag):
    s = _add(x32, 3) + _add(np.int64(5), -1) + _add(np.int8(2), x32)
    if flag:
        s += _add(x32, x32)
    return s


def test_one_compile_per_kernel_for_mixed_integer_calls():
    """int32 values, int8 values and literal constants share one int64 version of the callee."""
    assert _calls_with_mixed_ints(np.int32(7), True) == 10 + 4 + 9 + 14
    assert len(_add.signatures) == 1
    assert _add.signatures[0] == (numba.int64, numba.int64)


@njit
def _oracle_only(buf, out):
    _oracle_into(buf[0], 0, out, 0)  # typed by out's type: the overloads in observe.py


def test_the_oracle_compiles_only_where_asked_for():
    """A read-only oracle buffer (``VectorEnv(oracle=False)``) types the oracle calls of
    ``observe_one`` as nothing: the oracle encoder is not compiled into the step kernels."""
    from fzmj_env.core.state import new_state
    from fzmj_env.encode import ORACLE_CHANNELS
    from fzmj_env.vector import VectorEnv

    assert not VectorEnv(1)._oracle.flags.writeable and VectorEnv(1, oracle=True)._oracle.flags.writeable
    buf = new_state(1)
    off = np.zeros((1, ORACLE_CHANNELS, 27), np.int8)
    off.flags.writeable = False
    on = np.zeros((1, ORACLE_CHANNELS, 27), np.int8)
    _oracle_only(buf, off)
    _oracle_only(buf, on)
    ir = {sig[1].mutable: _oracle_only.inspect_llvm(sig) for sig in _oracle_only.signatures}
    assert "oracle_v2" not in ir[False] and "oracle_v2" in ir[True]


def test_threads_target_reaches_the_heuristics_threaded_kernel():
    """``fzmj-warmup threads`` also warms ``fzmj.agents``' threaded heuristic kernel, through the
    ``fzmj.warmup`` entry point (fzmj_env never imports fzmj.agents: docs/layers.md)."""
    code = (
        "from fzmj_env import warmup; warmup.warmup(['threads']); "
        "from fzmj.agents.heuristic import heuristic_kernel_parallel as k; print(len(k.signatures))"
    )
    env = {**os.environ, "NUMBA_NUM_THREADS": "2"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(res.stdout.split()[-1]) >= 1  # compiled, or loaded from the cache: either way reached


def test_the_trainers_compile_ahead_steps_aside(monkeypatch, capsys):
    """``fzmj-train``'s compile ahead (fzmj/train/warm.py): nothing where the cache is warm or it is
    turned off; where the children fail, one line and the run compiles as it goes."""
    from fzmj.train import warm
    from fzmj_env import _shipped_kernels

    assert warm.warm_ahead(oracle=False) is False  # this session's cache is warm
    monkeypatch.setenv("FZMJ_WARM_AHEAD", "0")
    monkeypatch.setattr(_shipped_kernels, "has_cached_code", lambda d: False)
    assert warm.warm_ahead(oracle=False) is False  # turned off: not even looked at
    monkeypatch.setenv("FZMJ_WARM_AHEAD", "1")
    monkeypatch.setattr(warm.os, "cpu_count", lambda: 2)

    def failing(groups, host=False):
        raise RuntimeError("fzmj-warmup vector: boom")

    monkeypatch.setattr(warmup, "warm_in_processes", failing)
    assert warm.warm_ahead(oracle=True) is False
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "fzmj: the compile ahead failed (fzmj-warmup vector: boom); compiling as the run goes"
