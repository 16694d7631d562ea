"""Hand-feature planes (fzmj_env/features.py) against the engine's own hand
functions (``shanten_counts``, ``wait_mask_counts``, ``is_golden_pair_counts``, ...) computed
by brute force on observations of real games."""

from __future__ import annotations

import numpy as np
import pytest

from fzmj.agents.heuristic import HeuristicAgent
from fzmj_env import features
from fzmj_env.core.hand import (
    get_shanten_table,
    get_win_table,
    is_golden_dragon_counts,
    is_golden_pair_counts,
    shanten_counts,
    suit_keys,
    wait_mask_counts,
)
from fzmj_env.encode import NUM_CHANNELS, P_CLAIM_TILE, P_PHASE, PC_CLAIM
from fzmj_env.vector import VectorEnv


@pytest.fixture(scope="module")
def observations():
    """Observations of 64 tables over 80 heuristic decisions (turns and claim windows)."""
    env = VectorEnv(64, seed=11)
    obs, mask, _ = env.reset()
    h = HeuristicAgent()
    out = []
    for _ in range(80):
        out.append(obs.copy())
        obs, mask, _, _, _, _ = env.step(h.act(obs, mask))
    return np.concatenate(out)


def _decoded(o):
    w = np.zeros(features._HF_WS_SIZE, np.int64)
    gold = features.decode(o, w)
    return w[features._C : features._C + 27].copy(), w[features._UNSEEN : features._UNSEEN + 27].copy(), gold


def _col(row) -> int:
    (cols,) = np.flatnonzero(row)  # one-hot planes: exactly one column
    return int(cols)


def _acceptance(st, c, gold, unseen, s):
    acc, kinds = 0, np.zeros(27, np.int8)
    for j in range(27):
        if unseen[j] > 0 and c[j] < 4:
            c[j] += 1
            if shanten_counts(st, c, gold) < s:
                acc += unseen[j]
                kinds[j] = 1
            c[j] -= 1
    return acc, kinds


def test_hand_feature_planes_match_the_engine(observations):
    st, wt = get_shanten_table(), get_win_table()
    planes = features.feature_planes(observations)
    assert planes.shape == (len(observations), features.HF_NUM_PLANES, 27) and set(np.unique(planes)) <= {0, 1}
    checked = {"turn": 0, "claim": 0, "ready": 0}
    for o, f in zip(observations[::3], planes[::3], strict=True):
        c, unseen, gold = _decoded(o)
        if gold < 0 or c.sum() == 0:
            assert not f.any()
            continue
        s = shanten_counts(st, c, gold)
        assert _col(f[features.HF_SHANTEN]) == min(s + 1, 26)
        assert _col(f[features.HF_THREE_GOLDS]) == max(0, 3 - c[gold])
        n = int(c.sum())
        if n % 3 == 2:  # a turn: shanten and acceptance after each discard
            checked["turn"] += 1
            assert (f[features.HF_GOLDEN_PAIR, 0] == 1) == is_golden_pair_counts(wt, c, gold)  # col 0: complete
            assert (f[features.HF_GOLDEN_DRAGON, 0] == 1) == is_golden_dragon_counts(wt, c, gold)
            after = np.full(27, 99)
            for k in range(27):
                if c[k] and k != gold:
                    c[k] -= 1
                    after[k] = shanten_counts(st, c, gold)
                    c[k] += 1
            best = after.min()
            np.testing.assert_array_equal(f[features.HF_DISC_BEST], after == best)
            np.testing.assert_array_equal(f[features.HF_DISC_NEXT], after == best + 1)
            accs = np.full(27, -1)
            for k in np.flatnonzero(after == best):
                c[k] -= 1
                accs[k] = _acceptance(st, c, gold, unseen, best)[0]
                c[k] += 1
            for i, step in enumerate(features._DISC_ACC_STEPS):
                np.testing.assert_array_equal(f[features.HF_DISC_ACC + i], accs >= step)
            np.testing.assert_array_equal(f[features.HF_DISC_ACC_MAX], accs == accs.max())
            gp = np.full(27, 99)  # 金雀 after each discard: melds-only missing slots + the gold pair
            for k in np.flatnonzero(after < 99):
                c[k] -= 1
                gp[k] = _melds_only_missing(st, c, gold, min((n - 1) // 3, 5)) + 2 - c[gold]
                c[k] += 1
            np.testing.assert_array_equal(f[features.HF_DISC_GP_BEST], gp == gp.min())
            np.testing.assert_array_equal(f[features.HF_DISC_GP_NEXT], gp == gp.min() + 1)
        elif n % 3 == 1:  # waiting: acceptance, waits, claims
            acc, kinds = _acceptance(st, c, gold, unseen, s)
            np.testing.assert_array_equal(f[features.HF_ACCEPT], kinds)
            np.testing.assert_array_equal(f[features.HF_ACCEPT_COUNT], acc > 2 * np.arange(27))
            waits = np.zeros(27, np.int8)
            if s == 0:
                wait_mask_counts(wt, c.copy(), gold, waits)
                checked["ready"] += 1
            np.testing.assert_array_equal(f[features.HF_WAITS], waits)
            if o[P_PHASE, PC_CLAIM] and o[P_CLAIM_TILE].any():
                checked["claim"] += 1
                t = int(np.flatnonzero(o[P_CLAIM_TILE])[0])
                if t != gold and c[t] >= 2:  # peng: two tiles leave, then the best discard
                    c[t] -= 2
                    after = min((_after_discard(st, c, gold, k) for k in range(27) if c[k] and k != gold), default=99)
                    c[t] += 2
                    assert f[features.HF_CLAIM_BETTER, 0] == (after < s)
    assert checked["turn"] > 200 and checked["claim"] > 20 and checked["ready"] > 5


def _melds_only_missing(st, c, gold, mm):
    """Fewest missing slots for mm melds (no pair) from the non-gold tiles: the shanten table's
    pair-free column, split over the suits like ``shanten_counts``."""
    keys = suit_keys(c, gold)
    return min(
        int(st[keys[0], m0, 0]) + int(st[keys[1], m1, 0]) + int(st[keys[2], mm - m0 - m1, 0])
        for m0 in range(mm + 1)
        for m1 in range(mm - m0 + 1)
    )


def _after_discard(st, c, gold, k):
    c[k] -= 1
    s = shanten_counts(st, c, gold)
    c[k] += 1
    return s


def test_with_hand_features_appends_after_the_base_planes(observations):
    obs = observations[:50]
    both = features.with_hand_features(obs)
    assert both.shape == (50, NUM_CHANNELS + features.HF_NUM_PLANES, 27)
    np.testing.assert_array_equal(both[:, :NUM_CHANNELS], obs)
    np.testing.assert_array_equal(both[:, NUM_CHANNELS:], features.feature_planes(obs))
    assert len(features.hf_plane_names()) == features.HF_NUM_PLANES
    assert not features.feature_planes(np.zeros((2, NUM_CHANNELS, 27), np.int8)).any()  # no game: no features
