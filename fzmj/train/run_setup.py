"""The trainer's setup: everything a run needs, built in a fixed order (the order draws from the
seeded generators, so it is part of "same seed, same run"): counters, TensorBoard, seeds,
device, env, network and optimizer, warm start and teacher, opponents, the resumed state, the
rollout buffer and the rollout itself.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import torch

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.encode import obs_channels
from fzmj_env.vector import VectorEnv

from .advantages import GAE, make_advantages
from .best import BestKeeper
from .checkpoint import Saver, set_rng_state
from .config import to_yaml
from .evaluation import Evaluator
from .metrics import HandStats, Logger, ProgressBar
from .model import OBS_SHAPE, ORACLE_SHAPE, ActorCritic
from .opponents import make_pool
from .rollout import Rollout
from .selfplay_buffer import SelfPlayBuffer
from .teacher import Teacher, prepare_teacher
from .torch_setup import make_optimizer, pick_device


@dataclass
class Run:
    """A run's parts, as the training loop uses them."""

    args: object
    ranks: object
    device: torch.device
    agent: ActorCritic
    optimizer: torch.optim.Optimizer
    advantages: GAE
    teacher: Teacher
    rollout: Rollout
    saver: Saver
    evaluator: Evaluator
    logger: Logger
    writer: object
    start_update: int
    global_step: int


def make_env(args, env_seed: int, env_threads: int, auto_reset: bool) -> VectorEnv:
    return VectorEnv(
        args.num_tables,
        rules=args.rules,
        seed=env_seed,
        hands_per_game=args.hands_per_game,
        oracle=args.oracle_critic,
        reward_scale=args.reward_scale,
        num_threads=env_threads,
        auto_reset=auto_reset,
        obs_version=args.obs_version,
    )


def make_network(args, device: torch.device, resume: dict | None = None) -> ActorCritic:
    """The config's network; with belief planes, the belief model's weights copied in (on
    ``resume``, the checkpoint's own belief spec: the resume's state dict brings its weights)."""
    belief_spec, belief_weights = None, None
    spec = (resume or {}).get("policy_spec") or {}
    if args.belief_planes and spec.get("belief_planes"):
        belief_spec = spec["belief_spec"]
    elif args.belief_planes:
        from fzmj.agents.belief import load_belief

        net = load_belief(args.belief_model, rules=args.rules).net
        belief_spec, belief_weights = net.spec, net.state_dict()
    agent = ActorCritic(
        args.network,
        args.hidden_sizes,
        args.res_channels,
        args.res_blocks,
        args.input_layer,
        args.oracle_critic,
        obs_planes=obs_channels(f"v{args.obs_version}"),
        hand_features=args.hand_features,
        belief_planes=args.belief_planes,
        belief_spec=belief_spec,
        oracle_guide=args.oracle_guide,
    )
    if belief_weights is not None:
        agent.belief.load_state_dict(belief_weights)
    return agent.to(device)


def write_config(writer, args, global_step: int) -> None:
    writer.add_text("config", "```yaml\n" + to_yaml(args) + "```", global_step)
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()),
        global_step,
    )


def env_threads_of(args) -> int:
    """The Numba threads of one process's env: ``env_threads`` (0: every thread Numba may use),
    at most Numba's count (several ranks on a machine then share them: ``Ranks.share_cores``)."""
    return min(args.env_threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)


def make_logger(args, writer, stats, ranks, run_dir: Path, resume: bool, progress: bool, start_update, global_step):
    """The run's :class:`Logger`: ``train.log`` in the run folder on rank 0 (a fresh run starts it
    empty, a resumed one appends), and the progress bar when asked for and stdout is a terminal."""
    log_file = bar = None
    if ranks.main:
        log_file = run_dir / "train.log"
        if not resume:
            log_file.write_text("", encoding="utf-8")
        if progress and sys.stdout.isatty():
            bar = ProgressBar(args.num_updates, args.batch_size, start_update, global_step)
    logger = Logger(writer, args.num_updates, args.log_every, stats, ranks, global_step, log_file=log_file, bar=bar)
    return logger


def setup_run(args, resume: dict | None, run_dir: Path, ranks, progress: bool = False) -> Run:
    """Build a run in ``run_dir`` (created, locked and checked writable by ``main``); ``progress``:
    a progress bar on the console when it is a terminal (rank 0), else one line per window."""
    ckpt_dir = run_dir / "checkpoints"
    start_update, global_step = 1, 0
    if resume is not None:
        start_update, global_step = resume["update"] + 1, resume["global_step"]
        start_update = ranks.start_update(resume, global_step, args.batch_size, start_update)
    # on resume, TensorBoard drops the old run's events logged after the checkpoint
    writer = ranks.writer(run_dir, purge_step=global_step + 1 if resume is not None else None)
    write_config(writer, args, global_step)

    np_rng = np.random.default_rng(ranks.rank_seed(args.seed))
    torch.manual_seed(ranks.rank_seed(args.seed))
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    device = ranks.device(pick_device(args.device))

    # a resumed run plays new games: the env seed moves on with the update number; each rank its own tables
    env_seed = ranks.rank_seed((args.seed * 1_000_003 + start_update - 1) % 2**63)
    env_threads = ranks.share_cores(args.torch_threads, args.env_threads, env_threads_of(args))
    advantages = make_advantages(args, env_seed)
    env = make_env(args, env_seed, env_threads, advantages.auto_reset)

    agent = make_network(args, device, resume)
    optimizer = make_optimizer(agent, args.learning_rate)
    teacher = prepare_teacher(args, agent, writer, ckpt_dir, resume, device, ranks.main)
    pool = make_pool(args, np_rng, device, env.num_threads)
    if resume is not None:
        agent.load_state_dict(resume["model"])
        if resume.get("optimizer"):
            optimizer.load_state_dict(resume["optimizer"])
        set_rng_state(resume.get("rng", {}), np_rng)
        ranks.reseed(np_rng, args.seed, start_update)  # ranks > 0: their own streams again
        if resume.get("pool"):
            pool.load_state_dicts(agent, resume["pool"])
    ranks.broadcast_module(agent)  # every rank starts from rank 0's weights
    teacher.after_broadcast(agent)

    B, T = args.num_tables, args.num_steps
    # room for a rollout plus the carried decisions
    buffer = SelfPlayBuffer(
        B,
        (T + advantages.carry_room) * B,
        (agent.host_planes, OBS_SHAPE[1]),  # belief planes are made from these at each forward
        NUM_ACTIONS,
        device,
        ORACLE_SHAPE if args.oracle_critic else None,
        guided=args.oracle_guide,
    )
    stats = HandStats()
    evaluator = Evaluator(args, run_dir, writer, ranks.main)
    if ranks.main and args.eval_paired_every > 0:  # best.pt: the checkpoint of the highest paired point
        resumed = start_update - 1 if resume is not None else None
        evaluator.best = BestKeeper(ckpt_dir, args, agent, writer, run_dir / "train.log", resumed)
    print(
        f"fzmj-train: run {run_dir}  device {device}  {B} tables x {T} steps = {B * T} steps/update, "
        f"{args.num_updates} updates  (torch threads {torch.get_num_threads()})",
        flush=True,
    )
    return Run(
        args=args,
        ranks=ranks,
        device=device,
        agent=agent,
        optimizer=optimizer,
        advantages=advantages,
        teacher=teacher,
        rollout=Rollout(env, advantages, pool, buffer, stats, device, ranks.size, args),
        saver=Saver(ckpt_dir, args, agent, optimizer, pool, np_rng, ranks),
        evaluator=evaluator,
        logger=make_logger(
            args, writer, stats, ranks, run_dir, resume is not None, progress, start_update, global_step
        ),
        writer=writer,
        start_update=start_update,
        global_step=global_step,
    )
