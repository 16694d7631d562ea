"""Worlds per second of ``fzmj_env/resample.py`` on one core, at mid-hand positions.

Positions: the decision of the acting seat after ``--depth`` decisions of heuristic-ish random
play (claims taken when offered) in ``--games`` games; for each, ``--worlds`` worlds are loaded
into the tables of one VectorEnv in one call (``VectorEnv.load_worlds``) and, separately, the
bare kernel (``resample_into``, without the observation of each world) is timed.

    nice -n 10 python benchmarks/bench_resample.py [--games 20] [--worlds 1024] [--depth 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import time

import numpy as np


def positions(n_games: int, depth: int, rules: str):
    from fzmj_env import Game

    rng = random.Random(0)
    out = []
    g = 0
    while len(out) < n_games:
        game = Game(rules)
        game.reset(seed=1000 + g)
        g += 1
        for _ in range(depth):
            if game.done:
                break
            legal = game.legal_actions
            game.step(rng.choice([a for a in legal if a not in (59, 60)] or legal))
        if not game.done:
            out.append(game)
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--worlds", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=40, help="decisions played before the position (mid-hand)")
    ap.add_argument("--rules", default="fuzhou-lianzhong")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from fzmj_env import VectorEnv
    from fzmj_env.core import state
    from fzmj_env.resample import resample_into

    games = positions(args.games, args.depth, args.rules)
    M = args.worlds
    env = VectorEnv(M, rules=args.rules, auto_reset=False)
    env.reset()
    tables = np.arange(M)
    codes = np.zeros(M, np.int64)
    n = state.STATE_DTYPE.itemsize
    dst_bytes = env.buf.view(np.uint8).reshape(M, n)
    g0 = games[0]
    env.load_worlds(tables, g0.buf, 0, g0.seat, np.arange(M, dtype=np.uint64))  # compile / load
    t_kernel = t_load = 0.0
    for i, game in enumerate(games):
        seeds = np.arange(M, dtype=np.uint64) + np.uint64(i * M)
        src_bytes = game.buf.view(np.uint8).reshape(1, n)
        t0 = time.perf_counter()
        resample_into(src_bytes, 0, game.seat, seeds, dst_bytes, env.buf, tables, env._wt, codes)
        t1 = time.perf_counter()
        env.load_worlds(tables, game.buf, 0, game.seat, seeds)
        t2 = time.perf_counter()
        assert not codes.any()
        t_kernel += t1 - t0
        t_load += t2 - t1
    total = M * len(games)
    res = {
        "positions": len(games),
        "worlds_per_position": M,
        "tiles_left_mean": float(np.mean([g.tiles_left for g in games])),
        "kernel_worlds_per_s": total / t_kernel,
        "load_worlds_per_s": total / t_load,
    }
    if args.json:
        print(json.dumps(res))
    else:
        print(
            f"{res['positions']} mid-hand positions (mean {res['tiles_left_mean']:.0f} tiles left), {M} worlds each, one core:\n"
            f"  resample kernel:                 {res['kernel_worlds_per_s']:>10,.0f} worlds/s\n"
            f"  VectorEnv.load_worlds (+ observe): {res['load_worlds_per_s']:>8,.0f} worlds/s"
        )
    return res


if __name__ == "__main__":
    main()
