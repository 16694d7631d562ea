"""``heuristic``: a rule-based player (shanten with golds wild, then tile acceptance).

Everything it knows comes from the v1 observation (``docs/observation.md``), decoded inside
one Numba kernel over the batch (:func:`heuristic_kernel`):

* own concealed tiles: planes 0–3 (threshold planes, golds included as the gold kind);
* the gold kind: plane 4;
* visible tiles of kind k: own hand + own concealed kongs (plane 7, 4 each) + every seat's open
  melds (meld planes) + every seat's discards (discard planes) − one per seat whose discard
  of k was claimed (that tile is counted in the claimer's meld too) + the gold indicator (set
  aside face up, R5). ``unseen[k] = max(0, 4 − visible[k])`` are the tiles that may still come;
* phase and claim tile: planes 95–96.

Decisions, in order (legality is the mask's business: 过水, 闲金, gold rules are all in it):

1. Always win: 抢金 (60) if offered, else hu (59) — 天胡, 三金倒 and self-draw included.
2. Discard (turn, or after chi/peng): among the legal non-gold discards, the smallest shanten
   of the remaining hand (:func:`fzmj_env.core.hand.shanten_counts`, golds as wildcards);
   among those, the largest acceptance = unseen tiles whose draw lowers the shanten; then the
   kind most seen elsewhere, then terminals before middle tiles. A gold is discarded only when
   nothing else is legal.
3. Self kong (turn): when the hand after the kong is at least as good as after the best
   discard (shanten not higher; if equal, acceptance not lower). Not when that would spoil a
   ready 平胡 (no kong yet, at most one flower, ready after the kong).
4. Claims (chi / peng / exposed kong): compare the hand after the claim (and its best discard,
   for chi and peng) with the hand if it passes; claim only when the shanten drops, or stays
   equal with a larger acceptance (kong: not smaller, it also brings a free draw). Otherwise pass.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fzmj_env.core.hand import _POW5, get_shanten_table, shanten_counts, suit_keys
from fzmj_env.core.state import A_CHI_HIGH, A_CHI_LOW, A_CHI_MID, A_HU, A_KONG, A_PASS, A_PENG, A_ROB, A_SELF_KONG
from fzmj_env.encode import (
    P_CLAIM_TILE,
    P_GOLD_KIND,
    P_HAND,
    P_OWN_CONCEALED_KONG,
    P_PHASE,
    P_SEAT,
    PC_CLAIM,
    S_CLAIMED,
    S_DISC,
    S_FLOWER_COUNT,
    S_KONG,
    S_MELD,
    SEAT_PLANES,
)

from .base import Agent, as_batch

_NONE = 1000  # "no value yet" shanten


@njit(cache=True)
def _decode(o, c, vis, unseen):
    """Own counts, visible counts and unseen counts from one observation; returns the gold kind."""
    gold = -1
    for k in range(27):
        h = np.int64(o[P_HAND, k]) + o[P_HAND + 1, k] + o[P_HAND + 2, k] + o[P_HAND + 3, k]
        c[k] = h
        v = h + 4 * np.int64(o[P_OWN_CONCEALED_KONG, k])
        for r in range(4):
            b = P_SEAT + r * SEAT_PLANES
            v += np.int64(o[b + S_MELD, k]) + o[b + S_MELD + 1, k] + o[b + S_MELD + 2, k] + o[b + S_MELD + 3, k]
            v += np.int64(o[b + S_DISC, k]) + o[b + S_DISC + 1, k] + o[b + S_DISC + 2, k] + o[b + S_DISC + 3, k]
            v -= np.int64(o[b + S_CLAIMED, k])
        if o[P_GOLD_KIND, k]:
            gold = k
            v += 1  # the indicator, face up (R5)
        vis[k] = v
        u = 4 - v
        unseen[k] = u if u > 0 else 0
    return gold


# ---- shanten on per-suit rows ----------------------------------------------------------------
# ``shanten_counts`` (core/hand.py) takes the min over the splits of the melds between the three
# suits of ``SHANTEN_TABLE[key_s, m_s, pair_s]``. A discard or a draw changes ONE suit's key, so
# the kernels below keep each suit's table row (6 x 2 values) and the min-plus "convolution" of
# the other two suits, and only look up the changed suit's row: one table read per candidate
# instead of three plus the key sums. ``tests/test_agents.py`` checks the result against
# ``shanten_counts`` on random hands.


@njit(cache=True, inline="always")
def _load_row(st, key, out):
    r = st[key]
    for m in range(6):
        out[m, 0] = r[m, 0]
        out[m, 1] = r[m, 1]


@njit(cache=True)
def _conv(a, b, out):
    """``out[m, q]`` = fewest missing slots for m melds and q pairs over the two suits a, b."""
    for m in range(6):
        v0 = _NONE
        v1 = _NONE
        for ma in range(m + 1):
            mb = m - ma
            x = a[ma, 0] + b[mb, 0]
            if x < v0:
                v0 = x
            x = a[ma, 1] + b[mb, 0]
            if x < v1:
                v1 = x
            x = a[ma, 0] + b[mb, 1]
            if x < v1:
                v1 = x
        out[m, 0] = v0
        out[m, 1] = v1


@njit(cache=True, inline="always")
def _comb(a, d, mm):
    """Fewest missing slots for ``mm`` melds + 1 pair: suit row ``a`` with the others' ``d``."""
    best = _NONE
    for ma in range(mm + 1):
        x = a[ma, 1] + d[mm - ma, 0]
        if x < best:
            best = x
        x = a[ma, 0] + d[mm - ma, 1]
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
def _suit_state(st, c, gold, keys, rows, d):
    """Per-suit keys and rows of the hand ``c``, and ``d[s]`` = the other two suits combined.
    Returns the number of tiles (golds included)."""
    k0, k1, k2 = suit_keys(c, gold)
    keys[0] = k0
    keys[1] = k1
    keys[2] = k2
    for s in range(3):
        _load_row(st, keys[s], rows[s])
    for s in range(3):
        _conv(rows[(s + 1) % 3], rows[(s + 2) % 3], d[s])
    n = 0
    for k in range(27):
        n += c[k]
    return n


@njit(cache=True)
def _acceptance(st, c, gold, unseen, s_cur, keys, rows, d, row):
    """Unseen tiles whose draw lowers the shanten ``s_cur`` of the 3n+1 hand ``c``.

    Exact, with one pruning: when ``s_cur >= 1`` a drawn kind with no non-gold tile of its
    suit within distance 2 in the hand (and not the gold kind) cannot lower the shanten. (It
    would sit in a group whose other slots are all missing; an optimal decomposition with a
    wholly missing group uses every non-gold tile, which makes the hand ready, ``s_cur = 0``.)
    """
    n = _suit_state(st, c, gold, keys, rows, d)
    mm = (n + 1) // 3
    if mm > 5:
        mm = 5
    g = c[gold]
    acc = 0
    for j in range(27):
        u = unseen[j]
        if u <= 0 or c[j] >= 4:
            continue
        s = j // 9
        if j == gold:
            if _sh(_comb(rows[s], d[s], mm), g + 1) < s_cur:
                acc += u
            continue
        if s_cur >= 1 and not _near(c, gold, j):
            continue
        _load_row(st, keys[s] + _POW5[j % 9], row)
        if _sh(_comb(row, d[s], mm), g) < s_cur:
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
def _near(c, gold, j):
    """Whether the hand holds a non-gold tile of j's suit within distance 2 of kind j."""
    r = j % 9
    lo = j - 2 if r >= 2 else j - r
    hi = j + 2 if r <= 6 else j - r + 8
    for i in range(lo, hi + 1):
        if c[i] > 0 and i != gold:
            return True
    return False


@njit(cache=True)
def _discard_acceptance(st, c, gold, unseen, s_cur, k, mm, keys, rows, d, disc_row, plus, plus_ok, d2, row):
    """``_acceptance`` of the hand ``c`` minus one tile of kind ``k`` (already removed from
    ``c`` by the caller), reusing the full hand's suit state: the suit of ``k`` has row
    ``disc_row``; a draw in another suit uses the cached row ``plus[j]`` of the full hand's
    key plus j (the same for every discard outside that suit)."""
    s = k // 9
    for s2 in range(3):
        if s2 != s:
            _conv(disc_row, rows[3 - s - s2], d2[s2])
    g = c[gold]
    acc = 0
    for j in range(27):
        u = unseen[j]
        if u <= 0 or c[j] >= 4:
            continue
        sj = j // 9
        if j == gold:
            if _sh(_comb(disc_row, d[s], mm), g + 1) < s_cur:
                acc += u
            continue
        if s_cur >= 1 and not _near(c, gold, j):
            continue
        if sj == s:
            if j == k:
                v = _comb(rows[s], d[s], mm)
            else:
                _load_row(st, keys[s] - _POW5[k % 9] + _POW5[j % 9], row)
                v = _comb(row, d[s], mm)
        else:
            if not plus_ok[j]:
                _load_row(st, keys[sj] + _POW5[j % 9], plus[j])
                plus_ok[j] = True
            v = _comb(plus[j], d2[sj], mm)
        if _sh(v, g) < s_cur:
            acc += u
    return acc


@njit(cache=True)
def _best_discard(st, c, gold, vis, unseen, mk, use_mask, ws):
    """Best discard of the 3n+2 hand ``c``: returns the kind (-1 if none) and writes
    ``res[0]`` = shanten after it, ``res[1]`` = acceptance after it."""
    sh, res, keys, rows, d, row, disc_rows, plus, plus_ok, d2 = ws
    n = _suit_state(st, c, gold, keys, rows, d)
    mm = (n - 1) // 3
    if mm > 5:
        mm = 5
    g = c[gold]
    best_s = _NONE
    for k in range(27):
        sh[k] = _NONE
        plus_ok[k] = False
        if c[k] == 0 or k == gold or (use_mask and mk[k] == 0):
            continue
        s = k // 9
        _load_row(st, keys[s] - _POW5[k % 9], disc_rows[k])
        v = _sh(_comb(disc_rows[k], d[s], mm), g)
        sh[k] = v
        if v < best_s:
            best_s = v
    if best_s == _NONE:  # only golds can go
        if gold >= 0 and c[gold] > 0 and (not use_mask or mk[gold] != 0):
            c[gold] -= 1
            v = shanten_counts(st, c, gold)
            res[0] = v
            res[1] = _acceptance(st, c, gold, unseen, v, keys, rows, d, row)
            c[gold] += 1
            return gold
        res[0] = _NONE
        res[1] = 0
        return -1
    best_k = -1
    best_a = -1
    best_tb = -1
    for k in range(27):
        if sh[k] != best_s:
            continue
        c[k] -= 1
        a = _discard_acceptance(st, c, gold, unseen, best_s, k, mm, keys, rows, d, disc_rows[k], plus, plus_ok, d2, row)
        c[k] += 1
        tb = (vis[k] - c[k]) * 4 + _edge(k)  # seen elsewhere (safer, less useful), then terminals
        if a > best_a or (a == best_a and tb > best_tb):
            best_a = a
            best_tb = tb
            best_k = k
    res[0] = best_s
    res[1] = best_a
    return best_k


@njit(cache=True)
def _pinghu_alive(o):
    """No kong yet and at most one flower: a 平胡 special (R11.3) is still possible."""
    flowers = 0
    kongs = 0
    for k in range(27):
        flowers += o[P_SEAT + S_FLOWER_COUNT, k]
        kongs += o[P_SEAT + S_KONG, k] + o[P_OWN_CONCEALED_KONG, k]
    return flowers <= 1 and kongs == 0


@njit(cache=True)
def _turn(st, o, mk, c, gold, vis, unseen, ws):
    res = ws[1]
    keys, rows, d, row = ws[2], ws[3], ws[4], ws[5]
    k_d = _best_discard(st, c, gold, vis, unseen, mk, True, ws)
    s_d = res[0]
    a_d = res[1]
    action = k_d
    best_s = s_d
    best_a = a_d
    for k in range(27):
        if mk[A_SELF_KONG + k] == 0:
            continue
        n = 4 if c[k] >= 4 else 1  # concealed kong, or the 4th tile added to a peng
        c[k] -= n
        s = shanten_counts(st, c, gold)
        a = _acceptance(st, c, gold, unseen, s, keys, rows, d, row)
        c[k] += n
        if s <= 0 and _pinghu_alive(o):
            continue
        if s < best_s or (s == best_s and a >= best_a):
            action = A_SELF_KONG + k
            best_s = s
            best_a = a
    return action


@njit(cache=True)
def _claim(st, o, mk, c, gold, vis, unseen, ws):
    res = ws[1]
    keys, rows, d, row = ws[2], ws[3], ws[4], ws[5]
    if mk[A_CHI_LOW] == 0 and mk[A_CHI_MID] == 0 and mk[A_CHI_HIGH] == 0 and mk[A_PENG] == 0 and mk[A_KONG] == 0:
        return A_PASS
    t = -1
    for k in range(27):
        if o[P_CLAIM_TILE, k]:
            t = k
    if t < 0:
        return A_PASS
    s0 = shanten_counts(st, c, gold)
    a0 = _acceptance(st, c, gold, unseen, s0, keys, rows, d, row)
    action = A_PASS
    best_s = s0
    best_a = a0
    # exposed kong: three from the hand, then a replacement draw (no discard now)
    if mk[A_KONG]:
        c[t] -= 3
        s = shanten_counts(st, c, gold)
        a = _acceptance(st, c, gold, unseen, s, keys, rows, d, row)
        c[t] += 3
        if (s < s0 or (s == s0 and a >= a0)) and not (s <= 0 and _pinghu_alive(o)):
            action = A_KONG
            best_s = s
            best_a = a
    # peng and chi: the two tiles leave the hand, then the best discard
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
        c[x] -= 1
        c[y] -= 1
        k = _best_discard(st, c, gold, vis, unseen, mk, False, ws)
        c[x] += 1
        c[y] += 1
        if k < 0:
            continue
        s = res[0]
        a = res[1]
        if s < best_s or (s == best_s and a > best_a):
            action = act
            best_s = s
            best_a = a
    return action


@njit(cache=True)
def heuristic_kernel(obs, mask, shanten_table, out):
    """One decision per row: ``out[i]`` from ``obs[i]`` (97, 27) int8 and ``mask[i]`` (62,)."""
    c = np.zeros(27, np.int64)
    vis = np.zeros(27, np.int64)
    unseen = np.zeros(27, np.int64)
    ws = (
        np.zeros(27, np.int64),  # sh: shanten after each discard
        np.zeros(2, np.int64),  # res: (shanten, acceptance) of the best discard
        np.zeros(3, np.int64),  # keys: per-suit keys of the current hand
        np.zeros((3, 6, 2), np.int64),  # rows: their shanten-table rows
        np.zeros((3, 6, 2), np.int64),  # d: the other two suits combined, per suit
        np.zeros((6, 2), np.int64),  # row: scratch row
        np.zeros((27, 6, 2), np.int64),  # disc_rows: the suit's row after discarding kind k
        np.zeros((27, 6, 2), np.int64),  # plus: the suit's row after drawing kind j
        np.zeros(27, np.bool_),  # plus_ok: plus[j] is filled
        np.zeros((3, 6, 2), np.int64),  # d2: other suits combined after a discard
    )
    for i in range(obs.shape[0]):
        o = obs[i]
        mk = mask[i]
        if mk[A_ROB]:
            out[i] = A_ROB
            continue
        if mk[A_HU]:
            out[i] = A_HU
            continue
        gold = _decode(o, c, vis, unseen)
        if o[P_PHASE, PC_CLAIM]:
            a = _claim(shanten_table, o, mk, c, gold, vis, unseen, ws)
        else:
            a = _turn(shanten_table, o, mk, c, gold, vis, unseen, ws)
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

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = as_batch(obs, mask)
        out = np.empty(obs.shape[0], dtype=np.int64)
        heuristic_kernel(obs, mask, self._st, out)
        return out

    def __getstate__(self):  # the table is memory-mapped: reload it instead of pickling 23 MB
        d = self.__dict__.copy()
        d.pop("_st", None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._st = get_shanten_table()
