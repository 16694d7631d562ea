"""The ablation table of "training with what the table hides": each lever against the control
and against the heuristic, paired on the same walls (docs/results.md).

For each checkpoint, ``fzmj.agents.evaluate`` with ``paired=REF``: the checkpoint plays every
wall in all four seats against three heuristics, then REF plays the same walls in the same
seats; the figure is the mean per-hand difference with its 95% CI over walls. REF is
``heuristic`` (the issue's target) and, for every checkpoint but the first, the first (the
control: the lever's gain at the same steps).

    python benchmarks/studies/oracle_ablation.py control=runs/o24_control/checkpoints/latest.pt \\
        critic=runs/o24_critic/checkpoints/latest.pt --seeds 101 202 303 --hands 4000

Many checkpoints of one run (``g4=.../update_000244.pt g8=...``) give a curve on as many hands
as the ablation's: ``--json`` rows carry each checkpoint's ``global_step``, and
``oracle_curves.py --ablation FILE`` draws them pooled over the seeds.

Seeds: pick ones no tuning used (the runs' own evaluations use 1,000,000 + seed, 2,000,000 +
seed and 3,000,000 + seed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from fzmj_env.atomic import write_atomic


def paired(spec: str, ref: str, hands: int, seed: int, workers: int) -> dict:
    from fzmj.agents.evaluate import evaluate

    res = evaluate([spec, "heuristic"], hands=hands, seed=seed, workers=workers, progress=False, paired=ref)
    return res["paired"]


def checkpoint_step(spec: str) -> int | None:
    """The env steps behind a ``ppo:PATH`` checkpoint (None for any other spec); drawn by
    ``oracle_curves.py --ablation`` as the x of the point."""
    if not spec.startswith("ppo:"):
        return None
    from fzmj.agents.checkpoint import load_checkpoint

    return int(load_checkpoint(spec[4:]).get("global_step", 0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "runs", nargs="+", help="NAME=SPEC (SPEC: a checkpoint path or an agent spec); the first is the control"
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=[101, 202, 303], help="wall seeds (default 101 202 303)")
    ap.add_argument("--hands", type=int, default=4000, help="hands per seed (a multiple of 4; default 4000)")
    ap.add_argument("--workers", type=int, default=1, help="evaluation processes (default 1)")
    ap.add_argument("--json", help="also write every result to this JSON file")
    a = ap.parse_args(argv)
    named = []
    for item in a.runs:
        name, eq, spec = item.partition("=")
        if not eq or not name or not spec:
            ap.error(f"expected NAME=SPEC, got {item!r}")
        named.append((name, f"ppo:{spec}" if os.path.isfile(spec) else spec))
    if a.hands % 4 or a.hands <= 0:
        ap.error("--hands must be a positive multiple of 4")
    t0, out = time.time(), []
    load = os.getloadavg()[0]
    control = named[0][1]
    for name, spec in named:
        step = checkpoint_step(spec)
        refs = [("heuristic", "heuristic")] + ([("control", control)] if spec != control else [])
        for ref_name, ref in refs:
            for seed in a.seeds:
                p = paired(spec, ref, a.hands, seed, a.workers)
                lo, hi = p["ci95"]
                out.append(
                    {
                        "run": name,
                        "ref": ref_name,
                        "seed": seed,
                        "mean": p["mean"],
                        "ci95": [lo, hi],
                        "hands": p["hands"],
                        **({"global_step": step} if step is not None else {}),
                    }
                )
                print(
                    f"| {name} | {ref_name} | {seed} | {p['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] | {p['hands']:,} |",
                    flush=True,
                )
    from fzmj.train.evaluation import pooled

    for name, _ in named:
        for ref_name in ("heuristic", "control"):
            rows = [r for r in out if r["run"] == name and r["ref"] == ref_name]
            if len(rows) > 1:
                p = pooled(rows)  # the seeds' mean, CI half-widths in quadrature
                (lo, hi), mean, hands = p["ci95"], p["mean"], p["hands"]
                print(f"| {name} | {ref_name} | pooled | {mean:+.2f} [{lo:+.2f}, {hi:+.2f}] | {hands:,} |")
    print(
        f"({time.time() - t0:.0f} s; {platform.node()} {platform.processor() or platform.machine()}, load {load:.1f} at the start)"
    )
    if a.json:  # whole or not at all: tile_recipe_rule.sh reads rule.json from it
        write_atomic(a.json, json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
