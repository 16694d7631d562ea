"""sb3-contrib MaskablePPO on one seat against three agents, then fzmj-eval's duplicate evaluation.

    pip install "fzmj[sb3]"            # stable-baselines3 + sb3-contrib
    python examples/sb3_maskable_ppo.py            # the default size: 65,536 steps, 2,000 hands

Trains for ``--timesteps`` learner steps on ``SingleSeatEnv`` (seat rotated every game, float32
flat observations, ``action_masks()`` for MaskablePPO), then plays the model against the same
opponents with ``fzmj.agents.evaluate.evaluate`` (every wall in all four seat rotations), and
again with a random agent in its seat on the same deals (``paired="random"``): the printed
*learning signal* is the difference, ``LEARNED`` when its 95% interval is above zero
(``examples/_verdict.py``). Time and result at the default size: docs/integrations.md.
"""

from __future__ import annotations

import argparse
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timesteps", type=int, default=65536)
    p.add_argument("--opponents", default="random", help="agent spec of the three opponents (default random)")
    p.add_argument("--hands", type=int, default=2000, help="evaluation hands (duplicate format)")
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="save the model here (.zip)")
    args = p.parse_args(argv)

    import torch
    from _verdict import learning_verdict, report_training
    from sb3_contrib import MaskablePPO

    from fzmj.integrations.sb3 import SB3Agent, make_vec_env

    torch.set_num_threads(1)  # small MLP: threads cost more than they bring
    t0, c0 = time.perf_counter(), time.process_time()
    env = make_vec_env(args.n_envs, seed=args.seed, opponents=args.opponents, seat="rotate", reward_scale=0.05)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=256,
        batch_size=256,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=0.99,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [128, 128]},
        seed=args.seed,
        verbose=0,
    )
    model.learn(total_timesteps=args.timesteps)
    report_training(args.timesteps, t0, c0)
    if args.save:
        model.save(args.save)

    agent = SB3Agent(model, name="maskable_ppo")
    learning_verdict(agent, args.opponents, args.hands, args.seed)
    print(f"illegal choices replaced: {agent.illegal_replaced}")
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
