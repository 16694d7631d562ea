"""The GPU check's CPU path (benchmarks/gpu_check.py --tiny) and the --device choice of fzmj-eval
and of the ppo: agents. The figures themselves are only meaningful on the GPU machine (docs/gpu.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fzmj.agents import AgentSpecError
from fzmj.agents.evaluate.cli import main as eval_main
from fzmj.agents.ppo_agent import PPOAgent, pretrained_path, resolve_device

ROOT = Path(__file__).resolve().parent.parent


def test_gpu_check_tiny_on_cpu(tmp_path):
    out = tmp_path / "gpu.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    p = subprocess.run(
        [sys.executable, "benchmarks/gpu_check.py", "--tiny", "--device", "cpu", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    report = json.loads(out.read_text())
    res = report["results"]
    assert set(res) == {"train/cpu", "inference/cpu", "eval/cpu", "search/cpu", "recipes/cpu"}
    assert not [k for k, v in res.items() if "error" in v or "skipped" in v], res
    train = res["train/cpu"]
    assert len(train["updates"]) == 2 and train["env_steps_per_s"] > 0 and 0 < train["rollout_share"] < 1
    assert res["inference/cpu"]["rollout step"]["batch"] == 8  # num_tables of the tiny config
    assert res["inference/cpu"]["rollout step"]["decisions_per_s"] > 0
    assert res["eval/cpu"]["hands_per_s"] > 0
    assert res["search/cpu"]["rollouts"] > 0 and res["search/cpu"]["rollouts_per_s"] > 0
    assert res["recipes/cpu"]["ok"] == 1 and res["recipes/cpu"]["recipes"]["ppo_oracle"]["hands"] == 8
    assert "| fzmj-train env steps/s (ppo_gpu.yaml) |" in p.stdout  # the summary table


def test_gpu_check_budget_skips_sections():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gpu_check
    finally:
        sys.path.pop(0)
    with open(os.devnull, "w") as devnull:
        report = gpu_check.run(["cpu"], ["eval", "search"], budget=-1, tiny=True, out=devnull)
    assert all("skipped" in v for v in report["results"].values())


def test_resolve_device(monkeypatch):
    monkeypatch.delenv("FZMJ_DEVICE", raising=False)
    assert resolve_device() == "cpu"
    import torch

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("FZMJ_DEVICE", "auto")
    assert resolve_device() == resolve_device("auto")
    with pytest.raises(AgentSpecError, match="auto, cpu, cuda or cuda:N"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(AgentSpecError, match="no CUDA device"):
            resolve_device("cuda")
        monkeypatch.setenv("FZMJ_DEVICE", "cuda:0")
        with pytest.raises(AgentSpecError, match="no CUDA device"):
            PPOAgent(pretrained_path())


def test_one_device_picker_one_message_in_both_layers():
    """The trainer's ``pick_device`` is the agents' ``resolve_device``: the same devices, the same
    line for a bad one (a ``ConfigError`` there, an ``AgentSpecError`` here)."""
    import torch

    from fzmj.train.config import ConfigError
    from fzmj.train.torch_setup import pick_device

    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device("auto") == torch.device(resolve_device("auto"))
    bad = ["tpu", "cuda:x", "cpu:0", ""] + ([] if torch.cuda.is_available() else ["cuda", "cuda:1"])
    for name in bad:
        with pytest.raises(AgentSpecError) as agents_error:
            resolve_device(name)
        with pytest.raises(ConfigError) as train_error:
            pick_device(name)
        assert str(train_error.value) == str(agents_error.value), name


def test_fzmj_eval_device(capsys, monkeypatch):
    monkeypatch.setenv("FZMJ_DEVICE", "cpu")  # restored after the test: fzmj-eval --device sets it
    with pytest.raises(SystemExit) as e:
        eval_main(["--agents", "pretrained", "random", "--hands", "4", "--device", "tpu"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--device" in err[0] and "auto, cpu, cuda" in err[0]
    assert eval_main(["--agents", "pretrained", "random", "--hands", "4", "--device", "auto", "--no-progress"]) == 0
    import torch

    assert os.environ["FZMJ_DEVICE"] == ("cuda" if torch.cuda.is_available() else "cpu")


def test_bench_rollout_host_runs_and_reports_every_thread_count():
    # the host work of a GPU rollout against the threads (benchmarks/bench_rollout_host.py, docs/gpu.md)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_rollout_host
    finally:
        sys.path.pop(0)
    assert bench_rollout_host.thread_counts(1) == [1] and bench_rollout_host.thread_counts(6) == [1, 2, 4, 6]
    import numba

    res = bench_rollout_host.measure(
        rows=256, runs=1, threads=bench_rollout_host.thread_counts(min(2, numba.config.NUMBA_NUM_THREADS))
    )
    for row in res.values():
        assert row[1]["speedup"] == 1.0 and all(r["rows_per_s"] > 0 for r in row.values())


@pytest.mark.parametrize("argv", [["--rows", "0"], ["--runs", "0"], ["--rows", "many"]])
def test_bench_rollout_host_refuses_bad_sizes_in_one_line(argv, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_rollout_host
    finally:
        sys.path.pop(0)
    with pytest.raises(SystemExit) as e:
        bench_rollout_host.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if "error:" in line] == [err[-1]]  # argparse's usage, then one error line
