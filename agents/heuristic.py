"""``heuristic``: a rule-based player (shanten with golds wild, then tile acceptance).

Its shanten and acceptance kernels are ``fzmj_env/core/features.py``'s (shared with the
hand-feature planes). Everything it knows comes from the observation (v1 planes; v2 preset planes
for the preset rules) (``docs/observation.md``), decoded inside
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
   of the remaining hand (golds as wildcards: the engine's shanten table, combined over the
   suits exactly as :func:`fzmj_env.core.hand.shanten_counts` does, one suit at a time);
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

from fzmj_env.core.features import (  # the shanten / acceptance kernels, shared with the feature planes
    _C,
    _RES,
    _WS_SIZE,
    _acceptance,
    _best_discard,
    _decode,
    _shanten,
)
from fzmj_env.core.hand import get_shanten_table
from fzmj_env.core.state import A_CHI_HIGH, A_CHI_LOW, A_CHI_MID, A_HU, A_KONG, A_PASS, A_PENG, A_ROB, A_SELF_KONG
from fzmj_env.encode import (
    P_CLAIM_TILE,
    P_OWN_CONCEALED_KONG,
    P_PHASE,
    P_SEAT,
    PC_CLAIM,
    S_FLOWER_COUNT,
    S_KONG,
)

from .base import Agent, as_batch

__all__ = ["HeuristicAgent", "heuristic_kernel"]
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


@njit(cache=True)
def heuristic_kernel(obs, mask, shanten_table, out):
    """One decision per row: ``out[i]`` from ``obs[i]`` (99, 27) int8 and ``mask[i]`` (62,)."""
    w = np.zeros(_WS_SIZE, np.int64)
    for i in range(obs.shape[0]):
        mk = mask[i]
        if mk[A_ROB]:
            out[i] = A_ROB
            continue
        if mk[A_HU]:
            out[i] = A_HU
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
