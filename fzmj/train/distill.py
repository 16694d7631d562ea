"""Expert iteration: distil a search agent into the policy network (``algo: distill``).

    fzmj-train --config distill_search [--set key=value ...]

One run folder, one config format and one checkpoint format with PPO (``fzmj-train``): the run
is a PPO config with ``algo: distill``, and its checkpoints load as ``ppo:PATH`` in every agent
spec and in ``fzmj-eval``. The start: ``bc_checkpoint`` (e.g. the shipped clone), else the
behaviour-cloning warm start when ``bc_decisions > 0`` (``bc_teacher``, ``train/bc.py``), else
a fresh network. Then ``distill_iterations`` times:

1. **play**: the current policy (greedy, as it plays in ``ppo:PATH``) plays all four seats of
   ``num_tables`` tables until ``distill_decisions`` decisions with a choice are recorded: the
   learner's own states (DAgger's point: the expert is asked where the learner goes);
2. **label**: ``distill_teacher`` (``search`` by default: rollouts of the heuristic on worlds
   drawn from the seat's view, ``agents/search.py``) gives its choice at each of them; it reads
   the seat's observation and legal mask only;
3. **fit**: ``behaviour_clone`` (``train/bc.py``, the warm start's own fitting code): masked
   cross-entropy to the labels, plus ``vf_coef`` x the value head's squared error on the
   returns of the learner's play (the hand outcomes, discounted by ``gamma`` per decision of
   the seat, as PPO's critic), ``bc_epochs`` passes at ``bc_learning_rate``;
4. **save** ``checkpoints/iter_NNN.pt`` and ``latest.pt``; every ``eval_every`` iterations (and
   at the last) the duplicate evaluation against ``random`` and ``heuristic`` (``eval_hands``).

Cost: labelling dominates. A search spends about 40-140 ms per searched decision at
``worlds=64`` on one core (docs/baselines.md), so 4,096 labels take several minutes;
``worlds`` in the spec scales it about linearly. Same seed, same run: the tables' seeds, the
search's worlds and the fitting's minibatches all derive from ``seed`` and the iteration.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import torch

from fzmj.agents.checkpoint import load_checkpoint, save_checkpoint
from fzmj.agents.ppo_agent import checkpoint_file

from .bc import (
    PolicyActor,
    add_hand_features,
    clone_with_config,
    collect_demonstrations,
    holdout_metrics,
    search_cost,
    warm_start,
)
from .evaluation import Evaluator
from .run_setup import make_network, write_config
from .torch_setup import pick_device


def _teacher_counters(teacher) -> dict:
    stats = getattr(teacher, "stats", None)
    return dict(stats) if isinstance(stats, dict) else {}


def _search_line(before: dict, after: dict) -> str:
    """``; 812 searched (5.1% changed), 63 ms each`` for a search teacher, else empty."""
    searched = after.get("searched", 0) - before.get("searched", 0)
    if not searched:
        return ""
    deviated = after.get("deviated", 0) - before.get("deviated", 0)
    ms = 1000 * (after.get("search_s", 0.0) - before.get("search_s", 0.0)) / searched
    return f"; {searched:,} searched ({deviated / searched:.1%} off its blueprint), {ms:.0f} ms each"


def start_policy(args, writer, ckpt_dir: Path, device):
    """The policy the first iteration plays: ``bc_checkpoint``, the warm start, or a fresh network."""
    torch.manual_seed(args.seed)
    agent = make_network(args, device)
    if args.bc_checkpoint:
        agent.load_state_dict(load_checkpoint(checkpoint_file(args.bc_checkpoint))["model"])  # same network (checked)
        print(f"distill: starting from {args.bc_checkpoint}", flush=True)
    elif args.bc_decisions > 0:
        warm_start(agent, args, writer, ckpt_dir / "bc.pt")
    else:
        print("distill: starting from a fresh network (no bc_checkpoint, bc_decisions 0)", flush=True)
    return agent


def iteration(args, agent, teacher, it: int, progress: bool = True) -> tuple[dict, object]:
    """Play, label and fit once; returns the statistics and the labelled decisions."""
    t0 = time.perf_counter()
    counters = _teacher_counters(teacher)
    agent.eval()
    demos = collect_demonstrations(
        teacher,
        args.distill_decisions,
        num_tables=args.num_tables,
        seed=(args.seed * 1_000_003 + 7 * it) % 2**63,
        rules=args.rules,
        hands_per_game=args.hands_per_game,
        reward_scale=args.reward_scale,
        gamma=args.gamma,
        progress=progress,
        actor=PolicyActor(agent),
        prefix=f"distill: iteration {it}",
        obs_version=args.obs_version,
    )
    t_label = time.perf_counter() - t0
    if agent.hand_features:
        add_hand_features(demos)
    every = torch.arange(len(demos))
    before = holdout_metrics(agent, demos, every)["accuracy"]  # = share where the learner played the label
    agent.train()
    stats = clone_with_config(agent, demos, args, seed=(args.seed * 31 + it) % 2**63, progress=False)
    agent.eval()
    stats.update(
        decisions=len(demos),
        agreement_before=before,
        agreement_after=holdout_metrics(agent, demos, every)["accuracy"],
        label_seconds=t_label,
        seconds=time.perf_counter() - t0,
        search=_search_line(counters, _teacher_counters(teacher)),
    )
    return stats, demos


def distill(args, resume, run_dir: Path, ranks) -> int:
    """The expert-iteration run in ``run_dir`` (created and locked by ``fzmj-train``'s main)."""
    from fzmj.agents import make_agent

    if resume is not None or ranks.size > 1:
        what = "--resume" if resume is not None else "more than one rank"
        print(f"fzmj-train: error: algo distill does not support {what}", file=sys.stderr, flush=True)
        return 2
    ckpt_dir = run_dir / "checkpoints"
    writer = ranks.writer(run_dir, purge_step=None)
    write_config(writer, args, 0)
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    agent = start_policy(args, writer, ckpt_dir, pick_device(args.device))
    teacher = make_agent(args.distill_teacher)
    evaluator = Evaluator(args, run_dir, writer, True)
    print(
        f"distill: run {run_dir}  {args.distill_iterations} iterations x {args.distill_decisions:,} learner "
        f"decisions labelled by {args.distill_teacher!r}",
        flush=True,
    )
    if cost := search_cost(args.distill_teacher, args.distill_decisions):
        print(f"distill: teacher {args.distill_teacher!r} {cost} per iteration", flush=True)
    total = 0
    for it in range(1, args.distill_iterations + 1):
        stats, _ = iteration(args, agent, teacher, it)
        total += stats["decisions"]
        for key in ("agreement_before", "agreement_after", "accuracy", "value_loss", "ce"):
            writer.add_scalar(f"distill/{key}", stats[key], it)
        saved = {k: v for k, v in stats.items() if k != "search"}
        path = save_checkpoint(
            ckpt_dir / f"iter_{it:03d}.pt", agent, config=dataclasses.asdict(args), update=it, global_step=total,
            distill=saved,
        )  # fmt: skip
        save_checkpoint(ckpt_dir / "latest.pt", agent, config=dataclasses.asdict(args), update=it, global_step=total)
        line = (
            f"distill: iteration {it}/{args.distill_iterations}: {stats['decisions']:,} decisions labelled "
            f"({stats['label_seconds']:.0f}s{stats['search']}); agreement with the labels "
            f"{stats['agreement_before']:.1%} -> {stats['agreement_after']:.1%} "
            f"(held-out {stats['accuracy']:.1%}), value loss {stats['value_loss']:.4f}; {path}"
        )
        if args.eval_every > 0 and (it % args.eval_every == 0 or it == args.distill_iterations):
            evaluator.run(path, it, total)
            line += "".join(
                f"; vs 3x {o} {r['mean_score']:+.2f} [{r['ci95'][0]:+.2f}, {r['ci95'][1]:+.2f}]"
                for o, r in evaluator.latest.items()
                if r.get("ci95")
            )
        print(line + f" ({stats['seconds']:.0f}s)", flush=True)
    writer.close()
    print(f"done: {total:,} labelled decisions; checkpoint {ckpt_dir / 'latest.pt'}", flush=True)
    return 0
