"""How honestly the trainer's in-run paired curve ranks checkpoints: measured on past runs, and
the picking rules compared on their later figures.

Past runs in docs/results/ kept their in-run curve (``<run>/paired.jsonl``: 2,000 hands on one
wall seed, ``3_000_000 + seed``, the same walls at every point and in every run of that seed) and,
later, 12,000-hand paired figures of the same checkpoints on the check seeds 4041 / 5051 / 6061
(``*_checkpoints.json``, 4,000 hands a seed, pooled). For every in-run point with a later figure
this prints whether the in-run CI covers it, and ``z``: the difference over both errors (an honest
point gives z ~ N(0, 1): |z| < 1.96 in 95%); then the winner's curse: the highest point of each
curve (what a ``best.pt`` keeps) against its later figure.

``--simulate`` then compares picking rules at the same evaluation cost: each run's later figures
taken as its true curve, in-run points drawn around it with the CI half-width of the past points
scaled by the hands (sqrt), a share ``rho`` of each point's error common to all the points of a
curve (its walls); the highest point picked. Printed: how often the pick's own CI covers its true
value, its bias (figure minus truth), and its regret (the curve's best truth minus the pick's).

    python benchmarks/studies/paired_curve_coverage.py --simulate > docs/results/issue56/coverage.txt
"""

from __future__ import annotations

import argparse
import collections
import json
import math
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
RUNS = {  # run folder (its paired.jsonl) -> (the file of its later figures, the run's name there)
    "o130_guide": ("oracle130_guide_checkpoints.json", "guide"),
    "o130_fade75": ("fade_mb8_checkpoints.json", "slow fade"),
    "o130_mb8": ("fade_mb8_checkpoints.json", "8 minibatches"),
    "o130_v3": ("v3_history_checkpoints.json", "observation v3"),
    "o130_wide": ("wide_checkpoints.json", "wide"),
    "o260": ("o260_checkpoints.json", "260 M recipe"),
    "o24_res32": ("issue47/o24_res32_checkpoints.json", "res32x2"),
    "o24_res32_ent": ("issue47/o24_res32_ent_checkpoints.json", "res32ent"),
    "o24_res32_ent_s2": ("issue47/o24_res32_ent_s2_checkpoints.json", "res32ent_s2"),
    "o24_res32_lr": ("issue47/o24_res32_lr_checkpoints.json", "res32lr"),
    "o24_res32_soft": ("issue47/o24_res32_soft_checkpoints.json", "res32soft"),
    "p2_league": ("league_checkpoints.json", "league"),
    "phase2_lr2e-4": ("phase2_checkpoints.json", "lr 2e-4"),
    "phase2_lr5e-5": ("phase2_checkpoints.json", "lr 5e-5"),
}
# Runs whose in-run curve is the reserved-walls scheme (issue 56: 8,000 hands on 4 seeds from 2**63
# that no training or check uses), reported apart from the old scheme's runs above and not simulated.
RESERVED_RUNS = {
    "o130_res32_ent": ("o130_res32_ent/curve_with_v2_run.json", "resnet 32x2"),
}
Z95 = 1.959963984540054


def later_figures(path: Path, name: str) -> dict[int, tuple[float, float]]:
    """``{global_step: (mean, half-width)}`` of the run's checkpoints against heuristic, pooled over
    the seeds (equal hands a seed: the mean of the means, half-widths in quadrature)."""
    by_step: dict[int, list[dict]] = collections.defaultdict(list)
    for r in json.loads(path.read_text()):
        if r["ref"] == "heuristic" and r["run"].partition("@")[0] == name and "global_step" in r:
            by_step[r["global_step"]].append(r)
    out = {}
    for step, rows in by_step.items():
        k = len(rows)
        half = math.sqrt(sum(((r["ci95"][1] - r["ci95"][0]) / 2) ** 2 for r in rows)) / k
        out[step] = (sum(r["mean"] for r in rows) / k, half)
    return out


def matched_points(runs: dict[str, tuple[str, str]] = RUNS) -> dict[str, list[dict]]:
    """Per run, its in-run points that have a later figure, in step order."""
    out = {}
    for run, (file, name) in runs.items():
        later = later_figures(RESULTS / file, name)
        rows = [json.loads(line) for line in (RESULTS / run / "paired.jsonl").read_text().splitlines()]
        points = []
        for p in sorted({r["global_step"]: r for r in rows}.values(), key=lambda r: r["global_step"]):
            if p["global_step"] in later:
                m, h = later[p["global_step"]]
                lo, hi = p["ci95"]
                z = (p["mean"] - m) / math.hypot((hi - lo) / 2 / Z95, h / Z95)
                points.append({**p, "later": m, "later_half": h, "covered": lo <= m <= hi, "z": z})
        out[run] = points
    return out


def report(runs: dict[str, list[dict]], shared_walls: bool = True) -> None:
    zs, covered = [], 0
    for run, points in runs.items():
        for p in points:
            lo, hi = p["ci95"]
            print(
                f"{run:<18} {p['global_step'] / 1e6:6.1f}M  in-run {p['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}]  "
                f"later {p['later']:+.2f} ±{p['later_half']:.2f}  {'covered' if p['covered'] else 'MISSED '}  "
                f"z {p['z']:+.2f}"
            )
            zs.append(p["z"])
            covered += p["covered"]
    z = np.array(zs)
    n = len(z)
    print(f"\n{n} in-run points with a later 12,000-hand figure, from {len(runs)} runs")
    print(f"  in-run CI covers the later figure: {covered}/{n} = {covered / n:.1%}")
    print(f"  |z| < 1.96: {(abs(z) < Z95).mean():.1%};  mean z {z.mean():+.2f};  sd of z {z.std(ddof=1):.2f}")
    diffs = [p["mean"] - p["later"] for ps in runs.values() for p in ps]
    why = " (the curves of one seed all played the same 500 walls)" if shared_walls else ""
    print(f"  in-run minus later, mean {np.mean(diffs):+.2f} a hand{why}")
    print("\nwinner's curse: the highest point of each curve (what best.pt keeps) against its later figure")
    hits, off = 0, []
    for run, points in runs.items():
        top = max(points, key=lambda p: p["mean"])
        off.append(top["mean"] - top["later"])
        lo, hi = top["ci95"]
        hits += top["covered"]
        print(
            f"{run:<18} max of {len(points):>2} points at {top['global_step'] / 1e6:6.1f}M: {top['mean']:+.2f} "
            f"[{lo:+.2f}, {hi:+.2f}], later {top['later']:+.2f}: {'covered' if top['covered'] else 'MISSED'} "
            f"(off by {top['mean'] - top['later']:+.2f})"
        )
    print(
        f"  the maximum's CI covers its later figure in {hits}/{len(runs)} runs; it reads {np.mean(off):+.2f} high on average"
    )


EVERY = (1, 2, 3)  # keep every k-th point, played on k x the hands: the same evaluation cost
MIN_POINTS = 2 * max(EVERY)  # the runs simulated: those with this many points (the same runs for every k)


def simulate(runs: dict[str, list[dict]], rho: float, every: int, draws: int, rng) -> dict:
    """The highest-point rule when every ``every``-th point is kept and played on ``every`` x the
    hands (the same cost): coverage, bias and regret over ``draws`` draws of every run's curve."""
    cover = bias = regret = n = 0.0
    for points in runs.values():
        if len(points) < MIN_POINTS:
            continue
        kept = points[every - 1 :: every]
        truth = np.array([p["later"] for p in kept])
        sigma = np.array([(p["ci95"][1] - p["ci95"][0]) / 2 / Z95 for p in kept]) / math.sqrt(every)
        shared = rng.normal(size=(draws, 1)) * math.sqrt(rho)
        own = rng.normal(size=(draws, len(kept))) * math.sqrt(1 - rho)
        x = truth + sigma * (shared + own)
        pick = x.argmax(axis=1)
        rows = np.arange(draws)
        err = x[rows, pick] - truth[pick]
        cover += float((abs(err) <= Z95 * sigma[pick]).sum())
        bias += float(err.sum())
        regret += float((truth.max() - truth[pick]).sum())
        n += draws
    return {"covered": cover / n, "bias": bias / n, "regret": regret / n}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simulate", action="store_true", help="also compare picking rules at the same cost")
    ap.add_argument("--draws", type=int, default=4000)
    a = ap.parse_args(argv)
    runs = matched_points()
    report(runs)
    print("\n--- the reserved-walls scheme (8,000 hands a point on 4 seeds from 2**63: the default since issue 56)")
    report(matched_points(RESERVED_RUNS), shared_walls=False)
    if a.simulate:
        rng = np.random.default_rng(56)
        names = [run for run, points in runs.items() if len(points) >= MIN_POINTS]
        print(f"\npicking the highest point, simulated around the later figures of {len(names)} runs with at least")
        print(f"{MIN_POINTS} points ({', '.join(names)}); the same evaluation cost in each row:")
        for rho in (0.0, 0.4):
            for every in EVERY:
                s = simulate(runs, rho, every, a.draws, rng)
                print(
                    f"  rho {rho:.1f}: every {every} point(s) on {2000 * every:,} hands: the pick's CI covers its "
                    f"truth {s['covered']:.0%}, bias {s['bias']:+.2f}, regret {s['regret']:.2f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
