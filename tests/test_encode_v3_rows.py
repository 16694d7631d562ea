"""Observation v3's fast paths (``fzmj_env.encode``, "Speed (v3)"): the score and hand number rows
copied from constant tables say what docs/observation.md says for any score, and a history written
over another table's observation (the batched envs reuse their buffers) leaves nothing behind."""

from __future__ import annotations

import numpy as np
from test_encode import random_states

from fzmj_env import Game, encode
from fzmj_env.core import state

C3 = encode.V3_CHANNELS
SCORES = [0, 1, 2, 3, 4095, 4096, 8191, 8192, 10**6, 2**62, -1, -2, -3, -4096, -8192, -(10**6), -(2**62)]


def _score_row(v: int, best: int) -> list[int]:
    want = [j for j in range(encode.SCORE_BITS) if v >= 2**j]
    want += [encode.SCORE_BITS + j for j in range(encode.SCORE_BITS) if v <= -(2**j)]
    return want + ([26] if v == best else [])


def test_score_and_hand_number_rows_for_any_value():
    game = Game()
    game.reset(seed=3)
    out = np.full((C3, 27), 5, dtype=np.int8)
    rng = np.random.default_rng(0)
    for hand_no in [0, 1, 5, 26, 27, 28, 100]:
        for _ in range(12):
            scores = rng.choice(SCORES, size=4)
            game.buf["scores"][0] = scores
            game.buf["m"][0, state.HAND_NO] = hand_no
            for me in range(4):
                encode.encode_table(game.buf, 0, me, out)
                for r in range(4):
                    got = np.flatnonzero(out[encode.P_SCORES + r]).tolist()
                    assert got == _score_row(int(scores[(me + r) % 4]), int(scores.max()))
                assert np.flatnonzero(out[encode.P_HAND_NO]).tolist() == list(range(min(hand_no, 27)))


def test_history_written_over_another_observation_is_the_fresh_one():
    states = [game.buf.copy() for game, i in random_states(2, seed=13) if i % 5 == 0]
    reused = np.zeros((C3, 27), dtype=np.int8)
    for i, buf in enumerate(states):
        seat = i % 4
        fresh = np.zeros((C3, 27), dtype=np.int8)
        encode.encode_table(buf, 0, seat, fresh)
        encode.encode_table(buf, 0, seat, reused)  # over the previous state's observation
        assert np.array_equal(reused, fresh)
