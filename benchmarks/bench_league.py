"""League throughput (target5 agents, 10 pairings, 2,000 hands per pairing, 1v3, in
under 5 minutes on 2 cores with heuristic-class agents).

The league: ``heuristic`` and four heuristic-class bots (``league_bots.Eps05`` ... ``Eps50``:
the heuristic playing a random action in 5-50% of its decisions), played from an empty folder
``--runs`` times (median wall time; the first run after a warm-up league). Baseline measured in
the same run: one :func:`fzmj.agents.evaluate.evaluate` call of the same number of hands with four
heuristics, so ``league_over_eval`` is the league's overhead over the bare evaluator.

    python benchmarks/bench_league.py [--json] [--hands-per-pairing N] [--workers W] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from report import print_figures

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

AGENTS = ["heuristic", *(f"python:league_bots:{c}" for c in ("Eps05", "Eps10", "Eps25", "Eps50"))]


def league_seconds(hands: int, workers: int) -> tuple[float, dict]:
    from fzmj.agents import league as L

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        cfg = L.open_league(d, hands_per_pairing=hands)
        ents = L.entrants(L.add_agents(d, AGENTS))
        played = L.play(d, cfg, ents, workers=workers, progress=False)
        res = L.standings(d, cfg, ents, played)
        L.html_page(res), L.markdown(res)
        return time.perf_counter() - t, res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hands-per-pairing", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")])
    from fzmj.agents.evaluate import evaluate

    league_seconds(64, args.workers)  # warm-up: Numba caches loaded
    times, res = [], None
    for _ in range(args.runs):
        s, res = league_seconds(args.hands_per_pairing, args.workers)
        times.append(s)
    hands = res["played"]["hands"]
    t = time.perf_counter()
    evaluate(["heuristic"] * 4, hands=hands, seed=1, workers=args.workers, progress=False)
    base = time.perf_counter() - t
    fig = {
        "agents": len(AGENTS),
        "pairings": len(res["pairs"]),
        "hands_per_pairing": args.hands_per_pairing,
        "hands": hands,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "league_s_median": statistics.median(times),
        "league_s_runs": " ".join(f"{x:.1f}" for x in times),
        "league_hands_per_s": hands / statistics.median(times),
        "eval_same_hands_s": base,
        "league_over_eval": statistics.median(times) / base,
        "ranking": " > ".join(
            f"{a['name'].removeprefix('python:league_bots:')} {a['rating']:+.1f}" for a in res["agents"]
        ),
    }
    print_figures(fig, args.json)


if __name__ == "__main__":
    main()
