"""PPO self-play for Fuzhou Mahjong: one shared policy plays all four seats (CleanRL-style, one file).

    fzmj-train --config configs/ppo_default.yaml [--set key=value ...] [--resume CKPT]
    fzmj-train --nproc N ...   (or torchrun ... -m fzmj.train.ppo_selfplay ...): N ranks, train/distributed.py

Reading order: the config (``Args``), setup, then each update: rollout over the B tables of a
``VectorEnv`` (the policy is evaluated once per step for every table's acting seat), GAE along
each (table, seat)'s own decisions (``train/selfplay_buffer.py`` explains the bookkeeping),
the clipped PPO update, logging, evaluation against ``random`` and ``heuristic``, checkpoints.

Steps are env steps: one decision of the seat to act at one table, whoever plays it.
TensorBoard events and checkpoints go to ``runs/<run_name>/``.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import math
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
import torch
import torch.nn as nn

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.rules import load_rules
from fzmj_env.validate import OneLineParser
from fzmj_env.vector import VectorEnv, results_of

from . import distributed
from .bc import warm_start
from .checkpoint import load_checkpoint, load_policy, rng_state, save_checkpoint, set_rng_state
from .config import ConfigError, field_docs, from_dict, load_config, parse_override, to_yaml
from .duplicate import DuplicateGroups
from .guards import GracefulStop, NonFiniteError, check_finite_loss, check_finite_weights, network_changes
from .model import OBS_SHAPE, ORACLE_SHAPE, ActorCritic
from .opponents import IDLE, LEARNER, OpponentPool
from .run_dir import RunDirError, open_run_dir, resume_run_dir
from .selfplay_buffer import SelfPlayBuffer
from .validate_config import hardening_problems


@dataclass
class Args:
    # ---- experiment -----------------------------------------------------------------------------
    exp_name: str = "ppo_selfplay"
    """name of the experiment; the run directory is <runs_dir>/<exp_name>__<seed>__<unix time> unless run_name is set"""
    run_name: str = ""
    """name of the run directory under runs_dir (empty: derived from exp_name, seed and the time)"""
    runs_dir: str = "runs"
    """where run directories (TensorBoard events, checkpoints) are written"""
    overwrite: bool = False
    """a fresh run into a run folder that already holds a run replaces it (false: refused; see --overwrite)"""
    seed: int = 1
    """seed of torch, numpy and the tables' game seeds"""
    torch_deterministic: bool = True
    """if toggled, `torch.backends.cudnn.deterministic=True`"""
    device: str = "auto"
    """auto (cuda when available, else cpu), cpu or cuda"""
    torch_threads: int = 0
    """torch intra-op threads on CPU (0: torch's default, the cores this process may use)"""
    env_threads: int = 1
    """Numba threads that step the tables (1: serial; 0: all Numba may use; more pays off with thousands of tables)"""

    # ---- environment ----------------------------------------------------------------------------
    rules: str = "fuzhou-lianzhong"
    """rule preset of the tables"""
    hands_per_game: int = 1
    """hands per game (a match carries dealer and streak from hand to hand)"""
    reward_scale: float = 0.02
    """rewards are the hand's score change times this"""
    num_tables: int = 256
    """tables stepped together (B); each env step is one decision at every table"""
    num_steps: int = 64
    """env steps per table per rollout (T); a rollout is T * B decisions"""
    total_timesteps: int = 20_000_000
    """total env steps (decisions of all seats) of the run"""

    # ---- PPO ------------------------------------------------------------------------------------
    learning_rate: float = 2.5e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over the run"""
    gamma: float = 0.99
    """discount per decision of the same seat"""
    gae_lambda: float = 0.95
    """lambda of GAE along each seat's decisions"""
    num_minibatches: int = 4
    """minibatches per epoch (the batch is the rollout's trainable learner decisions)"""
    update_epochs: int = 2
    """epochs over the batch per update"""
    norm_adv: bool = True
    """normalize advantages per minibatch"""
    clip_coef: float = 0.2
    """surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss like the policy (CleanRL)"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping (global norm)"""
    target_kl: float | None = None
    """stop the update's epochs early when approx_kl exceeds this (null: never)"""
    duplicate_group: int = 1
    """tables per duplicate group (1: off): K tables play each wall, and a decision's advantage is its seat's hand score minus the mean of the other K-1 plays (train/duplicate.py; replaces GAE; needs hands_per_game 1)"""

    # ---- network --------------------------------------------------------------------------------
    network: str = "mlp"
    """mlp or resnet"""
    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])
    """mlp: hidden layer sizes; resnet: the MLP head's sizes after the convolutions"""
    res_channels: int = 64
    """resnet: channels of the residual tower"""
    res_blocks: int = 4
    """resnet: residual blocks"""
    input_layer: str = "auto"
    """mlp's first layer over the 0/1 planes: auto (sparse on CPU, dense on CUDA), sparse or dense"""
    oracle_critic: bool = False
    """the critic also sees the oracle planes (hidden state); the policy never does"""
    hand_features: bool = False
    """append the hand-feature planes (fzmj_env/features.py: shanten, per-discard shanten and acceptance, waits, claims, specials) to the observation"""

    # ---- warm start: behaviour cloning (train/bc.py) --------------------------------------------
    bc_decisions: int = 0
    """teacher decisions to clone before PPO (0: no warm start)"""
    bc_teacher: str = "heuristic"
    """agent spec of the teacher that plays all four seats of the demonstration games"""
    bc_epochs: int = 4
    """passes over the demonstrations"""
    bc_batch_size: int = 1024
    """minibatch size of behaviour cloning"""
    bc_learning_rate: float = 0.001
    """Adam learning rate of behaviour cloning (decays linearly to a tenth)"""
    bc_eval_hands: int = 400
    """hands of the duplicate evaluation of the cloned policy against three copies of its teacher (0: none)"""
    bc_checkpoint: str = ""
    """start from this checkpoint's policy instead of cloning (e.g. an earlier run's bc.pt); it is also the KL teacher"""

    # ---- teacher term during PPO ----------------------------------------------------------------
    teacher_coef: float = 0.0
    """weight of the pull toward the teacher in the PPO loss (0: none)"""
    teacher_mode: str = "kl"
    """kl: KL(frozen BC policy || learner) on the learner's states (needs bc_decisions > 0); ce: cross-entropy to bc_teacher's action on them"""
    teacher_anneal: float = 0.5
    """share of the run over which teacher_coef decays linearly to 0 (0: constant)"""

    # ---- opponent pool --------------------------------------------------------------------------
    pool_prob: float = 0.0
    """probability that a new game is played against the pool (0: pure self-play)"""
    pool_heuristic_frac: float = 0.5
    """share of pool games against pool_target (the rest: frozen past policies)"""
    pool_target: str = "heuristic"
    """agent spec of the pool's target opponent (heuristic by default)"""
    pool_size: int = 8
    """frozen snapshots of the learner kept in the pool"""
    pool_snapshot_every: int = 20
    """updates between two snapshots of the learner into the pool"""
    pool_learner_seats: int = 2
    """seats the learner plays in a pool game (the opponent plays the others)"""
    pool_paths: list[str] = field(default_factory=list)
    """checkpoints that stay in the pool as fixed opponents"""

    # ---- logging, evaluation, checkpoints -------------------------------------------------------
    log_every: int = 1
    """updates between two console lines / chart points"""
    eval_every: int = 25
    """updates between duplicate evaluations against random and heuristic (0: never)"""
    eval_hands: int = 400
    """hands per evaluation (against each of random and heuristic)"""
    eval_workers: int = 1
    """processes of the evaluator"""
    eval_records: int = 0  # hook:
    """game records kept per evaluation (the learner's worst and best hands, for fzmj-replay) under runs/<name>/records/ (0: none)"""
    save_every: int = 50
    """updates between two checkpoints (there is always one at the end)"""
    # ---- league --------------------------------------------------------------------
    league_dir: str = ""
    """league folder: each evaluation checkpoint joins its roster (then `fzmj-league --dir` plays it); empty: off"""

    # ---- distributed (torchrun; docs/training.md, "Scaling out") -------------------------------
    dist_timeout: float = 600.0
    """seconds a rank waits for the others (a collective, a barrier) before it stops with an error"""

    def __post_init__(self):
        def check(ok: bool, key: str, what: str):
            if not ok:
                raise ConfigError(f"{key}: {what}, got {getattr(self, key)!r}")

        check(
            self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:"),
            "device",
            "expected auto, cpu or cuda",
        )
        check(self.network in ("mlp", "resnet"), "network", "expected mlp or resnet")
        check(self.input_layer in ("auto", "sparse", "dense"), "input_layer", "expected auto, sparse or dense")
        for key in (
            "num_tables",
            "num_steps",
            "total_timesteps",
            "hands_per_game",
            "num_minibatches",
            "update_epochs",
            "res_channels",
            "res_blocks",
            "log_every",
            "save_every",
            "eval_hands",
            "eval_workers",
            "pool_snapshot_every",
        ):
            check(getattr(self, key) >= 1, key, "expected a positive integer")
        for key in ("torch_threads", "env_threads", "eval_every", "pool_size", "seed"):
            check(getattr(self, key) >= 0, key, "expected a non-negative integer")
        check(self.duplicate_group >= 1, "duplicate_group", "expected a positive integer")
        check(
            self.num_tables % self.duplicate_group == 0,
            "duplicate_group",
            f"expected a divisor of num_tables ({self.num_tables})",
        )
        check(
            self.duplicate_group == 1 or self.hands_per_game == 1,
            "duplicate_group",
            "duplicate groups need hands_per_game: 1",
        )
        check(self.dist_timeout > 0, "dist_timeout", "expected a positive number of seconds")
        check(len(self.hidden_sizes) >= 1 and min(self.hidden_sizes) >= 1, "hidden_sizes", "expected positive sizes")
        check(self.learning_rate > 0, "learning_rate", "expected a positive number")
        for key in ("gamma", "gae_lambda", "pool_prob", "pool_heuristic_frac"):
            check(0.0 <= getattr(self, key) <= 1.0, key, "expected a number in [0, 1]")
        check(1 <= self.pool_learner_seats <= 3, "pool_learner_seats", "expected 1, 2 or 3")
        check(self.target_kl is None or self.target_kl > 0, "target_kl", "expected a positive number or null")
        check(self.bc_decisions >= 0, "bc_decisions", "expected a non-negative integer")
        check(
            self.bc_epochs >= 1 and self.bc_batch_size >= 1,
            "bc_epochs",
            "expected positive bc_epochs and bc_batch_size",
        )
        check(self.bc_eval_hands >= 0, "bc_eval_hands", "expected a non-negative integer")
        check(self.teacher_coef >= 0, "teacher_coef", "expected a non-negative number")
        check(self.teacher_mode in ("kl", "ce"), "teacher_mode", "expected kl or ce")
        check(0.0 <= self.teacher_anneal <= 1.0, "teacher_anneal", "expected a number in [0, 1]")
        check(
            not (
                self.teacher_coef > 0
                and self.teacher_mode == "kl"
                and self.bc_decisions == 0
                and not self.bc_checkpoint
            ),
            "teacher_mode",
            "kl needs a BC policy (bc_decisions > 0 or bc_checkpoint); use ce or set bc_decisions",
        )
        if self.bc_checkpoint and not Path(self.bc_checkpoint).is_file():
            raise ConfigError(f"bc_checkpoint: no such checkpoint {self.bc_checkpoint!r}")
        check(
            not (self.bc_decisions > 0 and self.oracle_critic),
            "bc_decisions",
            "behaviour cloning does not support oracle_critic",
        )
        self._check_hardening()
        try:
            load_rules(self.rules)
        except ValueError as e:
            raise ConfigError(f"rules: {e}") from None
        for i, path in enumerate(self.pool_paths):
            if not Path(path).is_file():
                raise ConfigError(f"pool_paths[{i}]: no such checkpoint {path!r}")
        if self.league_dir:  # a league folder of other rules fails now, not at the first evaluation
            from fzmj.agents.league import check_league

            try:
                check_league(self.league_dir, rules=self.rules)
            except ValueError as e:
                raise ConfigError(f"league_dir: {e}") from None

    def _check_hardening(self) -> None:
        """Finite numbers, values that fit the engine's int32 state, plain run names."""
        problems = hardening_problems(self)
        if problems:
            raise ConfigError(problems[0])

    @property
    def batch_size(self) -> int:
        return self.num_tables * self.num_steps * distributed.world_size()  # [distributed] over all ranks

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // self.batch_size)


# ---- small helpers --------------------------------------------------------------------------------
class HandStats:
    """Hands finished during a logging window, from the learner's seats: score, wins, deal-ins."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.seat_hands = self.points = self.wins = self.deal_ins = self.self_draws = 0

    def record(self, info: dict, controller: np.ndarray) -> None:
        for res in results_of(info):
            learner = np.flatnonzero(controller[res["table"]] == LEARNER)
            winner, discarder = res["winner"], res["discarder"]
            self.seat_hands += len(learner)
            self.points += sum(res["points"][s] for s in learner)
            if winner is not None and winner in learner:
                self.wins += 1
                self.self_draws += discarder is None
            if winner is not None and discarder is not None and discarder != winner and discarder in learner:
                self.deal_ins += 1

    def summary(self) -> dict | None:
        if self.seat_hands == 0:
            return None
        n = self.seat_hands
        return {
            "mean_hand_score": self.points / n,
            "win_rate": self.wins / n,
            "deal_in_rate": self.deal_ins / n,
            "self_draw_rate": self.self_draws / n,
        }


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(
            f"device: {name} asked for, but no CUDA device is available (torch.cuda.is_available() is False)"
        )
    try:
        dev = torch.device(name)
        if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ConfigError(
                f"device: {name} asked for, but this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    except RuntimeError as e:
        raise ConfigError(f"device: {name!r} is not a device ({e})") from None
    return dev


def make_optimizer(agent: nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam (CleanRL's eps), the fused kernel where this torch has it for the device."""
    try:
        return torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5, fused=True)
    except (RuntimeError, TypeError):  # older torch: fused Adam is CUDA-only
        return torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)


def evaluate_checkpoint(ckpt: Path, opponent: str, args: Args, seed: int, records: Path | None = None) -> dict:
    """Duplicate evaluation (``fzmj.agents.evaluate``) of the checkpoint against three ``opponent`` seats.

    Returns the learner's entry: mean_score, ci95, win_rate, deal_in_rate, self_draw_rate, ...
    """
    from fzmj.agents.evaluate import evaluate

    spec = f"ppo:{ckpt}"
    keep = {"save_records": str(records), "max_records": args.eval_records} if records and args.eval_records > 0 else {}
    result = evaluate(
        [spec, opponent],
        hands=args.eval_hands,
        seed=seed,
        workers=args.eval_workers,
        progress=False,
        rules=args.rules,
        **keep,
    )
    return result["agents"][spec]


def parse_args(argv=None) -> tuple[Args, dict | None]:
    docs = field_docs(Args)
    keys = "\n".join(f"  {f.name} ({f.type}): {docs.get(f.name, '')}" for f in dataclasses.fields(Args))
    parser = OneLineParser(  # usage errors: one line, exit 2
        prog="fzmj-train",
        description="PPO self-play for Fuzhou Mahjong (one policy, four seats).",
        epilog=f"config keys (YAML file or --set key=value):\n{keys}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", help="YAML config file (default: the built-in defaults)")
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
    parser.add_argument(  # [distributed] handled by distributed.launch before parsing
        "--nproc", type=int, metavar="N", help="run N ranks on this machine through torchrun (docs/training.md)"
    )
    ns = parser.parse_args(argv)
    overrides = list(ns.overrides) + ([f"device={ns.device}"] if ns.device else [])
    overrides += ["overwrite=true"] if ns.overwrite else []
    try:
        if ns.resume:
            ckpt = load_checkpoint(ns.resume)
            if ns.config:
                args = load_config(Args, ns.config, overrides)
            else:  # the run's own config, then the overrides
                if not isinstance(ckpt.get("config"), dict):
                    raise ConfigError(f"{ns.resume}: the checkpoint holds no training config; pass --config")
                base = from_dict(Args, ckpt["config"], where=f"{ns.resume} config")
                data = dict(parse_override(o) for o in overrides)
                args = from_dict(Args, data, base=base, where="--set")
            resume_in_place(args, ckpt, ns.resume, [parse_override(o)[0] for o in overrides])
        else:
            args, ckpt = load_config(Args, ns.config, overrides), None
        check_before_start(args)
        return args, ckpt
    except ConfigError as e:
        parser.error(str(e))
    except (FileNotFoundError, ValueError) as e:
        parser.error(str(e))


def resume_in_place(args: Args, ckpt: dict, ckpt_path: str, overridden: list[str]) -> None:
    """On ``--resume``: the network cannot change, and the run continues in the
    checkpoint's own run folder (never where the checkpoint file's config says)."""
    changes = network_changes(ckpt.get("policy_spec", {}), args)
    if changes:
        raise ConfigError(
            f"--resume keeps the checkpoint's network; cannot change {changes[0]} (start a new run for another network)"
        )
    run_dir = resume_run_dir(ckpt_path)
    asked = Path(args.runs_dir) / args.run_name if {"runs_dir", "run_name"} & set(overridden) else None
    if asked is not None and asked.resolve() != run_dir:
        raise ConfigError(
            f"--resume continues in the checkpoint's own run folder {run_dir}, not {asked}; "
            "copy the run folder first to continue it elsewhere"
        )
    args.runs_dir, args.run_name = str(run_dir.parent), run_dir.name


def check_before_start(args: Args) -> None:
    """What can be checked before anything is compiled or allocated: the device and the pool's checkpoints."""
    pick_device(args.device)
    for i, path in enumerate(args.pool_paths):
        try:
            load_checkpoint(path)
        except (FileNotFoundError, ValueError) as e:
            raise ConfigError(f"pool_paths[{i}]: {e}") from None


def _fail(message: str, code: int) -> int:
    """One line on stderr, the exit code (README, "Errors": 2 usage/input, 1 the run failed)."""
    print(f"fzmj-train: error: {message}", file=sys.stderr, flush=True)
    return code


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written (a full disk, a folder gone): the run stops."""


def main(argv=None) -> int:
    if (rc := distributed.launch(argv)) is not None:  # [distributed] --nproc N: relaunch under torchrun
        return rc
    args, resume = parse_args(argv)
    distributed.setup(args)  # [distributed] join the torchrun group (no-op in a plain process)
    if not args.run_name:
        args.run_name = f"{args.exp_name}__{args.seed}__{int(time.time())}"
    args.run_name = distributed.broadcast_object(args.run_name)  # [distributed] rank 0's clock names the run
    run_dir = Path(args.runs_dir) / args.run_name
    # before anything is compiled or allocated: a folder we cannot write, or that holds another
    # run (or is in use by one), stops here
    lock = None
    if distributed.is_main():  # [distributed] rank 0 alone owns (and locks) the run folder
        try:
            lock = open_run_dir(run_dir, resume=resume is not None, overwrite=args.overwrite)
        except RunDirError as e:
            return _fail(str(e), 2)
    latest = run_dir / "checkpoints" / "latest.pt"
    sigint = signal.getsignal(signal.SIGINT)
    try:
        return train(args, resume, run_dir)
    except NonFiniteError as e:
        kept = f"its last good checkpoint is {latest}" if latest.exists() else "no checkpoint was saved"
        return _fail(f"{e}; the run stopped, {kept} (lower learning_rate or check the config)", 1)
    except CheckpointWriteError as e:
        return _fail(f"{e}; the run stopped", 1)
    except MemoryError:
        return _fail("out of memory: lower num_tables, num_steps or the network size", 1)
    except KeyboardInterrupt:
        kept = f"its last good checkpoint is {latest}" if latest.exists() else "no checkpoint was saved"
        print(f"fzmj-train: interrupted; {kept}", file=sys.stderr, flush=True)
        return 130
    finally:
        if lock is not None:
            lock.release()
        if sigint is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, sigint)


def train(args: Args, resume: dict | None, run_dir: Path) -> int:
    """The run itself, in ``run_dir`` (created, locked and checked writable by :func:`main`)."""
    ckpt_dir = run_dir / "checkpoints"
    if distributed.is_main():  # [distributed] rank 0 alone writes
        ckpt_dir.mkdir(parents=True, exist_ok=True)

    from torch.utils.tensorboard import SummaryWriter

    start_update, global_step = 1, 0
    if resume is not None:
        start_update, global_step = resume["update"] + 1, resume["global_step"]
        start_update = distributed.start_update(resume, global_step, args.batch_size, start_update)  # [distributed]
    # on resume, TensorBoard drops the old run's events logged after the checkpoint
    writer = (  # [distributed] rank 0 alone writes events
        SummaryWriter(str(run_dir), purge_step=global_step + 1 if resume is not None else None)
        if distributed.is_main()
        else distributed.NullWriter()
    )
    writer.add_text("config", "```yaml\n" + to_yaml(args) + "```", global_step)
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()),
        global_step,
    )

    np_rng = np.random.default_rng(distributed.rank_seed(args.seed))  # [distributed] rank 0: args.seed
    torch.manual_seed(distributed.rank_seed(args.seed))
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    device = distributed.rank_device(pick_device(args.device))  # [distributed] this rank's GPU

    # a resumed run plays new games: the env seed moves on with the update number
    env_seed = (args.seed * 1_000_003 + start_update - 1) % 2**63
    env_seed = distributed.rank_seed(env_seed)  # [distributed] each rank its own tables
    env_threads = min(args.env_threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)
    env_threads = distributed.share_cores(args.torch_threads, args.env_threads, env_threads)  # [distributed]
    # duplicate groups (train/duplicate.py): K tables per wall; a finished table waits for its group
    K = args.duplicate_group
    dup = DuplicateGroups(args.num_tables, K, env_seed, args.reward_scale) if K > 1 else None
    env = VectorEnv(
        args.num_tables,
        rules=args.rules,
        seed=env_seed,
        hands_per_game=args.hands_per_game,
        oracle=args.oracle_critic,
        reward_scale=args.reward_scale,
        num_threads=env_threads,
        auto_reset=dup is None,  # duplicate groups start each table's next game themselves
    )
    B, T = args.num_tables, args.num_steps

    agent = ActorCritic(
        args.network,
        args.hidden_sizes,
        args.res_channels,
        args.res_blocks,
        args.input_layer,
        args.oracle_critic,
        obs_planes=OBS_SHAPE[0],
        hand_features=args.hand_features,
    ).to(device)
    optimizer = make_optimizer(agent, args.learning_rate)

    # ---- warm start and teacher (train/bc.py) ------------------------------------------------------
    teacher_policy = teacher_agent = None
    if args.bc_decisions > 0 or args.bc_checkpoint:
        bc_path = Path(args.bc_checkpoint) if args.bc_checkpoint else ckpt_dir / "bc.pt"
        if resume is None and args.bc_checkpoint:
            agent.load_state_dict(load_checkpoint(bc_path)["model"])  # the same spec is required
        elif resume is None and distributed.is_main():  # clone the teacher, save bc.pt, evaluate it
            warm_start(agent, args, writer, bc_path)  # [distributed] rank 0 clones; the others get its weights below
        if args.teacher_coef > 0 and args.teacher_mode == "kl" and (distributed.is_main() or resume is not None):
            teacher_policy = load_policy(bc_path, device).requires_grad_(False)
    if args.teacher_coef > 0 and args.teacher_mode == "ce":
        from fzmj.agents import make_agent

        teacher_agent = make_agent(args.bc_teacher)

    pool = None
    if args.pool_prob > 0:
        pool = OpponentPool(
            B,
            args.pool_prob,
            args.pool_heuristic_frac,
            args.pool_size,
            args.pool_learner_seats,
            np_rng,
            device,
            target=args.pool_target,
        )
        for path in args.pool_paths:
            pool.add_fixed(load_policy(path, device))
    controller = pool.controller if pool is not None else np.full((B, 4), LEARNER, dtype=np.int64)

    if resume is not None:
        agent.load_state_dict(resume["model"])
        if resume.get("optimizer"):
            optimizer.load_state_dict(resume["optimizer"])
        set_rng_state(resume.get("rng", {}), np_rng)
        distributed.reseed(np_rng, args.seed, start_update)  # [distributed] ranks > 0: their own streams again
        if pool is not None and resume.get("pool"):
            pool.load_state_dicts(agent, resume["pool"])
    distributed.broadcast_module(agent)  # [distributed] every rank starts from rank 0's weights
    if teacher_policy is None and args.teacher_coef > 0 and args.teacher_mode == "kl":  # [distributed] ranks > 0:
        teacher_policy = copy.deepcopy(agent).eval().requires_grad_(False)  # rank 0's fresh BC policy, just received

    # room for a rollout plus the carried decisions: open ones, or (duplicate) whole unsettled games
    buffer = SelfPlayBuffer(
        B,
        (T + 4) * B if dup is None else (T + 256) * B,
        (agent.in_planes, OBS_SHAPE[1]),
        NUM_ACTIONS,
        device,
        ORACLE_SHAPE if args.oracle_critic else None,
    )
    stats = HandStats()
    actions = np.zeros(B, dtype=np.int64)
    all_tables = np.arange(B)
    latest_eval: dict[str, dict] = {}

    print(
        f"fzmj-train: run {run_dir}  device {device}  {B} tables x {T} steps = {B * T} steps/update, "
        f"{args.num_updates} updates  (torch threads {torch.get_num_threads()})",
        flush=True,
    )

    def save(update: int) -> Path:
        distributed.check_in_sync([agent, *(pool.snapshots if pool is not None else [])])  # [distributed]
        if not distributed.is_main():  # [distributed] rank 0 alone writes checkpoints
            return ckpt_dir / "latest.pt"
        extra = {"pool": pool.state_dicts()} if pool is not None else {}
        extra["world_size"] = distributed.world_size()  # [distributed] resume adapts to another world size
        state = dict(
            policy=agent,
            optimizer=optimizer,
            config=dataclasses.asdict(args),
            update=update,
            global_step=global_step,
            rng=rng_state(np_rng),
            **extra,
        )
        check_finite_weights(agent, update)  # never save a poisoned checkpoint over a good one
        try:
            save_checkpoint(ckpt_dir / f"update_{update:06d}.pt", **state)
            return save_checkpoint(ckpt_dir / "latest.pt", **state)
        except (OSError, RuntimeError) as e:  # a full disk: torch raises RuntimeError, the OS OSError
            raise CheckpointWriteError(f"cannot write a checkpoint to {ckpt_dir}: {str(e).splitlines()[0]}") from None

    obs, mask, seat = env.reset(seeds=dup.first_seeds() if dup is not None else None)
    oracle = env.oracle_planes if args.oracle_critic else None  # reset() returns no oracle; step() puts it in info
    if pool is not None:
        pool.assign(all_tables, group=K)
    start_time, start_step = time.time(), global_step
    stop = GracefulStop()  # Ctrl-C: save a checkpoint at the next safe point, then exit
    latest = None

    for update in range(start_update, args.num_updates + 1):
        if args.anneal_lr:
            frac = 1.0 - (update - 1.0) / args.num_updates
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate
        teacher_coef = args.teacher_coef
        if args.teacher_anneal > 0:  # linear decay to 0 over the first teacher_anneal of the run
            teacher_coef *= max(0.0, 1.0 - (update - 1.0) / (args.teacher_anneal * args.num_updates))

        # the decisions carried over from the last rollout get values from the updated critic
        if buffer.n:
            with torch.no_grad():
                o = buffer.oracle[: buffer.n] if buffer.oracle is not None else None
                buffer.values[: buffer.n] = agent.get_value(buffer.obs[: buffer.n], o)

        # ---- rollout: T steps of every table; the learner's decisions go into the buffer ----------
        t_rollout, cpu_start = time.perf_counter(), time.process_time()
        step_before_rollout = global_step
        for _step in range(T):
            if stop.requested:
                break
            live = all_tables if dup is None else dup.active()  # duplicate: the tables not waiting
            global_step += len(live) * distributed.world_size()  # [distributed] env steps of all ranks
            ctrl = controller[all_tables, seat]
            if dup is not None:
                ctrl[dup.waiting] = IDLE
            rows = np.flatnonzero(ctrl == LEARNER)
            every = len(rows) == B  # all tables are the learner's: no gather needed
            if len(rows):
                obs_d = agent.prepare(torch.from_numpy(obs if every else obs[rows]).to(device))
                mask_d = torch.from_numpy(mask if every else mask[rows]).to(device)
                oracle_d = torch.from_numpy(oracle[rows]).to(device) if oracle is not None else None
                with torch.no_grad():
                    action, logprob, _, value = agent.get_action_and_value(obs_d, mask_d, oracle=oracle_d)
                games = dup.game[rows] if dup is not None else None
                buffer.add(rows, seat[rows], obs_d, mask_d, action, logprob, value, oracle_d, games=games)
                actions[rows] = action.cpu().numpy()
            if pool is not None:
                pool.act(ctrl, obs, mask, actions)

            if dup is None:
                obs, mask, seat, rewards, done, info = env.step(actions)
            else:
                obs, mask, seat, rewards, done, info = env.step_tables(live, actions[live])
            oracle = info.get("oracle")
            buffer.credit(seat, info["pending_reward"], done, info["final_reward"])
            if info["hand_over"].any():
                stats.record(info, controller)  # before the ended games' seats are redrawn
            if dup is not None:  # a group whose K games all ended: settle it, deal its next wall
                groups = dup.finished(done, info["results"])
                if len(groups):
                    tables, games, adv, ret = dup.settle(groups)
                    buffer.settle(tables, games, adv, ret)
                    obs, mask, seat = env.reset_tables(tables, dup.seeds(groups))
                    if pool is not None:
                        pool.assign(tables, group=K)
            elif pool is not None and done.any():
                pool.assign(np.flatnonzero(done))

        if stop.requested:  # mid-rollout: the weights are still those of the last update
            global_step = step_before_rollout
            latest = save(update - 1)
            break

        # ---- advantages along each (table, seat)'s own decisions -------------------------------
        t_update = time.perf_counter()
        t_rollout = t_update - t_rollout
        if dup is None:
            advantages, returns, train_idx = buffer.compute_gae(args.gamma, args.gae_lambda)
        else:  # duplicate groups: the settled decisions, advantage against the group's other plays
            advantages, returns, train_idx = buffer.settled_batch()
        b_values = buffer.values[: buffer.n]

        # ---- PPO update ---------------------------------------------------------------------------
        n_train = len(train_idx)
        # duplicate groups: no update until every rank has settled a group (early rollouts may not)
        skip = dup is not None and not distributed.all_positive(n_train)  # [distributed]
        mb_size = max(1, math.ceil(n_train / args.num_minibatches))
        clipfracs, approx_kl, old_approx_kl = [], torch.zeros(()), torch.zeros(())
        pg_loss = v_loss = entropy_loss = teacher_loss = torch.zeros(())
        idx_all = torch.as_tensor(train_idx, device=device)
        for _epoch in range(0 if skip else args.update_epochs):
            perm = idx_all[torch.randperm(n_train).to(device)]
            for mb in distributed.minibatches(perm, mb_size, args.num_minibatches):  # [distributed] same count on all
                mb_oracle = buffer.oracle.index_select(0, mb) if buffer.oracle is not None else None
                mb_obs, mb_mask = buffer.obs.index_select(0, mb), buffer.mask.index_select(0, mb)
                _, newlogprob, entropy, newvalue, logp_all = agent.get_action_value_and_logp(
                    mb_obs, mb_mask, buffer.actions[mb], oracle=mb_oracle
                )
                logratio = newlogprob - buffer.logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    # http://joschu.net/blog/kl-approx.html
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

                mb_adv = advantages[mb]
                if args.norm_adv and len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)

                # policy loss
                pg_loss1 = -mb_adv * ratio
                pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                # value loss
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss_clipped = (v_clipped - returns[mb]) ** 2
                    v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
                else:
                    v_loss = 0.5 * ((newvalue - returns[mb]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                check_finite_loss(loss, update, {"policy_loss": pg_loss, "value_loss": v_loss, "entropy": entropy_loss})

                # teacher term (kickstarting): KL(frozen BC policy || learner), or CE to the teacher's action
                if teacher_coef > 0:
                    if teacher_policy is not None:
                        t_logp = teacher_policy.log_probs(mb_obs, mb_mask)
                        teacher_loss = (t_logp.exp() * (t_logp - logp_all)).sum(-1).mean()
                    else:
                        t_act = teacher_agent.act(
                            mb_obs[:, : OBS_SHAPE[0]].contiguous().cpu().numpy(), mb_mask.cpu().numpy()
                        )  # base planes
                        t_act = torch.as_tensor(t_act, device=device).unsqueeze(1)
                        teacher_loss = -logp_all.gather(1, t_act).mean()
                    loss = loss + teacher_coef * teacher_loss

                optimizer.zero_grad()
                loss.backward()
                distributed.all_reduce_grads(agent, len(mb))  # [distributed] the ranks' mean gradient
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

            approx_kl = distributed.mean(approx_kl)  # [distributed] every rank stops its epochs alike
            if args.target_kl is not None and approx_kl > args.target_kl:
                break
        check_finite_weights(agent, update)  # the run stops here, before any save

        y_pred = b_values[idx_all].cpu().numpy() if n_train else np.zeros(1)
        y_true = returns[idx_all].cpu().numpy() if n_train else np.zeros(1)
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        if dup is None:
            carried = buffer.carry_over()
        else:  # the unsettled decisions wait for their group (all of them when this update was skipped)
            carried = buffer.carry_over(np.arange(buffer.n) if skip else np.flatnonzero(~buffer.settled[: buffer.n]))
        t_update = time.perf_counter() - t_update

        # ---- logging ------------------------------------------------------------------------------
        sps = int((global_step - start_step) / max(time.time() - start_time, 1e-9))
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
        writer.add_scalar("charts/SPS", sps, global_step)
        writer.add_scalar("charts/trained_decisions", n_train, global_step)
        writer.add_scalar("charts/carried_decisions", carried, global_step)
        writer.add_scalar("perf/rollout_seconds", t_rollout, global_step)
        writer.add_scalar("perf/update_seconds", t_update, global_step)
        writer.add_scalar("perf/cpu_seconds", time.process_time() - cpu_start, global_step)  # all threads
        writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
        writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
        writer.add_scalar("losses/entropy", entropy_loss.item(), global_step)
        writer.add_scalar("losses/old_approx_kl", old_approx_kl.item(), global_step)
        writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
        writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)) if clipfracs else 0.0, global_step)
        writer.add_scalar("losses/explained_variance", explained_var, global_step)
        writer.add_scalar("losses/teacher_loss", teacher_loss.item(), global_step)
        writer.add_scalar("charts/teacher_coef", teacher_coef, global_step)
        if dup is not None:
            writer.add_scalar(
                "charts/duplicate_identical_share", dup.identical_groups / max(dup.groups_settled, 1), global_step
            )
        if pool is not None and args.pool_snapshot_every and update % args.pool_snapshot_every == 0:
            pool.add_snapshot(agent)

        # ---- checkpoint and evaluation ------------------------------------------------------------
        last = update == args.num_updates
        do_eval = args.eval_every > 0 and (update % args.eval_every == 0 or last) and not stop.requested
        if do_eval or last or update % args.save_every == 0 or stop.requested:
            latest = save(update)
        if do_eval and distributed.is_main():  # [distributed] rank 0 alone evaluates
            for opponent in ("random", "heuristic"):
                records = run_dir / "records" / f"update_{update:06d}_vs_{opponent}"  # hook: eval_records
                res = evaluate_checkpoint(
                    latest, opponent, args, seed=1_000_000 + args.seed, records=records
                )  # same walls each time
                latest_eval[opponent] = res
                writer.add_scalar(f"eval/score_vs_{opponent}", res["mean_score"], global_step)
                writer.add_scalar(f"eval/win_rate_vs_{opponent}", res["win_rate"], global_step)
            # the evaluation checkpoint joins the league's roster (nothing is played here)
            if args.league_dir:
                from fzmj.agents.league import add_to_league

                tag = f"update_{update:06d}"
                add_to_league(args.league_dir, f"ppo:{ckpt_dir / (tag + '.pt')}", f"{args.run_name}/{tag}", args.rules)

        if update % args.log_every == 0 or last:
            distributed.sum_counters(stats)  # [distributed] hands of all ranks
            hs = stats.summary()
            line = f"update {update}/{args.num_updates} | step {global_step:,} | SPS {sps:,} ({t_rollout:.1f}s + {t_update:.1f}s)"
            if hs is not None:
                for key, value in hs.items():
                    writer.add_scalar(f"charts/{key}", value, global_step)
                line += f" | score {hs['mean_hand_score']:+.2f} | win {hs['win_rate']:.1%} | deal-in {hs['deal_in_rate']:.1%}"
                stats.reset()
            line += f" | ent {entropy_loss.item():.2f} | kl {approx_kl.item():.4f}"
            for opponent, res in latest_eval.items():
                ci = res.get("ci95") or [float("nan")] * 2
                line += f" | vs {opponent} {res['mean_score']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]"
            print(line, flush=True)
        if stop.requested:
            break

    writer.close()
    stop.restore()
    if stop.requested:
        print(f"stopped: {global_step:,} steps; checkpoint {latest} (continue with --resume {latest})", flush=True)
        return 130
    distributed.finish(agent, optimizer, pool)  # [distributed] same weights everywhere, then leave the group
    print(f"done: {global_step:,} steps; checkpoint {ckpt_dir / 'latest.pt'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
