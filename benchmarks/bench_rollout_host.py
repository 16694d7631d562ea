"""The trainer rollout's host work against the number of threads: hand-feature planes and the
heuristic opponents' decisions for one batch, as a GPU run's rollout does them every step.

On a GPU the network's forward pass is nearly free, and these two ran on one core: on one H200
with 16 host cores they were most of the rollout (docs/gpu.md). They now split a large batch
over the env's threads (``with_hand_features(obs, threads)``, ``HeuristicAgent(threads=...)``).
This measures that split on any machine, no GPU needed: rows per second at 1, 2, 4, ... threads
up to Numba's, and the speed-up over one thread (medians of ``--runs`` timings, interleaved).

    python benchmarks/bench_rollout_host.py [--rows 4096] [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numba
import numpy as np


def observations(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` observations and masks from self-play with the lowest legal actions (256 tables)."""
    from fzmj_env import VectorEnv

    env = VectorEnv(min(n, 256), seed=3)
    obs, mask, _ = env.reset()
    keep_o, keep_m = [], []
    while sum(len(o) for o in keep_o) < n:
        keep_o.append(obs.copy())
        keep_m.append(mask.copy())
        obs, mask, *_ = env.step(mask.argmax(1))
    return np.concatenate(keep_o)[:n], np.concatenate(keep_m)[:n]


def thread_counts(most: int) -> list[int]:
    """1, 2, 4, ... and ``most`` itself."""
    out, t = [], 1
    while t < most:
        out.append(t)
        t *= 2
    return [*out, most]


def measure(rows: int, runs: int, threads: list[int]) -> dict:
    from fzmj.agents.heuristic import HeuristicAgent
    from fzmj_env.features import with_hand_features

    obs, mask = observations(rows)
    work = {
        "hand features": lambda t: with_hand_features(obs, t),
        "heuristic": lambda t: HeuristicAgent(threads=t).act(obs, mask),
    }
    times = {(name, t): [] for name in work for t in threads}
    for fn in work.values():  # compile (or load) every kernel first
        for t in threads:
            fn(t)
    for _ in range(runs):  # interleaved: every setting in every round
        for name, fn in work.items():
            for t in threads:
                t0 = time.perf_counter()
                fn(t)
                times[name, t].append(time.perf_counter() - t0)
    out = {}
    for name in work:
        base = statistics.median(times[name, 1])
        out[name] = {
            t: {
                "rows_per_s": round(rows / statistics.median(times[name, t])),
                "speedup": base / statistics.median(times[name, t]),
            }
            for t in threads
        }
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=4096, help="batch size (the GPU config's tables)")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.rows < 1 or a.runs < 1:
        p.error("--rows and --runs must be at least 1")
    threads = thread_counts(numba.config.NUMBA_NUM_THREADS)
    res = measure(a.rows, a.runs, threads)
    if a.json:
        print(json.dumps(res))
        return 0
    print(f"{a.rows} rows a batch, medians of {a.runs} interleaved runs, Numba threads up to {threads[-1]}")
    print("| work | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}" for t in threads) + " |")
    print("| --- |" + " ---: |" * len(threads))
    for name, row in res.items():
        cells = [f"{row[t]['rows_per_s']:,} ({row[t]['speedup']:.2f}x)" for t in threads]
        print(f"| {name} rows/s | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
