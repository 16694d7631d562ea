"""``heuristic``: a rule-based player (shanten with golds wild, then tile acceptance).

Everything it knows comes from the observation (``docs/observation.md``; the v2 preset and swim planes for the presets), decoded inside
one Numba kernel over the batch (:func:`heuristic_kernel`):

* own concealed tiles: planes 0–3 (threshold planes, golds included as the gold kind);
* the gold kind: plane 4;
* visible tiles of kind k: own hand + own concealed kongs (plane 7, 4 each) + every seat's open
  melds (meld planes) + every seat's discards (discard planes) − one per seat whose discard
  of k was claimed (that tile is counted in the claimer's meld too) + the gold indicator (set
  aside face up, R5). ``unseen[k] = max(0, 4 − visible[k])`` are the tiles that may still come;
* phase and claim tile: planes 95–96.

Decisions, in order (legality is the mask's business: 过水, 闲金, gold rules are all in it):

1. Always win: 抢金 (60) if offered, else hu (59) — 天胡, 三金倒 and self-draw included —
   except under home (P5): a self-draw win by a seat not yet swimming, when a discard leaves
   the 游金 shape and at least 8 tiles are drawable, discards that tile to swim instead (the
   next draw wins at x4 instead of x2 now; the shape test is the engine's ``swims_counts``).
2. Discard (turn, or after chi/peng): among the legal non-gold discards, the smallest shanten
   of the remaining hand (golds as wildcards: the engine's shanten table, combined over the
   suits exactly as :func:`fzmj_env.core.hand.shanten_counts` does, one suit at a time);
   among those, the largest acceptance = unseen tiles whose draw lowers the shanten; then the
   kind most seen elsewhere, then terminals before middle tiles. A gold is discarded only when
   nothing else is legal.
3. Self kong (turn): when the hand after the kong is at least as good as after the best
   discard (shanten not higher; if equal, acceptance not lower). Not when that would spoil a
   ready 平胡 (no kong yet, at most one flower — none under 联众 2 / 边锋, and no 平胡 under
   home — ready after the kong; the preset comes from the v2 ``preset`` plane).
4. Claims (chi / peng / exposed kong): compare the hand after the claim (and its best discard,
   for chi and peng) with the hand if it passes; claim only when the shanten drops, or stays
   equal with a larger acceptance (kong: not smaller, it also brings a free draw). Otherwise pass.
   Under home (P5) a seat that swims (v2 ``swim`` plane, own level) never claims: a claim ends
   swimming, and a swimming hand wins on any draw at x4 or more.

Presets: the mask already forbids gold discards under classic (P2) and offers every win (金坎
included), so rules 1-2 need nothing more. A swimming hand is never thrown away under home:
it wins on the next draw (rule 1), never claims (rule 4), and rule 1's exception enters
swimming when it can.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fzmj_env.core.hand import get_shanten_table, get_win_table, swims_counts
from fzmj_env.core.state import A_CHI_HIGH, A_CHI_LOW, A_CHI_MID, A_HU, A_KONG, A_PASS, A_PENG, A_ROB, A_SELF_KONG
from fzmj_env.encode import (
    P_CLAIM_TILE,
    P_DRAWABLE,
    P_GOLD_KIND,
    P_HAND,
    P_OWN_CONCEALED_KONG,
    P_PHASE,
    P_PRESET,
    P_SEAT,
    P_SWIM,
    PC_CLAIM,
    PC_HEAVENLY,
    S_CLAIMED,
    S_DISC,
    S_FLOWER_COUNT,
    S_KONG,
    S_MELD,
    SEAT_PLANES,
)

from .base import Agent, as_batch

_NONE = 1000  # "no value yet" shanten
_POW5 = np.array([5**i for i in range(9)], dtype=np.int64)  # a suit key is sum(count_i * 5**i)

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
_WS_SIZE = 936


@njit(cache=True)
def _decode(o, w):
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
def _shanten(st, w, gold):
    """Shanten of the hand at ``_C`` (``shanten_counts``, with the suit state left in ``w``)."""
    n = _suit_state(st, w, gold)
    mm = n // 3
    if mm > 5:
        mm = 5
    return _sh(_comb(w, _ROWS, _D, mm), w[_C + gold])


@njit(cache=True)
def _acceptance(st, w, gold, s_cur):
    """Unseen tiles whose draw lowers the shanten ``s_cur`` of the 3n+1 hand at ``_C``.

    Exact, with one pruning: when ``s_cur >= 1`` a drawn kind with no non-gold tile of its
    suit within distance 2 in the hand (and not the gold kind) cannot lower the shanten. (It
    would sit in a group whose other slots are all missing; an optimal decomposition with a
    wholly missing group uses every non-gold tile, which makes the hand ready, ``s_cur = 0``.)
    """
    n = _suit_state(st, w, gold)
    mm = (n + 1) // 3
    if mm > 5:
        mm = 5
    g = w[_C + gold]
    acc = 0
    for j in range(27):
        u = w[_UNSEEN + j]
        if u <= 0 or w[_C + j] >= 4:
            continue
        s = j // 9
        if j == gold:
            if _sh(_comb(w, _ROWS + 12 * s, _D + 12 * s, mm), g + 1) < s_cur:
                acc += u
            continue
        if s_cur >= 1 and w[_NC + j] == 0:
            continue
        _load_row(st, w[_KEYS + s] + _POW5[j % 9], w, _ROW)
        if _sh(_comb(w, _ROW, _D + 12 * s, mm), g) < s_cur:
            acc += u
    return acc


@njit(cache=True, inline="always")
def _edge(k):
    r = k % 9
    if r == 0 or r == 8:
        return 2
    if r == 1 or r == 7:
        return 1
    return 0


@njit(cache=True)
def _discard_acceptance(st, w, gold, s_cur, k, mm):
    """``_acceptance`` of the hand at ``_C`` minus one tile of kind ``k`` (already removed by
    the caller), reusing the full hand's suit state from ``_best_discard``: the suit of ``k``
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
def _best_discard(st, w, gold, mk, use_mask):
    """Best discard of the 3n+2 hand at ``_C``: returns the kind (-1 if none) and writes the
    shanten and the acceptance after it to ``_RES``."""
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
    if best_s == _NONE:  # only golds can go
        if gold >= 0 and w[_C + gold] > 0 and (not use_mask or mk[gold] != 0):
            w[_C + gold] -= 1
            v = _shanten(st, w, gold)
            w[_RES] = v
            w[_RES + 1] = _acceptance(st, w, gold, v)
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
        tb = (w[_VIS + k] - w[_C + k]) * 4 + _edge(k)  # seen elsewhere (safer, less useful), then terminals
        if a > best_a or (a == best_a and tb > best_tb):
            best_a = a
            best_tb = tb
            best_k = k
    w[_RES] = best_s
    w[_RES + 1] = best_a
    return best_k


_SCHEME_LZ2, _SCHEME_BIANFENG, _SCHEME_HOME = 2, 3, 4  # columns of the v2 preset plane (SCHEME_NAMES)


@njit(cache=True, inline="always")
def _scheme(o):
    """The rule scheme from the v2 preset plane (0 = default)."""
    for j in range(5):
        if o[P_PRESET, j]:
            return j
    return 0


@njit(cache=True)
def _pinghu_alive(o):
    """No kong yet and few enough flowers that a 平胡 special is still possible: at most one
    flower (R11.3, P2), none under 联众 2 / 边锋 (P3, P4), never under home (P5: no values)."""
    scheme = _scheme(o)
    if scheme == _SCHEME_HOME:
        return False
    flowers = 0
    kongs = 0
    for k in range(27):
        flowers += o[P_SEAT + S_FLOWER_COUNT, k]
        kongs += o[P_SEAT + S_KONG, k] + o[P_OWN_CONCEALED_KONG, k]
    limit = 0 if scheme == _SCHEME_LZ2 or scheme == _SCHEME_BIANFENG else 1
    return flowers <= limit and kongs == 0


@njit(cache=True)
def _turn(st, o, mk, w, gold):
    """Own turn (after a draw, or after chi/peng): the best discard, or a self kong."""
    action = _best_discard(st, w, gold, mk, True)
    best_s = w[_RES]
    best_a = w[_RES + 1]
    for k in range(27):
        if mk[A_SELF_KONG + k] == 0:
            continue
        n = 4 if w[_C + k] >= 4 else 1  # concealed kong, or the 4th tile added to a peng
        w[_C + k] -= n
        s = _shanten(st, w, gold)
        a = _acceptance(st, w, gold, s)
        w[_C + k] += n
        if s <= 0 and _pinghu_alive(o):
            continue
        if s < best_s or (s == best_s and a >= best_a):
            action = A_SELF_KONG + k
            best_s = s
            best_a = a
    return action


@njit(cache=True)
def _claim(st, o, mk, w, gold):
    """A claim window (no win offered, or it was taken already): chi / peng / kong or pass."""
    if mk[A_CHI_LOW] == 0 and mk[A_CHI_MID] == 0 and mk[A_CHI_HIGH] == 0 and mk[A_PENG] == 0 and mk[A_KONG] == 0:
        return A_PASS
    if o[P_SWIM, 0]:  # P5: this seat swims (any draw wins, x4 and up); a claim would end it
        return A_PASS
    t = -1
    for k in range(27):
        if o[P_CLAIM_TILE, k]:
            t = k
    if t < 0:
        return A_PASS
    s0 = _shanten(st, w, gold)
    a0 = _acceptance(st, w, gold, s0)
    action = A_PASS
    best_s = s0
    best_a = a0
    # exposed kong: three from the hand, then a replacement draw (no discard now)
    if mk[A_KONG]:
        w[_C + t] -= 3
        s = _shanten(st, w, gold)
        a = _acceptance(st, w, gold, s)
        w[_C + t] += 3
        if (s < s0 or (s == s0 and a >= a0)) and not (s <= 0 and _pinghu_alive(o)):
            action = A_KONG
            best_s = s
            best_a = a
    # peng and chi: two tiles leave the hand, then the best discard
    for act in (A_PENG, A_CHI_LOW, A_CHI_MID, A_CHI_HIGH):
        if mk[act] == 0:
            continue
        if act == A_PENG:
            x = t
            y = t
        else:
            low = t - (act - A_CHI_LOW)
            x = low if low != t else low + 1
            y = low + 2 if low + 2 != t else low + 1
        w[_C + x] -= 1
        w[_C + y] -= 1
        k = _best_discard(st, w, gold, mk, False)
        w[_C + x] += 1
        w[_C + y] += 1
        if k < 0:
            continue
        s = w[_RES]
        a = w[_RES + 1]
        if s < best_s or (s == best_s and a > best_a):
            action = act
            best_s = s
            best_a = a
    return action


SWIM_MIN_DRAWABLE = 8  # enter swimming instead of winning only while at least this many draws remain


@njit(cache=True)
def _swim_instead(o, mk, win_table, counts):
    """Home (P5): at a self-draw win that is not swimming yet, the discard that leaves the 游金
    shape (then any draw wins at x4 instead of x2 now), or -1. Only while the wall has at least
    SWIM_MIN_DRAWABLE drawable tiles (plane ``drawable``), never for 天胡."""
    if _scheme(o) != _SCHEME_HOME or o[P_PHASE, PC_CLAIM] or o[P_SWIM, 0] or o[P_PHASE, PC_HEAVENLY]:
        return -1
    if not o[P_DRAWABLE, SWIM_MIN_DRAWABLE - 1]:  # D > SWIM_MIN_DRAWABLE - 1
        return -1
    gold = -1
    for k in range(27):
        counts[k] = np.int64(o[P_HAND, k]) + o[P_HAND + 1, k] + o[P_HAND + 2, k] + o[P_HAND + 3, k]
        if o[P_GOLD_KIND, k]:
            gold = k
    if gold < 0 or counts[gold] == 0:
        return -1
    for k in range(27):
        if k == gold or counts[k] == 0 or mk[k] == 0:
            continue
        counts[k] -= 1
        ok = swims_counts(win_table, counts, gold)
        counts[k] += 1
        if ok:
            return k
    return -1


@njit(cache=True)
def heuristic_kernel(obs, mask, shanten_table, win_table, out):
    """One decision per row: ``out[i]`` from ``obs[i]`` (99, 27) int8 and ``mask[i]`` (62,)."""
    w = np.zeros(_WS_SIZE, np.int64)
    counts = np.zeros(27, np.int64)
    for i in range(obs.shape[0]):
        mk = mask[i]
        if mk[A_ROB]:
            out[i] = A_ROB
            continue
        if mk[A_HU]:
            k = _swim_instead(obs[i], mk, win_table, counts)
            out[i] = A_HU if k < 0 else k
            continue
        o = obs[i]
        gold = _decode(o, w)
        if o[P_PHASE, PC_CLAIM]:
            a = _claim(shanten_table, o, mk, w, gold)
        else:
            a = _turn(shanten_table, o, mk, w, gold)
        if a < 0 or a >= mk.shape[0] or mk[a] == 0:  # never expected: fall back to a legal action
            a = -1
            for j in range(mk.shape[0]):
                if mk[j]:
                    a = j
                    break
        out[i] = a


class HeuristicAgent(Agent):
    """Deterministic rule-based baseline (see the module docstring)."""

    def __init__(self, name: str = "heuristic"):
        self.name = name
        self._st = get_shanten_table()
        self._wt = get_win_table()

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = as_batch(obs, mask)
        out = np.empty(obs.shape[0], dtype=np.int64)
        heuristic_kernel(obs, mask, self._st, self._wt, out)
        return out

    def __getstate__(self):  # the table is memory-mapped: reload it instead of pickling 23 MB
        d = self.__dict__.copy()
        d.pop("_st", None)
        d.pop("_wt", None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._st = get_shanten_table()
        self._wt = get_win_table()
