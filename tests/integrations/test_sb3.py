"""Stable-Baselines3 / sb3-contrib on ``SingleSeatEnv``: SB3's ``check_env``, and
MaskablePPO training a few hundred steps without one illegal action; the example end to end.

Needs ``stable-baselines3`` and ``sb3-contrib`` (``pip install fzmj[sb3]``; CI installs them)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fzmj_env.encode import NUM_CHANNELS

pytest.importorskip("stable_baselines3", reason="stable-baselines3 not installed (pip install fzmj[sb3])")
pytest.importorskip("sb3_contrib", reason="sb3-contrib not installed (pip install fzmj[sb3])")

import gymnasium  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from fzmj.integrations.gymnasium import SingleSeatEnv  # noqa: E402
from fzmj.integrations.sb3 import SB3Agent  # noqa: E402


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"obs_dtype": "float32", "flatten": True, "seat": "rotate"}, {"mask_in_obs": True, "obs_dtype": "float32"}],
)
def test_sb3_check_env(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SingleSeatEnv(opponents="random", **kwargs), warn=False)


class CountIllegal(gymnasium.Wrapper):
    """Counts learner actions outside its mask (the env would end the episode with -1)."""

    def __init__(self, env):
        super().__init__(env)
        self.illegal = 0
        self.steps = 0

    def step(self, action):
        self.steps += 1
        if not self.env.unwrapped.action_masks()[int(action)]:
            self.illegal += 1
        obs, r, term, trunc, info = self.env.step(action)
        self.illegal += int(info["illegal_action"])  # the env's own count agrees
        return obs, r, term, trunc, info

    def action_masks(self):
        return self.env.unwrapped.action_masks()


def test_maskable_ppo_trains_without_illegal_actions():
    envs = [
        CountIllegal(
            SingleSeatEnv(opponents="heuristic", seat="rotate", obs_dtype="float32", flatten=True, reward_scale=0.05)
        )
        for _ in range(2)
    ]
    vec = DummyVecEnv([lambda e=e: e for e in envs])
    model = MaskablePPO(
        "MlpPolicy", vec, n_steps=128, batch_size=64, n_epochs=2, seed=0, policy_kwargs={"net_arch": [64]}, verbose=0
    )
    model.learn(total_timesteps=512)
    assert sum(e.steps for e in envs) >= 512
    assert sum(e.illegal for e in envs) == 0
    agent = SB3Agent(model)
    obs = np.zeros((3, NUM_CHANNELS, 27), np.int8)
    mask = np.zeros((3, 62), np.int8)
    mask[:, 61] = 1
    assert agent.act(obs, mask).tolist() == [61, 61, 61] and agent.illegal_replaced == 0


def test_sb3_example_runs(run_example):
    out = run_example("sb3_maskable_ppo.py", "--timesteps", "256", "--hands", "16", "--n-envs", "2")
    assert "illegal choices replaced: 0" in out


def test_plain_ppo_learns_with_substitute_and_sb3agent_reads_the_model_space():
    """A mask-free PPO trains on ``illegal_action="substitute"`` (no episode cut short by an illegal
    action); ``SB3Agent`` feeds each model the observation form it was trained on."""
    from stable_baselines3 import PPO

    envs = [SingleSeatEnv(opponents="random", illegal_action="substitute", illegal_reward=-0.05) for _ in range(2)]
    vec = DummyVecEnv([lambda e=e: e for e in envs])
    model = PPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=128)
    agent = SB3Agent(model)  # (99, 27) int8 planes, as the env gave them
    assert not agent.flatten and agent.dtype == np.int8 and not agent.dict_obs
    obs = np.zeros((2, NUM_CHANNELS, 27), np.int8)
    mask = np.zeros((2, 62), np.int8)
    mask[:, 61] = 1
    assert agent.act(obs, mask).tolist() == [61, 61]  # any illegal choice -> substitute_action (pass here)
    with pytest.raises(ValueError, match="flatten"):
        SB3Agent(model, flatten=True)
    with pytest.raises(ValueError, match="obs_dtype"):
        SB3Agent(model, obs_dtype="float32")

    denv = SingleSeatEnv(opponents="random", mask_in_obs=True, obs_dtype="float32", flatten=True)
    dmodel = PPO("MultiInputPolicy", denv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    dagent = SB3Agent(dmodel)
    assert dagent.dict_obs and dagent.flatten and agent.act(obs, mask).shape == (2,)
    assert dagent.act(obs, mask).tolist() == [61, 61]


def test_sb3_example_learns_at_its_ci_size(learns):
    # half the default size, seed 0: +1.77 [+0.58, +2.96] over 1,000 hands, about 1 min (docs/integrations.md)
    learns("sb3_maskable_ppo.py", "--timesteps", "32768", "--hands", "1000", "--seed", "0")
