"""Supervised data for the belief model: decisions of self-play, each with the hidden truth.

Every decision of a ``VectorEnv`` self-play run gives one sample: the acting seat's observation
(what the model sees) and, as labels, read from the engine's state buffer (never from the
observation), for each of the three other seats in relative order:

* ``counts`` ``(3, 27)``: its concealed tiles per kind (``tb.hand``);
* ``ready`` ``(3,)``: its concealed hand is 3n+1 and some kind completes it (听);
* ``win_on`` ``(3, 27)``: it may win on a discard of kind k now: ready on k, k not its 过水 kind,
  k not the gold, and it has not thrown a gold (the engine's own test for a discard win, R9).

The observations are stored bit-packed (``np.packbits`` over the 27 columns: 4 bytes a plane),
so 400,000 decisions of v2 take 160 MB.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from fzmj.agents import make_agent, reset_agent
from fzmj_env.core import state
from fzmj_env.core.hand import get_win_table, wait_mask_counts
from fzmj_env.encode import P_PHASE, PC_CLAIM, v2_planes
from fzmj_env.vector import VectorEnv


@njit(cache=True)
def hidden_labels(buf, wt, tables, seats, counts, ready, win_on):
    """Labels of row i: table ``tables[i]`` seen by ``seats[i]`` (module docstring)."""
    waits = np.zeros(27, np.int8)
    for i in range(tables.shape[0]):
        tb = buf[tables[i]]
        gold = tb.m[state.GOLD]
        for r in range(3):
            s = (seats[i] + 1 + r) % 4
            n = 0
            for k in range(27):
                c = tb.hand[s, k]
                counts[i, r, k] = c
                n += c
            ready[i, r] = 0
            for k in range(27):
                win_on[i, r, k] = 0
            if n % 3 != 1:
                continue
            if wait_mask_counts(wt, tb.hand[s], gold, waits) > 0:
                ready[i, r] = 1
                if tb.gold_thrown[s] == 0:
                    for k in range(27):
                        if waits[k] and k != gold and tb.passed[s, k] == 0:
                            win_on[i, r, k] = 1


def generate(
    decisions: int,
    agents: list[str],
    rules: str,
    seed: int,
    tables: int = 256,
    obs_version: str = "v2",
    progress=None,
) -> dict[str, np.ndarray]:
    """``decisions`` samples of self-play by ``agents`` (four specs, one per seat; games of
    seed stream ``seed``). Returns packed observations, labels, the legal discards and whether
    the decision is a turn (not a claim window). Deterministic for the arguments."""
    players = [make_agent(a) for a in agents]
    env = make_env(tables, rules, seed, obs_version)
    for i, p in enumerate(players):
        reset_agent(p, seed * 4 + i, env.rules)
    wt = get_win_table()
    obs, mask, seat = env.reset()
    C = obs.shape[1]
    out = {
        "obs": np.zeros((decisions, C, 4), np.uint8),
        "counts": np.zeros((decisions, 3, 27), np.int8),
        "ready": np.zeros((decisions, 3), np.int8),
        "win_on": np.zeros((decisions, 3, 27), np.int8),
        "legal": np.zeros((decisions, 27), np.int8),
        "turn": np.zeros(decisions, np.int8),
    }
    n = 0
    actions = np.zeros(tables, np.int64)
    t0 = last = time.time()
    while n < decisions:
        live = np.flatnonzero(seat >= 0)
        take = live[: decisions - n]
        rows = slice(n, n + len(take))
        out["obs"][rows] = np.packbits(obs[take].astype(np.uint8), axis=-1)
        out["legal"][rows] = mask[take, :27]
        out["turn"][rows] = obs[take, P_PHASE, PC_CLAIM] == 0
        hidden_labels(
            env.buf, wt, take.astype(np.int64), seat[take].astype(np.int64),
            out["counts"][rows], out["ready"][rows], out["win_on"][rows],
        )  # fmt: skip
        n += len(take)
        for s in range(4):
            at = live[seat[live] == s]
            if len(at):
                actions[at] = players[s].act(
                    np.ascontiguousarray(v2_planes(obs[at])), mask[at]
                )  # the agents play on v2
        obs, mask, seat, *_ = env.step(actions)
        if progress is not None and time.time() - last > 10:
            last = time.time()
            progress(f"data: {n:,}/{decisions:,} decisions ({n / max(last - t0, 1e-9):,.0f}/s)")
    return out


def make_env(tables: int, rules: str, seed: int, obs_version: str) -> VectorEnv:
    if obs_version == "v2":
        return VectorEnv(tables, rules=rules, seed=seed)
    return VectorEnv(tables, rules=rules, seed=seed, obs_version=obs_version)


def unpack(obs_packed: np.ndarray) -> np.ndarray:
    """Bit-packed observations back to ``(N, C, 27)`` int8 planes."""
    return np.unpackbits(obs_packed, axis=-1, count=27).astype(np.int8)
