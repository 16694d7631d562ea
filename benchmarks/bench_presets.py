"""Per-preset throughput (with their targets): engine random self-play hands/s and VectorEnv
decisions/s at B=1024 (one thread) for every shipped preset, as ratios to the default preset
measured in the same run. Presets are measured round-robin (one run of each, R times), so a
disturbance of the machine hits them alike; the figures are medians of this process's CPU
time (``time.process_time``, single-threaded), which a busy shared machine disturbs less than
wall time.

    python benchmarks/bench_presets.py [--json] [--hands N] [--steps S] [--runs R] [--tables B]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def _engine_setup(rules: str):
    from fzmj_env.core import engine, state
    from fzmj_env.core.hand import get_win_table
    from fzmj_env.core.random_play import play_random_games
    from fzmj_env.rules import load_rules

    buf = state.new_state(1)
    engine.set_rules(buf, 0, load_rules(rules).params)
    wt = get_win_table()
    play_random_games(buf, 0, wt, 0, 10, 1)  # warm-up

    def run(r: int, n_hands: int) -> float:
        t = time.process_time()
        _, hands, _ = play_random_games(buf, 0, wt, 1_000_000 * (r + 1), n_hands, 1)
        return hands / (time.process_time() - t)

    return run


def _vector_setup(rules: str, tables: int):
    from fzmj_env.vector import VectorEnv

    env = VectorEnv(tables, rules=rules, seed=0)
    loop = {"mask": env.reset()[1], "rng": np.random.default_rng(0)}

    def sample(mask):
        return (loop["rng"].random(mask.shape, dtype=np.float32) * mask).argmax(1)

    for _ in range(5):
        loop["mask"] = env.step(sample(loop["mask"]))[1]

    def run(r: int, steps: int) -> float:
        t_env = 0.0
        mask = loop["mask"]
        for _ in range(steps):
            a = sample(mask)
            t1 = time.process_time()
            mask = env.step(a)[1]
            t_env += time.process_time() - t1
        loop["mask"] = mask
        return steps * tables / t_env

    return run


def main() -> None:
    from fzmj_env.rules import DEFAULT_RULES, available_rules

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hands", type=int, default=20000, help="engine hands per run")
    parser.add_argument("--steps", type=int, default=400, help="VectorEnv steps per run")
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    presets = [DEFAULT_RULES] + [p for p in available_rules() if p != DEFAULT_RULES]
    engines = {p: _engine_setup(p) for p in presets}
    vectors = {p: _vector_setup(p, args.tables) for p in presets}
    eng: dict = {p: [] for p in presets}
    vec: dict = {p: [] for p in presets}
    for r in range(args.runs):
        for p in presets:
            eng[p].append(engines[p](r, args.hands))
            vec[p].append(vectors[p](r, args.steps))
    fig = {}
    for p in presets:
        e, v = statistics.median(eng[p]), statistics.median(vec[p])
        fig[p] = {
            "engine_hands_per_s": e,
            "engine_ratio": e / statistics.median(eng[DEFAULT_RULES]),
            f"vector_B{args.tables}_env_decisions_per_s": v,
            "vector_ratio": v / statistics.median(vec[DEFAULT_RULES]),
        }
    if args.json:
        print(json.dumps(fig))
        return
    print(
        f"{'preset':>26} {'engine hands/s':>15} {'ratio':>6} {'VectorEnv B=' + str(args.tables) + ' dec/s':>24} {'ratio':>6}"
    )
    for p, f in fig.items():
        vk = f"vector_B{args.tables}_env_decisions_per_s"
        print(
            f"{p:>26} {f['engine_hands_per_s']:>15,.0f} {f['engine_ratio']:>6.3f} {f[vk]:>24,.0f} {f['vector_ratio']:>6.3f}"
        )


if __name__ == "__main__":
    main()
