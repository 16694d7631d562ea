"""AgileRL DQN (action-masked) on one seat against three agents, then fzmj-eval's duplicate evaluation.

    pip install "fzmj[agilerl]"        # agilerl + peft; a venv of its own is simplest (heavy tree)
    python examples/agilerl_dqn.py     # the default size: 40,000 learner steps, 8 tables

``SingleSeatVectorEnv`` with ``flatten=True`` and ``float32`` (AgileRL builds an MLP from the
observation space and does not flatten a 2-D box itself); the legal mask goes to
``DQN.get_action(obs, epsilon, action_mask)``. Transitions are stored in AgileRL's
``ReplayBuffer``; the env's same-step autoreset is handled as Gymnasium documents it: the
terminal transition's ``next_obs`` is ``info["final_obs"]``. Then the greedy policy plays with
``fzmj.agents.evaluate.evaluate`` (every wall in all four seat rotations) against the opponents,
and the learning verdict is printed (``examples/_verdict.py``). Epsilon falls linearly from 1 to
0.05 over the first half; ``--shaping 0.1`` (0 for none) adds potential-based shanten shaping.
**Not shown at the default size** on the shared 2-core machine: 40,000 steps in 180 s (111 CPU
s, load 3-5) scored -0.03 [-0.76, +0.69] points/hand vs 3 random over 2,000 hands (the old 20,000
steps: -0.65 [-2.46, +1.17]); masked PPO (``examples/sb3_maskable_ppo.py``,
``examples/torchrl_ppo.py``) shows learning in about as many CPU seconds. Details:
docs/integrations.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


class AgileRLAgent:
    """An AgileRL DQN as an agent for ``fzmj-eval``'s library call (greedy, legal actions only)."""

    def __init__(self, dqn, name: str = "agilerl_dqn"):
        self.dqn = dqn
        self.name = name

    def act(self, obs, mask) -> np.ndarray:
        from fzmj.agents import as_batch

        obs, mask = as_batch(obs, mask)
        x = obs.reshape(len(obs), -1).astype(np.float32)
        return np.asarray(self.dqn.get_action(x, epsilon=0.0, action_mask=mask), dtype=np.int64).reshape(-1)


def final_next_obs(obs: np.ndarray, term: np.ndarray, info: dict) -> np.ndarray:
    """``next_obs`` of the stored transitions: the ended game's observation where a game ended."""
    nxt = obs.copy()
    for t in np.flatnonzero(term):
        nxt[t] = info["final_obs"][t]
    return nxt


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=40000, help="learner steps (all tables together)")
    p.add_argument("--opponents", default="random")
    p.add_argument("--hands", type=int, default=2000, help="evaluation hands (duplicate format)")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--explore-fraction", type=float, default=0.5, help="epsilon decays linearly over this part")
    p.add_argument("--eps-end", type=float, default=0.05)
    p.add_argument("--shaping", type=float, default=0.1, help="shanten shaping coefficient (0: the game's points only)")
    args = p.parse_args(argv)

    import torch
    from _verdict import learning_verdict, shanten_potential
    from agilerl.algorithms import DQN
    from agilerl.components.replay_buffer import ReplayBuffer
    from tensordict import TensorDict

    from fzmj.integrations.gymnasium import SingleSeatVectorEnv

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    t0, c0 = time.perf_counter(), time.process_time()
    env = SingleSeatVectorEnv(
        args.num_envs, opponents=args.opponents, seat="rotate", obs_dtype="float32", flatten=True, reward_scale=0.05
    )
    dqn = DQN(
        env.single_observation_space,
        env.single_action_space,
        net_config={"encoder_config": {"hidden_size": [args.hidden, args.hidden]}},
        batch_size=args.batch_size,
        lr=args.lr,
        learn_step=1,
        gamma=0.99,
        tau=5e-3,
    )
    memory = ReplayBuffer(max_size=50_000)
    obs, info = env.reset(seed=args.seed)
    # optional potential-based shaping (examples/_verdict.py): + coef * (gamma * phi(next) - phi(now)),
    # phi = -shanten of the own hand, 0 at a game's end; the evaluation scores the game's points only
    phi = shanten_potential(obs) if args.shaping else None
    eps, explore = 1.0, max(1, int(args.explore_fraction * args.steps))
    n = 0
    while n < args.steps:
        mask = info["action_mask"]
        action = np.asarray(dqn.get_action(obs, epsilon=eps, action_mask=mask), dtype=np.int64).reshape(-1)
        nxt, reward, term, trunc, info = env.step(action)
        if args.shaping:
            phi_next = shanten_potential(nxt)  # where a game ended: the next game's first observation
            reward = (reward + args.shaping * (0.99 * np.where(term, 0.0, phi_next) - phi)).astype(np.float32)
            phi = phi_next
        memory.add(
            TensorDict(
                {
                    "obs": torch.from_numpy(obs),
                    "action": torch.from_numpy(action),
                    "reward": torch.from_numpy(reward),
                    "next_obs": torch.from_numpy(final_next_obs(nxt, term, info)),
                    "done": torch.from_numpy(term.astype(np.float32)),
                },
                batch_size=[args.num_envs],
            )
        )
        obs = nxt
        n += args.num_envs
        eps = 1.0 + min(1.0, n / explore) * (args.eps_end - 1.0)  # linear, 1 -> eps_end
        if len(memory) >= dqn.batch_size:
            dqn.learn(memory.sample(dqn.batch_size))
    t1 = time.perf_counter()
    cpu = time.process_time() - c0
    print(
        f"trained {n} learner steps in {t1 - t0:.1f} s ({n / (t1 - t0):,.0f} steps/s; "
        f"{cpu:.1f} CPU s, {n / cpu:,.0f} steps per CPU s)"
    )

    learning_verdict(AgileRLAgent(dqn), args.opponents, args.hands, args.seed)
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
