"""Derived hand features from the one rules core (Numba): shanten with golds as wildcards,
shanten and acceptance after each discard, waits, claims, and what 金雀 / 三金倒 / 金龙 need.

Two users: the ``heuristic`` agent (``agents/heuristic.py``) decides with the public kernels
below (:func:`decode`, :func:`shanten`, :func:`acceptance`, :func:`best_discard`,
:func:`claim_outcome`, :func:`claim_gain`, :func:`without_tiles`, on a workspace of ``WS_SIZE``
int64), and the optional *hand-feature planes* (:func:`feature_planes`, ``HF_PLANES``) give a
network the same facts, through the same kernels, as extra observation planes appended after
the base observation planes.
Everything is computed from one seat's own observation (what it may know, R12): its concealed
tiles, the gold kind and the tiles it has seen; the shanten arithmetic is the engine's
(``core/hand.py``'s ``SHANTEN_TABLE`` combined over the suits exactly as ``shanten_counts``
does; waits by ``wait_mask_counts``), so no rule lives here twice.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .checks import read_only
from .core.hand import get_shanten_table, get_win_table, wait_mask_counts
from .core.jit import njit
from .encode import (
    P_CLAIM_TILE,
    P_GOLD_KIND,
    P_HAND,
    P_OWN_CONCEALED_KONG,
    P_PHASE,
    P_SEAT,
    PC_CLAIM,
    S_CLAIMED,
    S_DISC,
    S_MELD,
    SEAT_PLANES,
)

_NONE = 1000  # "no value yet" shanten
_POW5 = np.array([5**i for i in range(9)], dtype=np.int64)  # a suit key is sum(count_i * 5**i)
# The mask passed where ``use_mask`` is False (never read): a global array, which Numba types as a
# read-only int8 row like the heuristic's legal-mask row, so ``best_discard`` and
# ``_discard_shanten`` compile once for both callers (docs/engine.md, "Cold start: compiling
# once, and where the cache lives").
_UNREAD_MASK = np.zeros(27, dtype=np.int8)

# ---- the workspace ---------------------------------------------------------------------------
# One flat int64 array holds every scratch value of the kernel (a single array argument: no
# tuple of arrays to pass around, no array views in the loops; both cost reference counting in
# Numba). A "row" is a shanten-table row SHANTEN_TABLE[key] (6 melds x 2 pair flags) stored as
# 12 values at ``off + 2 m + q``.
_C = 0  # 27: own concealed counts (golds included, as the gold kind)
_VIS = 27  # 27: visible tiles per kind
_UNSEEN = 54  # 27: 4 - visible, >= 0
_SH = 81  # 27: shanten after discarding kind k (_NONE: not a candidate)
_NC = 108  # 27: non-gold tiles of the kind's suit within distance 2
_PLUS_OK = 135  # 27: 1 when the row "suit key + kind j" is cached at _PLUS
_KEYS = 162  # 3: per-suit keys of the current hand (non-gold tiles, base 5)
_RES = 165  # 2: (shanten, acceptance) after the best discard
_ROWS = 168  # 3 rows: the current hand's suits
_D = 204  # 3 rows: for suit s, the other two suits combined
_D2 = 240  # 3 rows: the same after a discard
_ROW = 276  # 1 row: scratch
_DISC = 288  # 27 rows: the discard's suit after discarding kind k
_PLUS = 612  # 27 rows: the drawn kind's suit after drawing kind j
_LOWERS = 936  # 27: 1 when drawing kind j lowers the shanten (left by ``acceptance``)
_WS_SIZE = 963

# The public names the heuristic (and any agent built on these kernels) uses: the workspace size,
# where the own concealed counts sit in it, and where a kernel leaves (shanten, acceptance).
WS_SIZE = _WS_SIZE
WS_HAND = _C
WS_RESULT = _RES
WS_UNSEEN = _UNSEEN  # 27: unseen tiles of each kind, 4 - visible (own hand included), left by ``decode``


@njit(cache=True)
def decode(o, w):
    """Own counts, visible counts and unseen counts from one observation; returns the gold kind."""
    gold = -1
    for k in range(27):
        h = np.int64(o[P_HAND, k]) + o[P_HAND + 1, k] + o[P_HAND + 2, k] + o[P_HAND + 3, k]
        w[_C + k] = h
        v = h + 4 * np.int64(o[P_OWN_CONCEALED_KONG, k])
        for r in range(4):
            b = P_SEAT + r * SEAT_PLANES
            v += np.int64(o[b + S_MELD, k]) + o[b + S_MELD + 1, k] + o[b + S_MELD + 2, k] + o[b + S_MELD + 3, k]
            v += np.int64(o[b + S_DISC, k]) + o[b + S_DISC + 1, k] + o[b + S_DISC + 2, k] + o[b + S_DISC + 3, k]
            v -= np.int64(o[b + S_CLAIMED, k])
        if o[P_GOLD_KIND, k]:
            gold = k
            v += 1  # the indicator, face up (R5)
        w[_VIS + k] = v
        u = 4 - v
        w[_UNSEEN + k] = u if u > 0 else 0
    return gold


# ---- shanten on per-suit rows ----------------------------------------------------------------
# ``shanten_counts`` (core/hand.py) takes the min over the splits of the melds between the three
# suits of ``SHANTEN_TABLE[key_s, m_s, pair_s]``, then subtracts the golds. A discard or a draw
# changes ONE suit's key, so the kernels keep each suit's row and the min-plus combination of
# the other two suits, and look up only the changed suit's row: one table read per candidate.
# ``tests/test_agents.py`` checks the results against ``shanten_counts`` on random hands.


@njit(cache=True, inline="always")
def _load_row(st, key, w, off):
    for m in range(6):
        w[off + 2 * m] = st[key, m, 0]
        w[off + 2 * m + 1] = st[key, m, 1]


@njit(cache=True)
def _conv(w, a, b, out):
    """Row ``out`` = fewest missing slots for m melds and q pairs over the rows ``a`` and ``b``."""
    for m in range(6):
        v0 = _NONE
        v1 = _NONE
        for ma in range(m + 1):
            pa = a + 2 * ma
            pb = b + 2 * (m - ma)
            a0 = w[pa]
            b0 = w[pb]
            x = a0 + b0
            if x < v0:
                v0 = x
            x = w[pa + 1] + b0
            if x < v1:
                v1 = x
            x = a0 + w[pb + 1]
            if x < v1:
                v1 = x
        w[out + 2 * m] = v0
        w[out + 2 * m + 1] = v1


@njit(cache=True, inline="always")
def _comb(w, a, d, mm):
    """Fewest missing slots for ``mm`` melds + 1 pair: the suit row ``a`` with the others' row ``d``."""
    best = _NONE
    for ma in range(mm + 1):
        pa = a + 2 * ma
        pd = d + 2 * (mm - ma)
        x = w[pa + 1] + w[pd]
        if x < best:
            best = x
        x = w[pa] + w[pd + 1]
        if x < best:
            best = x
    return best


@njit(cache=True, inline="always")
def _sh(missing, golds):
    """``shanten_counts``'s last step: golds fill missing slots, the rest must be drawn."""
    d = missing - golds
    if d < 0:
        d = 0
    return d - 1


@njit(cache=True)
def _suit_state(st, w, gold):
    """Keys and rows of the hand at ``_C``, the combined other suits per suit at ``_D``, and
    ``_NC``. Returns the number of tiles (golds included); the keys are ``suit_keys``'."""
    n = 0
    for s in range(3):
        key = 0
        for i in range(8, -1, -1):
            k = 9 * s + i
            x = w[_C + k]
            n += x
            if k != gold:
                key = key * 5 + x
            else:
                key = key * 5
        w[_KEYS + s] = key
        _load_row(st, key, w, _ROWS + 12 * s)
    for s in range(3):
        _conv(w, _ROWS + 12 * ((s + 1) % 3), _ROWS + 12 * ((s + 2) % 3), _D + 12 * s)
    for j in range(27):
        r = j % 9
        lo = j - 2 if r >= 2 else j - r
        hi = j + 2 if r <= 6 else j - r + 8
        v = 0
        for i in range(lo, hi + 1):
            if i != gold:
                v += w[_C + i]
        w[_NC + j] = v
    return n


@njit(cache=True)
def shanten(st, w, gold):
    """Shanten of the hand at ``_C`` (``shanten_counts``, with the suit state left in ``w``)."""
    n = _suit_state(st, w, gold)
    mm = n // 3
    if mm > 5:
        mm = 5
    return _sh(_comb(w, _ROWS, _D, mm), w[_C + gold])


@njit(cache=True)
def acceptance(st, w, gold, s_cur):
    """Unseen tiles whose draw lowers the shanten ``s_cur`` of the 3n+1 hand at ``_C``.

    Exact, with one pruning: when ``s_cur >= 1`` a drawn kind with no non-gold tile of its
    suit within distance 2 in the hand (and not the gold kind) cannot lower the shanten. (It
    would sit in a group whose other slots are all missing; an optimal decomposition with a
    wholly missing group uses every non-gold tile, which makes the hand ready, ``s_cur = 0``.)
    The kinds whose draw lowers it are left at ``w[_LOWERS + j]`` (1, else 0).
    """
    n = _suit_state(st, w, gold)
    mm = (n + 1) // 3
    if mm > 5:
        mm = 5
    acc = 0
    for j in range(27):
        u = w[_UNSEEN + j]
        lowers = u > 0 and w[_C + j] < 4 and _draw_lowers(st, w, gold, s_cur, j, mm)
        w[_LOWERS + j] = lowers
        if lowers:
            acc += u
    return acc


@njit(cache=True, inline="always")
def _draw_lowers(st, w, gold, s_cur, j, mm):
    """Whether drawing kind ``j`` lowers the shanten ``s_cur`` of the 3n+1 hand at ``_C`` (its suit
    state in ``w``, ``mm`` melds), with :func:`acceptance`'s exact pruning."""
    s = j // 9
    g = w[_C + gold]
    if j == gold:
        return _sh(_comb(w, _ROWS + 12 * s, _D + 12 * s, mm), g + 1) < s_cur
    if s_cur >= 1 and w[_NC + j] == 0:
        return False
    _load_row(st, w[_KEYS + s] + _POW5[j % 9], w, _ROW)
    return _sh(_comb(w, _ROW, _D + 12 * s, mm), g) < s_cur


@njit(cache=True, inline="always")
def edge_class(k):
    """A suit kind's rank class: 2 terminal (1, 9), 1 next to one (2, 8), 0 inside."""
    r = k % 9
    if r == 0 or r == 8:
        return 2
    if r == 1 or r == 7:
        return 1
    return 0


@njit(cache=True)
def _discard_acceptance(st, w, gold, s_cur, k, mm):
    """``acceptance`` of the hand at ``_C`` minus one tile of kind ``k`` (already removed by
    the caller), reusing the full hand's suit state from ``best_discard``: the suit of ``k``
    has the row ``_DISC[k]``; a draw in another suit uses the cached row ``_PLUS[j]`` (the full
    hand's key plus j: the same for every discard outside that suit)."""
    s = k // 9
    disc = _DISC + 12 * k
    for s2 in range(3):
        if s2 != s:
            _conv(w, disc, _ROWS + 12 * (3 - s - s2), _D2 + 12 * s2)
    g = w[_C + gold]
    d_s = _D + 12 * s
    base = w[_KEYS + s] - _POW5[k % 9]
    acc = 0
    for j in range(27):
        u = w[_UNSEEN + j]
        if u <= 0 or w[_C + j] >= 4:
            continue
        sj = j // 9
        if j == gold:
            if _sh(_comb(w, disc, d_s, mm), g + 1) < s_cur:
                acc += u
            continue
        if s_cur >= 1:
            near = w[_NC + j]
            if sj == s and abs(j - k) <= 2:
                near -= 1  # the discarded tile no longer counts
            if near <= 0:
                continue
        if sj == s:
            if j == k:
                v = _comb(w, _ROWS + 12 * s, d_s, mm)
            else:
                _load_row(st, base + _POW5[j % 9], w, _ROW)
                v = _comb(w, _ROW, d_s, mm)
        else:
            p = _PLUS + 12 * j
            if w[_PLUS_OK + j] == 0:
                _load_row(st, w[_KEYS + sj] + _POW5[j % 9], w, p)
                w[_PLUS_OK + j] = 1
            v = _comb(w, p, _D2 + 12 * sj, mm)
        if _sh(v, g) < s_cur:
            acc += u
    return acc


@njit(cache=True)
def _discard_shanten(st, w, gold, mk, use_mask):
    """Shanten after discarding each held non-gold kind k (allowed by ``mk`` when ``use_mask``) of
    the 3n+2 hand at ``_C``, at ``_SH + k`` (``_NONE``: not a candidate), each discard's suit row at
    ``_DISC[k]``. Returns the lowest of them and the melds the hand after a discard needs."""
    n = _suit_state(st, w, gold)
    mm = (n - 1) // 3
    if mm > 5:
        mm = 5
    g = w[_C + gold]
    best_s = _NONE
    for k in range(27):
        w[_SH + k] = _NONE
        w[_PLUS_OK + k] = 0
        if w[_C + k] == 0 or k == gold or (use_mask and mk[k] == 0):
            continue
        s = k // 9
        _load_row(st, w[_KEYS + s] - _POW5[k % 9], w, _DISC + 12 * k)
        v = _sh(_comb(w, _DISC + 12 * k, _D + 12 * s, mm), g)
        w[_SH + k] = v
        if v < best_s:
            best_s = v
    return best_s, mm


@njit(cache=True)
def best_discard(st, w, gold, mk, use_mask):
    """Best discard of the 3n+2 hand at ``_C`` (among the kinds ``mk`` allows when ``use_mask``):
    returns the kind (-1 if none) and writes the shanten and the acceptance after it to ``_RES``."""
    best_s, mm = _discard_shanten(st, w, gold, mk, use_mask)
    if best_s == _NONE:  # only golds can go
        if gold >= 0 and w[_C + gold] > 0 and (not use_mask or mk[gold] != 0):
            w[_C + gold] -= 1
            v = shanten(st, w, gold)
            w[_RES] = v
            w[_RES + 1] = acceptance(st, w, gold, v)
            w[_C + gold] += 1
            return gold
        w[_RES] = _NONE
        w[_RES + 1] = 0
        return -1
    best_k = -1
    best_a = -1
    best_tb = -1
    for k in range(27):
        if w[_SH + k] != best_s:
            continue
        w[_C + k] -= 1
        a = _discard_acceptance(st, w, gold, best_s, k, mm)
        w[_C + k] += 1
        tb = (w[_VIS + k] - w[_C + k]) * 4 + edge_class(k)  # seen elsewhere (safer, less useful), then terminals
        if a > best_a or (a == best_a and tb > best_tb):
            best_a = a
            best_tb = tb
            best_k = k
    w[_RES] = best_s
    w[_RES + 1] = best_a
    return best_k


@njit(cache=True)
def discard_table(st, w, gold, mk, slack, out):
    """Shanten and acceptance after each non-gold discard ``mk`` allows of the 3n+2 hand at ``_C``:
    ``out[k, 0]`` the shanten (``_NONE`` for a kind not held, a gold, an illegal discard, or one
    more than ``slack`` above the lowest), ``out[k, 1]`` the acceptance (unseen tiles that lower
    that discard's own shanten). Returns the lowest shanten (``_NONE``: no non-gold discard).
    The same arithmetic as :func:`best_discard`, for every candidate instead of the best."""
    best_s, mm = _discard_shanten(st, w, gold, mk, True)
    for k in range(27):
        out[k, 0] = _NONE
        out[k, 1] = 0
    if best_s == _NONE:
        return best_s
    for k in range(27):
        v = w[_SH + k]
        if v == _NONE or v > best_s + slack:
            continue
        w[_C + k] -= 1
        out[k, 1] = _discard_acceptance(st, w, gold, v, k, mm)
        w[_C + k] += 1
        out[k, 0] = v
    return best_s


NO_SHANTEN = _NONE  # "no value" in discard_table's shanten column

# ==== hand-feature planes ==========================================================================
# An optional block of HF_NUM_PLANES binary planes (27 columns, the suit kinds) appended after the
# base observation planes (``docs/observation.md``, "Hand-feature planes"). The network sees
# (base + HF_NUM_PLANES, 27); a checkpoint records HF_VERSION and refuses another layout.
HF_VERSION = "hf1"
HF_SHANTEN = 0  # one-hot at column min(shanten + 1, 26): -1 complete, 0 ready, ...
HF_GOLDEN_PAIR = 1  # one-hot: shanten towards 金雀 (two golds as the pair, R11.3)
HF_GOLDEN_DRAGON = 2  # one-hot: shanten towards 金龙 (three golds as their own triplet); empty: impossible
HF_THREE_GOLDS = 3  # one-hot at column 3 - golds held (三金倒 needs 3 golds; column 0: holding them)
HF_DISC_BEST = 4  # 3n+2 hand: discarding (non-gold) kind k leaves the lowest shanten reachable
HF_DISC_NEXT = 5  # 3n+2 hand: discarding k leaves that lowest shanten + 1
HF_DISC_ACC_MAX = 6  # 3n+2 hand: among HF_DISC_BEST, k leaves the largest acceptance
HF_DISC_ACC = 7  # 4 planes: among HF_DISC_BEST, the acceptance after discarding k >= 4, 8, 16, 24
HF_ACCEPT = 11  # 3n+1 hand: drawing kind j (still unseen) lowers the shanten
HF_ACCEPT_COUNT = 12  # 3n+1 hand: thermometer, column j = 1 when the acceptance (unseen tiles) > 2 j
HF_WAITS = 13  # 3n+1 hand: kind j completes a win (the engine's wait_mask_counts; shape only)
HF_CLAIM_BETTER = 14  # claim window: columns 0 peng, 1-3 chi (discard low/mid/high), 4 exposed kong:
HF_CLAIM_EQUAL = 15  # ... the claim (then the best discard) lowers the shanten / keeps it, more acceptance
HF_DISC_GP_BEST = 16  # 3n+2 hand: discarding k leaves the lowest reachable 金雀 shanten
HF_DISC_GP_NEXT = 17  # 3n+2 hand: discarding k leaves that lowest 金雀 shanten + 1
HF_NUM_PLANES = 18
_DISC_ACC_STEPS = (4, 8, 16, 24)

_HF_ACC = _WS_SIZE  # 27: acceptance after discarding kind k (-1: not computed)
_HF_GP = _WS_SIZE + 54  # 27: 金雀 missing slots after discarding kind k
_HF_WS_SIZE = _WS_SIZE + 81


def hf_plane_names() -> list[tuple[str, str]]:
    """(name, meaning) of every hand-feature plane, in order (the table of ``docs/observation.md``)."""
    names = [
        ("hf_shanten", "one-hot at column min(shanten + 1, 26) of the own concealed hand, golds as wildcards"),
        ("hf_golden_pair", "one-hot: shanten towards 金雀 (two golds as the pair, the rest melds)"),
        ("hf_golden_dragon", "one-hot: shanten towards 金龙 (three golds as a triplet); empty when impossible"),
        ("hf_three_golds", "one-hot at column 3 - golds held (三金倒); column 0 when holding 3 or more"),
        ("hf_disc_best", "3n+2 hand: discarding kind k leaves the lowest reachable shanten (golds excluded)"),
        ("hf_disc_next", "3n+2 hand: discarding kind k leaves that lowest shanten + 1"),
        ("hf_disc_acc_max", "3n+2 hand: among hf_disc_best, k leaves the largest acceptance"),
    ]
    names += [
        (f"hf_disc_acc_ge{n}", f"3n+2 hand, k in hf_disc_best: acceptance after discarding k >= {n} tiles")
        for n in _DISC_ACC_STEPS
    ]
    names += [
        ("hf_accept", "3n+1 hand: drawing kind j (unseen copies left) lowers the shanten"),
        ("hf_accept_count", "3n+1 hand: thermometer, column j = 1 when the unseen tiles that lower the shanten > 2j"),
        ("hf_waits", "3n+1 hand: adding kind j wins (R9.1 shape, golds wild; a kind all in sight included)"),
        (
            "hf_claim_better",
            "claim window: col 0 peng, 1/2/3 chi with the discard low/mid/high, 4 exposed kong: "
            "lowers the shanten (after the best discard), if legal",
        ),
        (
            "hf_claim_equal",
            "claim window, same columns: keeps the shanten with a larger acceptance (kong: not smaller)",
        ),
        ("hf_disc_gp_best", "3n+2 hand: discarding kind k leaves the lowest reachable 金雀 shanten (golds excluded)"),
        ("hf_disc_gp_next", "3n+2 hand: discarding kind k leaves that lowest 金雀 shanten + 1"),
    ]
    assert len(names) == HF_NUM_PLANES
    return names


@njit(cache=True, inline="always")
def _one_hot(row, value):
    c = value
    if c < 0:
        c = 0
    if c > 26:
        c = 26
    row[c] = 1


@njit(cache=True)
def _comb_melds(w, a, d, mm):
    """Fewest missing slots for ``mm`` melds and no pair: suit row ``a`` with the others' row ``d``."""
    best = _NONE
    for ma in range(mm + 1):
        x = w[a + 2 * ma] + w[d + 2 * (mm - ma)]
        if x < best:
            best = x
    return best


@njit(cache=True)
def _specials(w, gold, n, out):
    """金雀 / 金龙 / 三金倒 planes of the hand at ``_C`` (its suit state already in ``w``)."""
    g = w[_C + gold]
    mm = n // 3
    if mm > 5:
        mm = 5
    # 金雀: the non-gold tiles make mm melds; two golds are the pair, other golds fill slots
    jq = _comb_melds(w, _ROWS, _D, mm) + 2 - g
    _one_hot(out[HF_GOLDEN_PAIR], (jq if jq > 0 else 0) - 1)
    # 金龙: three golds are their own triplet; the rest makes mm - 1 melds and the pair
    if mm >= 1:
        jl = _comb(w, _ROWS, _D, mm - 1) + 3 - g
        _one_hot(out[HF_GOLDEN_DRAGON], (jl if jl > 0 else 0) - 1)
    _one_hot(out[HF_THREE_GOLDS], 3 - g)


@njit(cache=True)
def _discard_planes(st, w, gold, out):
    """HF_DISC_* planes of the 3n+2 hand at ``_C``: shanten and acceptance after each discard."""
    # every held non-gold kind; the unread mask is read-only int8 like the heuristic's legal-mask
    # row, so that this call and the heuristic's share one compiled version
    best_s, mm = _discard_shanten(st, w, gold, _UNREAD_MASK, False)
    if best_s == _NONE:
        return
    g = w[_C + gold]
    # 金雀 after each discard: the rest as melds only, two golds as the pair (see _specials)
    best_gp = _NONE
    for k in range(27):
        w[_HF_GP + k] = _NONE
        if w[_SH + k] != _NONE:
            v = _comb_melds(w, _DISC + 12 * k, _D + 12 * (k // 9), mm) + 2 - g
            w[_HF_GP + k] = v
            if v < best_gp:
                best_gp = v
    for k in range(27):
        if w[_HF_GP + k] == best_gp:
            out[HF_DISC_GP_BEST, k] = 1
        elif w[_HF_GP + k] == best_gp + 1:
            out[HF_DISC_GP_NEXT, k] = 1
    best_a = -1
    for k in range(27):
        w[_HF_ACC + k] = -1
        v = w[_SH + k]
        if v == _NONE:
            continue
        if v == best_s:
            out[HF_DISC_BEST, k] = 1
            w[_C + k] -= 1
            a = _discard_acceptance(st, w, gold, best_s, k, mm)
            w[_C + k] += 1
            w[_HF_ACC + k] = a
            if a > best_a:
                best_a = a
            for i in range(len(_DISC_ACC_STEPS)):
                if a >= _DISC_ACC_STEPS[i]:
                    out[HF_DISC_ACC + i, k] = 1
        elif v == best_s + 1:
            out[HF_DISC_NEXT, k] = 1
    for k in range(27):
        if w[_HF_ACC + k] == best_a and best_a >= 0:
            out[HF_DISC_ACC_MAX, k] = 1


# ---- claims ----------------------------------------------------------------------------------------
# One evaluation of a claim, shared by the heuristic's decision and the HF_CLAIM_* planes.
CLAIM_PENG, CLAIM_CHI_LOW, CLAIM_CHI_MID, CLAIM_CHI_HIGH, CLAIM_KONG = 0, 1, 2, 3, 4  # chi: the discard low/mid/high


@njit(cache=True)
def without_tiles(st, w, gold, k, n):
    """Shanten and acceptance of the hand at ``_C`` without ``n`` tiles of kind ``k`` (a kong's
    tiles: a replacement draw follows, no discard), written to ``w[_RES]``, ``w[_RES + 1]``; the
    hand is restored."""
    w[_C + k] -= n
    s = shanten(st, w, gold)
    a = acceptance(st, w, gold, s)
    w[_C + k] += n
    w[_RES] = s
    w[_RES + 1] = a


@njit(cache=True)
def claim_outcome(st, w, gold, t, col):
    """The 3n+1 hand at ``_C`` after claiming the discard ``t`` as ``col`` (``CLAIM_*``): shanten and
    acceptance written to ``w[_RES]``, ``w[_RES + 1]`` (peng / chi: after the best discard that
    follows). Returns False when the hand cannot form that claim (a tile missing, a gold among
    the tiles, a run leaving the suit); legality beyond the tiles is the mask's business."""
    if t == gold:
        return False
    if col == CLAIM_KONG:
        if w[_C + t] < 3:
            return False
        without_tiles(st, w, gold, t, 3)
        return True
    if col == CLAIM_PENG:
        x = t
        y = t
    else:
        r = t % 9
        low = t - (col - 1)
        if low < t - r or low + 2 > t - r + 8:
            return False  # the run would leave the suit
        x = low if low != t else low + 1
        y = low + 2 if low + 2 != t else low + 1
    if x == gold or y == gold or w[_C + x] < 1 or w[_C + y] < 1 or (x == y and w[_C + x] < 2):
        return False
    w[_C + x] -= 1
    w[_C + y] -= 1
    k = best_discard(st, w, gold, _UNREAD_MASK, False)  # no mask (unread; read-only int8 as the heuristic's)
    w[_C + x] += 1
    w[_C + y] += 1
    return k >= 0


@njit(cache=True, inline="always")
def claim_gain(s, a, s0, a0, col):
    """2 when a claim's outcome (shanten ``s``, acceptance ``a``) lowers the shanten ``s0`` of not
    claiming, 1 when it keeps it with more acceptance than ``a0`` (a kong: not less, it brings a
    free draw), else 0."""
    if s < s0:
        return 2
    if s == s0 and (a > a0 or (col == CLAIM_KONG and a == a0)):
        return 1
    return 0


@njit(cache=True)
def _claim_planes(st, w, gold, t, s0, a0, out):
    """HF_CLAIM_* planes for the claim tile ``t`` offered to the 3n+1 hand at ``_C`` (shanten s0,
    acceptance a0): every claim the tiles allow, as the heuristic weighs it, legal or not."""
    for col in (CLAIM_KONG, CLAIM_PENG, CLAIM_CHI_LOW, CLAIM_CHI_MID, CLAIM_CHI_HIGH):
        if claim_outcome(st, w, gold, t, col):
            g = claim_gain(w[_RES], w[_RES + 1], s0, a0, col)
            if g == 2:
                out[HF_CLAIM_BETTER, col] = 1
            elif g == 1:
                out[HF_CLAIM_EQUAL, col] = 1


@njit(cache=True)
def feature_planes_one(o, st, wt, w, out):
    """The HF_NUM_PLANES planes of one observation ``o`` into ``out`` (HF_NUM_PLANES, 27), cleared here."""
    out[:, :] = 0
    gold = decode(o, w)
    if gold < 0:  # no game (a finished table's zero observation)
        return
    n = _suit_state(st, w, gold)
    if n == 0:
        return
    mm = n // 3
    if mm > 5:
        mm = 5
    s_now = _sh(_comb(w, _ROWS, _D, mm), w[_C + gold])
    _one_hot(out[HF_SHANTEN], s_now + 1)
    _specials(w, gold, n, out)
    if n % 3 == 2:
        _discard_planes(st, w, gold, out)
        return
    if n % 3 != 1:
        return
    acc = acceptance(st, w, gold, s_now)
    for j in range(27):
        out[HF_ACCEPT, j] = w[_LOWERS + j]
        if acc > 2 * j:
            out[HF_ACCEPT_COUNT, j] = 1
    if s_now == 0:
        cnt = np.zeros(27, np.int64)
        for k in range(27):
            cnt[k] = w[_C + k]
        waits = np.zeros(27, np.int8)
        wait_mask_counts(wt, cnt, gold, waits)
        for k in range(27):
            out[HF_WAITS, k] = waits[k]
    if o[P_PHASE, PC_CLAIM]:
        t = -1
        for k in range(27):
            if o[P_CLAIM_TILE, k]:
                t = k
        if t >= 0:
            _claim_planes(st, w, gold, t, s_now, acc, out)


@njit(cache=True, nogil=True)
def feature_planes_batch(obs, st, wt, out):
    """``out[i]`` (HF_NUM_PLANES, 27) from ``obs[i]`` (C >= 97, 27) int8, for every row."""
    w = np.zeros(_HF_WS_SIZE, np.int64)
    for i in range(obs.shape[0]):
        feature_planes_one(obs[i], st, wt, w, out[i])


@njit(cache=True, parallel=True, nogil=True)
def feature_planes_parallel(obs, st, wt, out, n):
    """:func:`feature_planes_batch` in ``n`` contiguous chunks of rows, one per thread (rows are
    independent: the planes are those of the serial kernel, bit for bit). Compiled only where a
    caller asks for threads (the trainer's rollout on a many-core host)."""
    rows = obs.shape[0]
    chunk = (rows + n - 1) // n
    for c in prange(n):
        w = np.zeros(_HF_WS_SIZE, np.int64)
        for i in range(c * chunk, min(rows, (c + 1) * chunk)):
            feature_planes_one(obs[i], st, wt, w, out[i])


# fewer rows than this per thread: one thread (a parallel region's start costs more than it saves)
PARALLEL_MIN_ROWS = 64


def parallel_chunks(rows: int, threads: int) -> int:
    """How many threads a batch of ``rows`` gets: ``threads``, fewer for a small batch, 1 for
    none. Sets Numba's thread count when above 1. ``threads`` beyond
    ``numba.config.NUMBA_NUM_THREADS`` is a ``ValueError`` (callers take it from ``VectorEnv.num_threads``)."""
    whole = isinstance(threads, (int, np.integer)) and not isinstance(threads, bool)
    if not whole or not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(
            f"threads={threads!r}: must be an integer 1 .. {numba.config.NUMBA_NUM_THREADS} (the threads Numba can use here)"
        )
    n = min(int(threads), rows // PARALLEL_MIN_ROWS)
    if n > 1:
        numba.set_num_threads(n)
    return max(n, 1)


def feature_planes(obs: np.ndarray) -> np.ndarray:
    """Hand-feature planes ``(N, HF_NUM_PLANES, 27)`` int8 of a batch of observations ``(N, C, 27)``."""
    obs = np.ascontiguousarray(obs, dtype=np.int8)
    if obs.ndim == 2:
        obs = obs[None]
    out = np.zeros((obs.shape[0], HF_NUM_PLANES, 27), np.int8)
    feature_planes_batch(read_only(obs), get_shanten_table(), get_win_table(), out)
    return out


def with_hand_features(obs: np.ndarray, threads: int = 1) -> np.ndarray:
    """``obs`` (N, C, 27) with the hand-feature planes appended: ``(N, C + HF_NUM_PLANES, 27)`` int8.
    ``threads`` > 1 splits a large batch over that many Numba threads (the same planes)."""
    obs = np.ascontiguousarray(obs, dtype=np.int8)
    if obs.ndim == 2:
        obs = obs[None]
    out = np.empty((obs.shape[0], obs.shape[1] + HF_NUM_PLANES, 27), np.int8)
    out[:, : obs.shape[1]] = obs
    n = parallel_chunks(obs.shape[0], threads)
    if n > 1:
        feature_planes_parallel(read_only(obs), get_shanten_table(), get_win_table(), out[:, obs.shape[1] :], n)
    else:
        feature_planes_batch(read_only(obs), get_shanten_table(), get_win_table(), out[:, obs.shape[1] :])
    return out
