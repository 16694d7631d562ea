"""Benchmark of the table-driven win check (`fzmj_env.core.hand.is_win_batch`), one thread.

Builds N random valid 17-tile concealed hands (about half built as winning shapes: 5 melds +
a pair with 0-3 tiles turned into golds; the rest 17 tiles dealt at random from the 107 suit
tiles left after the gold indicator), then times ``is_win_batch`` (median of several runs).

    python benchmarks/bench_is_win.py            # human line
    python benchmarks/bench_is_win.py --json     # exactly one JSON object on stdout
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fzmj_env.core.hand import get_win_table, is_win_batch, is_win_batch_kernel  # noqa: E402


@njit(cache=True)
def _make_hands(n, seed, win_frac):
    np.random.seed(seed)
    counts = np.zeros((n, 27), np.int8)
    gold = np.empty(n, np.int64)
    wall = np.empty(108, np.int64)
    for r in range(n):
        g = np.random.randint(27)
        gold[r] = g
        if np.random.random() < win_frac:
            # 5 melds + 1 pair, every kind <= 4 copies and the gold kind <= 3 (indicator out)
            while True:
                c = np.zeros(27, np.int64)
                for _ in range(5):
                    s = np.random.randint(3)
                    if np.random.random() < 0.6:
                        i = np.random.randint(7)
                        for d in range(3):
                            c[9 * s + i + d] += 1
                    else:
                        c[9 * s + np.random.randint(9)] += 3
                c[np.random.randint(27)] += 2
                ok = True
                for k in range(27):
                    if c[k] > (3 if k == g else 4):
                        ok = False
                if ok:
                    break
            # turn up to 3 non-gold tiles into golds (a gold stands for anything)
            ng = np.random.randint(4)
            for _ in range(ng):
                if c[g] >= 3:
                    break
                while True:
                    k = np.random.randint(27)
                    if k != g and c[k] > 0:
                        break
                c[k] -= 1
                c[g] += 1
            for k in range(27):
                counts[r, k] = c[k]
        else:
            # deal 17 of the 107 suit tiles that are not the indicator
            m = 0
            skipped = False
            for k in range(27):
                for _ in range(4):
                    if k == g and not skipped:
                        skipped = True
                        continue
                    wall[m] = k
                    m += 1
            for j in range(17):
                x = j + np.random.randint(m - j)
                t = wall[j]
                wall[j] = wall[x]
                wall[x] = t
                counts[r, wall[j]] += 1
    return counts, gold


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4_000_000, help="hands per run (default 4M)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs; the median is reported")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--win-frac", type=float, default=0.5, help="share of hands built as wins")
    ap.add_argument("--json", action="store_true", help="print exactly one JSON object")
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    table = get_win_table()
    t_table = time.perf_counter() - t0
    counts, gold = _make_hands(a.n, a.seed, a.win_frac)
    out = np.empty(a.n, np.bool_)
    # warm-up (compilation / cache load, page-in of the table) through the public API
    is_win_batch(counts[:1000], gold[:1000])
    times = []
    for _ in range(a.runs):
        t = time.perf_counter()
        is_win_batch_kernel(table, counts, gold, out)
        times.append(time.perf_counter() - t)
    t_api = time.perf_counter()
    out_api = is_win_batch(counts, gold)
    t_api = time.perf_counter() - t_api
    assert np.array_equal(out, out_api)
    med = statistics.median(times)
    res = {
        "benchmark": "is_win_batch",
        "n": a.n,
        "runs": a.runs,
        "median_s": med,
        "min_s": min(times),
        "hands_per_s": a.n / med,
        "api_hands_per_s": a.n / t_api,
        "win_share": float(out.mean()),
        "table_get_s": t_table,
        "threads": 1,
    }
    if a.json:
        print(json.dumps(res))
    else:
        print(
            f"is_win_batch: {res['hands_per_s'] / 1e6:.1f} M hands/s (median of {a.runs} runs over "
            f"{a.n:,} 17-tile hands, one thread; {res['win_share']:.0%} winning; via the API incl. "
            f"conversion {res['api_hands_per_s'] / 1e6:.1f} M/s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
