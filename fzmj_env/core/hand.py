"""Win detection, waits, specials and shanten for concealed hands (docs/rules.md R5, R9, R11.3).

This module is the only place the winning-shape rule (R9.1) lives. It is table driven:

* A hand holds only suit tiles (kinds 0-26, R1). Every tile of the gold kind is a gold (R5):
  a wildcard that stands for any suit tile, with no four-copies cap on what it stands for.
* Per suit, the counts of the NON-gold tiles (0..4 each) give a key
  ``sum(c[i] * 5**i, i = 0..8)`` in ``0 .. 5**9 - 1``.
* ``WIN_TABLE[key, 0]``: the fewest golds that turn all the suit's tiles into melds only
  (runs / triplets, golds filling any slot). ``WIN_TABLE[key, 1]``: the fewest golds that turn
  them into melds plus exactly one pair (the pair may be tile+tile, tile+gold or gold+gold, so
  ``[key, 1] <= [key, 0] + 2``).
* ``SHANTEN_TABLE[key, m, p]``: the fewest MISSING tiles (slots filled by golds or by future
  draws) to form exactly ``m`` melds (0..5) and ``p`` pairs (0/1) out of a SUBSET of the suit's
  tiles (tiles may be left unused).

The tables are built once by a Numba DP (a few seconds), saved as ``.npy`` under
``fzmj_env/core/_tables/`` (or ``$NUMBA_CACHE_DIR/fzmj_tables``, or ``~/.cache/fzmj``, the first
writable) and memory-mapped on later imports. Kernels take the tables as ARGUMENTS (a Numba global would be frozen into the
compiled code and its cache). Get them with :func:`get_win_table` / :func:`get_shanten_table`.

``counts`` in every kernel is a length-27 integer array of the concealed tiles INCLUDING the
golds (the count at the gold kind is the number of golds). Exposed melds are not in it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.extending import intrinsic

from fzmj_env.checks import bad_hand_row, check_win_batch
from fzmj_env.tiles import kind_index, kind_name

from .jit import njit

__all__ = [
    "NUM_KEYS",
    "TABLE_VERSION",
    "get_win_table",
    "get_shanten_table",
    "suit_keys",
    "golds_needed",
    "is_win_counts",
    "is_golden_pair_counts",
    "is_golden_dragon_counts",
    "wait_mask_counts",
    "is_idle_gold_counts",
    "shanten_counts",
    "is_win_batch_kernel",
    "is_win",
    "waits",
    "is_win_batch",
    "special_shapes",
    "shanten",
    "hand_counts",
    "win_split",
    "win_split_counts",
]

NUM_SUIT_KINDS = 27
NUM_KEYS = 5**9  # 1,953,125 per-suit keys
MAX_MELDS = 5  # 17 tiles = 5 melds + 1 pair (R9.1): the shanten table's m runs 0..5
TABLE_VERSION = 1  # bump when the table layout or the DP changes: new file names, rebuild

# 5**i for i = 0..10 (positions 9 and 10 are only ever used with a 0 multiplier).
_POW5 = np.array([5**i for i in range(11)], dtype=np.int64)
_BIG = 127  # "impossible" in int8 tables; never reached by the win table (see below)


# =====================================================================================
# Table builders (Numba DP over keys in increasing order)
# =====================================================================================
#
# Both DPs pick the LOWEST present tile i of the key and decide what it belongs to. Every
# choice removes at least one real tile, so the remaining key is smaller and already done.
#
# Runs. The lowest real tile i of the key can sit in a run (i, i+1, i+2), or in a run
# (i-1, i, i+1) / (i-2, i-1, i) whose slots below i are golds (no real tile lies below i).
# The latter two use as real tiles a subset of {i, i+1} resp. {i}, and cost one gold per
# other slot, exactly like the run "starting at i" with those same real tiles and golds in
# the remaining slots. So it suffices to enumerate runs starting at i where slots i+1 and
# i+2 are each a real tile (if present and inside the suit) or a gold. A slot beyond the 9
# (i+1 or i+2 > 8) can only be a gold; such a "virtual" run (8,9,g) or (9,g,g) costs the same
# as the real run (g,8,9) = 789 or (g,g,9) = 789, which is valid. So no run is invented and
# none is missed.


@njit(cache=True)
def _lowest_digit(key, digits):
    """Decode ``key`` into ``digits`` (base 5, 9 digits); return the lowest nonzero position."""
    x = key
    low = -1
    for i in range(9):
        d = x % 5
        digits[i] = d
        x //= 5
        if d > 0 and low < 0:
            low = i
    return low


@njit(cache=True)
def _build_win_table():
    n = 5**9
    pw = np.empty(11, np.int64)
    pw[0] = 1
    for i in range(1, 11):
        pw[i] = pw[i - 1] * 5
    t = np.empty((n, 2), np.int8)
    t[0, 0] = 0  # nothing left: no melds needed
    t[0, 1] = 2  # nothing left but a pair is required: two golds
    digits = np.zeros(11, np.int64)  # positions 9, 10 stay 0 (outside the suit)
    for key in range(1, n):
        i = _lowest_digit(key, digits)
        c = digits[i]
        p = pw[i]
        best0 = _BIG
        best1 = _BIG
        # triplet of i with r real copies and 3 - r golds
        for r in range(1, min(c, 3) + 1):
            rest = key - r * p
            v0 = (3 - r) + np.int64(t[rest, 0])
            v1 = (3 - r) + np.int64(t[rest, 1])
            if v0 < best0:
                best0 = v0
            if v1 < best1:
                best1 = v1
        # run starting at i: i real, i+1 and i+2 each real (if present in the suit) or gold
        for a in range(2):
            if a == 1 and (i + 1 > 8 or digits[i + 1] == 0):
                continue
            for b in range(2):
                if b == 1 and (i + 2 > 8 or digits[i + 2] == 0):
                    continue
                rest = key - p - a * pw[i + 1] - b * pw[i + 2]
                cost = (1 - a) + (1 - b)
                v0 = cost + np.int64(t[rest, 0])
                v1 = cost + np.int64(t[rest, 1])
                if v0 < best0:
                    best0 = v0
                if v1 < best1:
                    best1 = v1
        # the pair holds i (r real copies, 2 - r golds); the rest are melds only
        for r in range(1, min(c, 2) + 1):
            rest = key - r * p
            v1 = (2 - r) + np.int64(t[rest, 0])
            if v1 < best1:
                best1 = v1
        t[key, 0] = best0
        t[key, 1] = best1
    return t


@njit(cache=True)
def _build_shanten_table():
    n = 5**9
    pw = np.empty(11, np.int64)
    pw[0] = 1
    for i in range(1, 11):
        pw[i] = pw[i - 1] * 5
    s = np.empty((n, MAX_MELDS + 1, 2), np.int8)
    for m in range(MAX_MELDS + 1):
        for q in range(2):
            s[0, m, q] = 3 * m + 2 * q  # everything missing
    digits = np.zeros(11, np.int64)
    for key in range(1, n):
        i = _lowest_digit(key, digits)
        c = digits[i]
        p = pw[i]
        for m in range(MAX_MELDS + 1):
            for q in range(2):
                # one copy of i left unused
                best = np.int64(s[key - p, m, q])
                if m > 0:
                    # triplet with r real copies of i (3 - r missing)
                    for r in range(1, min(c, 3) + 1):
                        v = (3 - r) + np.int64(s[key - r * p, m - 1, q])
                        if v < best:
                            best = v
                    # run starting at i (see the comment above the builders)
                    for a in range(2):
                        if a == 1 and (i + 1 > 8 or digits[i + 1] == 0):
                            continue
                        for b in range(2):
                            if b == 1 and (i + 2 > 8 or digits[i + 2] == 0):
                                continue
                            rest = key - p - a * pw[i + 1] - b * pw[i + 2]
                            v = (2 - a - b) + np.int64(s[rest, m - 1, q])
                            if v < best:
                                best = v
                if q > 0:
                    # the pair holds r real copies of i (2 - r missing)
                    for r in range(1, min(c, 2) + 1):
                        v = (2 - r) + np.int64(s[key - r * p, m, 0])
                        if v < best:
                            best = v
                s[key, m, q] = best
    return s


# =====================================================================================
# Disk cache
# =====================================================================================

# Tried in order, to load and to save: the installed package (shared by every process of the
# install), a folder in ``$NUMBA_CACHE_DIR`` (where a read-only install keeps its compiled kernels
# too), the user's cache.
_TABLE_DIRS = (
    Path(__file__).resolve().parent / "_tables",
    *([Path(os.environ["NUMBA_CACHE_DIR"]) / "fzmj_tables"] if os.environ.get("NUMBA_CACHE_DIR") else []),
    Path.home() / ".cache" / "fzmj",
)
_WIN_NAME = f"win_table_v{TABLE_VERSION}.npy"
_SHANTEN_NAME = f"shanten_table_v{TABLE_VERSION}.npy"
_WIN_SHAPE = (NUM_KEYS, 2)
_SHANTEN_SHAPE = (NUM_KEYS, MAX_MELDS + 1, 2)

_tables: dict[str, np.ndarray] = {}
build_seconds: dict[str, float] = {}
"""Seconds spent building each table in this process (empty when they were loaded)."""


def _try_load(path: Path, shape) -> np.ndarray | None:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    if arr.shape != shape or arr.dtype != np.int8:
        return None
    # A plain read-only ndarray view of the map (no copy): Numba then always sees the same
    # type (readonly int8 C array), whether the table was just built or loaded.
    return np.asarray(arr)


def _save_atomic(arr: np.ndarray, path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, arr, allow_pickle=False)
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; the cache is for every user
            os.replace(tmp, path)  # atomic: concurrent builders never see a half file
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return True
    except OSError:
        return False


def _get_table(name: str, file_name: str, shape, builder) -> np.ndarray:
    arr = _tables.get(name)
    if arr is not None:
        return arr
    for d in _TABLE_DIRS:
        arr = _try_load(d / file_name, shape)
        if arr is not None:
            break
    if arr is None:
        t0 = time.perf_counter()
        built = builder()
        build_seconds[name] = time.perf_counter() - t0
        arr = None
        for d in _TABLE_DIRS:
            if _save_atomic(built, d / file_name):
                arr = _try_load(d / file_name, shape)
                if arr is not None:
                    break
        if arr is None:  # nowhere writable: keep it in memory
            built.flags.writeable = False
            arr = built
    _tables[name] = arr
    return arr


def get_win_table() -> np.ndarray:
    """The win table, int8 ``(5**9, 2)``, read-only; built and cached on first use."""
    return _get_table("win", _WIN_NAME, _WIN_SHAPE, _build_win_table)


def get_shanten_table() -> np.ndarray:
    """The shanten table, int8 ``(5**9, 6, 2)``, read-only; built and cached on first use."""
    return _get_table("shanten", _SHANTEN_NAME, _SHANTEN_SHAPE, _build_shanten_table)


# =====================================================================================
# Kernels
# =====================================================================================


@njit(cache=True)
def suit_keys(counts, gold):
    """The three per-suit keys of the non-gold tiles of ``counts`` (length 27)."""
    k0 = np.int64(0)
    k1 = np.int64(0)
    k2 = np.int64(0)
    for i in range(8, -1, -1):
        k0 = k0 * 5 + np.int64(counts[i])
        k1 = k1 * 5 + np.int64(counts[9 + i])
        k2 = k2 * 5 + np.int64(counts[18 + i])
    s = gold // 9
    sub = np.int64(counts[gold]) * _POW5[gold % 9]
    if s == 0:
        k0 -= sub
    elif s == 1:
        k1 -= sub
    else:
        k2 -= sub
    return k0, k1, k2


@njit(cache=True)
def _need3(win_table, k0, k1, k2):
    """Fewest golds so the tiles of the three keys form melds + one pair."""
    a0 = np.int64(win_table[k0, 0])
    a1 = np.int64(win_table[k1, 0])
    a2 = np.int64(win_table[k2, 0])
    b0 = np.int64(win_table[k0, 1])
    b1 = np.int64(win_table[k1, 1])
    b2 = np.int64(win_table[k2, 1])
    # Pair in suit 0, 1 or 2. The "pair of two golds, every suit melds only" case needs
    # a0 + a1 + a2 + 2 and is included, because win_table[k, 1] <= win_table[k, 0] + 2.
    n = b0 + a1 + a2
    v = a0 + b1 + a2
    if v < n:
        n = v
    v = a0 + a1 + b2
    if v < n:
        n = v
    return n


@njit(cache=True)
def golds_needed(win_table, counts, gold):
    """Fewest golds that make the non-gold tiles of ``counts`` into melds + exactly one pair.

    A hand of 3n+2 tiles with ``golds_needed <= golds`` wins (R9.1): the decomposition uses
    ``nongold + need = 3m + 2`` tiles, so the ``golds - need`` golds left over number
    ``(3n + 2) - (3m + 2) = 3(n - m)``, a multiple of 3, and form gold triplets (three golds
    standing for any three equal tiles).
    """
    k0, k1, k2 = suit_keys(counts, gold)
    return _need3(win_table, k0, k1, k2)


@njit(cache=True)
def is_win_counts(win_table, counts, gold):
    """R9.1 shape for a 3n+2 concealed hand (the caller guarantees the tile count)."""
    return golds_needed(win_table, counts, gold) <= counts[gold]


@njit(cache=True)
def is_golden_pair_counts(win_table, counts, gold):
    """金雀 (R11.3): some R9.1 decomposition uses two golds as the pair.

    That is: the non-gold tiles form melds only with the golds to spare after the pair,
    ``sum(win_table[k_s, 0]) + 2 <= golds`` (the leftover golds are again a multiple of 3).
    """
    k0, k1, k2 = suit_keys(counts, gold)
    need = np.int64(win_table[k0, 0]) + np.int64(win_table[k1, 0]) + np.int64(win_table[k2, 0]) + 2
    return need <= counts[gold]


@njit(cache=True)
def is_golden_dragon_counts(win_table, counts, gold):
    """金龙 (R11.3): the hand holds 3 golds and the other tiles win with the 3 golds as their
    own triplet, i.e. without those 3 golds. In play a hand can hold 4 golds only after 抢金
    (3 golds + the robbed indicator); then the 4th gold may fill a slot of the rest. Every
    金龙 hand is also 金雀: the real pair plus one gold makes a triplet and two golds pair."""
    if counts[gold] < 3:
        return False
    k0, k1, k2 = suit_keys(counts, gold)
    return _need3(win_table, k0, k1, k2) <= counts[gold] - 3


@njit(cache=True)
def _suit_vals_plus(win_table, counts, gold, key, s, pos):
    """(melds-only, melds+pair) gold costs of suit ``s`` (key ``key`` of its non-gold tiles)
    with one more tile at position ``pos`` (kind ``9 s + pos``, not the gold kind).

    Normally a table lookup at ``key + 5**pos``. A kind already held 4 times would get a 5th
    copy, which no key can hold: only a wait on a kind held 4 times leads here (the wait mask
    and 闲金 ask about every kind, R9.5). Then expand the group that holds one copy of
    ``pos``: a triplet with r real copies, one of the in-suit runs through ``pos`` (other slots
    real or gold), or (pair column) the pair. Every choice removes at least one copy, so the
    rest has counts <= 4 and is looked up. (Any decomposition puts that copy in exactly one
    such group, so nothing is missed.)
    """
    c = np.int64(counts[9 * s + pos]) + 1
    p = _POW5[pos]
    if c <= 4:
        nk = key + p
        return np.int64(win_table[nk, 0]), np.int64(win_table[nk, 1])
    base = key + p  # may exceed the table: only ever reduced by >= p before a lookup
    best0 = np.int64(_BIG)
    best1 = np.int64(_BIG)
    for r in range(1, 4):
        rest = base - r * p
        best0 = min(best0, (3 - r) + np.int64(win_table[rest, 0]))
        best1 = min(best1, (3 - r) + np.int64(win_table[rest, 1]))
    for start in range(pos - 2, pos + 1):
        if start < 0 or start + 2 > 8:
            continue
        o1 = -1  # the two other slots of the run
        o2 = -1
        for x in range(start, start + 3):
            if x != pos:
                if o1 < 0:
                    o1 = x
                else:
                    o2 = x
        h1 = 9 * s + o1 != gold and counts[9 * s + o1] > 0
        h2 = 9 * s + o2 != gold and counts[9 * s + o2] > 0
        for u in range(2):
            if u == 1 and not h1:
                continue
            for v in range(2):
                if v == 1 and not h2:
                    continue
                rest = base - p - u * _POW5[o1] - v * _POW5[o2]
                cost = 2 - u - v
                best0 = min(best0, cost + np.int64(win_table[rest, 0]))
                best1 = min(best1, cost + np.int64(win_table[rest, 1]))
    for r in range(1, 3):
        rest = base - r * p
        best1 = min(best1, (2 - r) + np.int64(win_table[rest, 0]))
    return best0, best1


@njit(cache=True)
def _wins_with(win_table, counts, gold, k0, k1, k2, k):
    """Whether the 3n+1 hand (suit keys k0..k2) wins with one tile of kind k added."""
    g = np.int64(counts[gold])
    if k == gold:
        return _need3(win_table, k0, k1, k2) <= g + 1
    s = k // 9
    a0 = np.int64(win_table[k0, 0])
    b0 = np.int64(win_table[k0, 1])
    a1 = np.int64(win_table[k1, 0])
    b1 = np.int64(win_table[k1, 1])
    a2 = np.int64(win_table[k2, 0])
    b2 = np.int64(win_table[k2, 1])
    if s == 0:
        a0, b0 = _suit_vals_plus(win_table, counts, gold, k0, 0, k - 9 * s)
    elif s == 1:
        a1, b1 = _suit_vals_plus(win_table, counts, gold, k1, 1, k - 9 * s)
    else:
        a2, b2 = _suit_vals_plus(win_table, counts, gold, k2, 2, k - 9 * s)
    need = a0 + a1 + a2 + min(b0 - a0, b1 - a1, b2 - a2)
    return need <= g


@njit(cache=True)
def wait_mask_counts(win_table, counts, gold, out27):
    """For a 3n+1 hand: ``out27[k] = 1`` if adding one tile of kind k wins, else 0.

    Adding the gold kind adds a gold. A kind held 4 times (or whose copies are all in sight)
    is still reported if its shape wins: the mask is about shapes, not availability.
    Returns the number of winning kinds.
    """
    k0, k1, k2 = suit_keys(counts, gold)
    n_win = 0
    # A gold can stand for any tile, so if adding a gold does not win, nothing does.
    any_win = _wins_with(win_table, counts, gold, k0, k1, k2, gold)
    for k in range(NUM_SUIT_KINDS):
        win = any_win and _wins_with(win_table, counts, gold, k0, k1, k2, k)
        out27[k] = 1 if win else 0
        if win:
            n_win += 1
    return n_win


@njit(cache=True)
def is_idle_gold_counts(win_table, counts, gold):
    """闲金 (R9.5): the 3n+1 hand wins with EVERY one of the 27 suit kinds added."""
    k0, k1, k2 = suit_keys(counts, gold)
    if not _wins_with(win_table, counts, gold, k0, k1, k2, gold):
        return False  # the cheapest test first: most hands are not even ready
    for k in range(NUM_SUIT_KINDS):
        if not _wins_with(win_table, counts, gold, k0, k1, k2, k):
            return False
    return True


@njit(cache=True)
def is_plain_win_counts(win_table, counts):
    """A 3n+2 hand wins with every tile read as its own kind (no wildcard: a "dead" gold, 死金,
    docs/presets.md P2's 清一色 reading)."""
    k0 = np.int64(0)
    k1 = np.int64(0)
    k2 = np.int64(0)
    for i in range(8, -1, -1):
        k0 = k0 * 5 + np.int64(counts[i])
        k1 = k1 * 5 + np.int64(counts[9 + i])
        k2 = k2 * 5 + np.int64(counts[18 + i])
    return _need3(win_table, k0, k1, k2) == 0


@njit(cache=True)
def gold_kan_neighbours(gold):
    """The two neighbours of the gold kind in its suit for 金坎 (P2): ranks r-1 and r+1, wrapping
    around (rank 1: 9 and 2; rank 9: 8 and 1)."""
    base = gold - gold % 9
    r = gold % 9
    return base + (r + 8) % 9, base + (r + 1) % 9


@njit(cache=True)
def is_gold_kan_counts(win_table, counts, gold):
    """金坎 shape (docs/presets.md P2) of a 3n+2 concealed hand holding exactly one gold (the drawn
    tile): both neighbours of the gold kind (wrapping around for ranks 1 and 9) are held, and
    the other tiles without those two and the gold form melds and a pair (no gold left)."""
    if counts[gold] != 1:
        return False
    a, b = gold_kan_neighbours(gold)
    if counts[a] < 1 or counts[b] < 1:
        return False
    counts[a] -= 1
    counts[b] -= 1
    counts[gold] -= 1
    ok = is_plain_win_counts(win_table, counts)
    counts[a] += 1
    counts[b] += 1
    counts[gold] += 1
    return ok


@njit(cache=True)
def swims_counts(win_table, counts, gold):
    """游金 shape (docs/presets.md P5) of a 3n+1 concealed hand: with one gold set aside, the other
    tiles (the other golds wild) form melds only, so any tile drawn wins."""
    g = np.int64(counts[gold])
    if g < 1:
        return False
    k0, k1, k2 = suit_keys(counts, gold)
    need = np.int64(win_table[k0, 0]) + np.int64(win_table[k1, 0]) + np.int64(win_table[k2, 0])
    return need <= g - 1


@njit(cache=True)
def shanten_counts(shanten_table, counts, gold):
    """Shanten with golds: -1 = complete (3M+2 tiles), 0 = ready (tenpai), ...

    With n tiles (3M+1 or 3M+2, at most 17) the target is M melds + 1 pair = 3M+2 slots.
    Split the melds over the suits (m_0 + m_1 + m_2 = M) and put the pair in one suit;
    ``missing`` = the fewest slots not covered by the hand's non-gold tiles (the table lets
    each suit leave tiles unused, and gives a pair of 2 missing slots in a suit with no tile).
    Golds fill missing slots, the rest must be drawn: draws = missing - golds, and
    shanten = draws - 1. (With exactly M melds, draws = unused non-gold tiles, + 1 for a
    3M+1 hand, so it is never negative for a consistent count; it is clamped anyway.)
    """
    n = np.int64(0)
    for k in range(NUM_SUIT_KINDS):
        n += counts[k]
    mm = n // 3
    if mm > MAX_MELDS:
        mm = MAX_MELDS
    g = np.int64(counts[gold])
    k0, k1, k2 = suit_keys(counts, gold)
    best = np.int64(1000)
    for m0 in range(mm + 1):
        for m1 in range(mm - m0 + 1):
            m2 = mm - m0 - m1
            # pair in suit 0, 1 or 2
            v = (
                np.int64(shanten_table[k0, m0, 1])
                + np.int64(shanten_table[k1, m1, 0])
                + np.int64(shanten_table[k2, m2, 0])
            )
            if v < best:
                best = v
            v = (
                np.int64(shanten_table[k0, m0, 0])
                + np.int64(shanten_table[k1, m1, 1])
                + np.int64(shanten_table[k2, m2, 0])
            )
            if v < best:
                best = v
            v = (
                np.int64(shanten_table[k0, m0, 0])
                + np.int64(shanten_table[k1, m1, 0])
                + np.int64(shanten_table[k2, m2, 1])
            )
            if v < best:
                best = v
    draws = best - g
    if draws < 0:
        draws = 0
    return draws - 1


# ---- batch kernel ----------------------------------------------------------------------
#
# The batch check is bound by arithmetic, not by the table (one core here: ~20 ns a hand for
# 27 byte loads + the key sums). Two tricks keep it near 45 M hands/s:
#  * the 8 counts 1..8 of a suit are read as ONE unaligned little-endian 64-bit word and folded
#    SWAR-style (bytes -> c0 + 5 c1 in 16-bit lanes -> + 25x in 32-bit lanes -> + 625x), the
#    9th count is added alone. A row is 27 bytes, so the three words (bytes 0-7, 9-16, 18-25)
#    never leave the row;
#  * the gold's count is removed from its suit's key with a (27, 3) table of multipliers
#    (5**(g % 9) in the gold's suit column, 0 elsewhere): no division, no branch.

_M8 = np.uint64(0x00FF00FF00FF00FF)
_M16 = np.uint64(0x0000FFFF0000FFFF)
_M32 = np.uint64(0x00000000FFFFFFFF)
_GOLD_MULT = np.zeros((NUM_SUIT_KINDS, 3), np.int64)
for _k in range(NUM_SUIT_KINDS):
    _GOLD_MULT[_k, _k // 9] = 5 ** (_k % 9)
del _k


@intrinsic
def _load_u64_unaligned(typingctx, arr, idx):
    """The 8 bytes ``arr[idx : idx + 8]`` of a contiguous 1-D byte array as a uint64 (native
    byte order, no alignment needed). The caller keeps ``idx + 8 <= len(arr)``."""
    if not (
        isinstance(arr, types.Array)
        and arr.ndim == 1
        and arr.layout == "C"
        and arr.dtype in (types.int8, types.uint8)
        and isinstance(idx, types.Integer)
    ):
        return None
    sig = types.uint64(arr, idx)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        p64 = builder.bitcast(ptr, llvm_ir.IntType(64).as_pointer())
        return builder.load(p64, align=1)

    return sig, codegen


@njit(cache=True, inline="always")
def _key9_word(flat, b):
    """Key of the 9 counts ``flat[b : b + 9]`` (little-endian hosts)."""
    w = _load_u64_unaligned(flat, b)
    w = (w & _M8) + np.uint64(5) * ((w >> np.uint64(8)) & _M8)
    w = (w & _M16) + np.uint64(25) * ((w >> np.uint64(16)) & _M16)
    w = (w & _M32) + np.uint64(625) * (w >> np.uint64(32))
    return np.int64(w) + np.int64(flat[b + 8]) * 390625


@njit(cache=True, inline="always")
def _key9_loop(flat, b):
    """Key of the 9 counts ``flat[b : b + 9]`` (any host)."""
    k = np.int64(0)
    for i in range(9):
        k += np.int64(flat[b + i]) * _POW5[i]
    return k


_key9 = _key9_word if sys.byteorder == "little" else _key9_loop


# Row checks of is_win_batch, inside its own pass (a separate numpy pass over the
# batch cost ~10% of the throughput). A byte v is 0..4 iff no bit of 0xF8 is set in v or in
# v + 3 (for v <= 7 the +3 cannot carry into the next byte; any v >= 8, or a negative int8, has
# a 0xF8 bit already). The byte sum of a word of eight 0..4 counts is (w * 0x0101..01) >> 56.
_C3 = np.uint64(0x0303030303030303)
_CF8 = np.uint64(0xF8F8F8F8F8F8F8F8)
_ONES = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _row_ok_word(flat, b):
    """Whether ``flat[b : b + 27]`` are counts 0..4 summing to 3n+2 (little-endian hosts)."""
    w0 = _load_u64_unaligned(flat, b)
    w1 = _load_u64_unaligned(flat, b + 9)
    w2 = _load_u64_unaligned(flat, b + 18)
    # the 9th count of each suit, packed into one word's three low bytes
    last = (
        np.uint64(np.uint8(flat[b + 8]))
        | (np.uint64(np.uint8(flat[b + 17])) << np.uint64(8))
        | (np.uint64(np.uint8(flat[b + 26])) << np.uint64(16))
    )
    bad = (w0 | w1 | w2 | last | (w0 + _C3) | (w1 + _C3) | (w2 + _C3) | (last + _C3)) & _CF8
    n = ((w0 + w1 + w2 + last) * _ONES) >> np.uint64(56)  # each byte of the sum <= 16, the total <= 108: no carries
    return bad == 0 and n % np.uint64(3) == np.uint64(2)


@njit(cache=True, inline="always")
def _row_ok_loop(flat, b):
    """Whether ``flat[b : b + 27]`` are counts 0..4 summing to 3n+2 (any host)."""
    n = 0
    for i in range(NUM_SUIT_KINDS):
        v = flat[b + i]
        if v < 0 or v > 4:
            return False
        n += v
    return n % 3 == 2


_row_ok = _row_ok_word if sys.byteorder == "little" else _row_ok_loop


@njit(cache=True, boundscheck=False)
def is_win_batch_kernel(win_table, counts_2d, gold, out):
    """``out[r] = is_win(counts_2d[r], gold[r])`` for a C-contiguous (B, 27) int8 batch.

    Each row is checked as it is read (counts 0..4, 3n+2 tiles, gold kind 0..26): returns -1
    when every row was valid, else the first invalid row (``out`` is then filled only before
    it), for the caller to raise.
    """
    nb = counts_2d.shape[0]
    flat = counts_2d.reshape(nb * NUM_SUIT_KINDS)
    for r in range(nb):
        b = r * NUM_SUIT_KINDS
        g = gold[r]
        # unsigned: one compare refuses negative golds too, and lets LLVM drop the
        # negative-index wraparound of the gold's lookups below
        if np.uint64(g) >= NUM_SUIT_KINDS or not _row_ok(flat, b):
            return r
        ng = np.int64(flat[b + g])
        # unsigned keys: no negative-index wraparound on the six table reads (pays for the checks)
        k0 = np.uint64(_key9(flat, b) - ng * _GOLD_MULT[g, 0])
        k1 = np.uint64(_key9(flat, b + 9) - ng * _GOLD_MULT[g, 1])
        k2 = np.uint64(_key9(flat, b + 18) - ng * _GOLD_MULT[g, 2])
        a0 = np.int64(win_table[k0, 0])
        b0 = np.int64(win_table[k0, 1])
        a1 = np.int64(win_table[k1, 0])
        b1 = np.int64(win_table[k1, 1])
        a2 = np.int64(win_table[k2, 0])
        b2 = np.int64(win_table[k2, 1])
        # golds needed = melds-only of all three suits + the cheapest suit to hold the pair
        need = a0 + a1 + a2 + min(b0 - a0, b1 - a1, b2 - a2)
        out[r] = need <= ng
    return -1


# =====================================================================================
# Public Python API (validated)
# =====================================================================================


def _gold_kind(gold) -> int:
    if isinstance(gold, (bool, np.bool_)):
        raise ValueError(f"gold must be a suit kind 0-26 or notation like '5m', got {gold!r}")
    if isinstance(gold, str):
        k = kind_index(gold)
    elif isinstance(gold, (int, np.integer)):
        k = int(gold)
    else:
        raise ValueError(f"gold must be a suit kind 0-26 or notation like '5m', got {gold!r}")
    if not 0 <= k < NUM_SUIT_KINDS:
        raise ValueError(f"gold kind {gold!r} is not a suit kind (0-26, 1m-9s): golds are suit tiles (R5)")
    return k


def hand_counts(hand) -> np.ndarray:
    """Validated length-27 int64 counts of a concealed hand given as notation or counts.

    ``hand`` is notation (``"123m456p"``) or an integer array of length 27 (suit kinds) or 42
    (all kinds, as :func:`fzmj_env.tiles.parse_tiles` returns; kinds 27-41 must be 0). Raises
    ``ValueError`` for flowers or honors (never kept in a hand, R1), negative counts or more
    than 4 copies of a kind.
    """
    if isinstance(hand, str):
        from fzmj_env.tiles import parse_tiles

        full = parse_tiles(hand)  # raises on bad text or too many copies
        src = f"hand {hand!r}"
    else:
        full = np.asarray(hand)
        src = "hand"
        if full.ndim != 1 or full.shape[0] not in (NUM_SUIT_KINDS, 42):
            raise ValueError(
                f"hand counts must be a 1-D array of length 27 (suit kinds) or 42 (all kinds), got shape {full.shape}"
            )
        if full.dtype.kind not in "iu":
            if full.dtype.kind == "b" or not np.all(np.equal(np.mod(full, 1), 0)):
                raise ValueError(f"hand counts must be integers, got dtype {full.dtype}")
        full = full.astype(np.int64)
    if full.shape[0] > NUM_SUIT_KINDS and np.any(full[NUM_SUIT_KINDS:] != 0):
        bad = [kind_name(k) for k in range(NUM_SUIT_KINDS, full.shape[0]) if full[k] != 0]
        raise ValueError(f"{src} holds flowers/honors {', '.join(bad)}: a hand only holds suit tiles 1m-9s (R1)")
    c = np.ascontiguousarray(full[:NUM_SUIT_KINDS], dtype=np.int64)
    for k in range(NUM_SUIT_KINDS):
        if c[k] < 0:
            raise ValueError(f"{src}: negative count {c[k]} of {kind_name(k)}")
        if c[k] > 4:
            raise ValueError(f"{src}: {c[k]} copies of {kind_name(k)}, but the set has only 4 (R1)")
    return c


def _checked(hand, gold, remainders, what):
    c = hand_counts(hand)
    g = _gold_kind(gold)
    n = int(c.sum())
    if n % 3 not in remainders:
        want = " or ".join(f"3n+{r}" for r in remainders)
        raise ValueError(f"{what} needs a concealed hand of {want} tiles, got {n} tiles")
    return c, g, n


def is_win(hand, gold) -> bool:
    """Whether a 3n+2-tile concealed hand has the winning shape (R9.1, golds wild).

    ``is_win("123456789m11p", "5s")`` is True (3 runs + a pair); ``is_win("123456789m12p",
    "1p")`` too (the gold 1p pairs the 2p).
    """
    c, g, _ = _checked(hand, gold, (2,), "is_win")
    return bool(is_win_counts(get_win_table(), c, g))


def waits(hand, gold) -> list[str]:
    """Kinds (notation, kind order) whose addition makes a 3n+1-tile hand win (R9.1)."""
    c, g, _ = _checked(hand, gold, (1,), "waits")
    out = np.zeros(NUM_SUIT_KINDS, np.int8)
    wait_mask_counts(get_win_table(), c, g, out)
    return [kind_name(k) for k in range(NUM_SUIT_KINDS) if out[k]]


def is_win_batch(counts, gold) -> np.ndarray:
    """Vectorised :func:`is_win` over ``counts`` (B, 27) and ``gold`` (B,).

    ``counts`` should be int8 (other integer dtypes are converted). Every row must be a valid
    hand: counts 0..4, 3n+2 tiles, a gold kind 0..26; otherwise ``ValueError`` names the first
    bad row (checked inside the kernel's pass, so valid batches pay almost nothing).
    """
    counts = np.asarray(counts)
    gold = np.asarray(gold)
    check_win_batch(counts, gold)
    c8 = np.ascontiguousarray(counts, dtype=np.int8)  # uint8 counts >= 128 turn negative: refused below
    g64 = np.ascontiguousarray(gold, dtype=np.int64)  # a uint64 gold >= 2**63 turns negative: refused below
    out = np.empty(c8.shape[0], dtype=np.bool_)
    bad = is_win_batch_kernel(get_win_table(), c8, g64, out)
    if bad >= 0:
        raise ValueError(bad_hand_row(int(bad), counts[bad], int(gold[bad])))
    return out


def special_shapes(hand, gold) -> set[str]:
    """Shape specials: for a 3n+2 hand, ``"golden_pair"`` (金雀) and/or ``"golden_dragon"``
    (金龙) if it wins with them (R11.3); for a 3n+1 hand, ``"idle_gold"`` (闲金, R9.5)."""
    c, g, n = _checked(hand, gold, (1, 2), "special_shapes")
    t = get_win_table()
    out: set[str] = set()
    if n % 3 == 2:
        if is_golden_pair_counts(t, c, g):
            out.add("golden_pair")
        if is_golden_dragon_counts(t, c, g):
            out.add("golden_dragon")
    elif is_idle_gold_counts(t, c, g):
        out.add("idle_gold")
    return out


def flush_specials(hand, gold, drawn_gold: bool = False) -> set[str]:
    """Classic-preset shape specials (docs/presets.md P2) of a winning 3n+2 concealed hand with no
    exposed melds: ``"half_flush"`` (混一色), ``"full_flush"`` (清一色) and, when
    ``drawn_gold`` (the gold was just self-drawn onto a hand without golds), ``"gold_kan"``
    (金坎, wrap-around for gold ranks 1 and 9). For hands with melds, play the hand in
    ``Game(rules="fuzhou-lianzhong-classic")``: ``result["specials"]`` lists them."""
    c, g, _ = _checked(hand, gold, (2,), "flush_specials")
    t = get_win_table()
    out: set[str] = set()
    kan = bool(drawn_gold and is_gold_kan_counts(t, c, g))
    if kan:
        out.add("gold_kan")
    if not (kan or is_win_counts(t, c, g) or c[g] >= 3):
        return out
    suits = {k // 9 for k in range(NUM_SUIT_KINDS) if c[k] and k != g}
    if len(suits) == 1:
        (x,) = suits
        full = c[g] == 0 or (g // 9 == x and (kan or bool(is_plain_win_counts(t, c))))
        out.add("full_flush" if full else "half_flush")
    return out


def swims(hand, gold) -> bool:
    """Whether a 3n+1 concealed hand has the 游金 shape (docs/presets.md P5): one gold set aside, the
    rest (other golds wild) forms melds only, so any tile drawn wins."""
    c, g, _ = _checked(hand, gold, (1,), "swims")
    return bool(swims_counts(get_win_table(), c, g))


def shanten(hand, gold) -> int:
    """Shanten number with golds wild: -1 = winning shape (3n+2), 0 = ready (3n+1), ...

    The hand is the concealed part only (3n+1 or 3n+2 tiles, at most 17); exposed melds are
    simply left out.
    """
    c, g, n = _checked(hand, gold, (1, 2), "shanten")
    if n > 3 * MAX_MELDS + 2:
        raise ValueError(f"shanten needs at most {3 * MAX_MELDS + 2} tiles, got {n}")
    return int(shanten_counts(get_shanten_table(), c, g))


# =====================================================================================
# One decomposition of a winning hand (for display: the win screen)
# =====================================================================================
#
# The split walks the same win table the win check reads, so it finds a decomposition exactly
# when ``is_win_counts`` says the hand wins: inside each suit it repeats the table's DP step
# (the lowest tile goes into a run, a triplet or the pair) and keeps only the choices whose
# cost plus the table's value of what remains equals the table's value of the suit. Which
# choice among those is fixed by _SPLIT_ORDER's rule (see :func:`win_split`).


def _suit_split(win_table, digits: list[int], suit: int, col: int) -> tuple[list[tuple], int]:
    """Sets of one suit (``digits``: its 9 non-gold counts) with the fewest golds, as the table
    says; ``col`` 1 when the suit holds the pair. Returns ``(sets, golds used)``; a set is
    ``(type, stand-in kinds, gold positions)``."""
    d = list(digits)
    col_now = col
    sets: list[tuple] = []
    used = 0
    while True:
        key = sum(x * 5**i for i, x in enumerate(d))
        if key == 0:
            if col_now == 1:  # the pair is two golds
                return sets + [("pair", None, [0, 1])], used + 2
            return sets, used
        target = int(win_table[key, col_now])
        i = next(j for j in range(9) if d[j])
        for golds, typ, real in _split_choices(d, i, col_now):
            rest = list(d)
            for x in real:
                rest[x] -= 1
            nxt = 0 if typ == "pair" else col_now
            if golds + int(win_table[sum(x * 5**j for j, x in enumerate(rest)), nxt]) == target:
                break
        else:  # pragma: no cover - the table's value is always reached by one of its own choices
            raise AssertionError(f"win table inconsistent at key {key}")
        sets.append(_split_set(typ, real, suit, i))
        used += golds
        d, col_now = rest, nxt


def _split_choices(d: list[int], i: int, col: int) -> list[tuple[int, str, list[int]]]:
    """The DP's choices for the lowest tile ``i``, as (golds, type, real positions), fewest
    golds first; among equal golds a run before a triplet before the pair."""
    out = []
    for a in (1, 0):
        if a and (i + 1 > 8 or d[i + 1] == 0):
            continue
        for b in (1, 0):
            if b and (i + 2 > 8 or d[i + 2] == 0):
                continue
            out.append((2 - a - b, 0, "run", [i] + [i + 1] * a + [i + 2] * b))
    for r in range(min(d[i], 3), 0, -1):
        out.append((3 - r, 1, "triplet", [i] * r))
    if col:
        for r in range(min(d[i], 2), 0, -1):
            out.append((2 - r, 2, "pair", [i] * r))
    out.sort(key=lambda t: (t[0], t[1]))
    return [(g, typ, real) for g, _, typ, real in out]


def _split_set(typ: str, real: list[int], suit: int, i: int) -> tuple:
    if typ == "run":
        # a run whose golds would reach past 9 is the same run shifted down (7 8 9)
        s = min(i, 6)
        slots = [s, s + 1, s + 2]
        return ("run", [9 * suit + x for x in slots], [p for p, x in enumerate(slots) if x not in real])
    n = 3 if typ == "triplet" else 2
    return (typ, [9 * suit + i] * n, list(range(len(real), n)))


def win_split_counts(win_table, counts, gold) -> dict | None:
    """:func:`win_split` on validated length-27 counts (golds included); kinds as integers."""
    c = [int(x) for x in counts]
    g = int(gold)
    n_gold = c[g]
    digits = [[0 if 9 * s + i == g else c[9 * s + i] for i in range(9)] for s in range(3)]
    keys = [sum(x * 5**i for i, x in enumerate(dg)) for dg in digits]
    melds_only = [int(win_table[k, 0]) for k in keys]
    with_pair = [int(win_table[k, 1]) for k in keys]
    need = sum(melds_only) + min(b - a for a, b in zip(melds_only, with_pair, strict=True))
    if need > n_gold:
        return None
    arr = np.asarray(c, dtype=np.int64)
    sets: list[tuple] = []
    avail = n_gold
    shape = "standard"
    if is_golden_dragon_counts(win_table, arr, g):
        shape = "golden_dragon"  # 金龙: three golds are their own triplet (R11.3)
        sets.append(("triplet", None, [0, 1, 2]))
        avail -= 3
        arr[g] -= 3
    if is_golden_pair_counts(win_table, arr, g):
        if shape == "standard":
            shape = "golden_pair"  # 金雀: two golds are the pair (R11.3)
        pair_suit = -1
    else:
        costs = [with_pair[s] - melds_only[s] for s in range(3)]
        pair_suit = costs.index(min(costs))  # the lowest suit among the cheapest
    for s in range(3):
        got, used = _suit_split(win_table, digits[s], s, 1 if s == pair_suit else 0)
        sets.extend(got)
        avail -= used
    if pair_suit < 0:
        sets.append(("pair", None, [0, 1]))
        avail -= 2
    if avail < 0 or avail % 3:  # pragma: no cover - guaranteed by the table (see golds_needed)
        raise AssertionError(f"win split left {avail} golds")
    sets.extend([("triplet", None, [0, 1, 2])] * (avail // 3))  # spare golds: gold triplets
    out = [
        {"type": typ, "tiles": tiles if tiles is not None else [g] * len(pos), "golds": pos} for typ, tiles, pos in sets
    ]
    pairs = [x for x in out if x["type"] == "pair"]
    melds = sorted((x for x in out if x["type"] != "pair"), key=lambda x: (x["tiles"], x["golds"]))
    return {"shape": shape, "sets": melds, "pair": pairs[0]}


def win_split(hand, gold) -> dict | None:
    """One decomposition of a winning 3n+2 concealed hand into its sets and pair (R9.1), or
    ``None`` when :func:`is_win` says it does not win.

    Returns ``{"shape", "sets", "pair"}``. Each set (and the pair) is ``{"type": "run" |
    "triplet" | "pair", "tiles": [...], "golds": [...]}``: ``tiles`` lists what each position
    stands for (notation) and ``golds`` the positions held by a gold (a tile of the gold kind),
    so the hand's tiles are the ``tiles`` with those positions read as the gold.
    ``split = win_split("123456789m12p", "1p")`` gives three runs and the pair 2p 2p whose
    second tile is the gold 1p: ``split["pair"] == {"type": "pair", "tiles": ["2p", "2p"],
    "golds": [1]}``.

    Which decomposition, when several exist (deterministic): ``shape`` ``"golden_dragon"``
    (金龙) when the hand qualifies (three golds as their own triplet, R11.3); otherwise
    ``"golden_pair"`` (金雀) when it qualifies (two golds as the pair); otherwise
    ``"standard"`` with the pair in the lowest suit (m < p < s) among those that need the
    fewest golds. Inside a suit the fewest golds are used; the lowest remaining tile is placed
    first, in the set that takes the fewest golds (a run before a triplet before the pair
    among equals). Golds not needed form triplets of golds standing for the gold kind.
    A 三金倒 hand (3 golds, any shape) or a classic-preset wrap-around 金坎 hand may win
    without this shape; for it this returns ``None`` like for any other non-R9.1 hand.
    """
    c, g, _ = _checked(hand, gold, (2,), "win_split")
    out = win_split_counts(get_win_table(), c, g)
    if out is None:
        return None
    for x in [*out["sets"], out["pair"]]:
        x["tiles"] = [kind_name(k) for k in x["tiles"]]
    return out
