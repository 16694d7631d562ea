"""The strongest recipe on one GPU, in calls of at most 600 s that resume each other.

The recipe: ``configs/ppo_oracle.yaml`` with the tile network and its settings of issue 47
(``network=resnet res_channels=32 res_blocks=2 learning_rate=0.00025 ent_coef=0.03``), 130 M env
steps, scaled for one big GPU and a many-core host the way ``ppo_gpu.yaml`` scales the default
recipe: 16x the tables (4,096) over every core, rollouts of 16 steps (65,536 env steps an update,
1,983 updates) and 16 minibatches, so each gradient step still sees about 4,096 decisions and the
run takes the CPU recipe's number of gradient steps (1,983 x 16 x 2 = 7,934 x 4 x 2); the clone,
the KL pull, the oracle's fade and the learning rate are the recipe's. The paired curve: 8 points
of 8,000 hands on the reserved seeds, so ``best.pt`` is kept (docs/training.md, "Picking a checkpoint").

Each call:

1. resumes ``<runs>/<name>`` from its ``latest.pt`` if it has one, else starts it;
2. trains until ``--budget`` seconds after the call began, then stops the trainer with SIGINT
   (it saves a checkpoint at the next safe point and exits 130);
3. copies ``checkpoints/latest.pt``, ``best.pt`` and ``bc.pt``, ``paired.jsonl``, ``train.log`` and
   the TensorBoard events to ``--out`` (default ``$OUT``), draws ``curve.png`` from
   ``paired.jsonl`` and writes ``status.json`` (steps done, finished or not, the call's seconds).

Call it again until ``status.json`` says ``"finished": true``. On the same machine the run folder
is still there; on a fresh one, put the brought-back ``latest.pt``, ``best.pt`` and ``bc.pt`` (the
clone the KL pull reads) into ``runs/<name>/checkpoints/`` and carry that folder: the resume needs
only those.

    benchmarks/gpu_recipe.sh --wheels .whl --out "$OUT"               # on the GPU machine
    python benchmarks/gpu_recipe.py --tiny --budget 60 --out /tmp/o   # tiny sizes, on a CPU
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = [
    "network=resnet",
    "res_channels=32",
    "res_blocks=2",
    "learning_rate=0.00025",
    "ent_coef=0.03",
]
GPU_SIZE = [
    "device=cuda",
    "num_tables=4096",
    "num_steps=16",
    "num_minibatches=16",
    "total_timesteps=130_000_000",
    "env_threads=0",
    "torch_threads=0",
    "save_every=50",
    "eval_every=0",
    "eval_paired_every=248",
    "eval_paired_hands=8000",  # in this process: 5-10 s a point (about 3,000 hands/s, docs/gpu.md); worker
    "eval_workers=1",  # processes would be spawned (torch is loaded), a few seconds each, 8 times a point
]
TINY_SIZE = [
    "device=cpu",
    "num_tables=32",
    "num_steps=16",
    "num_minibatches=2",
    "total_timesteps=32768",  # 64 updates
    "bc_decisions=2000",
    "bc_eval_hands=0",
    "save_every=8",
    "eval_every=0",
    "eval_paired_every=16",
    "eval_paired_hands=32",
]
STOP_MARGIN_S = 45  # from SIGINT to the trainer's exit: the update in flight, a paired point, the save
BRING_BACK = ("paired.jsonl", "train.log", "checkpoints/latest.pt", "checkpoints/best.pt", "checkpoints/bc.pt")


def train_command(run_dir: Path, sets: list[str]) -> list[str]:
    """The trainer's command: a resume of the run's latest.pt if there is one, else a fresh start."""
    latest = run_dir / "checkpoints" / "latest.pt"
    cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--no-progress"]
    if latest.is_file():
        return [*cmd, "--resume", str(latest)]
    fresh = [*RECIPE, *sets, f"runs_dir={run_dir.parent}", f"run_name={run_dir.name}"]
    # --overwrite: a call stopped before the first PPO checkpoint (in the clone) left only bc.pt there
    return [*cmd, "--config", "ppo_oracle", "--overwrite", *[a for s in fresh for a in ("--set", s)]]


def run_until(cmd: list[str], stop_at: float, log) -> int:
    """Run ``cmd`` until it exits, or SIGINT it at ``stop_at`` (monotonic) and wait for it."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=max(1.0, stop_at - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        proc.wait()
    return proc.returncode


def bring_back(run_dir: Path, out: Path) -> list[str]:
    """Copy the run's checkpoints, curve and logs to ``out``; draw ``curve.png``. Returns the names."""
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for rel in BRING_BACK:
        if (run_dir / rel).is_file():
            shutil.copy2(run_dir / rel, out / Path(rel).name)
            names.append(Path(rel).name)
    for events in run_dir.glob("events.out.tfevents.*"):
        shutil.copy2(events, out / events.name)
        names.append(events.name)
    if (run_dir / "paired.jsonl").is_file():
        sys.path.insert(0, str(ROOT / "benchmarks" / "studies"))
        from oracle_curves import draw, read_curve

        draw({run_dir.name: read_curve(run_dir)}, out / "curve.png")
        names.append("curve.png")
    return names


def status(run_dir: Path, rc: int, seconds: float) -> dict:
    from fzmj.agents.checkpoint import load_checkpoint

    latest = run_dir / "checkpoints" / "latest.pt"
    data = load_checkpoint(latest) if latest.is_file() else {}
    cfg = data.get("config") or {}
    steps_per_update = cfg.get("num_tables", 1) * cfg.get("num_steps", 1)
    last = max(1, cfg.get("total_timesteps", 1) // steps_per_update)
    return {
        "trainer_exit_code": rc,
        "update": data.get("update", 0),
        "updates": last,
        "global_step": data.get("global_step", 0),
        "finished": bool(data) and data.get("update", 0) >= last,
        "call_seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, default=ROOT / "runs", help="runs folder (default: runs/ of this checkout)")
    ap.add_argument("--name", default="gpu_res32", help="run name (default gpu_res32)")
    ap.add_argument("--out", type=Path, default=os.environ.get("OUT"), help="where to copy the results (default $OUT)")
    ap.add_argument("--budget", type=float, default=540, help="seconds this call may take (default 540)")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes on the CPU (a check that every step runs)")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="one more config key=value (repeatable)")
    a = ap.parse_args(argv)
    if a.out is None:
        ap.error("--out DIR (or $OUT) is needed: the results are copied there")
    t0 = time.monotonic()
    run_dir = a.runs.resolve() / a.name
    cmd = train_command(run_dir, [*(TINY_SIZE if a.tiny else GPU_SIZE), *a.sets])
    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "trainer_console.txt", "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        rc = run_until(cmd, t0 + a.budget - STOP_MARGIN_S, log)
    names = bring_back(run_dir, a.out)
    st = status(run_dir, rc, time.monotonic() - t0)
    st["brought_back"] = names
    (a.out / "status.json").write_text(json.dumps(st, indent=1) + "\n")
    print(json.dumps(st), flush=True)
    return 0 if rc in (0, 130) else 1


if __name__ == "__main__":
    raise SystemExit(main())
