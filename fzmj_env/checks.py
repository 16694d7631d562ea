"""Checks at the public boundary: every value from Python, a file or a command line is checked
here before it reaches a Numba kernel or the int32/int16 state.

Kernels do not check their input (a bounds check per element would cost the hot loops), so a
public function that feeds one calls a checker from this module first. Each checker raises
``ValueError`` with one line naming the argument, what it must be and what it got. Batch checks
are vectorised numpy reductions, once per call, never per row in Python.

The limits below keep every counter of the engine's int32 state far from wrapping:

* a hand's points are int32; a hand's value grows with the dealer streak (R11.4:
  ``(flower + gold + streak + 5) x 2 + special``), which is at most ``MAX_STREAK`` and grows by one
  per hand of at most ``MAX_HANDS_PER_GAME``: with the rules files' bounds (fzmj_env/rules, derived
  in docs/presets.md "Limits on a rules file") a hand's points stay below about 4.2e8, and a
  game's scores, int64 sums of them, cannot wrap;
* ``MAX_TABLES`` bounds a ``VectorEnv``'s buffers (about 5 KB per table) to tens of GB.
"""

from __future__ import annotations

import math
import os

import numpy as np

MAX_SEED = 2**64 - 1
MAX_HANDS_PER_GAME = 10_000
MAX_STREAK = 10_000
MAX_TABLES = 1 << 22
NUM_SUIT_KINDS = 27


def check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    """``value`` as a Python int in ``lo..hi``; bools, floats and strings are refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer in {rng}, got {v}")
    return v


def check_float(name: str, value, lo: float | None = None, hi: float | None = None, lo_open: bool = False) -> float:
    """``value`` as a finite float in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``); NaN and inf are refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {v}")
    if (lo is not None and (v < lo or (lo_open and v == lo))) or (hi is not None and v > hi):
        left = "(" if lo_open else "["
        raise ValueError(
            f"{name} must be in {left}{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}], got {v}"
        )
    return v


OBS_VERSION_NAMES = ("v2", "v3")  # fzmj_env.encode.OBS_VERSIONS (a test keeps them equal)


def check_obs_version(value) -> str:
    """An observation layout: ``2``, ``3``, ``"v2"`` or ``"v3"``, returned as ``"v2"`` / ``"v3"``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = f"v{int(value)}"
    if value not in OBS_VERSION_NAMES:
        raise ValueError(f"obs_version must be 2 or 3 (or 'v2', 'v3'), got {value!r}")
    return value


def check_hands_per_game(value) -> int:
    """Hands in a game: 1..MAX_HANDS_PER_GAME (the engine keeps it in int32, scores stay in int32)."""
    return check_int("hands_per_game", value, 1, MAX_HANDS_PER_GAME)


def check_streak(value) -> int:
    """Dealer streak of a scripted first hand (R2): 0..MAX_STREAK."""
    return check_int("streak", value, 0, MAX_STREAK)


def check_reward_scale(value) -> float:
    """Reward multiplier: finite and positive (a NaN or inf scale would poison every reward)."""
    return check_float("reward_scale", value, lo=0.0, lo_open=True)


def check_seed(value, name: str = "seed") -> int:
    """A seed in 0..2**64-1 (the engine stores 64 bits)."""
    return check_int(name, value, 0, MAX_SEED)


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_memory(what: str, nbytes: int) -> None:
    """Refuse a request whose buffers alone exceed the machine's physical memory: numpy's zeroed
    arrays are allocated lazily, so without this the OOM killer, not a message, would answer."""
    total = physical_memory()
    if total is not None and nbytes > total:
        raise ValueError(
            f"{what} needs about {nbytes / 1e9:.1f} GB of buffers, more than this machine's {total / 1e9:.1f} GB"
        )


# ---- batches --------------------------------------------------------------------------------------
def check_integer_array(name: str, a: np.ndarray) -> None:
    if a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be an integer array, got dtype {a.dtype}")


def check_win_batch(counts: np.ndarray, gold: np.ndarray) -> None:
    """Shapes and dtypes of an ``is_win_batch`` call: ``counts`` (B, 27) integers, ``gold`` (B,)
    integers; a wider-than-8-bit ``counts`` is range-checked here, before its cast to int8 could
    wrap a bad count into a good one. Per-row values are checked inside the kernel's own pass
    (``core/hand.py``), which reports the first bad row to :func:`bad_hand_row`."""
    if counts.ndim != 2 or counts.shape[1] != NUM_SUIT_KINDS:
        raise ValueError(f"counts must have shape (B, 27), got {counts.shape}")
    if gold.ndim != 1 or gold.shape[0] != counts.shape[0]:
        raise ValueError(f"gold must have shape ({counts.shape[0]},), got {gold.shape}")
    check_integer_array("counts", counts)
    check_integer_array("gold", gold)
    if counts.dtype.itemsize > 1 and counts.size and (counts.min() < 0 or counts.max() > 4):
        r = int(np.flatnonzero(((counts < 0) | (counts > 4)).any(axis=1))[0])
        raise ValueError(bad_hand_row(r, counts[r], int(gold[r])))


def bad_hand_row(r: int, row: np.ndarray, gold: int) -> str:
    """The message for row ``r`` of an ``is_win_batch`` call that is not a valid 3n+2 hand."""
    if not 0 <= gold < NUM_SUIT_KINDS:
        return f"gold[{r}] = {gold} is not a suit kind 0..26 (R5)"
    vals = [int(v) for v in row]
    if min(vals) < 0 or max(vals) > 4:
        return f"counts row {r}: every count must be 0..4 (R1), got {vals}"
    return f"counts row {r} holds {sum(vals)} tiles; a winning check needs 3n+2 (R9.1)"


def _dims(x) -> tuple:
    return tuple(int(d) for d in x.shape)


def _is_float(x) -> bool:
    dt = x.dtype
    kind = getattr(dt, "kind", None)  # numpy; torch dtypes say is_floating_point / is_complex
    if kind is not None:
        return kind in ("f", "c")
    return bool(getattr(dt, "is_floating_point", False) or getattr(dt, "is_complex", False))


def check_planes(name: str, x, channels: int, batched: bool = True, check_values: bool = True) -> None:
    """``x`` is ``(N, channels, 27)`` (or ``(channels, 27)`` unbatched) of 0/1 values, any integer
    or bool dtype. Works on numpy arrays and torch tensors (duck-typed: ``shape``, ``dtype``,
    ``min``, ``max``), so the agents' and the policies' entry points share it."""
    want = ("N", channels, 27) if batched else (channels, 27)
    dims = _dims(x)
    if len(dims) != len(want) or dims[-2:] != (channels, 27):
        raise ValueError(f"{name} must have shape ({', '.join(map(str, want))}), got {dims}")
    if _is_float(x):
        raise ValueError(f"{name} must be an integer (int8) array of 0/1 planes, got dtype {x.dtype}")
    if check_values and dims[0] and not _all_01(x):
        raise ValueError(
            f"{name} must hold only 0 and 1 (observation planes), got values {int(x.min())}..{int(x.max())}"
        )


def check_masks(name: str, mask, rows: int, num_actions: int = 62) -> None:
    """``mask`` is ``(rows, num_actions)`` of 0/1 with at least one legal action per row."""
    dims = _dims(mask)
    if dims != (rows, num_actions):
        raise ValueError(f"{name} must have shape ({rows}, {num_actions}), got {dims}")
    if _is_float(mask):
        raise ValueError(f"{name} must be an integer (int8) or bool array, got dtype {mask.dtype}")
    if rows == 0:
        return
    if not _all_01(mask):
        raise ValueError(f"{name} must hold only 0 and 1, got values {int(mask.min())}..{int(mask.max())}")
    legal = mask.any(1)  # numpy and torch alike
    if not bool(legal.all()):
        bad = int((~legal).nonzero()[0][0]) if hasattr(mask, "numpy") else int(np.flatnonzero(~legal)[0])
        raise ValueError(f"{name} row {bad} has no legal action")


def _all_01(x) -> bool:
    """Whether every value of the integer/bool array or tensor ``x`` is 0 or 1: one reduction
    for byte dtypes (an unsigned view puts negatives above 1), min and max otherwise."""
    if isinstance(x, np.ndarray):
        if x.dtype == np.bool_:
            return True
        if x.dtype.itemsize == 1:
            return int(x.view(np.uint8).max()) <= 1
        return int(x.min()) >= 0 and int(x.max()) <= 1
    import torch  # a tensor (the policies' entry point): torch is loaded already

    if x.dtype == torch.bool:
        return True
    if x.dtype in (torch.int8, torch.uint8):
        return int(x.view(torch.uint8).max()) <= 1
    return int(x.min()) >= 0 and int(x.max()) <= 1


def check_policy_input(obs, mask, channels: int = 97, num_actions: int = 62) -> None:
    """A policy's ``act`` input: ``obs`` (N, channels, 27) 0/1 planes and ``mask`` (N, num_actions)
    with a legal action per row (numpy arrays or torch tensors)."""
    check_planes("obs", obs, channels)
    check_masks("mask", mask, _dims(obs)[0], num_actions)


def check_input_width(x, in_features: int) -> None:
    """A first layer's input: a batch whose rows flatten to ``in_features`` values. Cheap (shape
    only), so it guards every forward pass: the sparse CPU kernel reads the weight row of each
    nonzero column, and a wider row would read past the weights."""
    dims = _dims(x)
    width = 1
    for d in dims[1:]:
        width *= d
    if len(dims) < 2 or width != in_features:
        raise ValueError(f"the network expects rows of {in_features} values, got input of shape {dims}")


# ---- messages -------------------------------------------------------------------------------------
MAX_REPR = 80


def short_repr(value, limit: int = MAX_REPR) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages: a value read from a file
    may be arbitrarily large, and a message must stay one readable line."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's digit limit for str()
        return f"<{type(value).__name__} too large to print>"
    text = text.replace("\n", "\\n")
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}... ({len(text)} characters)"


# ---- actions and flags ----------------------------------------------------------------------------
def check_action(value, num_actions: int = 62) -> int:
    """One action as a Python int in ``0..num_actions-1``: a Python int, a numpy integer or a 0-d
    integer array (what ``Discrete.sample`` and ``np.array(a)`` give); bools, floats, strings and
    arrays of another shape are refused (a float action would otherwise be truncated silently)."""
    if type(value) is int:
        v = value
    elif isinstance(value, np.integer):
        v = int(value)
    elif isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        v = int(value)
    else:
        raise ValueError(f"action must be an integer in 0..{num_actions - 1}, got {short_repr(value)}")
    if not 0 <= v < num_actions:
        raise ValueError(f"action must be an integer in 0..{num_actions - 1}, got {v}")
    return v


def check_bool(name: str, value) -> bool:
    """``value`` as a bool: only ``True``/``False`` (or numpy's); ``"false"`` or ``0`` are refused,
    not read by their truthiness."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {short_repr(value)}")


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` whose ``writeable`` flag cannot be set again (its base is a
    read-only memoryview; a plain view's flag could be): what ``VectorEnv`` hands out. Agents pass
    their inputs through it too, so that a Numba kernel is compiled for one array type (read-only)
    whether the caller gave an env's buffers or arrays of its own (``a`` itself when it is
    read-only already: about 50 ns, 0.7 µs otherwise)."""
    return a if not a.flags.writeable else np.asarray(memoryview(a).toreadonly())
