"""Golden hashes of the hand-feature planes and of the heuristic's decisions on seeded games.

The shipped ``pretrained`` policy was trained on these planes, so a refactor of
``fzmj_env/features.py`` must leave them bit-identical; the heuristic shares the kernels and
must keep every decision. The hashes were computed before the kernels were shared; a change
here means the planes (or the decisions) changed, never "update the hash".
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from fzmj.agents.heuristic import HeuristicAgent
from fzmj.agents.random_agent import RandomAgent
from fzmj_env.features import feature_planes, with_hand_features
from fzmj_env.vector import VectorEnv

PRESETS = ("fuzhou-lianzhong", "fuzhou-lianzhong-classic", "fuzhou-lianzhong-2", "fuzhou-bianfeng", "fuzhou-home")


def _games(rules: str, seed: int, tables: int = 16, steps: int = 120):
    """(observations, heuristic actions, masks) of ``tables`` games: the heuristic in seats 0 and 2,
    a seeded random player in seats 1 and 3 (more varied hands and claim windows than heuristic only)."""
    env = VectorEnv(tables, rules=rules, seed=seed, hands_per_game=2)
    obs, mask, seat = env.reset()
    h, r = HeuristicAgent(), RandomAgent(seed=seed)
    all_obs, all_act, all_mask = [], [], []
    for _ in range(steps):
        a_h = h.act(obs, mask)
        a_r = r.act(obs, mask)
        all_obs.append(obs.copy())
        all_act.append(a_h.copy())
        all_mask.append(mask.copy())
        obs, mask, seat, _, _, _ = env.step(np.where(seat % 2 == 0, a_h, a_r))
    return np.concatenate(all_obs), np.concatenate(all_act), np.concatenate(all_mask)


def _sha(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:24]


GOLDEN = {  # preset: (planes, planes appended to the observation, heuristic actions); 1920 positions each
    "fuzhou-lianzhong": ("f8ee1857b5a246eeb64c9333", "49bd943615ac41c3d8ad39d9", "60c279e35ca1ff5fe0528856"),
    "fuzhou-lianzhong-classic": ("bcf55747e782aef053807980", "22eaffa94206cc6cd0758754", "a9c3bc6fc149f3c4c0be9730"),
    "fuzhou-lianzhong-2": ("0b47d3723b4711895f8f5114", "9047ff7934c3c56192b03d1e", "856299acfabaf5d51258d1c0"),
    "fuzhou-bianfeng": ("c85e4b1831f83ff3bcdc0c4b", "e9c079c86ed3e2f242710baa", "cf7b313548b1f99023962e59"),
    "fuzhou-home": ("af2dcd6694053f7be53253cf", "2bed26133b399019dcaf81fc", "4df753eebf089a7dfd4c1032"),
}


@pytest.fixture(scope="module", params=PRESETS)
def games(request):
    return request.param, _games(request.param, seed=5 + PRESETS.index(request.param))


def test_feature_planes_and_heuristic_decisions_are_unchanged(games):
    rules, (obs, actions, _) = games
    got = (_sha(feature_planes(obs)), _sha(with_hand_features(obs)), _sha(actions))
    assert got == GOLDEN[rules]


def test_threaded_planes_and_decisions_match_the_goldens(games):
    """The trainer splits a large batch over its env threads (``threads``): the same planes and
    decisions, bit for bit, as the one-thread kernels' goldens."""
    import numba

    from fzmj_env.features import PARALLEL_MIN_ROWS

    threads = numba.config.NUMBA_NUM_THREADS
    if threads < 2:
        pytest.skip("one Numba thread on this machine: nothing to split")
    rules, (obs, actions, masks) = games
    assert obs.shape[0] >= 2 * PARALLEL_MIN_ROWS  # the batch is really split
    assert _sha(with_hand_features(obs, threads=threads)) == GOLDEN[rules][1]
    np.testing.assert_array_equal(HeuristicAgent(threads=threads).act(obs, masks), actions)


def test_threads_out_of_range_is_one_clear_error():
    import numba

    obs = np.zeros((4, 99, 27), np.int8)
    for bad in (0, numba.config.NUMBA_NUM_THREADS + 1, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="threads="):
            with_hand_features(obs, threads=bad)
        with pytest.raises(ValueError, match="threads="):
            HeuristicAgent(threads=bad).act(obs, np.ones((4, 62), np.int8))
