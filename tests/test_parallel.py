"""``fzmj_env.parallel_env``: PettingZoo's parallel API test, the same games as the AEC env,
pass-only masks for the seats that do not act, the end of a game, illegal actions, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel

import fzmj_env
from fzmj_env.actions import A_PASS, substitute_action
from fzmj_env.aec import AGENTS


def test_parallel_api_test_passes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the test's own reset(options={"options": 1}) warns (unknown option)
        parallel_api_test(fzmj_env.parallel_env(), num_cycles=1000)
        parallel_api_test(fzmj_env.parallel_env(hands_per_game=2, obs_dtype="float32", flatten=True), num_cycles=1000)


def _play_both(seed, hands_per_game=1):
    """Random legal decisions in the parallel env, the same decisions in the AEC env, checked step by step."""
    rng = np.random.default_rng(seed)
    par = fzmj_env.parallel_env(hands_per_game=hands_per_game)
    aec = fzmj_env.env(hands_per_game=hands_per_game)
    obs, infos = par.reset(seed=seed)
    aec.reset(seed=seed)
    totals = dict.fromkeys(AGENTS, 0.0)
    steps = 0
    while par.agents:
        agent = aec.agent_selection
        np.testing.assert_array_equal(par.state(), aec.unwrapped.state())
        want = aec.observe(agent)
        np.testing.assert_array_equal(obs[agent]["observation"], want["observation"])
        np.testing.assert_array_equal(obs[agent]["action_mask"], want["action_mask"])
        assert infos[agent]["to_act"] == 1
        for other in AGENTS:
            if other != agent:  # a pass-only mask, and whatever it sends is ignored
                assert np.flatnonzero(obs[other]["action_mask"]).tolist() == [A_PASS]
                assert infos[other]["to_act"] == 0
        a = int(rng.choice(np.flatnonzero(want["action_mask"])))
        actions = {x: 999 for x in AGENTS} | {agent: a}  # out-of-range junk from the others is ignored
        obs, rew, term, trunc, infos = par.step(actions)
        aec.step(a)
        for x in AGENTS:
            assert rew[x] == aec.rewards[x]  # the same step's rewards (the AEC env's, before accumulation)
            totals[x] += rew[x]
        steps += 1
    assert all(aec.terminations.values())
    for x in AGENTS:
        assert np.flatnonzero(obs[x]["action_mask"]).tolist() == [A_PASS]  # valid masks at the end
        assert term[x] and not trunc[x]
    return steps, totals


@pytest.mark.parametrize("hands_per_game", [1, 3])
def test_same_games_as_the_aec_env(hands_per_game):
    for seed in range(4):
        steps, totals = _play_both(seed, hands_per_game)
        assert steps > 0
        assert sum(totals.values()) == pytest.approx(0.0)  # payments sum to zero (R11.4)


def test_rewards_equal_hand_results_and_infos():
    env = fzmj_env.parallel_env(hands_per_game=2, info="numeric")
    rng = np.random.default_rng(1)
    obs, infos = env.reset(seed=3)
    points = np.zeros(4)
    got = np.zeros(4)
    hands = 0
    while env.agents:
        agent = next(a for a in AGENTS if infos[a]["to_act"])
        a = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        obs, rew, term, trunc, infos = env.step({agent: a})
        got += [rew[x] for x in AGENTS]
        if infos["player_0"]["hand_over"]:
            hands += 1
            points += infos["player_0"]["points"]
    assert hands == 2 and got.tolist() == points.tolist()
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": A_PASS})


def test_aec_to_parallel_says_why_not():
    with pytest.raises(AssertionError):
        aec_to_parallel(fzmj_env.raw_env())
    assert "fixed cycle" in fzmj_env.raw_env.parallel_note and "parallel_env" in fzmj_env.raw_env.parallel_note
    assert fzmj_env.raw_env.metadata["is_parallelizable"] is False


def _illegal(obs, agent):
    return int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])


def test_illegal_action_modes():
    env = fzmj_env.parallel_env()
    obs, infos = env.reset(seed=0)
    agent = next(a for a in AGENTS if infos[a]["to_act"])
    with pytest.raises(fzmj_env.IllegalActionError):
        env.step({agent: _illegal(obs, agent)})

    env = fzmj_env.parallel_env(illegal_action="terminate", illegal_reward=-3.0)
    obs, infos = env.reset(seed=0)
    obs, rew, term, trunc, infos = env.step({agent: _illegal(obs, agent)})
    assert all(term.values()) and env.agents == [] and rew[agent] == -3.0 and infos[agent]["illegal_action"] == 1
    assert sum(rew.values()) == -3.0 and all(
        np.flatnonzero(o["action_mask"]).tolist() == [A_PASS] for o in obs.values()
    )

    sub = fzmj_env.parallel_env(illegal_action="substitute", illegal_reward=-0.5)
    ref = fzmj_env.parallel_env()
    obs, infos = sub.reset(seed=0)
    ref.reset(seed=0)
    legal = substitute_action(obs[agent]["action_mask"])
    obs, rew, term, trunc, infos = sub.step({agent: _illegal(obs, agent)})
    _, rew_ref, *_ = ref.step({agent: legal})
    np.testing.assert_array_equal(sub.state(), ref.state())  # the substitute was played
    assert infos[agent]["illegal_action"] == 1 and rew[agent] == rew_ref[agent] - 0.5


@pytest.mark.parametrize("bad", [1.0, True, "3", np.array([3]), np.array(2.0), -1, 62, 2**70, None])
def test_bad_actions_are_value_errors(bad):
    env = fzmj_env.parallel_env(illegal_action="substitute")
    obs, infos = env.reset(seed=0)
    agent = next(a for a in AGENTS if infos[a]["to_act"])
    with pytest.raises(ValueError, match="action must be an integer"):
        env.step({agent: bad})


def test_zero_d_array_and_numpy_ints_are_actions():
    for conv in (int, np.int32, np.int64, np.uint8, np.array):
        env = fzmj_env.parallel_env()
        obs, infos = env.reset(seed=0)
        agent = next(a for a in AGENTS if infos[a]["to_act"])
        a = int(np.flatnonzero(obs[agent]["action_mask"])[0])
        env.step({agent: conv(a)})  # accepted as the legal action it is


def test_bad_arguments():
    for kw in ({"illegal_action": "ignore"}, {"illegal_reward": float("nan")}, {"hands_per_game": 0}, {"info": "x"}):
        with pytest.raises(ValueError):
            fzmj_env.parallel_env(**kw)
    env = fzmj_env.parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="is to act"):
        env.step({})
    with pytest.raises(ValueError, match="dict"):
        env.step([0])
