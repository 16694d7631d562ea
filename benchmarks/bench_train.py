"""Training throughput of ``fzmj-train`` (target>= 10,000 env steps/s on 2 CPU cores).

Runs a few updates of a config (no evaluation, no checkpoints in between) and prints, per
update after the first (warm-up), the env steps per second of wall time, and the steps per
second of CPU time used by the process (all its threads): on a machine shared with other jobs
the wall figure drops while the CPU figure tells what a dedicated core would do.

    python benchmarks/bench_train.py [--config configs/ppo_default.yaml] [--updates 6] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from report import print_figures

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(ROOT / "configs/ppo_default.yaml"))
    ap.add_argument("--updates", type=int, default=6)
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    ns = ap.parse_args()

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from fzmj.train.config import load_config
    from fzmj.train.ppo_selfplay import Args
    from fzmj.train.ppo_selfplay import main as train_main

    args = load_config(Args, ns.config, ns.overrides)
    with tempfile.TemporaryDirectory() as tmp:
        overrides = ns.overrides + [
            f"total_timesteps={args.batch_size * ns.updates}",
            "eval_every=0",
            f"save_every={ns.updates}",
            f"runs_dir={tmp}",
            "run_name=bench",
        ]
        train_main(["--config", ns.config] + sum((["--set", o] for o in overrides), []))
        ea = EventAccumulator(str(Path(tmp) / "bench"), size_guidance={"scalars": 0})
        ea.Reload()
        series = {
            k: [e.value for e in ea.Scalars(f"perf/{k}")][1:]
            for k in ("rollout_seconds", "update_seconds", "cpu_seconds")
        }
    steps = args.batch_size
    wall = [steps / (r + u) for r, u in zip(series["rollout_seconds"], series["update_seconds"], strict=False)]
    cpu = [steps / c for c in series["cpu_seconds"]]
    out = {
        "config": ns.config,
        "overrides": ns.overrides,
        "steps_per_update": steps,
        "wall_sps_median": statistics.median(wall),
        "wall_sps_best": max(wall),
        "cpu_sps_median": statistics.median(cpu),
        "rollout_s_median": statistics.median(series["rollout_seconds"]),
        "update_s_median": statistics.median(series["update_seconds"]),
    }
    print_figures(out, ns.json)


if __name__ == "__main__":
    main()
