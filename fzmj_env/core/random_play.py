"""Random self-play entirely inside Numba: benchmarks and fuzzing of the engine."""

from __future__ import annotations

import numpy as np
from numba import njit

from .engine import GAMMA, STEP_GAME_OVER, STEP_HAND_OVER, apply_action, legal_mask, mix64, reset_table, set_seed
from .state import NUM_ACTIONS, WINNER


@njit(cache=True)
def random_legal_action(mask, rng):
    """A uniformly random legal action of ``mask``; returns (action, new rng state)."""
    n = 0
    for a in range(NUM_ACTIONS):
        n += mask[a]
    rng += GAMMA
    pick = np.int64(mix64(rng) % np.uint64(n))
    for a in range(NUM_ACTIONS):
        if mask[a]:
            if pick == 0:
                return a, rng
            pick -= 1
    return -1, rng


@njit(cache=True)
def play_random_games(buf, t, wt, first_seed, n_games, hands_per_game):
    """Play ``n_games`` games with uniformly random legal actions on table ``t``.

    Game ``g`` uses seed ``first_seed + g`` for its walls and dealer. Returns
    ``(decisions, hands, wins)``; the last game's final state stays in ``buf[t]``.
    """
    tb = buf[t]
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    rng = mix64(np.uint64(first_seed) ^ np.uint64(0xA5A5A5A5))
    decisions = 0
    hands = 0
    wins = 0
    for g in range(n_games):
        set_seed(tb, np.uint64(first_seed + g))
        reset_table(tb, wt, -1, 0, hands_per_game, False)
        while True:
            legal_mask(tb, wt, mask)
            action, rng = random_legal_action(mask, rng)
            code = apply_action(tb, wt, action)
            decisions += 1
            if code == STEP_HAND_OVER or code == STEP_GAME_OVER:
                hands += 1
                if tb.m[WINNER] >= 0:
                    wins += 1
            if code == STEP_GAME_OVER:
                break
    return decisions, hands, wins
