"""RLlib PPO self-play over the four seats: one shared policy ("main") and a league of frozen snapshots.

    pip install "fzmj[rllib]"
    python examples/rllib_selfplay.py                                       # a local Ray, 64 x 1,024 env steps
    python examples/rllib_selfplay.py --num-env-runners 2 --num-cpus 3     # sampling in two processes
    python examples/rllib_selfplay.py --address auto --num-env-runners 8    # on a running Ray cluster

Env: ``fzmj.integrations.rllib.FzmjMultiAgentEnv`` (turn-based; every seat's final reward is
delivered). Module: RLlib's own ``ActionMaskingTorchRLModule`` (PPO; the mask reaches the
policy's logits). Policies: ``main`` (trained) and ``league_0 .. league_{K-1}`` (frozen, never
trained). In half of the games all four seats play ``main``; in the other half ``main`` holds
one seat and the league the other three. ``league_0`` keeps ``main``'s first weights (an
anchor: a weak, nearly uniform player that ``main`` must go on beating); every
``--snapshot-every`` iterations ``main``'s weights are copied into the next of the other slots
(round robin), so they hold recent past selves. At
the end ``main`` is evaluated greedily with ``fzmj.agents.evaluate.evaluate`` (fzmj-eval's
library call, duplicate deals) against ``--eval-opponent`` and the learning verdict is printed
(``examples/_verdict.py``). Cluster set-up: docs/integrations.md.

The PPO sizes are those of the SB3 and TorchRL examples (1,024 steps an iteration, minibatches of
256, 4 epochs, learning rate 3e-4, two hidden layers of 128): the old defaults (2,000 steps,
minibatches of 500, 6 iterations) made 96 gradient steps in all, a tenth of SB3's, and showed
no learning. Time and result at the default size, and against the number of env runners:
docs/integrations.md. A given ``--seed`` gives the same run with ``--num-env-runners 0`` (the
default); with remote env runners the order in which their samples arrive can differ.

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
import os
import random
import sys
import time


def league_mapping(num_league: int, seed: int):
    """Agent -> module per episode: all "main" in half the games, else main at one seat and snapshots elsewhere.

    Each episode's draw comes from a generator seeded with ``seed`` (in the order the episodes
    start on an env runner), not from the episode's random id, so a run with a given seed is
    reproducible."""
    rng = random.Random(seed)
    draws: dict = {}

    def mapping(agent_id, episode, **kwargs):
        if episode.id_ not in draws:
            if len(draws) > 64:  # an env runner has few episodes open at a time
                draws.pop(next(iter(draws)))
            draws[episode.id_] = rng.randrange(1 << 30)
        h = draws[episode.id_]
        seat = int(str(agent_id)[-1])
        if h % 2 == 0 or seat == (h // 2) % 4:
            return "main"
        return f"league_{(h // 8 + seat) % num_league}"

    return mapping


def snapshot_main(algo, slot: str) -> None:
    """Copy main's weights into the frozen ``slot``: in the learner and in every env runner (the
    local one included), which is where the league plays. ``sync_weights(policies=[slot])`` left
    the runners' copy at its first weights (checked: the league never changed)."""
    lg = algo.learner_group
    state = lg.get_state(components="learner/rl_module/main", inference_only=True)["learner"]["rl_module"]["main"]
    lg.set_state({"learner": {"rl_module": {slot: state}}})

    def copy_in(runner):
        runner.module[slot].set_state(state)

    algo.env_runner_group.foreach_env_runner(copy_in, local_env_runner=True)


def fixed_string_hashes() -> None:
    """Run again with ``PYTHONHASHSEED=0`` unless it is set: RLlib iterates sets of agent and module
    ids, whose order follows Python's per-process string hashes, and the order of its random draws
    with it; the same ``--seed`` then gave different runs. Ray's workers inherit the variable."""
    if "PYTHONHASHSEED" not in os.environ:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=64)
    p.add_argument("--league-size", type=int, default=3)
    p.add_argument("--snapshot-every", type=int, default=8)
    p.add_argument("--batch", type=int, default=1024, help="env steps per PPO iteration")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers")
    p.add_argument("--num-env-runners", type=int, default=0, help="remote sampling workers (0: sample in-process)")
    p.add_argument("--address", default=None, help="Ray cluster address (auto, HOST:PORT); default: a local Ray")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for a local Ray")
    p.add_argument("--eval-opponent", default="random")
    p.add_argument("--eval-hands", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if argv is None:
        fixed_string_hashes()

    import ray
    import torch
    from _verdict import learning_verdict
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from fzmj.integrations.rllib import FzmjMultiAgentEnv, RLlibAgent, action_masking_module_spec

    torch.set_num_threads(1)  # a small MLP on the driver (the learner): threads cost more than they bring
    t0 = time.perf_counter()
    ray.init(
        address=args.address,
        num_cpus=args.num_cpus if args.address is None else None,
        include_dashboard=False,
        log_to_driver=False,
    )
    league = [f"league_{i}" for i in range(args.league_size)]
    spec = action_masking_module_spec((args.hidden, args.hidden))
    config = (
        PPOConfig()
        # the checker's random (illegal) step only prints PettingZoo's warning; the tests run the checker
        .environment(FzmjMultiAgentEnv, env_config={"reward_scale": 0.05}, disable_env_checking=True)
        .env_runners(num_env_runners=args.num_env_runners, rollout_fragment_length="auto")
        .multi_agent(
            policies={"main", *league},
            policy_mapping_fn=league_mapping(args.league_size, args.seed),
            policies_to_train=["main"],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: spec for m in ["main", *league]}))
        .training(
            train_batch_size_per_learner=args.batch,
            minibatch_size=min(args.minibatch, args.batch),
            num_epochs=args.epochs,
            lr=args.lr,
            gamma=0.99,
            lambda_=0.95,
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )
    torch.manual_seed(args.seed)  # the modules' first weights: .debugging(seed) does not cover them
    algo = config.build_algo()
    for slot in league:  # start the league from main's initial weights
        snapshot_main(algo, slot)
    rotating = league[1:] or league  # league_0 keeps main's first weights (an anchor); the others rotate
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
            slot = rotating[(it // args.snapshot_every - 1) % len(rotating)]
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
