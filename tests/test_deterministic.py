"""Deterministic mode (issue 58, fzmj/train/deterministic.py): fzmj-train runs itself again in a
process whose environment pins torch's kernels, MKL and Numba to code every x86-64 CPU runs alike;
that process checks the pins took effect. benchmarks/bench_deterministic.py shows the digits do not
move across the instruction sets (a few training runs: too slow for a unit test)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fzmj.train import deterministic


def test_the_pinned_environment_overrides_what_the_user_set(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    monkeypatch.setenv("MKL_CBWR", "AVX512")
    monkeypatch.setenv("NUMBA_CPU_FEATURES", "+avx512f")
    env = deterministic.pinned_env()
    assert {k: env[k] for k in deterministic.PINNED} == deterministic.PINNED
    assert "NUMBA_CPU_FEATURES" not in env and env["PATH"] == os.environ["PATH"]
    assert not deterministic.is_pinned()


def test_fzmj_train_deterministic_relaunches_pinned(monkeypatch, tmp_path):
    import fzmj.train.ppo_selfplay as T

    seen = {}

    def call(cmd, env):
        seen.update(cmd=cmd, env=env)
        return 0

    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    monkeypatch.setattr(deterministic.subprocess, "call", call)
    argv = ["--config", "ppo_smoke", "--set", f"runs_dir={tmp_path}", "--deterministic", "--no-progress"]
    assert T.main(argv) == 0
    assert seen["cmd"] == [sys.executable, "-m", "fzmj.train.ppo_selfplay", *argv]
    assert seen["env"]["ATEN_CPU_CAPABILITY"] == "default" and seen["env"]["NUMBA_CPU_NAME"] == "generic"
    assert not any(tmp_path.iterdir())  # the unpinned process wrote nothing


def test_an_unpinned_process_refuses_to_call_itself_deterministic():
    with pytest.raises(RuntimeError, match="start the process with ATEN_CPU_CAPABILITY=default"):
        deterministic.apply(0)


def test_the_pinned_process_runs_portable_kernels_on_fixed_threads():
    code = (
        "import torch\nfrom fzmj.train import deterministic as d\nprint(d.apply(0))\n"
        "print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads(), torch.backends.mkldnn.enabled)"
    )
    env = deterministic.pinned_env({**os.environ, "ATEN_CPU_CAPABILITY": "avx512"})
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    line, state = r.stdout.strip().splitlines()
    assert line.startswith("deterministic mode: portable torch kernels") and "2 torch threads" in line
    assert state == "DEFAULT 2 False"
