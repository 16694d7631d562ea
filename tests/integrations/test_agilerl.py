"""AgileRL: the masked-DQN example end to end (a few hundred steps), and its agent legal-only.

Needs ``agilerl`` and ``peft`` (``pip install fzmj[agilerl]``: AgileRL imports peft without
declaring it). CI runs this in a venv of its own (``.venv-agilerl``, see ``.ci/run``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("agilerl", reason="agilerl not installed (pip install fzmj[agilerl])")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))


def test_agilerl_agent_plays_only_legal_actions():
    from agilerl.algorithms import DQN
    from agilerl_dqn import AgileRLAgent

    from fzmj.integrations.gymnasium import SingleSeatVectorEnv
    from fzmj_env.encode import NUM_CHANNELS

    env = SingleSeatVectorEnv(2, opponents="random", obs_dtype="float32", flatten=True)
    dqn = DQN(
        env.single_observation_space, env.single_action_space, net_config={"encoder_config": {"hidden_size": [16]}}
    )
    agent = AgileRLAgent(dqn)
    obs = np.zeros((3, NUM_CHANNELS, 27), np.int8)
    mask = np.zeros((3, 62), np.int8)
    mask[0, 61] = mask[1, 5] = mask[2, 59] = 1
    assert agent.act(obs, mask).tolist() == [61, 5, 59]


def test_agilerl_example_runs(run_example):
    run_example("agilerl_dqn.py", "--steps", "400", "--hands", "16", "--num-envs", "4")
