"""Range checks of the training config beyond types: every float finite and in range,
every integer small enough for the engine's int32 state and for this machine, plain run names.

``hardening_problems(args)`` lists what is wrong, one line per key (``key: expected ..., got ...``);
``Args.__post_init__`` raises the first as a ``ConfigError``.
"""

from __future__ import annotations

import math

from fzmj_env.encode import NUM_CHANNELS, ORACLE_CHANNELS
from fzmj_env.validate import MAX_HANDS_PER_GAME, MAX_SEED, MAX_TABLES, physical_memory

from .run_dir import RunDirError, check_run_name

# float keys: (lowest allowed, lowest is allowed itself, highest allowed)
FLOAT_RANGES = {
    "learning_rate": (0.0, False, 1.0),
    "reward_scale": (0.0, False, None),
    "clip_coef": (0.0, False, None),
    "ent_coef": (0.0, True, None),
    "vf_coef": (0.0, True, None),
    "max_grad_norm": (0.0, False, None),
    "target_kl": (0.0, False, None),
    "gamma": (0.0, True, 1.0),
    "gae_lambda": (0.0, True, 1.0),
}
# integer keys: highest allowed (the lowest is checked by Args itself)
INT_MAX = {
    "seed": MAX_SEED,
    "num_tables": MAX_TABLES,
    "hands_per_game": MAX_HANDS_PER_GAME,
    "num_steps": 1 << 20,
    "total_timesteps": 1 << 50,
    "num_minibatches": 1 << 20,
    "update_epochs": 10_000,
    "res_channels": 4096,
    "res_blocks": 256,
    "torch_threads": 4096,
    "env_threads": 4096,
    "eval_hands": 1 << 30,
    "eval_workers": 1024,
    "pool_size": 10_000,
}
MAX_HIDDEN = 65536


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
    """What is wrong with ``args`` (an ``Args``) beyond its types, one line per problem."""
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
    if not out:
        # the rollout buffer holds (T + 4) * B decisions: refuse what this machine cannot hold
        per = NUM_CHANNELS * 27 + 62 + 64 + (ORACLE_CHANNELS * 27 if args.oracle_critic else 0)
        need = (args.num_steps + 4) * args.num_tables * per
        total = physical_memory()
        if total is not None and need > total:
            out.append(
                f"num_tables x num_steps: the rollout buffer needs about {need / 1e9:.1f} GB, "
                f"more than this machine's {total / 1e9:.1f} GB"
            )
    return out
