"""AEC env library options: ``obs_dtype``, ``flatten``, ``info`` modes; PettingZoo's
``api_test`` for every combination; the default stays the PettingZoo-classic int8 (99, 27)."""

from __future__ import annotations

import itertools
import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

import fzmj_env
from fzmj_env import encode

COMBOS = list(itertools.product(["int8", "float32"], [False, True], ["full", "numeric", "none"]))


@pytest.mark.parametrize("obs_dtype,flatten,info", COMBOS)
def test_api_test_every_option_combination(obs_dtype, flatten, info):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(fzmj_env.env(obs_dtype=obs_dtype, flatten=flatten, info=info, hands_per_game=2), num_cycles=200)


def _play(e, seed):
    """Random legal play of one game; yields (agent, obs, info) for every last()."""
    rng = random.Random(seed)
    e.reset(seed=seed)
    for agent in e.agent_iter(100_000):
        obs, _, term, trunc, info = e.last()
        yield agent, obs, info
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_default_is_pettingzoo_classic():
    e = fzmj_env.env()
    space = e.observation_space("player_0")
    assert space["observation"].shape == (encode.NUM_CHANNELS, encode.NUM_COLUMNS)
    assert space["observation"].dtype == np.int8 and space["action_mask"].dtype == np.int8
    results = [info["result"] for _, _, info in _play(e, 3) if "result" in info]
    assert results and isinstance(results[0]["points"], list)


@pytest.mark.parametrize("flatten", [False, True])
def test_float32_flat_observation_equals_int8(flatten):
    """Same seed, same game: the float32 / flat observation is the int8 one converted."""
    a = list(_play(fzmj_env.env(), 5))
    b = list(_play(fzmj_env.env(obs_dtype="float32", flatten=flatten), 5))
    assert len(a) == len(b)
    for (ag1, o1, _), (ag2, o2, _) in zip(a, b, strict=True):
        assert ag1 == ag2
        assert o2["observation"].dtype == np.float32 and o2["action_mask"].dtype == np.int8
        want = o1["observation"].reshape(-1) if flatten else o1["observation"]
        np.testing.assert_array_equal(o2["observation"], want.astype(np.float32))
        np.testing.assert_array_equal(o2["action_mask"], o1["action_mask"])


def test_numeric_info_fixed_keys_and_same_result():
    full = [info for _, _, info in _play(fzmj_env.env(hands_per_game=3), 11)]
    num = [info for _, _, info in _play(fzmj_env.env(hands_per_game=3, info="numeric"), 11)]
    assert len(full) == len(num)
    keys = set(num[0])
    seen = 0
    for f, n in zip(full, num, strict=True):
        assert set(n) == keys  # the same keys at every step
        for k, v in n.items():  # numbers and fixed-shape arrays only
            assert isinstance(v, (int, np.ndarray)), (k, v)
        assert n["points"].shape == (4,) and n["points"].dtype == np.int64
        if "result" in f:
            seen += 1
            r = f["result"]
            assert n["hand_over"] == 1
            assert n["points"].tolist() == r["points"]
            assert n["winner"] == (-1 if r["winner"] is None else r["winner"])
            assert n["value"] == r["value"] and n["hand_no"] == r["hand_no"]
        else:
            assert n["hand_over"] == 0 and n["winner"] == -1 and not n["points"].any()
    assert seen > 0


def test_info_none_has_no_result():
    infos = [info for _, _, info in _play(fzmj_env.env(hands_per_game=2, info="none"), 2)]
    assert all("result" not in i and "hand_over" not in i for i in infos)


@pytest.mark.parametrize(
    "kwargs",
    [{"obs_dtype": "int16"}, {"flatten": 1}, {"info": "dict"}, {"info": "numeric", "record": True}],
)
def test_bad_options_raise(kwargs):
    with pytest.raises(ValueError):
        fzmj_env.env(**kwargs)
