"""Every check of the trainer's config, in one place.

* :func:`check_args` (run by ``Args`` on construction): each key's range, the keys that depend
  on each other, finite numbers, integers that fit the engine's int32 state and this machine's
  memory, plain run names, the rules, the files the config names. One ``ConfigError`` line,
  ``key: expected ..., got ...``.
* :func:`check_before_start` (``fzmj-train``, before the run folder is made): the device, and
  the checkpoints and agent specs the config names, loaded or built once, so a bad one stops
  the run before anything is written.
* :func:`resume_config` (``--resume``): the config a run continues with. The rule: the
  checkpoint's stored config passes the same checks as a config file; the keys that name code
  or places (``COMMAND_LINE_ONLY``: agent specs that may import a module, checkpoints and rules
  files to read, folders to write) are taken from the command line only (a preset's name in
  ``rules`` is kept). A stored value of one of them that
  differs from the default is refused unless the command line gives that key again, so a
  crafted checkpoint can neither import a module nor send the run's files elsewhere. A
  ``--config FILE`` given with ``--resume`` must be the checkpoint's own recipe (keys that only
  steer the run, ``RUN_CONTROL_KEYS``, and keys given with ``--set`` aside).
  :func:`check_resume_checkpoint` checks the checkpoint's other fields (counters, generator
  states, optimizer and pool tensors) before the run folder is touched.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np
import torch

from fzmj.agents.base import AgentSpecError
from fzmj.agents.ppo_agent import checkpoint_file
from fzmj_env.checks import physical_memory
from fzmj_env.cli import read_yaml_file
from fzmj_env.encode import NUM_CHANNELS, ORACLE_CHANNELS, ORACLE_VERSION, obs_channels
from fzmj_env.features import HF_NUM_PLANES
from fzmj_env.rules import available_rules, load_rules

from .config import (
    CONFIG_DIR,
    ConfigError,
    from_dict,
    key_range,
    load_config,
    parse_override,
    shipped_configs,
    unranged_keys,
)
from .oracle_teacher import ORACLE_TEACHERS
from .run_dir import RunDirError, check_run_name, resume_run_dir
from .torch_setup import make_optimizer, pick_device

# ---- ranges ------------------------------------------------------------------------------------------
# Each number's range is declared on its own field in args.py (``key(default, lo=..., hi=...)``,
# ``Range`` in config.py). The tables below are the older way, still honoured for a key declared
# without ``key(...)`` (move its range onto the field when you touch it): names of positive /
# non-negative integers and of numbers in [0, 1]; choices; float keys' (lowest allowed, lowest is
# allowed itself, highest allowed); integer keys' highest allowed.
POSITIVE: tuple[str, ...] = ()
NON_NEGATIVE: tuple[str, ...] = ()
UNIT_INTERVAL: tuple[str, ...] = ()
CHOICES: dict[str, tuple] = {}
FLOAT_RANGES: dict[str, tuple] = {}
INT_MAX: dict[str, int] = {}
LEGACY_RANGED = {*POSITIVE, *NON_NEGATIVE, *UNIT_INTERVAL, *CHOICES, *FLOAT_RANGES, *INT_MAX}
MAX_HIDDEN = 65536
# the settings that decide the network's parameter shapes: they cannot change on --resume
NETWORK_KEYS = ("network", "hidden_sizes", "res_channels", "res_blocks", "oracle_critic")
INPUT_KEYS = (
    "hand_features",
    "belief_planes",
    "oracle_guide",
)  # the network's extra input planes; absent from a spec: off
# the config's agent specs (checked before the start, used or not)
AGENT_SPEC_KEYS = ("pool_target", "bc_teacher", "distill_teacher")
# keys naming code to import or places to read or write: never taken from a checkpoint's config
COMMAND_LINE_ONLY = (
    "pool_target",
    "bc_teacher",
    "distill_teacher",
    "bc_checkpoint",
    "bc_dataset",
    "pool_paths",
    "league_dir",
    "rules",
    "belief_model",
)


def _save_dataset_problems(args) -> list[str]:
    """``bc_save_dataset`` writes the warm start's own games as one-hand games (train/bc_record.py)."""
    if not args.bc_save_dataset:
        return []
    if args.bc_decisions == 0 or args.bc_dataset:
        return [
            _got(
                args,
                "bc_save_dataset",
                "writes the games the warm start plays: needs bc_decisions > 0 and no bc_dataset",
            )
        ]
    if args.hands_per_game != 1:
        return [_got(args, "bc_save_dataset", "a dataset holds one-hand games: needs hands_per_game 1")]
    if importlib.util.find_spec("pyarrow") is None:
        return [_got(args, "bc_save_dataset", 'datasets need pyarrow: pip install "fzmj[data]"')]
    return []


# ---- Args ---------------------------------------------------------------------------------------------
def check_args(args) -> None:
    """Raise :class:`ConfigError` (one line) for the first thing wrong with ``args`` (an ``Args``)."""
    unranged = unranged_keys(type(args), LEGACY_RANGED)
    if unranged:  # a new number key must say what it allows (NaN and -1 would pass otherwise)
        raise ConfigError(
            f"config key {unranged[0]!r} is a number with no range: declare it with "
            f"key(default, lo=..., hi=...) in {type(args).__module__.replace('.', '/')}.py"
        )
    problems = range_problems(args)
    if problems:
        raise ConfigError(problems[0])
    problems = dependency_problems(args) + hardening_problems(args)
    if problems:
        raise ConfigError(problems[0])
    try:
        load_rules(args.rules)
    except ValueError as e:
        raise ConfigError(f"rules: {e}") from None
    for i, path in enumerate(args.pool_paths):
        if not Path(path).is_file():
            raise ConfigError(f"pool_paths[{i}]: no such checkpoint {path!r}")
    if args.bc_dataset:  # a dataset of another preset, or damaged, fails now, not after the run started
        from fzmj.data import DatasetError

        from .bc_dataset import open_checked

        try:
            open_checked(args.bc_dataset, args.rules)
        except DatasetError as e:
            raise ConfigError(f"bc_dataset: {e}") from None
    if args.league_dir:  # a league folder of other rules fails now, not at the first evaluation
        from fzmj.agents.league import check_league

        try:
            check_league(args.league_dir, rules=args.rules)
        except ValueError as e:
            raise ConfigError(f"league_dir: {e}") from None


def _got(args, key: str, what: str) -> str:
    return f"{key}: {what}, got {getattr(args, key)!r}"


def range_problems(args) -> list[str]:
    """Each key on its own: its field's range (``key``), then the legacy tables."""
    out = []
    if not (args.device in ("auto", "cpu", "cuda") or args.device.startswith("cuda:")):
        out.append(_got(args, "device", "expected auto, cpu or cuda"))
    for f in dataclasses.fields(args):
        r = key_range(f)
        p = r.problem(f.name, getattr(args, f.name)) if r is not None else None
        if p:
            out.append(p)
    for key, choices in CHOICES.items():
        if getattr(args, key) not in choices:
            names = [str(c) for c in choices]  # integer choices too (obs_version: 2 or 3)
            out.append(_got(args, key, f"expected {', '.join(names[:-1])} or {names[-1]}"))
    out += [_got(args, k, "expected a positive integer") for k in POSITIVE if getattr(args, k) < 1]
    out += [_got(args, k, "expected a non-negative integer") for k in NON_NEGATIVE if getattr(args, k) < 0]
    if not (len(args.hidden_sizes) >= 1 and min(args.hidden_sizes) >= 1):
        out.append(_got(args, "hidden_sizes", "expected positive sizes"))
    out += [_got(args, k, "expected a number in [0, 1]") for k in UNIT_INTERVAL if not 0.0 <= getattr(args, k) <= 1.0]
    return out


def dependency_problems(args) -> list[str]:
    """Keys that must agree with each other."""
    out = []
    if args.num_tables % args.duplicate_group:
        out.append(_got(args, "duplicate_group", f"expected a divisor of num_tables ({args.num_tables})"))
    if args.duplicate_group > 1 and args.hands_per_game != 1:
        out.append(_got(args, "duplicate_group", "duplicate groups need hands_per_game: 1"))
    if args.teacher_coef > 0 and args.teacher_mode == "kl" and args.bc_decisions == 0 and not args.bc_checkpoint:
        out.append(
            _got(
                args,
                "teacher_mode",
                "kl needs a BC policy (bc_decisions > 0 or bc_checkpoint); use ce or set bc_decisions",
            )
        )
    if args.bc_checkpoint:
        try:
            if not checkpoint_file(args.bc_checkpoint).is_file():
                out.append(f"bc_checkpoint: no such checkpoint {args.bc_checkpoint!r}")
        except AgentSpecError as e:
            out.append(f"bc_checkpoint: {e}")
    if args.oracle_guide and not args.oracle_critic:
        out.append(
            _got(args, "oracle_guide", "oracle guiding reads the oracle planes of the critic: needs oracle_critic")
        )
    if args.oracle_guide and args.oracle_guide_anneal == 0 and not args.bc_checkpoint:
        out.append(
            _got(
                args,
                "oracle_guide_anneal",
                "expected a share of the run > 0 (the oracle must fade out); 0 (never read) is for a run that "
                "goes on from a guided bc_checkpoint whose oracle has already faded",
            )
        )
    if args.bc_dataset and args.bc_decisions == 0:
        out.append(
            _got(args, "bc_dataset", "the warm start clones bc_decisions of its decisions: needs bc_decisions > 0")
        )
    out += _save_dataset_problems(args)
    if args.bc_stream and not (args.bc_dataset and args.bc_dagger_rounds == 0):
        out.append(
            _got(args, "bc_stream", "streams a dataset's decisions once: needs bc_dataset and bc_dagger_rounds 0")
        )
    if args.bc_dagger_rounds > 0 and args.bc_decisions == 0:
        out.append(_got(args, "bc_dagger_rounds", "DAgger rounds follow a clone: needs bc_decisions > 0"))
    if args.bc_teacher in ORACLE_TEACHERS and args.teacher_coef > 0 and args.teacher_mode == "ce":
        out.append(
            _got(args, "teacher_mode", f"ce asks bc_teacher for actions in PPO, and {args.bc_teacher} reads hidden "
                 "tiles the rollout does not keep: use kl (the pull toward the clone)")
        )  # fmt: skip
    if args.algo == "distill" and args.bc_teacher in ORACLE_TEACHERS and args.bc_decisions > 0:
        out.append(_got(args, "bc_teacher", "algo distill: an oracle teacher is for the PPO warm start"))
    if args.eval_paired_hands % (4 * args.eval_paired_seeds) or 0 < args.eval_paired_hands < 8 * args.eval_paired_seeds:
        out.append(
            _got(
                args,
                "eval_paired_hands",
                f"expected a multiple of 4 x eval_paired_seeds = {4 * args.eval_paired_seeds}, at least "
                f"{8 * args.eval_paired_seeds} (each seed at least 2 walls, each wall in all four seats)",
            )
        )
    if args.algo == "distill" and args.league_dir:
        out.append(_got(args, "league_dir", "algo distill does not feed a league: expected empty"))
    if args.algo == "distill" and args.oracle_critic:
        out.append(_got(args, "oracle_critic", "algo distill fits the policy by cloning: expected false"))
    return out


def _float_problem(key: str, v, lo: float, lo_ok: bool, hi: float | None) -> str | None:
    if v is None:
        return None
    if not math.isfinite(v):
        return f"{key}: expected a finite number, got {v!r}"
    if v < lo or (v == lo and not lo_ok) or (hi is not None and v > hi):
        interval = f"{'[' if lo_ok else '('}{lo:g}, {hi:g}]" if hi is not None else f"{'>=' if lo_ok else '>'} {lo:g}"
        return f"{key}: expected a number {'in ' if hi is not None else ''}{interval}, got {v!r}"
    return None


def hardening_problems(args) -> list[str]:
    """Finite numbers, integers that fit the engine and this machine, plain run names."""
    out: list[str] = []
    for key, (lo, lo_ok, hi) in FLOAT_RANGES.items():
        p = _float_problem(key, getattr(args, key), lo, lo_ok, hi)
        if p:
            out.append(p)
    for key, hi in INT_MAX.items():
        v = getattr(args, key)
        if v > hi:
            out.append(f"{key}: expected at most {hi:,}, got {v:,}")
    if len(args.hidden_sizes) > 64 or max(args.hidden_sizes, default=0) > MAX_HIDDEN:
        out.append(f"hidden_sizes: expected at most 64 layers of at most {MAX_HIDDEN} units, got {args.hidden_sizes!r}")
    try:
        check_run_name(args.exp_name, "exp_name")
        if args.run_name:
            check_run_name(args.run_name)
    except RunDirError as e:
        out.append(str(e))
    return out or memory_problems(args)


def memory_problems(args) -> list[str]:
    """Refuse buffers this machine cannot hold: the rollout's (T + 4) * B decisions, the cloned demonstrations."""
    total = physical_memory()
    if total is None:
        return []
    hf = HF_NUM_PLANES * 27 if args.hand_features else 0
    per = obs_channels(f"v{args.obs_version}") * 27 + hf + 62 + 64 + (ORACLE_CHANNELS * 27 if args.oracle_critic else 0)
    out = []
    need = (args.num_steps + 4) * args.num_tables * per
    if need > total:
        out.append(
            f"num_tables x num_steps: the rollout buffer needs about {need / 1e9:.1f} GB, "
            f"more than this machine's {total / 1e9:.1f} GB"
        )
    relabel = args.bc_dataset and args.bc_teacher in ORACLE_TEACHERS and not args.oracle_critic  # + hidden planes
    need = 0 if args.bc_stream else args.bc_decisions * (per + (ORACLE_CHANNELS * 27 if relabel else 0))
    if need > total:
        out.append(
            f"bc_decisions: {args.bc_decisions:,} demonstrations need about {need / 1e9:.1f} GB, "
            f"more than this machine's {total / 1e9:.1f} GB"
            + (" (bc_stream=true streams a bc_dataset instead)" if args.bc_dataset else "")
        )
    return out


# ---- before the run starts ---------------------------------------------------------------------------
def check_before_start(args) -> None:
    """What the config names, loaded once before anything is written: the device, the pool's and
    the warm start's checkpoints, the agent specs the run will build."""
    from fzmj.agents.checkpoint import load_checkpoint

    pick_device(args.device)
    for i, path in enumerate(args.pool_paths):
        try:
            load_checkpoint(path)
        except (FileNotFoundError, ValueError) as e:
            raise ConfigError(f"pool_paths[{i}]: {e}") from None
    if args.bc_checkpoint:
        try:
            spec = load_checkpoint(checkpoint_file(args.bc_checkpoint))["policy_spec"]
        except (FileNotFoundError, ValueError) as e:
            raise ConfigError(f"bc_checkpoint: {e}") from None
        changes = network_changes(spec, args)
        if changes:
            raise ConfigError(f"bc_checkpoint: its network differs from the config's: {changes[0]}")
    if args.belief_planes:
        from fzmj.agents.belief import load_belief

        try:
            belief = load_belief(args.belief_model, rules=args.rules)
        except ValueError as e:  # AgentSpecError: a missing file, another preset, a bad checkpoint
            raise ConfigError(f"belief_model: {str(e).splitlines()[0]}") from None
        if belief.num_channels > obs_channels(f"v{args.obs_version}"):
            raise ConfigError(
                f"belief_model: {belief.name} reads observation {belief.obs_version}, "
                f"the run's network obs_version={args.obs_version}"
            )
    # every agent spec of the config, whether this run uses it or not: a mistyped one that is
    # unused today (``bc_teacher=nope`` with cloning off) is still a mistake in the config, and it
    # would surface only when a later run turns the feature on
    from fzmj.agents import make_agent  # torch and the agents, only when a run is about to start

    for key in AGENT_SPEC_KEYS:
        spec = getattr(args, key)
        if key == "bc_teacher" and spec in ORACLE_TEACHERS:
            continue  # a labeller of the warm start (train/oracle_teacher.py), no agent
        try:
            make_agent(spec)
        except ValueError as e:
            raise ConfigError(f"{key}: {str(e).splitlines()[0]}") from None


def network_changes(spec: dict, args, keys=(*NETWORK_KEYS, *INPUT_KEYS)) -> list[str]:
    """The network settings of ``args`` that differ from a checkpoint's ``policy_spec`` (the
    observation layout included: a checkpoint's ``obs_planes`` against the config's ``obs_version``)."""
    planes = int(spec.get("obs_planes", NUM_CHANNELS))
    if planes != obs_channels(f"v{args.obs_version}"):
        was = next((int(v[1:]) for v in ("v2", "v3") if obs_channels(v) == planes), planes)
        return [f"obs_version={args.obs_version!r} (checkpoint: {was!r})"]
    spec = {**dict.fromkeys(INPUT_KEYS, False), **spec}
    return [
        f"{k}={getattr(args, k)!r} (checkpoint: {spec.get(k)!r})"
        for k in keys
        if k in spec and _norm(getattr(args, k)) != _norm(spec.get(k))
    ]


def _norm(v):
    return list(v) if isinstance(v, (list, tuple)) else v


# ---- --resume -----------------------------------------------------------------------------------------
def shipped_values() -> dict[str, list]:
    """For each ``COMMAND_LINE_ONLY`` key, the values the shipped configs give it (``oracle:defend``,
    ``pretrained:v2``, ...): package code and package data, so a stored one is kept on ``--resume``
    like a preset's name (a run of a shipped recipe resumes with ``--resume PATH`` alone)."""
    out: dict[str, list] = {key: [] for key in COMMAND_LINE_ONLY}
    for name in shipped_configs():
        raw = read_yaml_file(CONFIG_DIR / f"{name}.yaml", "config file", error=ConfigError)
        for key in COMMAND_LINE_ONLY:
            if key in raw and raw[key] not in out[key]:
                out[key].append(raw[key])
    return out


def resume_config(cls, ckpt: dict, ckpt_path: str, config_file: str | None, overrides: list[str]):
    """The ``cls`` (``Args``) a resumed run continues with (the rule: module docstring)."""
    if config_file:
        args = load_config(cls, config_file, overrides)
        _check_same_recipe(ckpt, ckpt_path, config_file, args, overrides)
    else:
        stored = ckpt.get("config")
        if not isinstance(stored, dict):
            raise ConfigError(f"{ckpt_path}: the checkpoint holds no training config; pass --config")
        given = dict(parse_override(o) for o in overrides)
        defaults = _defaults(cls)
        stored = dict(stored)  # runs_dir and run_name stay: checked, then replaced by the checkpoint's folder
        if stored.get("rules") in available_rules():  # a preset's name: no file is read
            defaults["rules"] = stored["rules"]
        shipped = shipped_values()
        for key in COMMAND_LINE_ONLY:
            if key in stored and key not in given and stored[key] != defaults[key] and stored[key] not in shipped[key]:
                raise ConfigError(
                    f"{ckpt_path}: its config sets {key}={stored[key]!r}; a resumed run takes {key} from the "
                    f"command line only (pass --set {key}=... to keep it)"
                )
        args = from_dict(cls, {**stored, **given}, where=f"{ckpt_path} config")
    overridden = [parse_override(o)[0] for o in overrides]
    _resume_in_place(args, ckpt, ckpt_path, overridden)
    return args


# keys that steer a run without changing what it learns: a config file given with --resume may differ in them
RUN_CONTROL_KEYS = (
    "exp_name run_name runs_dir overwrite device torch_threads env_threads log_every save_every eval_every "
    "eval_hands eval_workers eval_records eval_paired_every eval_paired_hands eval_paired_seeds league_dir dist_timeout"
).split()


def _check_same_recipe(ckpt: dict, ckpt_path: str, config_file: str, args, overrides: list[str]) -> None:
    """``--resume CKPT --config FILE``: FILE must be the checkpoint's own recipe (a key changed on
    purpose is given with --set), else the run would go on under another recipe unnoticed."""
    stored = ckpt.get("config")
    if not isinstance(stored, dict):
        return  # a checkpoint without a config: the file is the only recipe there is
    given = {parse_override(o)[0] for o in overrides}
    ours = dataclasses.asdict(args)
    changed = [
        k
        for k in ours
        if k in stored and k not in given and k not in RUN_CONTROL_KEYS and _norm(stored[k]) != _norm(ours[k])
    ]
    if changed:
        k = changed[0]
        more = f"; +{len(changed) - 1} more keys" if len(changed) > 1 else ""
        raise ConfigError(
            f"--resume: the checkpoint's recipe differs from {Path(config_file).name} ({k}: {stored[k]!r} in the "
            f"checkpoint, {ours[k]!r} in the file{more}): resume without --config to keep its own, change a key "
            "on purpose with --set key=value, or start a new run"
        )


def _defaults(cls) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        out[f.name] = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    return out


def _resume_in_place(args, ckpt: dict, ckpt_path: str, overridden: list[str]) -> None:
    """The network cannot change, and the run continues in the checkpoint's own run folder
    (never where the checkpoint file's config says)."""
    spec = ckpt.get("policy_spec")
    changes = network_changes(spec if isinstance(spec, dict) else {}, args)
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


def check_resume_checkpoint(ckpt: dict, path: str) -> None:
    """The fields a resume reads that ``load_checkpoint`` does not check (it checks the policy,
    the counters and the pool): the world size, the generator states and the optimizer, each
    tried on a throwaway copy. ``ConfigError`` (one line) for the first that does not fit."""
    from fzmj.agents.policy import build_policy

    def bad(what: str) -> ConfigError:
        return ConfigError(f"{path}: not a resumable checkpoint: {what}")

    ws = ckpt.get("world_size", 1)
    if isinstance(ws, bool) or not isinstance(ws, int) or not 1 <= ws <= 1 << 20:
        raise bad(f"world_size is {ws!r}, expected a positive integer")
    rng = ckpt.get("rng", {})
    if not isinstance(rng, dict):
        raise bad(f"rng is a {type(rng).__name__}, expected generator states")
    try:
        _try_rng(rng)
    except (TypeError, ValueError, RuntimeError, KeyError, AttributeError) as e:
        raise bad(f"rng: {_first_line(e)}") from None
    policy = build_policy(ckpt["policy_spec"])
    if policy.oracle_critic and policy.oracle_channels != ORACLE_CHANNELS:
        raise bad(
            f"its critic reads {policy.oracle_channels} oracle planes (oracle_v1) and the env gives "
            f"{ORACLE_CHANNELS} ({ORACLE_VERSION}): start a new run (its policy still plays as ppo:PATH)"
        )
    try:
        if ckpt.get("optimizer"):
            _try_optimizer(policy, ckpt["optimizer"], make_optimizer)
    except (TypeError, ValueError, RuntimeError, KeyError, AttributeError, IndexError) as e:
        raise bad(f"optimizer: {_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]


def _try_rng(rng: dict) -> None:
    before = torch.get_rng_state()
    try:
        if "torch" in rng:
            torch.set_rng_state(rng["torch"])
    finally:
        torch.set_rng_state(before)
    if "numpy" in rng:
        np.random.default_rng().bit_generator.state = rng["numpy"]


def _try_optimizer(policy: torch.nn.Module, state: dict, make_optimizer) -> None:
    opt = make_optimizer(policy, 1e-4)
    opt.load_state_dict(state)
    for p in policy.parameters():
        for k, v in opt.state.get(p, {}).items():
            if k != "step" and (not isinstance(v, torch.Tensor) or v.shape != p.shape):
                raise ValueError(f"state {k!r} of a parameter of shape {tuple(p.shape)} does not fit")
            if isinstance(v, torch.Tensor) and v.is_floating_point() and not bool(torch.isfinite(v).all()):
                # not a learning-rate problem of the run to come: the saved state is already poisoned
                raise ValueError(
                    f"the checkpoint's optimizer state is not finite ({k!r} holds NaN or inf); "
                    "resume from an earlier checkpoint of the run"
                )


def missing_checkpoint(path: str) -> str:
    """The line for ``--resume PATH`` where no file is: with the checkpoints its folder does hold
    (a run killed during its very first ``latest.pt`` write has only ``update_000001.pt``)."""
    folder = Path(path).parent
    try:
        found = sorted(folder.glob("*.pt"), key=lambda p: p.stat().st_mtime)
    except OSError:
        found = []
    if not found:
        return f"--resume: checkpoint not found: {path}"
    names = ", ".join(p.name for p in found[-4:])
    return (
        f"--resume: checkpoint not found: {path}; its folder holds {names} (resume from the newest, {found[-1].name})"
    )


def check_resume_counters(ckpt: dict, path: str) -> None:
    """A checkpoint's ``update`` and ``global_step`` must agree: every update plays at least one env
    step, so ``global_step >= update`` (a checkpoint of 10**6 updates at 2,048 steps was accepted)."""
    update, step = ckpt.get("update", 0), ckpt.get("global_step", 0)
    if step < update:
        raise ConfigError(
            f"{path}: not a resumable checkpoint: update {update:,} disagrees with global_step {step:,} "
            "(every update plays at least one env step)"
        )


def finished_run(args, ckpt: dict, run_dir, start_update: int) -> str | None:
    """The line to print when ``--resume`` of a finished run has nothing left to train (None
    otherwise): what happened and where, instead of a 'done' naming a checkpoint that is not written."""
    last = args.distill_iterations if args.algo == "distill" else args.num_updates
    if start_update <= last:
        return None
    return (
        f"fzmj-train: the checkpoint is of a finished run ({ckpt.get('update', 0):,} of {last:,} "
        f"{'iterations' if args.algo == 'distill' else 'updates'}, {ckpt.get('global_step', 0):,} steps): "
        f"nothing to train, nothing written (run folder {run_dir}); to train on, raise total_timesteps "
        "(--set total_timesteps=N)"
    )


def check_resume_clone(args, path: str) -> None:
    """A resumed run whose KL pull reads the clone it made (``bc.pt`` beside its checkpoints) needs
    that file: one line, before anything is written, when it is missing (a run folder copied
    without it)."""
    if not (args.bc_decisions > 0 and not args.bc_checkpoint and args.teacher_coef > 0 and args.teacher_mode == "kl"):
        return
    clone = resume_run_dir(path) / "checkpoints" / "bc.pt"
    if not clone.is_file():
        raise ConfigError(
            f"--resume: the run's KL pull reads its clone {clone}, which is missing: put the run's bc.pt there "
            "(a run folder copied without it?), or go on without the pull with --set teacher_coef=0"
        )
