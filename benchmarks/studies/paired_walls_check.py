"""Shipped checkpoints on the trainer's old in-run walls and on the new reserved ones.

The old in-run paired point played 2,000 hands on one wall seed (``3_000_000 + seed``: 3,000,001 for
every seed-1 run); the new one plays ``eval_paired_hands`` split over ``eval_paired_seeds`` reserved
seeds (``2**63 + i``, fzmj/train/evaluation.py). Playing checkpoints whose figure on 12,000 hands of
the check seeds 4041 / 5051 / 6061 is known (``pretrained:v1`` +0.29, ``pretrained:v2`` +0.96,
docs/results/*_checkpoints.json) shows whether a wall set itself reads high or low for trained
policies: what every point of every curve played on it inherits.

    python benchmarks/studies/paired_walls_check.py --json docs/results/issue56/walls_check.json
"""

from __future__ import annotations

import argparse
import json
import time

from fzmj.agents.evaluate import evaluate
from fzmj.train.evaluation import paired_seeds, pooled
from fzmj_env.atomic import write_atomic

KNOWN = {
    "pretrained:v1": [0.361, 0.207, 0.292],
    "pretrained:v2": [1.327, 0.901, 0.661],
}  # 4041/5051/6061, 4,000 hands each


def paired(spec: str, hands: int, seeds: list[int]) -> dict:
    parts = [
        evaluate([spec, "heuristic"], hands=hands // len(seeds), seed=s, progress=False, paired="heuristic")["paired"]
        for s in seeds
    ]
    return {**pooled(parts), "seeds": seeds}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=2000, help="hands per point (default 2000, the trainer's default)")
    ap.add_argument("--new-seeds", type=int, default=4, help="reserved seeds of the new point (default 4)")
    ap.add_argument("--json", help="write the rows to this file")
    a = ap.parse_args(argv)
    schemes = {"old (seed 3,000,001)": [3_000_001], f"new ({a.new_seeds} reserved seeds)": paired_seeds(a.new_seeds)}
    rows = []
    for spec, known in KNOWN.items():
        later = sum(known) / len(known)
        for name, seeds in schemes.items():
            t = time.perf_counter()
            r = paired(spec, a.hands, seeds)
            lo, hi = r["ci95"]
            print(
                f"{spec:<14} {name:<24} {r['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] on {r['hands']:,} hands; "
                f"12,000-hand figure {later:+.2f}: {'covered' if lo <= later <= hi else 'MISSED'}, "
                f"off by {r['mean'] - later:+.2f} ({time.perf_counter() - t:.0f}s)",
                flush=True,
            )
            rows.append({"agent": spec, "scheme": name, **r, "later": later})
    if a.json:
        write_atomic(a.json, json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
