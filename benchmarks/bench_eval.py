"""Evaluation throughput (target>= 2,000 hands/s with 4 heuristic agents on 2 cores).

Figures: hands per second of ``fzmj.agents.evaluate.evaluate`` (duplicate format, the default
batch of 512 tables) with 4 heuristic agents and with 4 random agents, the median of
``--runs`` runs after a warm-up run (Numba caches loaded), with ``--workers`` processes; the
same per CPU-second (this process and its workers: less sensitive to other jobs on a shared
machine); the decisions per hand; the heuristic's own cost per decision (kernel only).

    python benchmarks/bench_eval.py [--json] [--hands N] [--workers W] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from report import cpu_seconds, print_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def eval_hands_per_s(agents: list[str], hands: int, workers: int, runs: int) -> dict:
    from fzmj.agents.evaluate import evaluate

    evaluate(agents, hands=min(hands, 512), seed=10**6, workers=workers, progress=False)  # warm-up
    rates, cpu_rates, dps = [], [], []
    for r in range(runs):
        t, c = time.perf_counter(), cpu_seconds()
        res = evaluate(agents, hands=hands, seed=r, workers=workers, progress=False)
        dt, dc = time.perf_counter() - t, cpu_seconds() - c
        rates.append(res["hands"] / dt)
        cpu_rates.append(res["hands"] / dc)
        dps.append(res["timing"]["decisions"] / res["hands"])
    return {
        "hands_per_s": statistics.median(rates),
        "hands_per_cpu_s": statistics.median(cpu_rates),
        "decisions_per_hand": statistics.mean(dps),
    }


def heuristic_us_per_decision(n_steps: int = 40, tables: int = 512) -> float:
    """Kernel time per decision on observations collected from heuristic self-play."""
    from fzmj.agents.heuristic import HeuristicAgent
    from fzmj_env.vector import VectorEnv

    env = VectorEnv(tables, seed=1)
    h = HeuristicAgent()
    obs, mask, _ = env.reset()
    batches = []
    for _ in range(n_steps):
        batches.append((obs.copy(), mask.copy()))
        obs, mask, *_ = env.step(h.act(obs, mask))
    t = time.perf_counter()
    for o, m in batches:
        h.act(o, m)
    return (time.perf_counter() - t) / (n_steps * tables) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hands", type=int, default=8192, help="hands per run (default 8192)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    fig: dict = {"workers": args.workers, "hands": args.hands, "runs": args.runs, "cpus": os.cpu_count()}
    h = eval_hands_per_s(["heuristic"] * 4, args.hands, args.workers, args.runs)
    fig["heuristic_hands_per_s"] = h["hands_per_s"]
    fig["heuristic_hands_per_cpu_s"] = h["hands_per_cpu_s"]
    fig["heuristic_decisions_per_hand"] = h["decisions_per_hand"]
    r = eval_hands_per_s(["random"] * 4, args.hands, args.workers, args.runs)
    fig["random_hands_per_s"] = r["hands_per_s"]
    fig["random_hands_per_cpu_s"] = r["hands_per_cpu_s"]
    fig["random_decisions_per_hand"] = r["decisions_per_hand"]
    fig["heuristic_us_per_decision"] = heuristic_us_per_decision()
    print_figures(fig, args.json)


if __name__ == "__main__":
    main()
