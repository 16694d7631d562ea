"""PPO self-play for Fuzhou Mahjong: one shared policy plays all four seats (CleanRL-style).

    fzmj-train [--config ppo_default] [--set key=value ...] [--resume CKPT]
    fzmj-train --list-configs   (the configs that ship; --config takes a name or a path)
    fzmj-train --nproc N ...   (or torchrun ... -m fzmj.train.ppo_selfplay ...): N ranks, train/distributed.py

Reading order: the config (``train/args.py``), then :func:`train`, one loop over named steps,
each in its own module: setup (``run_setup.py``), rollout over the B tables of a ``VectorEnv``
(``rollout.py``; the policy is evaluated once per step for every table's acting seat),
advantages along each (table, seat)'s own decisions (``advantages.py``,
``selfplay_buffer.py``), the clipped PPO update (``update.py``, ``teacher.py``), logging
(``metrics.py``), checkpoints (``checkpoint.py``) and evaluation against ``random`` and
``heuristic`` (``evaluation.py``). Every config check lives in ``config_checks.py``.

Steps are env steps: one decision of the seat to act at one table, whoever plays it.
TensorBoard events and checkpoints go to ``runs/<run_name>/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import os
import signal
import sys
import threading
import time
from pathlib import Path

from fzmj.agents.checkpoint import load_checkpoint
from fzmj_env.cli import OneLineParser

from . import deterministic, distributed
from .args import Args
from .best import refuse_resume_of_best
from .checkpoint import CheckpointWriteError, remove_stale_temporaries
from .config import ConfigError, field_docs, load_config, resolve_config, shipped_configs
from .config_checks import (
    check_before_start,
    check_resume_checkpoint,
    check_resume_clone,
    check_resume_counters,
    finished_run,
    missing_checkpoint,
    resume_config,
)
from .distill import distill
from .run_checks import GracefulStop, NonFiniteError
from .run_dir import RunDirError, open_run_dir
from .run_setup import setup_run
from .update import ppo_update
from .warm import warm_ahead

__all__ = ["Args", "main", "parse_args", "train"]

FULL_DISK = (errno.ENOSPC, errno.EDQUOT)
"""Errors of a write to the run folder (the log, the curve, the events) that stop a run in one line."""

DEFAULT_CONFIG = "ppo_default"
"""The config of a fresh run without --config: the documented recipe (docs/training.md)."""


def guide_keep(update: int, num_updates: int, anneal: float) -> float:
    """The chance that update ``update`` (from 1) lets the actor read its oracle planes: falling
    linearly from 1 to 0 over the first ``anneal`` of the run; always 0 when ``anneal`` is 0 (a
    run that goes on from a guided checkpoint whose oracle has already faded)."""
    if anneal <= 0:
        return 0.0
    return max(0.0, 1.0 - (update - 1.0) / (anneal * num_updates))


def train(args: Args, resume: dict | None, run_dir: Path, ranks: distributed.Ranks, progress: bool = False) -> int:
    """The run, in ``run_dir`` (created, locked and checked writable by :func:`main`): a loop over
    updates of rollout, advantages, update, log, save and evaluate. Returns the exit code.
    ``progress``: a progress bar when the console is a terminal (``fzmj-train --no-progress``: lines)."""
    if ranks.size == 1:  # a first run on a cold cache compiles in two processes (train/warm.py)
        warm_ahead(oracle=args.oracle_critic or args.oracle_guide)
    run = setup_run(args, resume, run_dir, ranks, progress)
    agent, optimizer, buffer = run.agent, run.optimizer, run.rollout.buffer
    global_step = run.global_step
    stop = GracefulStop()  # Ctrl-C or SIGTERM: save a checkpoint at the next safe point, then exit
    for update in range(run.start_update, args.num_updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / args.num_updates) * args.learning_rate
        teacher_coef = run.teacher.coef(update, args.num_updates)
        if args.oracle_guide:  # the actor's oracle planes fade out: kept with chance 1 -> 0, then never
            run.rollout.guide_keep = guide_keep(update, args.num_updates, args.oracle_guide_anneal)

        # ---- rollout: T steps of every table; the learner's decisions go into the buffer ----------
        run.rollout.refresh_values(agent)
        t_rollout, cpu_start = time.perf_counter(), time.process_time()
        steps = run.rollout.collect(agent, args.num_steps, stop)
        if stop.requested:  # mid-rollout: the weights are still those of the last update
            run.saver.save(update - 1, global_step)
            break
        global_step += steps

        # ---- advantages along each (table, seat)'s own decisions -------------------------------
        t_update = time.perf_counter()
        batch = run.advantages.batch(buffer, ranks)

        # ---- PPO update ---------------------------------------------------------------------------
        result = ppo_update(agent, optimizer, buffer, batch, args, run.teacher, teacher_coef, ranks, update)
        result.carried = run.advantages.carry_over(buffer, skipped=batch[3])
        times = {"rollout": t_update - t_rollout, "update": time.perf_counter() - t_update}
        times["cpu"] = time.process_time() - cpu_start

        # ---- logging ------------------------------------------------------------------------------
        run.logger.scalars(global_step, optimizer.param_groups[0]["lr"], teacher_coef, result, times)
        run.advantages.log(run.writer, global_step)
        if args.oracle_guide:
            run.writer.add_scalar("charts/oracle_guide_keep", run.rollout.guide_keep, global_step)
        if update % args.pool_snapshot_every == 0:
            run.rollout.pool.add_snapshot(agent)

        # ---- checkpoint and evaluation ------------------------------------------------------------
        evaluate = run.evaluator.due(update, stop.requested)
        paired = run.evaluator.paired_due(update, stop.requested)
        if evaluate or paired or update == args.num_updates or update % args.save_every == 0 or stop.requested:
            run.saver.save(update, global_step)
        if evaluate:
            run.evaluator.run(run.saver.latest, update, global_step)
        if paired:
            run.evaluator.run_paired(run.saver.latest, update, global_step)
        run.logger.console(update, global_step, result, times, run.evaluator.latest, evaluate or paired)
        if stop.requested:
            break

    run.logger.close()
    run.writer.close()
    stop.restore()
    if stop.requested:
        latest = run.saver.latest
        print(f"stopped: {global_step:,} steps; checkpoint {latest} (continue with --resume {latest})", flush=True)
        return stop.exit_code
    ranks.finish(agent, optimizer, run.rollout.pool)  # same weights everywhere, then leave the group
    print(f"done: {global_step:,} steps; checkpoint {run_dir / 'checkpoints' / 'latest.pt'}", flush=True)
    return 0


def parse_args(argv=None) -> tuple[Args, dict | None]:
    """The config of the command line, checked; and the checkpoint to resume (or None)."""
    args, ckpt, _ = parse_command_line(argv)
    return args, ckpt


def _command_line_parser() -> OneLineParser:
    """fzmj-train's options; its help lists the shipped configs and every config key."""
    docs = field_docs(Args)
    base = dataclasses.asdict(Args())
    keys = "\n".join(
        f"  {f.name} ({f.type}, base {base[f.name]!r}): {docs.get(f.name, '')}" for f in dataclasses.fields(Args)
    )
    shipped = "\n".join(f"  {name}: {text}" for name, text in shipped_configs().items())
    parser = OneLineParser(  # usage errors: one line, exit 2
        prog="fzmj-train",
        description=(
            "PPO self-play for Fuzhou Mahjong (one policy, four seats). Without --config a fresh run uses "
            f"{DEFAULT_CONFIG}, the documented recipe: 200k decisions of behaviour cloning, then 130 M env "
            "steps of PPO (about 37 min on 2 idle cores); shorten it with --set total_timesteps=3_000_000."
        ),
        epilog=(
            f"configs that ship (--config NAME):\n{shipped}\n\n"
            "config keys (YAML file or --set key=value; a config file lists only the keys it changes from "
            f"the values below):\n{keys}"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        help=f"a shipped config's name (see --list-configs) or a YAML file (default: {DEFAULT_CONFIG}; "
        "with --resume: the checkpoint's own config)",
    )
    parser.add_argument("--list-configs", action="store_true", help="print the configs that ship, one a line, and exit")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config key (repeatable), e.g. --set num_tables=512",
    )
    parser.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoint")
    parser.add_argument("--device", help="shortcut for --set device=...")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run already in the run folder (default: a fresh run into a folder holding a run is refused)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="one console line per update even on a terminal (default there: a progress bar; "
        "the lines always go to train.log in the run folder)",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="shortcut for --set deterministic=true: the same seed, the same digits on any x86-64 CPU (slower)",
    )
    parser.add_argument(  # handled by distributed.launch before parsing
        "--nproc", type=int, metavar="N", help="run N ranks on this machine through torchrun (docs/training.md)"
    )
    return parser


def parse_command_line(argv=None) -> tuple[Args, dict | None, argparse.Namespace]:
    """:func:`parse_args`, and the options that are not config keys (``--no-progress``)."""
    parser = _command_line_parser()
    ns = parser.parse_args(argv)
    if ns.list_configs:
        print("\n".join(f"{name}: {text}" for name, text in shipped_configs().items()))
        parser.exit(0)
    overrides = list(ns.overrides) + ([f"device={ns.device}"] if ns.device else [])
    overrides += ["overwrite=true"] if ns.overwrite else []
    overrides += ["deterministic=true"] if ns.deterministic else []
    try:
        ckpt = None
        config = resolve_config(ns.config) if ns.config else None
        if ns.resume:
            if not Path(ns.resume).is_file():
                raise ConfigError(missing_checkpoint(ns.resume))
            ckpt = load_checkpoint(ns.resume)
            refuse_resume_of_best(ckpt, ns.resume)
            args = resume_config(Args, ckpt, ns.resume, config, overrides)
            check_resume_checkpoint(ckpt, ns.resume)
            check_resume_counters(ckpt, ns.resume)
        else:
            args = load_config(Args, config or resolve_config(DEFAULT_CONFIG), overrides)
        check_before_start(args)
        return args, ckpt, ns
    except (ConfigError, FileNotFoundError, ValueError) as e:
        parser.error(str(e))


def _fail(message: str, code: int) -> int:
    """One line on stderr, the exit code (docs/reference.md, "Errors": 2 usage/input, 1 the run failed)."""
    print(f"fzmj-train: error: {message}", file=sys.stderr, flush=True)
    return code


def main(argv=None) -> int:
    if (rc := distributed.launch(argv)) is not None:  # --nproc N: relaunch under torchrun
        return rc
    args, resume, ns = parse_command_line(argv)
    if args.deterministic:  # the instruction sets are read at import: pinned in a new process
        if not deterministic.is_pinned():
            return deterministic.relaunch(argv)
        args.torch_threads = args.torch_threads or deterministic.DEFAULT_THREADS
        try:
            print(deterministic.apply(args.torch_threads), flush=True)
        except RuntimeError as e:
            return _fail(str(e), 2)
    ranks = distributed.join(args)  # the torchrun group, when launched by torchrun
    if not args.run_name:
        args.run_name = f"{args.exp_name}__{args.seed}__{int(time.time())}"
    args.run_name = ranks.broadcast_object(args.run_name)  # rank 0's clock names the run
    run_dir = Path(args.runs_dir) / args.run_name
    if resume is not None:  # a finished run: say so, write nothing (not even the run folder's lock)
        start = distributed.start_update(resume, resume["global_step"], args.batch_size, resume["update"] + 1)
        if (line := finished_run(args, resume, run_dir, start)) is not None:
            print(line, flush=True)
            return 0
        try:
            check_resume_clone(args, run_dir / "checkpoints" / "latest.pt")
        except ConfigError as e:
            return _fail(str(e), 2)
    # before anything is compiled or allocated: a folder we cannot write, or that holds another
    # run (or is in use by one), stops here; rank 0 alone owns (and locks) it
    lock = None
    if ranks.main:
        try:
            lock = open_run_dir(run_dir, resume=resume is not None, overwrite=args.overwrite)
        except RunDirError as e:
            return _fail(str(e), 2)
        remove_stale_temporaries(run_dir / "checkpoints")  # a killed run's half-written checkpoints
    latest = run_dir / "checkpoints" / "latest.pt"
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}  # put back on any exit
    try:
        if args.algo == "distill":  # expert iteration (train/distill.py): same config, run folder, checkpoints
            return distill(args, resume, run_dir, ranks)
        return train(args, resume, run_dir, ranks, progress=not ns.no_progress)
    except NonFiniteError as e:
        kept = f"its last good checkpoint is {latest}" if latest.exists() else "no checkpoint was saved"
        return _fail(f"{e}; the run stopped, {kept} (lower learning_rate or check the config)", 1)
    except CheckpointWriteError as e:
        return _fail(f"{e}; the run stopped", 1)
    except OSError as e:
        if e.errno not in FULL_DISK:
            raise
        kept = f"its last good checkpoint is {latest}" if latest.exists() else "no checkpoint was saved"
        return _fail(f"cannot write to run folder {run_dir}: {os.strerror(e.errno)}; the run stopped, {kept}", 1)
    except MemoryError:
        return _fail("out of memory: lower num_tables, num_steps or the network size", 1)
    except KeyboardInterrupt:
        kept = f"its last good checkpoint is {latest}" if latest.exists() else "no checkpoint was saved"
        print(f"fzmj-train: interrupted; {kept}", file=sys.stderr, flush=True)
        return 130
    finally:
        if lock is not None:
            lock.release()
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                if handler is not None:  # None: set outside Python, cannot be put back
                    signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
