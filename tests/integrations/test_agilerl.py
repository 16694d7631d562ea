"""AgileRL: the masked-PPO example end to end (a few hundred steps), and its agent legal-only.

Needs ``agilerl`` and ``peft`` (``pip install fzmj[agilerl]``: AgileRL imports peft without
declaring it). CI runs this in a venv of its own (``.venv-agilerl``, see ``.ci/run``); the
example's learning check at its CI size is the last test here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("agilerl", reason="agilerl not installed (pip install fzmj[agilerl])")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))


def test_agilerl_agent_plays_only_legal_actions():
    from agilerl.algorithms import PPO
    from agilerl_ppo import AgileRLAgent

    from fzmj.integrations.gymnasium import SingleSeatVectorEnv
    from fzmj_env.encode import NUM_CHANNELS

    env = SingleSeatVectorEnv(2, opponents="random", obs_dtype="float32", flatten=True)
    ppo = PPO(
        env.single_observation_space,
        env.single_action_space,
        num_envs=2,
        net_config={"encoder_config": {"hidden_size": [16]}},
    )
    agent = AgileRLAgent(ppo)
    obs = np.zeros((3, NUM_CHANNELS, 27), np.int8)
    mask = np.zeros((3, 62), np.int8)
    mask[0, 61] = mask[1, 5] = mask[2, 59] = 1
    assert agent.act(obs, mask).tolist() == [61, 5, 59]


def test_agilerl_example_runs(run_example):
    out = run_example("agilerl_ppo.py", "--steps", "512", "--rollout", "64", "--hands", "16", "--num-envs", "4")
    assert "trained 512 learner steps" in out


def test_agilerl_example_learns_at_its_ci_size(learns):
    # half the default size, seed 0: +1.65 [+0.52, +2.78] over 1,000 hands, under 1 min (docs/integrations.md)
    learns("agilerl_ppo.py", "--steps", "32768", "--hands", "1000", "--seed", "0")
