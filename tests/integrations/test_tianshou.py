"""Tianshou on fzmj: its ``PettingZooEnv`` over the AEC env with ``info="numeric"``
and a collector over ``SingleSeatEnv`` that fills a replay buffer and runs a DQN update; the
example end to end. Needs ``tianshou`` (CI installs it)."""

from __future__ import annotations

import numpy as np
import pytest

from fzmj_env.encode import NUM_CHANNELS

pytest.importorskip("tianshou", reason="tianshou not installed (pip install tianshou==2.0.1)")

import torch  # noqa: E402
from tianshou.algorithm import DQN  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402

import fzmj_env  # noqa: E402
from fzmj.integrations.tianshou import TianshouAgent, make_env  # noqa: E402


def test_pettingzoo_env_with_numeric_infos_fills_a_buffer():
    """Tianshou's own PettingZooEnv over the AEC env: numeric infos store in its buffer."""
    from tianshou.data import ReplayBuffer
    from tianshou.data.batch import Batch

    env = PettingZooEnv(fzmj_env.env(obs_dtype="float32", flatten=True, info="numeric", hands_per_game=2))
    buf = ReplayBuffer(10_000)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    n = 0
    hand_ends = 0
    while n < 2000:
        act = int(rng.choice(np.flatnonzero(obs["mask"])))
        obs_next, rew, term, trunc, info = env.step(act)
        buf.add(
            Batch(
                obs=obs,
                act=act,
                rew=np.asarray(rew, dtype=np.float32),
                terminated=term,
                truncated=trunc,
                obs_next=obs_next,
                info=info,
            )
        )
        hand_ends += int(info["hand_over"])
        n += 1
        obs = obs_next
        if term or trunc:
            obs, info = env.reset()
    assert len(buf) == 2000 and hand_ends > 0
    points = buf.info.points[: len(buf)]
    assert points.shape == (2000, 4) and (points.sum(axis=1) == 0).all()  # stored as numbers; scores are zero-sum
    assert (buf.info.hand_over[: len(buf)] == 1).sum() == hand_ends


def test_collect_and_update_dqn():
    torch.set_num_threads(1)
    envs = DummyVectorEnv([lambda: make_env(opponents="random", seat="rotate", reward_scale=0.05) for _ in range(2)])
    envs.seed(0)
    net = Net(state_shape=NUM_CHANNELS * 27, action_shape=62, hidden_sizes=[64])
    space = make_env().action_space
    policy = DiscreteQLearningPolicy(model=net, action_space=space, eps_training=0.2)
    algo = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), target_update_freq=10)
    buf = VectorReplayBuffer(2000, 2)
    collector = Collector(algo, envs, buf, exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_step=300)
    assert stats.n_collected_steps >= 300 and stats.n_collected_episodes > 0
    data, _ = buf.sample(0)  # everything stored
    mask, acts = data.obs.mask, data.act
    assert len(acts) == len(buf) >= 300
    assert mask[np.arange(len(acts)), acts].all()  # every collected action was legal
    before = [p.detach().clone() for p in net.parameters()]
    from tianshou.utils.torch_utils import policy_within_training_step

    with policy_within_training_step(policy):
        algo.update(buffer=buf, sample_size=64)
    assert any((p.detach() != b).any() for p, b in zip(net.parameters(), before, strict=True))
    agent = TianshouAgent(policy)
    obs = np.zeros((2, NUM_CHANNELS, 27), np.int8)
    m = np.zeros((2, 62), np.int8)
    m[:, 30] = 1
    assert agent.act(obs, m).tolist() == [30, 30]


def test_tianshou_example_runs(run_example):
    out = run_example("tianshou_dqn.py", "--timesteps", "300", "--hands", "16", "--n-envs", "2")
    assert "illegal actions in the replay buffer: 0 of" in out  # warm-up and training draw legal actions only


def test_terminal_observation_has_a_valid_mask():
    """The observation returned with ``terminated`` carries a pass-only ``mask`` (Tianshou masks Q-values with it)."""
    from fzmj_env.actions import A_PASS

    env = make_env(opponents="random")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    term = False
    while not term:
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
    assert np.flatnonzero(obs["mask"]).tolist() == [A_PASS] and not obs["obs"].any()


def test_tianshou_example_learns_at_its_default_size(learns):
    # the default 20,000 steps, seed 0: +0.92 [+0.27, +1.58] over 2,000 hands, about 2 min (docs/integrations.md)
    learns("tianshou_dqn.py", "--seed", "0")
