"""Tianshou DQN (with action masks) on one seat against three agents, then fzmj-eval's duplicate evaluation.

    pip install "fzmj[tianshou]"
    python examples/tianshou_dqn.py                # the default size: 20,000 learner steps

Trains a masked double DQN (3-step returns; epsilon 1 -> 0.05 over the first half; optional
potential-based shanten shaping, ``--shaping 0.1``, 0 for none) for ``--timesteps`` learner
steps on ``SingleSeatEnv`` (through ``fzmj.integrations.tianshou.make_env``: observation
``{"obs", "mask"}``, the names Tianshou's policies read; seat rotated every game), then plays
the greedy policy against the same opponents with ``fzmj.agents.evaluate.evaluate`` and prints
the learning verdict (``examples/_verdict.py``).

At this default size it **learns**: +0.92 [+0.27, +1.58] points/hand vs 3 random over 2,000
hands, in 1.3 minutes on the shared 2-core machine (docs/integrations.md). It took 6.3 minutes
before the replay buffer's NaN check stopped deep-copying the buffer (``replay_buffer``). The
old default (4,000 steps, unmasked warm-up) scored -1.31 [-2.39, -0.23].
"""

from __future__ import annotations

import argparse
import time

import gymnasium


class ShantenShaping(gymnasium.Wrapper):
    """Adds ``coef * (gamma * phi(next) - phi(now))`` to each reward, ``phi`` = -shanten of the own hand
    (``_verdict.shanten_potential``; 0 once the game is over): potential-based shaping, the optimal
    policy unchanged. The evaluation scores the game's points only."""

    def __init__(self, env, coef: float, gamma: float):
        super().__init__(env)
        self.coef, self.gamma, self.phi = coef, gamma, 0.0

    def _potential(self, obs) -> float:
        from _verdict import shanten_potential

        return float(shanten_potential(obs["obs"])[0])

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.phi = self._potential(obs)
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated else self._potential(obs)
        reward += self.coef * (self.gamma * phi - self.phi)
        self.phi = phi
        return obs, reward, terminated, truncated, info


def replay_buffer(size: int, n_envs: int):
    """Tianshou's ``VectorReplayBuffer`` with its NaN check done on the stored arrays in place.

    Tianshou's trainer checks the whole buffer for NaN after every collect step, and
    ``Batch.hasnull`` deep-copies the buffer to do it: with 20,000 observations that copy was
    most of the run (about half of it system time, allocating). Same check, no copy."""
    import numpy as np
    from tianshou.data import Batch, VectorReplayBuffer

    def float_arrays(batch):
        for value in batch.values():
            if isinstance(value, Batch):
                yield from float_arrays(value)
            elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
                yield value

    class Buffer(VectorReplayBuffer):
        def hasnull(self) -> bool:
            return any(np.isnan(a).any() for a in float_arrays(self._meta))

    return Buffer(size, n_envs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timesteps", type=int, default=20000)
    p.add_argument("--opponents", default="random", help="agent spec of the three opponents (default random)")
    p.add_argument("--hands", type=int, default=2000, help="evaluation hands (duplicate format)")
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--updates-per-step", type=float, default=0.25, help="gradient steps per collected step")
    p.add_argument("--n-step", type=int, default=3, help="n-step return horizon")
    p.add_argument("--buffer", type=int, default=20_000)
    p.add_argument("--warmup", type=int, default=512, help="steps collected at epsilon 1 before training")
    p.add_argument("--explore-fraction", type=float, default=0.5, help="epsilon decays over this part")
    p.add_argument("--eps-end", type=float, default=0.05)
    p.add_argument("--target-update", type=int, default=200)
    p.add_argument("--shaping", type=float, default=0.1, help="shanten shaping coefficient (0: the game's points only)")
    args = p.parse_args(argv)

    import numpy as np
    import torch
    from _verdict import learning_verdict
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step

    from fzmj.integrations.tianshou import TianshouAgent, make_env

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy draws from numpy's global generator
    t0, c0 = time.perf_counter(), time.process_time()

    def env_fn():
        env = make_env(opponents=args.opponents, seat="rotate", reward_scale=0.05, obs_dtype="int8")  # the net casts
        return ShantenShaping(env, args.shaping, 0.99) if args.shaping else env

    train_envs = DummyVectorEnv([env_fn for _ in range(args.n_envs)])
    train_envs.seed(args.seed)
    space = env_fn().observation_space
    net = Net(state_shape=space["obs"].shape, action_shape=62, hidden_sizes=[args.hidden, args.hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env_fn().action_space, eps_training=1.0)
    algo = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=args.lr),
        gamma=0.99,
        n_step_return_horizon=args.n_step,
        target_update_freq=args.target_update,
    )
    buffer = replay_buffer(args.buffer, args.n_envs)
    collector = Collector(algo, train_envs, buffer, exploration_noise=True)
    collector.reset()
    # Warm-up data from the policy at epsilon 1: Tianshou's epsilon-greedy draws its random action
    # among the legal ones (obs.mask). Not ``collect(random=True)``: that samples the whole action
    # space, and nearly every such action is illegal (the env ends the game with illegal_reward).
    policy.set_eps_training(1.0)
    with policy_within_training_step(policy):  # outside it, collect() uses eps_inference
        collector.collect(n_step=args.warmup)
    explore = max(1, int(args.explore_fraction * args.timesteps))

    def training_fn(epoch: int, env_step: int) -> None:  # epsilon 1 -> eps_end over the first steps
        frac = min(1.0, env_step / explore)
        policy.set_eps_training(1.0 + frac * (args.eps_end - 1.0))

    epoch_steps = min(1000, args.timesteps)
    stats = algo.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=max(1, args.timesteps // epoch_steps),
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=64,
            update_step_num_gradient_steps_per_sample=args.updates_per_step,
            batch_size=args.batch_size,
            training_fn=training_fn,
            test_collector=None,
            show_progress=False,
            verbose=False,
        )
    )
    t1 = time.perf_counter()
    cpu = time.process_time() - c0
    print(
        f"trained {stats.train_step} learner steps ({stats.train_episode} episodes, {stats.update_step} updates) "
        f"in {t1 - t0:.1f} s ({stats.train_step / (t1 - t0):,.0f} steps/s; {cpu:.1f} CPU s, "
        f"{stats.train_step / cpu:,.0f} steps per CPU s)"
    )

    stored, _ = buffer.sample(0)  # sample(0): every stored transition
    illegal = int(np.sum(stored.info.illegal_action))
    print(f"illegal actions in the replay buffer: {illegal} of {len(buffer)}")  # the masks reach the policy
    learning_verdict(TianshouAgent(policy, name="tianshou_dqn"), args.opponents, args.hands, args.seed)
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
