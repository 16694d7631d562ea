"""Belief planes as a policy input, measured (issue 30, "Uses": policy input).

Trains the documented recipe on observation v3 with and without the belief planes
(``belief_planes=true``: 14 planes of the shipped belief model's danger, P(ready) and P(wins on
k) per other seat, fzmj/agents/belief_net.py), from the heuristic's clone (``ppo_default``) and
from scratch (``ppo_scratch``), all at the same number of env steps and the same seed, then
pairs each run against the heuristic in the same seat and each belief run against its control,
on the same walls (``fzmj-eval --paired``, seeds never used in tuning).

    python benchmarks/studies/belief_input.py                       # 3 M steps each, 4,000 hands x 3 seeds
    python benchmarks/studies/belief_input.py --steps 10000000 --only clone
    python benchmarks/studies/belief_input.py --eval-only           # the runs already in --runs-dir

A run already trained to ``--steps`` in ``--runs-dir`` is reused (delete it to train again).
Prints one Markdown table; ``--json`` keeps every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (31337, 27182, 16180)
VARIANTS = {  # name: (config, extra --set, the control it is paired with)
    "clone_v3": ("ppo_default", ["obs_version=3"], None),
    "clone_v3_belief": ("ppo_default", ["obs_version=3", "belief_planes=true"], "clone_v3"),
    "scratch_v3": ("ppo_scratch", ["obs_version=3"], None),
    "scratch_v3_belief": ("ppo_scratch", ["obs_version=3", "belief_planes=true"], "scratch_v3"),
}


def checkpoint(runs: Path, name: str) -> Path:
    return runs / name / "checkpoints" / "latest.pt"


def trained(path: Path, steps: int) -> bool:
    """Whether the run there is a finished run of ``steps`` env steps (the trainer rounds the
    steps down to whole updates)."""
    if not path.is_file():
        return False
    from fzmj.agents.checkpoint import load_checkpoint

    data = load_checkpoint(path)
    cfg = data["config"]
    per_update = cfg["num_tables"] * cfg["num_steps"]
    return cfg["total_timesteps"] == steps and data["global_step"] + per_update > steps


def train(runs: Path, name: str, steps: int, threads: int) -> float:
    config, sets, _ = VARIANTS[name]
    cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--config", config]
    for s in [*sets, f"total_timesteps={steps}", f"runs_dir={runs}", f"run_name={name}", "eval_every=0",
              "save_every=100000", "log_every=20", f"torch_threads={threads}"]:  # fmt: skip
        cmd += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    t0 = time.perf_counter()
    print(f"belief_input: training {name} ({steps:,} steps): {' '.join(cmd[2:])}", flush=True)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    return time.perf_counter() - t0


def paired(agent: str, ref: str, seed: int, hands: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eval.json"
        cmd = [str(Path(sys.executable).parent / "fzmj-eval"), "--agents", agent, "heuristic", "--paired", ref,
               "--hands", str(hands), "--seed", str(seed), "--agent-seed", str(seed), "--no-progress",
               "--out", str(out)]  # fmt: skip
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())["paired"]


def ms_per_decision(path: Path, decisions: int = 300) -> float:
    """Median ms of one decision (batch 1, one torch thread) of the checkpoint's agent, over
    real v3 observations: the cost a user pays in ``fzmj-eval`` or behind a bot."""
    import numpy as np
    import torch

    from fzmj.agents.ppo_agent import PPOAgent
    from fzmj_env import VectorEnv

    torch.set_num_threads(1)
    agent = PPOAgent(str(path))
    env = VectorEnv(32, seed=5, obs_version=3)
    obs, mask, _ = env.reset()
    times = []
    while len(times) < decisions:
        for i in range(len(obs)):
            t0 = time.perf_counter()
            agent.act(obs[i : i + 1], mask[i : i + 1])
            times.append(time.perf_counter() - t0)
        obs, mask = env.step(agent.act(obs, mask))[:2]
    return round(1000 * float(np.median(times)), 2)


def cell(p: dict) -> str:
    lo, hi = p["ci95"]
    return f"{p['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}]" + ("" if p.get("clean", True) else " (faults)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3_000_000, help="env steps per run (default 3 M)")
    ap.add_argument("--hands", type=int, default=4000, help="hands per paired evaluation (default 4,000)")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="evaluation seeds")
    ap.add_argument("--runs-dir", type=Path, default=ROOT / "runs" / "belief_input")
    ap.add_argument("--only", choices=("clone", "scratch"), help="one of the two starts")
    ap.add_argument("--threads", type=int, default=2, help="threads of each training run (default 2)")
    ap.add_argument("--eval-only", action="store_true", help="evaluate the runs there, train nothing")
    ap.add_argument("--json", type=Path, help="write every figure here")
    a = ap.parse_args(argv)
    names = [n for n in VARIANTS if a.only is None or n.startswith(a.only)]
    report = {"steps": a.steps, "hands": a.hands, "seeds": a.seeds, "train_s": {}, "rows": []}
    for name in names:
        if trained(checkpoint(a.runs_dir, name), a.steps):
            print(f"belief_input: {name}: trained already ({a.steps:,} steps)", flush=True)
        elif a.eval_only:
            ap.error(f"{name}: no run of {a.steps:,} steps in {a.runs_dir}")
        else:
            report["train_s"][name] = round(train(a.runs_dir, name, a.steps, a.threads), 1)
    for name in names:
        ppo = f"ppo:{checkpoint(a.runs_dir, name)}"
        control = VARIANTS[name][2]
        row = {"run": name, "vs heuristic": [paired(ppo, "heuristic", s, a.hands) for s in a.seeds]}
        row["ms_per_decision"] = ms_per_decision(checkpoint(a.runs_dir, name))
        if control:
            ref = f"ppo:{checkpoint(a.runs_dir, control)}"
            row["vs control"] = [paired(ppo, ref, s, a.hands) for s in a.seeds]
        report["rows"].append(row)
        print(
            f"belief_input: {name}: "
            + json.dumps({k: [cell(p) for p in v] for k, v in row.items() if k.startswith("vs")})
        )
    seeds = " / ".join(map(str, a.seeds))
    print(f"\n{a.steps:,} env steps per run; paired, {a.hands:,} hands per seed ({seeds}), three heuristic opponents")
    print("| run | − heuristic, same seat | − its control (same recipe, no belief planes) | ms / decision |")
    print("| --- | --- | --- | ---: |")
    for row in report["rows"]:
        vs_control = " / ".join(cell(p) for p in row.get("vs control", [])) or "—"
        vs_heuristic = " / ".join(cell(p) for p in row["vs heuristic"])
        print(f"| {row['run']} | {vs_heuristic} | {vs_control} | {row['ms_per_decision']} |")
    if a.json:
        a.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
