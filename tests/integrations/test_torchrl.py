"""TorchRL on fzmj: its ``PettingZooWrapper`` over the AEC and Parallel envs (``info="numeric"``)
through whole games, and the PPO example end to end. Needs ``torchrl`` (``pip install fzmj[torchrl]``;
CI installs it)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="torchrl not installed (pip install fzmj[torchrl])")

import torch  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402

import fzmj_env  # noqa: E402


def _wrap(env):
    with warnings.catch_warnings():  # "PettingZoo in TorchRL is tested using version == 1.24.3"
        warnings.simplefilter("ignore")
        return PettingZooWrapper(env, use_mask=True)


@pytest.mark.parametrize("parallel", [False, True])
def test_pettingzoo_wrapper_plays_past_the_end_of_games(parallel):
    """The documented snippet: rollouts that run through game ends (the default ``info="full"`` puts a
    ``result`` dict in the infos when a hand ends, which TorchRL cannot store: its info spec is
    fixed at the first reset)."""
    make = fzmj_env.parallel_env if parallel else fzmj_env.env
    env = _wrap(make(obs_dtype="float32", info="numeric"))
    env.set_seed(0)
    td = env.rollout(3000, break_when_any_done=False)
    groups = list(env.group_map)  # AEC: one group per seat; Parallel: one group "player" of four
    assert sum(len(env.group_map[g]) for g in groups) == 4
    assert td["next", "done"].sum() >= 2  # several games ended and the rollout went on
    rew = torch.cat([td["next", g, "reward"].reshape(len(td), -1) for g in groups], dim=1)  # (steps, 4)
    assert torch.allclose(rew.sum(1), torch.zeros(len(rew)))  # scores are zero-sum, step by step
    assert (rew.abs().sum(1) > 0).any()  # someone won a hand
    for g in groups:  # every action of a seat that was to act was legal in its mask
        act, legal, acting = td[g, "action"], td[g, "action_mask"], td[g, "mask"]
        chosen = legal.gather(-1, act.long().unsqueeze(-1)).squeeze(-1)
        assert chosen[acting].all() and acting.any()


def test_pettingzoo_wrapper_with_full_infos_is_refused_by_torchrl():
    """What the docs warn about: with ``info="full"`` TorchRL's wrapper fails when the first hand ends."""
    env = _wrap(fzmj_env.parallel_env(obs_dtype="float32"))
    env.set_seed(0)
    with pytest.raises(Exception, match="dict|result"):
        env.rollout(3000, break_when_any_done=True)


def test_torchrl_agent_is_greedy_over_legal_actions():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from torchrl_ppo import TorchRLAgent

    from fzmj_env.encode import NUM_CHANNELS

    net = torch.nn.Linear(NUM_CHANNELS * 27, 62)
    agent = TorchRLAgent(net)
    obs = np.zeros((3, NUM_CHANNELS, 27), np.int8)
    mask = np.zeros((3, 62), np.int8)
    mask[0, 61] = mask[1, 5] = mask[2, 59] = 1
    assert agent.act(obs, mask).tolist() == [61, 5, 59]


def test_torchrl_example_runs(run_example):
    run_example("torchrl_ppo.py", "--frames", "512", "--hands", "16", "--n-envs", "2")


def test_torchrl_example_learns_at_its_ci_size(learns):
    # half the default size, seed 0: +1.59 [+0.50, +2.67] over 1,000 hands, about 1 min (docs/integrations.md)
    learns("torchrl_ppo.py", "--frames", "32768", "--hands", "1000", "--seed", "0")
