"""RLlib PPO self-play over the four seats: one shared policy ("main") and a league of frozen snapshots.

    pip install "fzmj[rllib]"
    python examples/rllib_selfplay.py --iterations 6                        # a local Ray, in-process sampling
    python examples/rllib_selfplay.py --address auto --num-env-runners 8    # on a running Ray cluster

Env: ``fzmj.integrations.rllib.FzmjMultiAgentEnv`` (turn-based; every seat's final reward is
delivered). Module: RLlib's own ``ActionMaskingTorchRLModule`` (PPO). Policies: ``main``
(trained) and ``league_0 .. league_{K-1}`` (frozen, never trained). In half of the games all
four seats play ``main``; in the other half ``main`` holds one seat and snapshots the other
three. Every ``--snapshot-every`` iterations ``main``'s weights are copied into the next league
slot (round robin), so the league holds recent past selves. At the end ``main`` is evaluated
greedily with ``fzmj.agents.evaluate.evaluate`` (fzmj-eval's library call, duplicate deals) against
``--eval-opponent``, and again with a random agent in its seat on the same deals
(``paired="random"``): the printed *learning signal* is the difference, ``LEARNED`` when its 95%
interval is above zero (``examples/_verdict.py``). Cluster set-up: docs/integrations.md.

At the default 6 iterations (12,000 env steps) learning is **not shown**: +0.89 [-1.19, +2.96]
points/hand vs 3 random over 400 hands, about 5 minutes at load 4-5 on the shared 2-core
machine (RLlib's per-step cost, not the env's, sets the pace); not re-measured at a larger size.

Two things Ray does on its own, and why:

- **``~/.ray/auth_token``**: Ray >= 2.60 turns on token authentication for every new local
  cluster (``ray.init()`` without ``--address``) and, the first time, writes a random token to
  ``~/.ray/auth_token`` (later runs reuse it). Token auth keeps other users who can reach this
  machine's Ray ports from running code in it. ``RAY_AUTH_MODE=disabled`` opts out (CI's
  one-process test does); the example leaves Ray's default alone.
- **``[WARNING]: Illegal move made, game terminating``**: RLlib's env checker steps one random
  action, usually illegal; the env ends that game with -1 for the seat, as ``fzmj_env.env()``
  does, and PettingZoo's logger prints that line. The example turns the checker off
  (``disable_env_checking=True``): ``tests/integrations/test_rllib.py`` runs RLlib's
  ``check_multiagent_environments`` on the env itself.
"""

from __future__ import annotations

import argparse
import time


def league_mapping(num_league: int):
    """Agent -> module per episode: all "main" in half the games, else main at one seat and snapshots elsewhere."""

    def mapping(agent_id, episode, **kwargs):
        h = hash(episode.id_) & 0x7FFFFFFF
        seat = int(str(agent_id)[-1])
        if h % 2 == 0 or seat == (h // 2) % 4:
            return "main"
        return f"league_{(h // 8 + seat) % num_league}"

    return mapping


def snapshot_main(algo, slot: str) -> None:
    """Copy main's weights into the frozen ``slot`` (learner and every env runner)."""
    lg = algo.learner_group
    state = lg.get_state(components="learner/rl_module/main")["learner"]["rl_module"]["main"]
    lg.set_state({"learner": {"rl_module": {slot: state}}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=lg, policies=[slot], inference_only=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=6)
    p.add_argument("--league-size", type=int, default=3)
    p.add_argument("--snapshot-every", type=int, default=3)
    p.add_argument("--batch", type=int, default=2000, help="env steps per PPO iteration")
    p.add_argument("--num-env-runners", type=int, default=0, help="remote sampling workers (0: sample in-process)")
    p.add_argument("--address", default=None, help="Ray cluster address (auto, HOST:PORT); default: a local Ray")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for a local Ray")
    p.add_argument("--eval-opponent", default="random")
    p.add_argument("--eval-hands", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import ray
    from _verdict import learning_verdict
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from fzmj.integrations.rllib import FzmjMultiAgentEnv, RLlibAgent, action_masking_module_spec

    t0 = time.perf_counter()
    ray.init(
        address=args.address,
        num_cpus=args.num_cpus if args.address is None else None,
        include_dashboard=False,
        log_to_driver=False,
    )
    league = [f"league_{i}" for i in range(args.league_size)]
    spec = action_masking_module_spec((256, 256))
    config = (
        PPOConfig()
        # the checker's random (illegal) step only prints PettingZoo's warning; the tests run the checker
        .environment(FzmjMultiAgentEnv, env_config={"reward_scale": 0.05}, disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, rollout_fragment_length="auto")
        .multi_agent(
            policies={"main", *league}, policy_mapping_fn=league_mapping(args.league_size), policies_to_train=["main"]
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: spec for m in ["main", *league]}))
        .training(
            train_batch_size_per_learner=args.batch,
            minibatch_size=min(500, args.batch),
            num_epochs=4,
            lr=3e-4,
            gamma=0.99,
            lambda_=0.95,
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    for slot in league:  # start the league from main's initial weights
        snapshot_main(algo, slot)
    t1, c1 = time.perf_counter(), time.process_time()
    print(f"Ray and PPO ready in {t1 - t0:.1f} s")
    steps = 0
    for it in range(1, args.iterations + 1):
        r = algo.train()
        er = r["env_runners"]
        steps = int(er["num_env_steps_sampled_lifetime"])
        main_ret = er.get("module_episode_returns_mean", {}).get("main", float("nan"))
        msg = (
            f"iter {it}: env steps {steps:,}, {steps / (time.perf_counter() - t1):,.0f} steps/s, "
            f"main's summed seat return per game {main_ret:+.3f} (0 when it holds all four seats)"
        )
        if it % args.snapshot_every == 0:
            slot = league[(it // args.snapshot_every - 1) % len(league)]
            snapshot_main(algo, slot)
            msg += f", main -> {slot}"
        print(msg, flush=True)
    t2 = time.perf_counter()
    cpu = time.process_time() - c1  # the driver process: it samples and learns when num_env_runners=0
    print(
        f"trained {steps:,} env steps in {t2 - t1:.1f} s ({steps / (t2 - t1):,.0f} env steps/s incl. updates; "
        f"driver {cpu:.1f} CPU s, {steps / cpu:,.0f} steps per CPU s)"
    )

    learning_verdict(
        RLlibAgent(algo.get_module("main"), name="rllib_main"), args.eval_opponent, args.eval_hands, args.seed
    )
    algo.stop()
    ray.shutdown()
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
