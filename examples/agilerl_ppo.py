"""AgileRL PPO (action-masked) on one seat against three agents, then fzmj-eval's duplicate evaluation.

    pip install "fzmj[agilerl]"        # agilerl + peft; a venv of its own is simplest (heavy tree)
    python examples/agilerl_ppo.py     # the default size: 65,536 learner steps, 4 tables

``SingleSeatVectorEnv`` with ``flatten=True`` and ``float32`` (AgileRL builds an MLP from the
observation space and does not flatten a 2-D box itself). AgileRL's own on-policy loop does the
rest: ``collect_rollouts`` hands ``info["action_mask"]`` (the env's legal mask) to
``PPO.get_action`` and keeps it in the rollout buffer, so the policy samples, and ``PPO.learn``
re-evaluates, legal actions only. The sizes are those of the SB3 and TorchRL examples (256
steps x 4 tables a rollout, minibatches of 256, 4 epochs, learning rate 3e-4, entropy 0.01,
two hidden layers of 128). Then the greedy policy plays with ``fzmj.agents.evaluate.evaluate``
(every wall in all four seat rotations) against the opponents, and the learning verdict is
printed (``examples/_verdict.py``). Time and result at the default size: docs/integrations.md.

Why PPO and not DQN: AgileRL's masked DQN (1-step targets, 40,000 steps) showed no learning
signal here, -0.03 [-0.76, +0.69] points/hand vs 3 random; a hand pays only at its end, some
fifty decisions later, and 1-step targets carry that back slowly.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


class AgileRLAgent:
    """An AgileRL PPO policy as an agent for ``fzmj-eval``'s library call: greedy (the most likely
    legal action of the actor's logits)."""

    def __init__(self, ppo, name: str = "agilerl_ppo"):
        self.ppo = ppo
        self.name = name

    def act(self, obs, mask) -> np.ndarray:
        import torch

        from fzmj.agents import as_batch

        obs, mask = as_batch(obs, mask)
        actor = self.ppo.actor  # a StochasticActor: encoder, then the network its distribution head wraps
        x = torch.from_numpy(obs.reshape(len(obs), -1).astype(np.float32))
        with torch.no_grad():
            logits = actor.head_net.wrapped(actor.extract_features(x)).numpy()
        logits[mask == 0] = -np.inf
        return logits.argmax(1).astype(np.int64)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=65536, help="learner steps (all tables together)")
    p.add_argument("--opponents", default="random")
    p.add_argument("--hands", type=int, default=2000, help="evaluation hands (duplicate format)")
    p.add_argument("--num-envs", type=int, default=4)
    p.add_argument("--rollout", type=int, default=256, help="steps per table in a rollout")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, default=128)
    args = p.parse_args(argv)

    import torch
    from _verdict import learning_verdict, report_training
    from agilerl.algorithms import PPO
    from agilerl.rollouts.on_policy import collect_rollouts

    from fzmj.integrations.gymnasium import SingleSeatVectorEnv

    torch.set_num_threads(1)  # a small MLP: threads cost more than they bring
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    t0, c0 = time.perf_counter(), time.process_time()
    env = SingleSeatVectorEnv(
        args.num_envs, opponents=args.opponents, seat="rotate", obs_dtype="float32", flatten=True, reward_scale=0.05
    )
    env.reset(seed=args.seed)  # collect_rollouts resets without a seed; this seeds the tables' streams
    ppo = PPO(
        env.single_observation_space,
        env.single_action_space,
        num_envs=args.num_envs,
        net_config={"encoder_config": {"hidden_size": [args.hidden, args.hidden]}},
        batch_size=256,
        lr=args.lr,
        learn_step=args.rollout * args.num_envs,
        gamma=0.99,
        gae_lambda=0.95,
        ent_coef=0.01,
        update_epochs=4,
    )
    n, state = 0, {}
    while n < args.steps:
        _, *last = collect_rollouts(ppo, env, n_steps=args.rollout, **state)
        state = dict(zip(("last_obs", "last_done", "last_scores", "last_info"), last, strict=True))
        ppo.learn()
        n += args.rollout * args.num_envs
    report_training(n, t0, c0)

    learning_verdict(AgileRLAgent(ppo), args.opponents, args.hands, args.seed)
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
