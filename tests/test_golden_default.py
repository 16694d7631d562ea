"""Golden fingerprints of the default preset (fuzhou-lianzhong): the same seeds must keep playing
exactly the same games, bit for bit, through Game, the Numba self-play loop and VectorEnv
(presets are branches of the one core; the default must not move).

The hashes were computed on the engine before presets were added (the commit before the presets
changed the engine). If one of them changes, the default game changed: that is a bug unless an issue
says otherwise. Observations are fingerprinted on the v1 planes 0..96 (v2 only appends planes).
"""

from __future__ import annotations

import hashlib

import numpy as np

from fzmj_env import Game
from fzmj_env.core import engine, state
from fzmj_env.core.hand import get_win_table
from fzmj_env.core.random_play import play_random_games
from fzmj_env.rules import load_rules
from fzmj_env.vector import VectorEnv, results_of

V1_PLANES = 97
# result keys as they were when the hashes were taken (presets add keys; the values must not move)
V1_RESULT_KEYS = (
    "hand_no",
    "dealer",
    "streak",
    "winner",
    "win_type",
    "discarder",
    "flower_points",
    "gold_points",
    "specials",
    "value",
    "points",
)
V1_VECTOR_KEYS = (
    "table",
    "winner",
    "win_type",
    "discarder",
    "flower_points",
    "gold_points",
    "specials",
    "value",
    "hand_no",
    "dealer",
    "streak",
    "points",
)


def _project(results, keys):
    return [{k: r[k] for k in keys} for r in results]


def _digest(items) -> str:
    h = hashlib.sha256()
    for x in items:
        h.update(repr(x).encode())
    return h.hexdigest()[:16]


def game_fingerprint(n_games: int = 200, hands_per_game: int = 3) -> str:
    """Game driver: seeded games with actions picked by a seeded numpy RNG; hash of every
    decision, hand result and final score (matches of several hands: streaks, dealer changes)."""
    rng = np.random.default_rng(12345)
    items = []
    for g in range(n_games):
        game = Game(hands_per_game=hands_per_game)
        game.reset(seed=1000 + g)
        while not game.done:
            legal = game.legal_actions
            pick = [a for a in legal if a in (state.A_HU, state.A_ROB)]  # mostly win (specials, payments)
            game.step(int(pick[0]) if pick and rng.random() < 0.9 else int(rng.choice(legal)))
        items.append((game.decisions, _project(game.results, V1_RESULT_KEYS), game.scores))
    return _digest(items)


def selfplay_fingerprint() -> str:
    buf = state.new_state(1)
    engine.set_rules(buf, 0, load_rules().params)
    out = play_random_games(buf, 0, get_win_table(), 777, 500, 3)
    m = buf["m"][0]
    last = [
        int(m[i])
        for i in (
            state.WINNER,
            state.WIN_TYPE,
            state.DISCARDER,
            state.FLOWER_PTS,
            state.GOLD_PTS,
            state.SPECIALS,
            state.VALUE,
        )
    ]
    return _digest([tuple(int(x) for x in out), last, buf["scores"][0].tolist(), buf["wall"][0].tolist()])


def vector_fingerprint(num_tables: int = 64, steps: int = 1000) -> str:
    env = VectorEnv(num_tables, seed=5, hands_per_game=2)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(99)
    h = hashlib.sha256()
    for _ in range(steps):
        h.update(np.ascontiguousarray(obs[:, :V1_PLANES]).tobytes())
        h.update(mask.tobytes())
        h.update(seat.astype(np.int64).tobytes())
        u = rng.random(mask.shape)
        actions = np.argmax(
            np.where(
                mask == 1,
                u + 2.0 * ((np.arange(mask.shape[1]) == state.A_HU) | (np.arange(mask.shape[1]) == state.A_ROB)),
                -1.0,
            ),
            axis=1,
        )
        obs, mask, seat, rewards, done, info = env.step(actions)
        h.update(rewards.tobytes())
        h.update(done.tobytes())
        h.update(repr(_project(results_of(info), V1_VECTOR_KEYS)).encode())
    return h.hexdigest()[:16]


GOLDEN = {"game": "63098145a7cb5bc9", "selfplay": "af9083b4416cb6c0", "vector": "71766493c65597d3"}


def test_default_game_golden():
    assert game_fingerprint() == GOLDEN["game"]


def test_default_selfplay_golden():
    assert selfplay_fingerprint() == GOLDEN["selfplay"]


def test_default_vector_golden():
    assert vector_fingerprint() == GOLDEN["vector"]


if __name__ == "__main__":
    import time

    t0 = time.time()
    print(
        {"game": game_fingerprint(), "selfplay": selfplay_fingerprint(), "vector": vector_fingerprint()},
        time.time() - t0,
    )
