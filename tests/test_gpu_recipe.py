"""benchmarks/gpu_recipe.py on the CPU at tiny sizes: it trains the strongest recipe, stops at its
budget with a checkpoint, resumes where it stopped (also from the brought-back files alone, as on a
fresh machine) and brings back the checkpoints, the curve and a status (docs/gpu.md)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import signal
import subprocess
from pathlib import Path

from fzmj.agents.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("gpu_recipe", ROOT / "benchmarks" / "gpu_recipe.py")
gr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gr)


def test_the_command_is_the_recipe_then_a_resume(tmp_path):
    run = tmp_path / "runs" / "r"
    fresh = gr.train_command(run, gr.GPU_SIZE)
    assert fresh[fresh.index("--config") + 1] == "ppo_oracle" and "--overwrite" in fresh
    for key in [*gr.RECIPE, "num_tables=4096", "num_minibatches=16", "total_timesteps=130_000_000"]:
        assert key in fresh
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.pt").write_bytes(b"")
    assert gr.train_command(run, gr.GPU_SIZE)[-2:] == ["--resume", str(run / "checkpoints" / "latest.pt")]


def test_a_stopped_call_resumes_from_the_brought_back_files(tmp_path, monkeypatch):
    """Call 1 is stopped after its second checkpoint (SIGINT, as at its budget); call 2, on a
    'fresh machine' holding only the brought-back latest.pt, best.pt and bc.pt, finishes the run."""
    real = gr.run_until

    def stop_after_second_save(cmd, stop_at, log):
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        target = tmp_path / "a" / "gpu_res32" / "checkpoints" / "update_000004.pt"
        while proc.poll() is None and not target.exists():
            try:
                proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
        proc.send_signal(signal.SIGINT)
        return proc.wait()

    sets = ["--set", "total_timesteps=4096", "--set", "save_every=2", "--set", "eval_paired_every=2"]
    monkeypatch.setattr(gr, "run_until", stop_after_second_save)
    assert gr.main(["--tiny", "--runs", str(tmp_path / "a"), "--out", str(tmp_path / "o1"), *sets]) == 0
    st = json.loads((tmp_path / "o1" / "status.json").read_text())
    assert not st["finished"] and st["update"] >= 4 and st["trainer_exit_code"] == 130
    assert {"latest.pt", "best.pt", "paired.jsonl", "curve.png", "train.log"} <= set(st["brought_back"])
    fresh = tmp_path / "b" / "gpu_res32" / "checkpoints"
    fresh.mkdir(parents=True)
    for name in ("latest.pt", "best.pt", "bc.pt"):  # bc.pt: the KL pull's clone
        shutil.copy(tmp_path / "o1" / name, fresh / name)
    monkeypatch.setattr(gr, "run_until", real)
    assert gr.main(["--tiny", "--runs", str(tmp_path / "b"), "--out", str(tmp_path / "o2"), "--budget", "400"]) == 0
    st = json.loads((tmp_path / "o2" / "status.json").read_text())
    assert st["finished"] and st["updates"] == 8 and st["trainer_exit_code"] == 0
    assert load_checkpoint(tmp_path / "o2" / "best.pt")["best"]["update"] % 2 == 0
    assert "--resume" in (tmp_path / "o2" / "trainer_console.txt").read_text()
