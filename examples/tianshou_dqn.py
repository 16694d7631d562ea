"""Tianshou DQN (with action masks) on one seat against three agents, then fzmj-eval's duplicate evaluation.

    pip install tianshou==2.0.1
    python examples/tianshou_dqn.py --timesteps 4000 --opponents random --hands 400

Trains a masked double DQN for ``--timesteps`` learner steps on ``SingleSeatEnv`` (through
``fzmj.integrations.tianshou.make_env``: observation ``{"obs", "mask"}``, the names
Tianshou's policies read; seat rotated every game), then plays the greedy policy against the
same opponents with ``fzmj.agents.evaluate.evaluate`` and prints the mean score per hand with its
95% CI. Under 2 minutes on 2 CPU cores with the defaults.
"""

from __future__ import annotations

import argparse
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timesteps", type=int, default=4000)
    p.add_argument("--opponents", default="random", help="agent spec of the three opponents (default random)")
    p.add_argument("--hands", type=int, default=400, help="evaluation hands (duplicate format)")
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import numpy as np
    import torch
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    from fzmj.agents.evaluate import evaluate
    from fzmj.integrations.tianshou import TianshouAgent, make_env

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy draws from numpy's global generator
    t0, c0 = time.perf_counter(), time.process_time()

    def env_fn():
        return make_env(opponents=args.opponents, seat="rotate", reward_scale=0.05)

    train_envs = DummyVectorEnv([env_fn for _ in range(args.n_envs)])
    train_envs.seed(args.seed)
    space = env_fn().observation_space
    net = Net(state_shape=space["obs"].shape, action_shape=62, hidden_sizes=[128, 128])
    policy = DiscreteQLearningPolicy(model=net, action_space=env_fn().action_space, eps_training=0.1)
    algo = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=200)
    collector = Collector(algo, train_envs, VectorReplayBuffer(20_000, args.n_envs), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=256, random=True)  # warm-up data
    epoch_steps = min(1000, args.timesteps)
    stats = algo.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=max(1, args.timesteps // epoch_steps),
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=64,
            update_step_num_gradient_steps_per_sample=0.25,
            batch_size=64,
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

    agent = TianshouAgent(policy, name="tianshou_dqn")
    res = evaluate([agent, args.opponents], hands=args.hands, seed=args.seed, progress=False)
    a = res["agents"]["tianshou_dqn"]
    ci = a["ci95"]
    print(
        f"tianshou_dqn vs 3x {args.opponents}: {a['mean_score']:+.2f} points/hand "
        f"(95% CI [{ci[0]:+.2f}, {ci[1]:+.2f}], {res['hands']} hands), win rate {a['win_rate']:.1%}"
    )
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
