"""``VectorEnv.step_tables``: stepping a subset of tables is stepping those tables."""

from __future__ import annotations

import numpy as np
import pytest

from fzmj_env.vector import VectorEnv


def first_legal(mask):
    return mask.argmax(1).astype(np.int64)


def test_subset_steps_equal_full_steps_and_leave_others_untouched():
    B = 6
    full = VectorEnv(B, seed=3, hands_per_game=2)
    part = VectorEnv(B, seed=3, hands_per_game=2)
    fo, fm, fs = full.reset()
    po, pm, ps = part.reset()
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = first_legal(fm)
        fo, fm, fs, fr, fd, fi = full.step(a)
        fo, fm, fs, fr, fd = fo.copy(), fm.copy(), fs.copy(), fr.copy(), fd.copy()
        # the same actions, in two calls over a random split of the tables (in shuffled order)
        order = rng.permutation(B)
        k = int(rng.integers(0, B + 1))
        rew = np.zeros((B, 4))
        done = np.zeros(B, dtype=bool)
        for group in (order[:k], order[k:]):
            before = po.copy(), pm.copy(), ps.copy()
            po, pm, ps, pr, pd, pi = part.step_tables(group, a[group])
            others = np.setdiff1d(np.arange(B), group)
            np.testing.assert_array_equal(po[others], before[0][others])
            np.testing.assert_array_equal(pm[others], before[1][others])
            np.testing.assert_array_equal(ps[others], before[2][others])
            assert not pr[others].any() and not pd[others].any() and not pi["pending_reward"][others].any()
            rew[group] = pr[group]
            done[group] = pd[group]
        np.testing.assert_array_equal(po, fo)
        np.testing.assert_array_equal(pm, fm)
        np.testing.assert_array_equal(ps, fs)
        np.testing.assert_array_equal(rew, fr)
        np.testing.assert_array_equal(done, fd)


@pytest.mark.parametrize(
    "tables,actions,match",
    [
        ([0, 0], None, "distinct"),
        ([5], None, r"in 0\.\.3"),
        ([-1], None, r"in 0\.\.3"),
        ([[0]], None, "1-D"),
        ([0, 1], [1.5, 2.0], "integers"),
        ([1], [99], "illegal action at table 1"),
    ],
)
def test_bad_subsets_raise(tables, actions, match):
    env = VectorEnv(4, seed=0)
    obs, mask, seat = env.reset()
    tables = np.asarray(tables)
    if actions is None:
        actions = first_legal(mask)[tables.reshape(-1) % 4].reshape(tables.shape)
    with pytest.raises(ValueError, match=match):
        env.step_tables(tables, np.asarray(actions))
