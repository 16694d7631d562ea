"""Numba kernels reached with unchecked input.

Every public entry point that feeds a kernel (the hand API, ``VectorEnv``, the agents' ``act``,
the policies) checks shapes, dtypes and ranges first and raises ``ValueError`` naming what is
wrong. A regression here would often crash the test process itself (a segfault), which fails
the suite just the same.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fzmj_env as F
from fzmj.agents.base import as_batch
from fzmj.agents.heuristic import HeuristicAgent
from fzmj.agents.random_agent import RandomAgent
from fzmj.train.model import ActorCritic, BinaryLinear
from fzmj_env.core.hand import is_win_batch
from fzmj_env.encode import NUM_CHANNELS

OBS = (NUM_CHANNELS, 27)


def _valid_batch(n=64, seed=0):
    """n random 14-tile hands (counts 0..4) and golds, with the engine's answers from is_win."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, 27), np.int8)
    for r in range(n):
        while counts[r].sum() < 14:
            k = rng.integers(27)
            if counts[r, k] < 4:
                counts[r, k] += 1
    return counts, rng.integers(0, 27, n)


# ---- is_win_batch (R1, R5, R9.1) -------------------------------------------------------------
def test_is_win_batch_huge_gold_raises_instead_of_crashing():
    """The issue's example: a gold of 10**6 killed the interpreter."""
    with pytest.raises(ValueError, match=r"gold\[0\] = 1000000 is not a suit kind 0..26"):
        is_win_batch(np.zeros((1, 27), np.int8), np.array([10**6]))


@pytest.mark.parametrize("gold", [27, 33, 1000, -1, -(2**40), 2**62])
def test_is_win_batch_gold_outside_suits(gold):
    counts, golds = _valid_batch(8)
    golds[5] = gold
    with pytest.raises(ValueError, match=r"gold\[5\]"):
        is_win_batch(counts, golds)


def test_is_win_batch_uint64_gold_above_2_63():
    counts, _ = _valid_batch(2)
    with pytest.raises(ValueError, match=r"gold\[1\]"):
        is_win_batch(counts, np.array([0, 2**64 - 1], np.uint64))


@pytest.mark.parametrize("value", [5, 7, 8, 100, 127, -1, -128])
@pytest.mark.parametrize("col", [0, 8, 9, 17, 18, 26])  # both ends of each suit's word
def test_is_win_batch_count_outside_0_4(value, col):
    counts, golds = _valid_batch(8)
    counts[3, col] = value
    with pytest.raises(ValueError, match=r"counts row 3: every count must be 0..4"):
        is_win_batch(counts, golds)


def test_is_win_batch_wide_dtypes_are_checked_before_the_int8_cast():
    """260 as int64 would wrap to 4 in int8: a silently wrong answer without the check."""
    counts, golds = _valid_batch(4)
    wide = counts.astype(np.int64)
    wide[2, 0] = 260
    with pytest.raises(ValueError, match="counts row 2"):
        is_win_batch(wide, golds)
    u8 = counts.astype(np.uint8)
    u8[1, 4] = 200  # int8 -56
    with pytest.raises(ValueError, match="counts row 1"):
        is_win_batch(u8, golds)


@pytest.mark.parametrize("tiles", [0, 1, 3, 4, 13, 15])
def test_is_win_batch_rows_must_hold_3n_plus_2(tiles):
    """A 3n+1 hand with spare golds used to be answered True."""
    row = np.zeros(27, np.int8)
    for i in range(tiles):
        row[(i * 5) % 27] += 1
    with pytest.raises(ValueError, match="3n\\+2"):
        is_win_batch(row[None], np.array([0]))


def test_is_win_batch_shapes_and_dtypes():
    with pytest.raises(ValueError, match=r"\(B, 27\)"):
        is_win_batch(np.zeros((2, 42), np.int8), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="gold must have shape"):
        is_win_batch(np.zeros((2, 27), np.int8), np.zeros((2, 1), np.int64))
    with pytest.raises(ValueError, match="integer"):
        is_win_batch(np.zeros((2, 27), np.int8), np.zeros(2))
    with pytest.raises(ValueError, match="integer"):
        is_win_batch(np.zeros((2, 27), bool), np.zeros(2, np.int64))


def test_is_win_batch_valid_rows_still_agree_with_is_win():
    counts, golds = _valid_batch(300, seed=3)
    out = is_win_batch(counts, golds)
    assert out.tolist() == [F.is_win(counts[r], int(golds[r])) for r in range(len(golds))]
    assert is_win_batch(np.zeros((0, 27), np.int8), np.zeros(0, np.int64)).shape == (0,)
    # a non-contiguous view and other integer dtypes give the same answers
    assert (is_win_batch(counts[::2].astype(np.int32), golds[::2].astype(np.uint8)) == out[::2]).all()


# ---- the rest of the hand API (its neighbours) ---------------------------------------------------
@pytest.mark.parametrize("fn", [F.is_win, F.waits, F.shanten, F.special_shapes])
@pytest.mark.parametrize("gold", [27, 10**6, -1, True, 2.0, "1z"])
def test_hand_api_refuses_bad_golds(fn, gold):
    hand = "123m456p789s11m" if fn is not F.waits else "123m456p789s1m"
    with pytest.raises(ValueError):
        fn(hand, gold)


@pytest.mark.parametrize("fn", [F.is_win, F.shanten, F.special_shapes])
def test_hand_api_refuses_bad_counts(fn):
    counts = np.zeros(27, np.int64)
    counts[0] = 5
    with pytest.raises(ValueError, match="only 4"):
        fn(counts, 3)
    counts[0] = -1
    with pytest.raises(ValueError, match="negative"):
        fn(counts, 3)
    with pytest.raises(ValueError, match="length 27"):
        fn(np.zeros(26, np.int64), 3)


# ---- VectorEnv.step / reset ---------------------------------------------------------------------
def test_vector_env_is_exported_as_the_readme_uses_it():
    from fzmj_env.vector import VectorEnv

    assert F.VectorEnv is VectorEnv and "VectorEnv" in F.__all__


def test_vector_env_step_refuses_bad_actions():
    env = F.VectorEnv(4, seed=0)
    _, mask, _ = env.reset()
    good = mask.argmax(1)
    for bad, what in [
        (good[:3], "shape"),
        (good.astype(float), "integers"),
        (np.full(4, 10**12), "illegal action"),
        (np.full(4, -1), "illegal action"),
    ]:
        with pytest.raises(ValueError, match=what):
            env.step(bad)
    env.step(good)  # still usable


def test_vector_env_reset_refuses_bad_seeds():
    env = F.VectorEnv(2, seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.reset(seeds=[1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        env.reset(seeds=[1, -2])
    with pytest.raises(ValueError, match="non-negative integers"):
        env.reset(seeds=[1.0, 2.0])


# ---- agents ---------------------------------------------------------------------------------------
def _obs_mask(n=4):
    env = F.VectorEnv(n, seed=1)
    obs, mask, _ = env.reset()
    return obs.copy(), mask.copy()


@pytest.mark.parametrize("agent", [HeuristicAgent(), RandomAgent(0)], ids=["heuristic", "random"])
@pytest.mark.parametrize("shape", [(4, 5, 27), (4, 97, 5), (4, 134, 27), (4, 20000, 27), (4, 97, 27, 1)])
def test_agents_refuse_wrong_observation_shapes(agent, shape):
    """The issue's example: the heuristic answered (4, 5, 27) and (4, 97, 5)."""
    _, mask = _obs_mask()
    with pytest.raises(ValueError, match="obs"):
        agent.act(np.zeros(shape, np.int8), mask)


def test_as_batch_checks_values_dtypes_and_masks():
    obs, mask = _obs_mask()
    as_batch(obs, mask)  # fine
    as_batch(obs[0], mask[0])  # a single observation
    bad = obs.copy()
    bad[1, 3, 4] = 2
    with pytest.raises(ValueError, match="only 0 and 1"):
        as_batch(bad, mask)
    with pytest.raises(ValueError, match="dtype"):
        as_batch(obs.astype(np.float32), mask)
    with pytest.raises(ValueError, match="mask must have shape"):
        as_batch(obs, mask[:, :61])
    with pytest.raises(ValueError, match=rf"mask \(N, 62\), got \(4, {NUM_CHANNELS}, 27\) and \(3, 62\)"):
        as_batch(obs, mask[:3])
    no_legal = mask.copy()
    no_legal[2] = 0
    with pytest.raises(ValueError, match="row 2 has no legal action"):
        as_batch(obs, no_legal)
    as_batch(bad, mask, check_values=False)  # the random agent does not read the values: shape and dtype only
    with pytest.raises(ValueError, match="dtype"):
        as_batch(obs.astype(np.float32), mask, check_values=False)
    m2 = mask.astype(np.int64)
    m2[0, 0] = 256  # would wrap to 0 in int8
    with pytest.raises(ValueError, match="only 0 and 1"):
        as_batch(obs, m2)


# ---- PPO policies (the sparse CPU first layer) -------------------------------------------------
@pytest.fixture(scope="module")
def policies():
    torch.manual_seed(0)
    return {
        "sparse": ActorCritic("mlp", [16], input_layer="sparse"),
        "dense": ActorCritic("mlp", [16], input_layer="dense"),
        "resnet": ActorCritic("resnet", [16], res_channels=4, res_blocks=1),
    }


@pytest.mark.parametrize("kind", ["sparse", "dense", "resnet"])
@pytest.mark.parametrize("channels", [134, 20000, 96, 5])
def test_policy_act_refuses_wrong_observation_shapes(policies, kind, channels):
    """The issue's example: (4, 134, 27) gave values near 1e12 on the sparse path, (4, 20000, 27) a segfault."""
    _, mask = _obs_mask()
    obs = torch.zeros((4, channels, 27), dtype=torch.int8)
    obs[:, :5] = 1
    with pytest.raises(ValueError, match="obs must have shape"):
        policies[kind].act(obs, torch.tensor(mask))


def test_policy_act_refuses_bad_values_and_masks(policies):
    obs, mask = _obs_mask()
    p = policies["sparse"]
    p.act(torch.tensor(obs), torch.tensor(mask), deterministic=True)
    bad = torch.tensor(obs).clone()
    bad[0, 0, 0] = 3
    with pytest.raises(ValueError, match="only 0 and 1"):
        p.act(bad, torch.tensor(mask))
    with pytest.raises(ValueError, match="dtype"):
        p.act(torch.tensor(obs).float(), torch.tensor(mask))
    m = torch.tensor(mask).clone()
    m[1] = 0
    with pytest.raises(ValueError, match="no legal action"):
        p.act(torch.tensor(obs), m)


@pytest.mark.parametrize("mode", ["sparse", "dense"])
def test_binary_linear_checks_its_width_on_every_forward(mode):
    """The trainer calls the trunk directly (get_action_and_value): the width check guards it too."""
    layer = BinaryLinear(97 * 27, 8, mode)
    layer(torch.zeros((2, 97 * 27), dtype=torch.int8))
    with pytest.raises(ValueError, match="rows of 2619 values"):
        layer(torch.ones((2, 134 * 27), dtype=torch.int8))
    p = ActorCritic("mlp", [8], input_layer=mode)
    with pytest.raises(ValueError, match=f"takes {NUM_CHANNELS} observation planes, got 20000"):
        p.get_action_and_value(torch.ones((2, 20000, 27), dtype=torch.int8), torch.ones((2, 62), dtype=torch.int8))


def test_ppo_agent_checks_through_as_batch(tmp_path):
    from fzmj.agents.checkpoint import save_checkpoint
    from fzmj.agents.ppo_agent import PPOAgent

    path = save_checkpoint(tmp_path / "p.pt", ActorCritic("mlp", [8]))
    agent = PPOAgent(path)
    obs, mask = _obs_mask()
    assert agent.act(obs, mask).shape == (4,)
    with pytest.raises(ValueError, match="obs"):
        agent.act(np.zeros((4, 134, 27), np.int8), mask)
