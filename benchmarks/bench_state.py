"""Copies and saved states of a table (docs/search.md): their cost, and whether copies play on exactly.

Prints (``--json``: one object) the medians, in µs, of ``Game.save_state`` / ``restore_state``,
``VectorEnv.save_tables`` / ``restore_tables`` of one table, ``copy.deepcopy`` of the AEC env
(``fzmj_env.env()``, mid-hand) and ``Game.clone``; random play through the AEC env and through
OpenSpiel (``fzmj.integrations.openspiel``, when open_spiel is installed), in states per second,
and one decision of OpenSpiel's ISMCTS bot (16 simulations, random rollouts) in ms;
and, per preset, the copy-and-continue trials: ``--trials`` tables of a VectorEnv played at random
to a random point, saved and restored into a second VectorEnv (and a deep copy of the first), then
all three stepped with the same actions to the end: ``differences`` counts the tables whose
observations, masks, seats, rewards, dones or results differ at any step (it must be 0); plus
``--aec-trials`` AEC envs deep-copied or pickled at a random point and compared the same way.

    nice -n 10 python benchmarks/bench_state.py [--trials 10000] [--aec-trials 200] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pickle
import platform
import time

import numpy as np


def _median_us(fn, n: int) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return float(np.median(times))


def _game_mid_hand(rules: str = "fuzhou-lianzhong", steps: int = 20):
    from fzmj_env import Game

    g = Game(rules)
    g.reset(seed=7)
    for _ in range(steps):
        g.step(g.legal_actions[0])
    return g


def costs(n: int) -> dict:
    from fzmj_env import VectorEnv, env

    g = _game_mid_hand()
    saved = g.save_state()
    v = VectorEnv(64, seed=0)
    v.reset()
    table = v.save_tables(3)
    e = env()
    e.reset(seed=0)
    for _ in range(40):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    return {
        "save_us": _median_us(g.save_state, n),
        "restore_us": _median_us(lambda: g.restore_state(saved), n),
        "vector_save_us": _median_us(lambda: v.save_tables(3), n),
        "vector_restore_us": _median_us(lambda: v.restore_tables(3, table), n),
        "game_clone_us": _median_us(g.clone, n),
        "aec_deepcopy_us": _median_us(lambda: copy.deepcopy(e), max(n // 10, 10)),
        "aec_save_us": _median_us(e.unwrapped.save_state, n),
    }


def aec_steps_per_s(seconds: float = 2.0) -> float:
    from fzmj_env import env

    e = env()
    rng = np.random.default_rng(0)
    steps, seed, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        e.reset(seed=seed)
        seed += 1
        while not e.terminations[e.agent_selection]:
            mask = e.observe(e.agent_selection)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
            steps += 1
    return steps / (time.perf_counter() - t0)


def openspiel_states_per_s(seconds: float = 2.0) -> float | None:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return None
    from fzmj.integrations.openspiel import random_play_states_per_s

    return random_play_states_per_s(seconds)


def ismcts_ms_per_decision(simulations: int = 16, hands: int = 3) -> float | None:
    """Median milliseconds of one decision of OpenSpiel's ISMCTS bot (random rollouts, seat 0;
    decisions with one legal action are not searched) over ``hands`` hands against random seats."""
    try:
        import pyspiel
    except ImportError:
        return None
    from open_spiel.python.algorithms import ismcts, mcts

    import fzmj.integrations.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("fuzhou_mahjong")
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 10.0, simulations, random_state=rng)
    times = []
    for hand in range(hands):
        st = game.new_initial_state()
        st.apply_action(hand)
        while not st.is_terminal():
            legal = st.legal_actions()
            if st.current_player() == 0 and len(legal) > 1:
                t0 = time.perf_counter()
                st.apply_action(int(bot.step(st)))
                times.append((time.perf_counter() - t0) * 1e3)
            else:
                st.apply_action(int(rng.choice(legal)))
    return float(np.median(times))


# ---- copy-and-continue trials ---------------------------------------------------------------
def _random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row (0 where a row has none: a finished table)."""
    pick = rng.random(mask.shape) * mask
    return pick.argmax(axis=1)


def vector_trials(rules: str, n: int, seed: int) -> dict:
    """``n`` tables saved at random points and restored into another env (and deep-copied)."""
    from fzmj_env import VectorEnv

    rng = np.random.default_rng(seed)
    a = VectorEnv(n, rules=rules, seed=seed, hands_per_game=2, auto_reset=False)
    _, mask, _ = a.reset()
    depth = rng.integers(0, 200, n)
    for s in range(int(depth.max())):
        live = np.flatnonzero(depth > s)
        _, mask, _, _, _, _ = a.step_tables(live, _random_actions(mask[live], rng))
    b = VectorEnv(n, rules=rules, seed=seed, hands_per_game=2, auto_reset=False)
    b.reset()
    b.restore_tables(np.arange(n), a.save_tables(np.arange(n)))
    c = copy.deepcopy(a)
    differ = np.zeros(n, dtype=bool)
    for _ in range(400):
        actions = _random_actions(a._mask_out.copy(), rng)
        outs = [env.step(actions) for env in (a, b, c)]
        ref = outs[0]
        for out in outs[1:]:
            for x, y in zip(ref[:5], out[:5], strict=True):
                differ |= (x != y).reshape(n, -1).any(axis=1)
            for key in ("pending_reward", "final_reward"):  # what each seat is owed since it last acted
                differ |= (ref[5][key] != out[5][key]).reshape(n, -1).any(axis=1)
            over = ref[5]["hand_over"]
            differ |= over != out[5]["hand_over"]
            differ |= over & (ref[5]["results"] != out[5]["results"]).any(axis=1)
        if (a._seat_out < 0).all():
            break
    return {"tables": n, "differences": int(differ.sum()), "unfinished": int((a._seat_out >= 0).sum())}


def _aec_trace(e, rng) -> list:
    out = []
    while not all(e.terminations.values()):
        obs, reward, term, trunc, info = e.last()
        out.append((e.agent_selection, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, repr(info)))
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def aec_trials(rules: str, n: int, seed: int) -> dict:
    from fzmj_env import env

    rng = np.random.default_rng(seed)
    differ = 0
    for i in range(n):
        e = env(rules=rules, hands_per_game=2)
        e.reset(seed=seed * 100_000 + i)
        for _ in range(int(rng.integers(0, 150))):
            if all(e.terminations.values()):
                break
            e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
        twin = copy.deepcopy(e) if i % 2 == 0 else pickle.loads(pickle.dumps(e))
        differ += _aec_trace(e, np.random.default_rng(i)) != _aec_trace(twin, np.random.default_rng(i))
    return {"envs": n, "differences": int(differ)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10_000, help="VectorEnv tables per preset (copy-and-continue)")
    ap.add_argument("--aec-trials", type=int, default=200, help="AEC envs per preset (deepcopy / pickle)")
    ap.add_argument("--repeat", type=int, default=2000, help="calls per timing (5 timings, median)")
    ap.add_argument("--only-costs", action="store_true", help="the timings only, no trials")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from fzmj_env import available_rules

    presets = [] if args.only_costs else available_rules()

    load0 = os.getloadavg()[0]
    out = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        **costs(args.repeat),
        "aec_steps_per_s": aec_steps_per_s(),
        "openspiel_states_per_s": openspiel_states_per_s(),
        "ismcts_16_simulations_ms_per_decision": ismcts_ms_per_decision(),
        "trials": {
            rules: {
                "vector": vector_trials(rules, args.trials, seed=i + 1),
                "aec": aec_trials(rules, args.aec_trials, seed=i + 1),
            }
            for i, rules in enumerate(presets)
        },
    }
    out["differences"] = sum(t["vector"]["differences"] + t["aec"]["differences"] for t in out["trials"].values())
    out["load"] = f"{load0:.1f} -> {os.getloadavg()[0]:.1f} (1-minute load average)"
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return out


if __name__ == "__main__":
    main()
