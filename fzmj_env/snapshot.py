"""Saved table states: what ``Game.save_state``, ``raw_env.save_state`` and
``VectorEnv.save_tables`` return, and the checks every restore and every unpickled env passes.

A saved state is a flat ``uint8`` array of ``STATE_BYTES`` per table: the engine's whole
record of the table (``core.state.STATE_DTYPE``: hands, wall, seeds, scores, ...: everything the
engine's next steps depend on, the walls of later hands included, since they come from the seed
slots) and a few numbers the Python drivers keep beside it (a ``VectorEnv`` table's game count
and pending rewards, the lengths of a ``Game``'s logs). Copying one is copying ~2.6 KB.

Nothing is taken back on trust (``StateError``, one line each): a state must be of this dtype
and shape, saved by this fzmj version and state layout (``FORMAT``), of the same preset and
``hands_per_game`` as the table it goes into, and a table the engine could have reached
(``core/validate.py``: ranges, the 144 tiles accounted for, a legal action for the seat to act).
"""

from __future__ import annotations

import hashlib

import numpy as np
from numba import njit

from ._version import __version__
from .actions import NUM_ACTIONS
from .core import state
from .core.validate import PROBLEMS, check_and_mask


class StateError(ValueError):
    """A saved state or a pickled env that cannot be taken back (the message says why)."""


def _format_tag() -> np.uint64:
    """This fzmj version and state layout as a 64-bit tag (a state of another one is refused)."""
    text = f"fzmj {__version__} {state.STATE_DTYPE.descr}".encode()
    return np.uint64(int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little"))


FORMAT = _format_tag()
_FORMAT_BYTES = FORMAT.tobytes()
# A saved state is a flat uint8 row: a 48-byte header, then the table's record as bytes (numpy
# copies bytes ~10x faster than a record of this many sub-array fields). Header fields, by offset:
FORMAT_AT = 0  # uint64: FORMAT of the fzmj that saved it
GAMES_AT = 8  # int64: VectorEnv, games started at the table (its next game's seed index)
PENDING_AT = 16  # float32 x4: VectorEnv, rewards not yet handed to each seat
PENDING_OUT_AT = 32  # float32: VectorEnv, the reward handed to the seat to act
_LOGS_AT = 36  # int32 x3: Game, len(decisions), len(results), len(hand_starts)
LOGS_BYTES = slice(_LOGS_AT, _LOGS_AT + 12)
GAMES_BYTES, PENDING_BYTES = slice(GAMES_AT, GAMES_AT + 8), slice(PENDING_AT, PENDING_AT + 16)
PENDING_OUT_BYTES = slice(PENDING_OUT_AT, PENDING_OUT_AT + 4)
HEADER_BYTES = 48
TABLE_BYTES = state.STATE_DTYPE.itemsize
STATE_BYTES = HEADER_BYTES + TABLE_BYTES
_SEED_AT = HEADER_BYTES + 4 * state.SEED_LO  # the game seed's two int32 slots in a saved state
"""Length of one saved state (``uint8``): ``Game.save_state()`` is ``(STATE_BYTES,)``,
``VectorEnv.save_tables(tables)`` is ``(len(tables), STATE_BYTES)``."""
_OTHER_PRESET = len(PROBLEMS)
_OTHER_HANDS = len(PROBLEMS) + 1
_PROBLEMS = (*PROBLEMS, "it is a table of another rule preset", "it plays another number of hands per game")
STALE_TAG = -1  # a kernel's answer for a state whose FORMAT is not this fzmj's (stale_state)


@njit(cache=True)
def check_tables(tables, params, hands_per_game, wt, masks, seats):
    """Check each of ``tables`` (an array of table records); ``masks[i]`` and ``seats[i]`` get its
    acting seat's legal actions and seat. Returns ``(-1, 0)``, or the first bad one and why."""
    for i in range(tables.shape[0]):
        problem, seat = table_refusal(tables, i, params, hands_per_game, wt, masks[i])
        if problem != 0:
            return i, problem
        seats[i] = seat
    return -1, 0


@njit(cache=True, inline="always")
def table_refusal(tables, i, params, hands_per_game, wt, mask):
    """``(0, acting seat)`` if table ``i`` of ``tables`` may be restored (its mask into ``mask``),
    else ``(why, -1)``: another preset or ``hands_per_game``, or ``check_and_mask``'s problem."""
    m = tables[i].m
    for j in range(params.shape[0]):
        if m[state.R_RESERVE_BASE + j] != params[j]:
            return _OTHER_PRESET, -1
    if m[state.HANDS_PER_GAME] != hands_per_game:
        return _OTHER_HANDS, -1
    return check_and_mask(tables, i, wt, mask)


@njit(cache=True, inline="always")
def checked_in_place(saved, tag, buf, dst_bytes, t, scratch, params, hands_per_game, wt):
    """The state ``saved`` (``(1, STATE_BYTES)``) put into table ``t`` of ``buf`` (``dst_bytes`` its
    bytes) and checked there as ``check_tables`` checks; ``scratch`` (uint8: a table's bytes, then a
    mask) keeps the table's own bytes, put back if the state is refused, and takes the acting seat's
    mask. Returns ``(problem, seat, mask)``: problem 0, ``STALE_TAG`` (its version tag is not
    ``tag``; nothing written) or a ``check_tables`` code (the table as it was)."""
    n = dst_bytes.shape[1]
    backup, mask = scratch[:n], scratch[n:].view(np.int8)
    if saved[0, FORMAT_AT : FORMAT_AT + 8].view(np.uint64)[0] != tag:
        return STALE_TAG, -1, mask
    backup[:] = dst_bytes[t]
    dst_bytes[t, :] = saved[0, HEADER_BYTES:]
    problem, seat = table_refusal(buf, t, params, hands_per_game, wt, mask)
    if problem != 0:
        dst_bytes[t, :] = backup
    return problem, seat, mask


def restore_scratch() -> np.ndarray:
    """The ``scratch`` of :func:`checked_in_place`: room for a table's bytes and a mask."""
    return np.zeros(TABLE_BYTES + NUM_ACTIONS, np.uint8)


@njit(cache=True)
def restore_one(saved, tag, scratch, buf, dst_bytes, dst_mask, params, hands_per_game, wt):
    """One call for one table's restore (a ``Game``'s; Numba's call costs less than numpy's steps):
    ``saved`` into ``buf``'s only table, checked there (:func:`checked_in_place`); only if it passes
    does its acting seat's mask go into ``dst_mask``. Returns ``(problem, seat, seed, logs0, logs1,
    logs2)``: problem 0 (with the 64-bit game seed and the ``Game``'s log lengths in ``saved``), or
    why it is refused (the table as it was)."""
    problem, seat, mask = checked_in_place(saved, tag, buf, dst_bytes, 0, scratch, params, hands_per_game, wt)
    if problem != 0:
        return problem, seat, np.uint64(0), 0, 0, 0
    dst_mask[:] = mask
    seed = np.uint64(0)
    for k in range(8):
        seed |= np.uint64(saved[0, _SEED_AT + k]) << np.uint64(8 * k)
    return 0, seat, seed, _int32_at(saved, _LOGS_AT), _int32_at(saved, _LOGS_AT + 4), _int32_at(saved, _LOGS_AT + 8)


@njit(cache=True, inline="always")
def _int32_at(saved, at):
    """The little-endian int32 at byte ``at`` of ``saved[0]``."""
    v = 0
    for k in range(4):
        v |= np.int64(saved[0, at + k]) << (8 * k)
    return v - (1 << 32) if v >= 1 << 31 else v


def new_snapshots(n: int) -> np.ndarray:
    """``n`` zeroed saved states (``(n, STATE_BYTES)`` uint8) tagged with this fzmj's ``FORMAT``."""
    out = np.zeros((n, STATE_BYTES), dtype=np.uint8)
    out[:, FORMAT_AT : FORMAT_AT + 8] = np.frombuffer(FORMAT.tobytes(), np.uint8)
    return out


def header(states: np.ndarray, field: str) -> np.ndarray:
    """A view of one header field of ``(n, STATE_BYTES)`` states: ``"games"`` (n,), ``"pending"`` (n, 4),
    ``"pending_out"`` (n,), ``"logs"`` (n, 3), ``"format"`` (n,)."""
    at, dtype, width = _HEADER[field]
    view = states[:, at : at + np.dtype(dtype).itemsize * width].view(dtype)
    return view[:, 0] if width == 1 else view


_HEADER = {
    "format": (FORMAT_AT, np.uint64, 1),
    "games": (GAMES_AT, np.int64, 1),
    "pending": (PENDING_AT, np.float32, 4),
    "pending_out": (PENDING_OUT_AT, np.float32, 1),
    "logs": (_LOGS_AT, np.int32, 3),
}


def table_records(states: np.ndarray) -> np.ndarray:
    """The table records inside ``(n, STATE_BYTES)`` states, as a ``STATE_DTYPE`` view (no copy)."""
    return np.ndarray((len(states),), state.STATE_DTYPE, states, HEADER_BYTES, (states.strides[0],))


def table_bytes(buf: np.ndarray) -> np.ndarray:
    """A state buffer of B tables as a ``(B, TABLE_BYTES)`` uint8 view (for copies by bytes)."""
    return buf.view(np.uint8).reshape(len(buf), TABLE_BYTES)


_UINT8 = np.dtype(np.uint8)
_ONE_STATE, _FLAT_STATE = (1, STATE_BYTES), (STATE_BYTES,)


def checked_snapshots(states, n: int | None, what: str, tag: bool = True) -> np.ndarray:
    """``states`` (``(n, STATE_BYTES)``, or one ``(STATE_BYTES,)`` state when ``n`` is 1) as saved
    states of this fzmj, 2-D; ``StateError`` for a wrong type, dtype, length or version (the
    version tag is left to the caller with ``tag=False``: a kernel that compares ``STALE_TAG``)."""
    if n == 1 and type(states) is np.ndarray and states.dtype is _UINT8 and states.flags.c_contiguous:
        if states.shape == _FLAT_STATE:  # a Game's own state
            states = states[None]
        if states.shape == _ONE_STATE and (not tag or states[0, :8].tobytes() == _FORMAT_BYTES):
            return states  # the common case, ~10x cheaper than the general check below
    if type(states) is not np.ndarray or states.dtype != np.uint8:
        got = f"dtype {states.dtype}" if isinstance(states, np.ndarray) else type(states).__name__
        raise StateError(f"{what}: a saved state is a uint8 array from save_state / save_tables, got {got}")
    if states.ndim == 1 and n == 1:
        states = states[None]
    if states.ndim != 2 or states.shape[1] != STATE_BYTES or (n is not None and states.shape[0] != n):
        want = f"({n}, {STATE_BYTES})" if n is not None else f"(n, {STATE_BYTES})"
        raise StateError(f"{what}: expected saved states of shape {want}, got shape {states.shape}")
    if not states.flags.c_contiguous:
        states = np.ascontiguousarray(states)
    stale = np.flatnonzero(header(states, "format") != FORMAT)
    if stale.size:
        raise stale_state(what, int(stale[0]))
    return states


def stale_state(what: str, i: int) -> StateError:
    """The one-line error for state ``i``, saved by another fzmj version or state layout."""
    return StateError(
        f"{what}: state {i} was saved by another fzmj version or state layout "
        f"(this is fzmj {__version__}); states are not carried across versions"
    )


def refusal(problem: int, i: int, what: str, rules) -> StateError:
    """The one-line error for state ``i`` refused for ``problem`` (a ``check_tables`` code)."""
    return StateError(f"{what}: state {int(i)} is refused: {_PROBLEMS[problem]} (rules {rules.name})")


def check_restorable(tables: np.ndarray, rules, hands_per_game: int, wt, what: str, masks=None, seats=None):
    """Check table records before they replace a table's: ``(masks, seats)`` of their acting seats
    (into ``masks`` and ``seats`` when given), or ``StateError`` naming the first bad table and why."""
    if masks is None:
        masks = np.zeros((len(tables), state.NUM_ACTIONS), dtype=np.int8)
        seats = np.zeros(len(tables), dtype=np.int64)
    i, problem = check_tables(tables, rules.params, hands_per_game, wt, masks, seats)
    if problem:
        raise refusal(problem, i, what, rules)
    return masks, seats


# ---- pickles of the envs ----------------------------------------------------------------------
_PICKLE_KEY = "_fzmj_state_format"


def tag_pickle(d: dict) -> dict:
    """An env's pickle state (``__getstate__``) tagged with this fzmj's version and state layout."""
    d[_PICKLE_KEY] = (int(FORMAT), __version__)
    return d


def untag_pickle(d: dict, what: str) -> dict:
    """The state of an env pickled by this fzmj, without its tag; ``StateError`` for another one."""
    tag = d.pop(_PICKLE_KEY, None)
    if tag is None or tag[0] != int(FORMAT):
        version = "an unknown version" if tag is None else f"fzmj {tag[1]}"
        raise StateError(
            f"cannot unpickle this {what}: it was pickled by {version} (another state layout), this is fzmj "
            f"{__version__}; make it again and restore a state saved by this version"
        )
    return d
