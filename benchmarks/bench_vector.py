"""Batched env throughput: decisions/s and hands/s, random legal actions.

Actions are sampled from the masks with numpy (as a policy would be, outside the env), and
observations are produced every step. Measured at several batch sizes, with one thread and
with all threads, and the AEC env (``fzmj_env.env()``) in the same run for the ratio.

    python benchmarks/bench_vector.py [--json] [--steps N] [--runs R] [--rules PRESET] [--obs-version 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numba
import numpy as np


def sample(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return (rng.random(mask.shape, dtype=np.float32) * mask).argmax(1)


def vector_rate(
    num_tables: int, threads: int, steps: int, runs: int, rules: str = "fuzhou-lianzhong", obs_version: int = 2
) -> dict:
    from fzmj_env.vector import VectorEnv

    env = VectorEnv(num_tables, rules=rules, seed=0, num_threads=threads, obs_version=obs_version)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):  # warm-up (loads or compiles the kernels)
        obs, mask, seat, rewards, done, info = env.step(sample(rng, mask))
    dec, hands, env_only = [], [], []
    for _ in range(runs):
        n_hands = 0
        t_env = 0.0
        t0 = time.perf_counter()
        for _ in range(steps):
            a = sample(rng, mask)
            t1 = time.perf_counter()
            obs, mask, seat, rewards, done, info = env.step(a)
            t_env += time.perf_counter() - t1
            n_hands += int(info["hand_over"].sum())
        dt = time.perf_counter() - t0
        dec.append(steps * num_tables / dt)
        env_only.append(steps * num_tables / t_env)
        hands.append(n_hands / dt)
    return {
        "decisions_per_s": statistics.median(dec),
        "env_only_decisions_per_s": statistics.median(env_only),
        "hands_per_s": statistics.median(hands),
    }


def aec_rate(steps: int, runs: int, rules: str = "fuzhou-lianzhong", obs_version: int = 2) -> dict:
    import fzmj_env

    env = fzmj_env.env(rules=rules, obs_version=obs_version)
    rng = np.random.default_rng(0)
    rates, hands = [], []
    for r in range(runs):
        env.reset(seed=r)
        n = 0
        n_hands = 0
        t0 = time.perf_counter()
        while n < steps:
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                n_hands += 1
                env.reset(seed=r * 100_000 + n)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            n += 1
        dt = time.perf_counter() - t0
        rates.append(n / dt)
        hands.append(n_hands / dt)
    return {"decisions_per_s": statistics.median(rates), "hands_per_s": statistics.median(hands)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--decisions", type=int, default=400_000, help="decisions per run and configuration")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64, 1024])
    parser.add_argument("--rules", default="fuzhou-lianzhong", help="rule preset (bench_presets.py compares them all)")
    parser.add_argument(
        "--obs-version", type=int, default=2, choices=(2, 3), help="observation layout (docs/observation.md)"
    )
    args = parser.parse_args()
    all_threads = numba.config.NUMBA_NUM_THREADS
    fig: dict = {
        "threads_available": all_threads,
        "runs": args.runs,
        "rules": args.rules,
        "obs_version": args.obs_version,
    }
    aec = aec_rate(min(args.decisions, 50_000), args.runs, args.rules, args.obs_version)
    fig["aec"] = aec
    for B in args.batch_sizes:
        for threads in sorted({1, all_threads}):
            steps = max(20, args.decisions // B)
            if B == 1:
                steps = min(steps, 50_000)
            r = vector_rate(B, threads, steps, args.runs, args.rules, args.obs_version)
            r["ratio_vs_aec"] = r["decisions_per_s"] / aec["decisions_per_s"]
            fig[f"B{B}_threads{threads}"] = r
    if args.json:
        print(json.dumps(fig))
        return
    print(f"AEC env: {aec['decisions_per_s']:,.0f} decisions/s, {aec['hands_per_s']:,.1f} hands/s")
    print(f"{'config':>18} {'decisions/s':>14} {'env-only dec/s':>15} {'hands/s':>10} {'x AEC':>7}")
    for k, v in fig.items():
        if k.startswith("B"):
            print(
                f"{k:>18} {v['decisions_per_s']:>14,.0f} {v['env_only_decisions_per_s']:>15,.0f} {v['hands_per_s']:>10,.0f} {v['ratio_vs_aec']:>7.1f}"
            )


if __name__ == "__main__":
    main()
