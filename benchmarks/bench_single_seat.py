"""Single-seat env throughput: learner steps/s of ``SingleSeatVectorEnv`` with
``heuristic`` opponents, everything on one core.

The learner samples a random legal action with numpy (as a policy would, outside the env);
each learner step includes the opponents' decisions until the learner's next one (about
three heuristic decisions, batched per round). In the same run, as a baseline: plain
``VectorEnv`` self-play of four heuristics at the same number of tables (decisions/s), and
the one-table ``SingleSeatEnv`` (Gymnasium ``Env``) steps/s. Per CPU second too: on a shared
machine the wall figure drops while the CPU figure tells what a dedicated core does.

    python benchmarks/bench_single_seat.py [--json] [--tables 64] [--steps N] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core: the heuristic and the env are single-threaded anyway

import numpy as np  # noqa: E402
from report import print_figures  # noqa: E402


def sample(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return (rng.random(mask.shape, dtype=np.float32) * mask).argmax(1)


def single_seat_vector(tables: int, steps: int, runs: int, obs_dtype: str = "int8") -> dict:
    from fzmj.integrations.gymnasium import SingleSeatVectorEnv

    env = SingleSeatVectorEnv(tables, opponents="heuristic", seat="rotate", obs_dtype=obs_dtype)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):  # warm-up (loads or compiles the kernels)
        env.step(sample(rng, env.action_masks()))
    rates, cpu_rates, opp, eps = [], [], [], []
    for _ in range(runs):
        d0 = env._driver.opponent_decisions
        n_eps = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        for _ in range(steps):
            _, _, term, _, _ = env.step(sample(rng, env.action_masks()))
            n_eps += int(term.sum())
        dt = time.perf_counter() - t0
        cpu_rates.append(steps * tables / (time.process_time() - c0))
        rates.append(steps * tables / dt)
        opp.append((env._driver.opponent_decisions - d0) / (steps * tables))
        eps.append(n_eps / dt)
    return {
        "learner_steps_per_s": statistics.median(rates),
        "learner_steps_per_cpu_s": statistics.median(cpu_rates),
        "opponent_decisions_per_learner_step": statistics.median(opp),
        "episodes_per_s": statistics.median(eps),
    }


def single_seat_env(steps: int, runs: int) -> dict:
    from fzmj.integrations.gymnasium import SingleSeatEnv

    env = SingleSeatEnv(opponents="heuristic", seat="rotate")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(steps):
            _, _, term, _, _ = env.step(int(sample(rng, env.action_masks()[None])[0]))
            if term:
                env.reset()
        rates.append(steps / (time.perf_counter() - t0))
    return {"learner_steps_per_s": statistics.median(rates)}


def heuristic_selfplay(tables: int, steps: int, runs: int) -> dict:
    from fzmj.agents import make_agent

    from fzmj_env.vector import VectorEnv

    h = make_agent("heuristic")
    env = VectorEnv(tables, seed=0)
    obs, mask, seat = env.reset()
    for _ in range(5):
        obs, mask, seat, *_ = env.step(h.act(obs, mask))
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(steps):
            obs, mask, seat, *_ = env.step(h.act(obs, mask))
        rates.append(steps * tables / (time.perf_counter() - t0))
    return {"decisions_per_s": statistics.median(rates)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--steps", type=int, default=1000, help="vector steps per run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    v = single_seat_vector(args.tables, args.steps, args.runs)
    f = single_seat_vector(args.tables, args.steps, args.runs, obs_dtype="float32")
    b = heuristic_selfplay(args.tables, args.steps * 3, args.runs)
    s = single_seat_env(args.steps * 2, args.runs)
    fig = {
        "tables": args.tables,
        "runs": args.runs,
        "single_seat_vector_learner_steps_per_s": v["learner_steps_per_s"],
        "single_seat_vector_learner_steps_per_cpu_s": v["learner_steps_per_cpu_s"],
        "single_seat_vector_float32_learner_steps_per_s": f["learner_steps_per_s"],
        "opponent_decisions_per_learner_step": v["opponent_decisions_per_learner_step"],
        "episodes_per_s": v["episodes_per_s"],
        "all_decisions_per_s": v["learner_steps_per_s"] * (1 + v["opponent_decisions_per_learner_step"]),
        "baseline_vector_env_4_heuristics_decisions_per_s": b["decisions_per_s"],
        "single_seat_env_one_table_learner_steps_per_s": s["learner_steps_per_s"],
    }
    fig["ratio_all_decisions_vs_baseline"] = fig["all_decisions_per_s"] / b["decisions_per_s"]
    print_figures(fig, args.json)


if __name__ == "__main__":
    main()
