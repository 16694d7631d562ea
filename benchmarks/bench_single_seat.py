"""Single-seat env throughput: learner steps/s of ``SingleSeatVectorEnv`` with
``heuristic`` opponents, everything on one core.

The learner samples a random legal action with numpy (as a policy would, outside the env);
each learner step includes the opponents' decisions until the learner's next one (about
three heuristic decisions, batched per round). In the same run, as a baseline: plain
``VectorEnv`` self-play of four heuristics at the same number of tables (decisions/s), and
the one-table ``SingleSeatEnv`` (Gymnasium ``Env``) steps/s. Per CPU second too: on a shared
machine the wall figure drops while the CPU figure tells what a dedicated core does.

Also in the same run, interleaved run by run: the one-table ``SingleSeatEnv`` plain loop (a
random legal action, ``reset`` at each episode's end) against the same loop over PettingZoo's
``connect_four_v3`` AEC env (``last()`` then a random legal action): the ratio of their steps/s,
median over the runs (needs ``pip install pygame``, which PettingZoo's classic envs import).

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


def _single_seat_loop(env, rng, steps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, term, _, info = env.step(int(sample(rng, env.action_masks()[None])[0]))
        if term:
            env.reset()
    return steps / (time.perf_counter() - t0)


def _connect_four_loop(env, rng, steps: int) -> float:
    t0 = time.perf_counter()
    n = 0
    while n < steps:
        env.reset()
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(sample(rng, obs["action_mask"][None])[0]))
            n += 1
            if n >= steps:
                break
    return steps / (time.perf_counter() - t0)


def versus_connect_four(steps: int, runs: int) -> dict:
    """``SingleSeatEnv`` (heuristic opponents) and connect_four's steps/s, interleaved; the median ratio."""
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError as e:  # pygame missing
        return {"connect_four": f"skipped ({e})"}
    from fzmj.integrations.gymnasium import SingleSeatEnv

    ss = SingleSeatEnv(opponents="heuristic", seat="rotate")
    ss.reset(seed=0)
    c4 = connect_four_v3.env()
    rng = np.random.default_rng(0)
    _single_seat_loop(ss, rng, 200)
    _connect_four_loop(c4, rng, 200)
    a, b, ratio = [], [], []
    for _ in range(runs):
        x = _single_seat_loop(ss, rng, steps)
        y = _connect_four_loop(c4, rng, steps)
        a.append(x)
        b.append(y)
        ratio.append(x / y)
    return {
        "single_seat_env_plain_loop_steps_per_s": statistics.median(a),
        "connect_four_plain_loop_steps_per_s": statistics.median(b),
        "ratio_single_seat_vs_connect_four": statistics.median(ratio),
    }


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
    parser.add_argument("--only-connect-four", action="store_true", help="only the SingleSeatEnv vs connect_four ratio")
    args = parser.parse_args()
    c4 = versus_connect_four(args.steps * 2, args.runs)
    if args.only_connect_four:
        print_figures(c4, args.json)
        return
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
    fig.update(c4)
    print_figures(fig, args.json)


if __name__ == "__main__":
    main()
