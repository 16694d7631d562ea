"""``heuristic``: a rule-based player (shanten with golds wild, then tile acceptance).

Its shanten and acceptance kernels are ``fzmj_env/features.py``'s (shared with the
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
from numba import njit, prange

from fzmj_env.checks import read_only
from fzmj_env.core.hand import get_shanten_table, get_win_table, is_golden_pair_counts, swims_counts
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
    S_FLOWER_COUNT,
    S_KONG,
)
from fzmj_env.features import (  # the shanten / acceptance / claim kernels, shared with the feature planes
    CLAIM_CHI_LOW,
    CLAIM_KONG,
    CLAIM_PENG,
    PARALLEL_MIN_ROWS,
    WS_HAND,
    WS_RESULT,
    WS_SIZE,
    acceptance,
    best_discard,
    claim_gain,
    claim_outcome,
    decode,
    parallel_chunks,
    shanten,
    without_tiles,
)

from .base import Agent, as_batch

__all__ = ["HeuristicAgent", "PatientAgent", "heuristic_kernel", "heuristic_row", "patient_kernel", "PATIENT_GOALS"]
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


@njit(cache=True, inline="always")  # one caller (heuristic_kernel): not compiled on its own
def _turn(st, o, mk, w, gold):
    """Own turn (after a draw, or after chi/peng): the best discard, or a self kong."""
    action = best_discard(st, w, gold, mk, True)
    best_s = w[WS_RESULT]
    best_a = w[WS_RESULT + 1]
    for k in range(27):
        if mk[A_SELF_KONG + k] == 0:
            continue
        without_tiles(st, w, gold, k, 4 if w[WS_HAND + k] >= 4 else 1)  # concealed kong, or a peng's 4th tile
        s = w[WS_RESULT]
        a = w[WS_RESULT + 1]
        if s <= 0 and _pinghu_alive(o):
            continue
        if s < best_s or (s == best_s and a >= best_a):
            action = A_SELF_KONG + k
            best_s = s
            best_a = a
    return action


@njit(cache=True, inline="always")  # one caller (heuristic_kernel): not compiled on its own
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
    s0 = shanten(st, w, gold)
    a0 = acceptance(st, w, gold, s0)
    action = A_PASS
    best_s = s0
    best_a = a0
    # the exposed kong first (compared with passing), then peng and chi (with the best so far)
    for act in (A_KONG, A_PENG, A_CHI_LOW, A_CHI_MID, A_CHI_HIGH):
        col = CLAIM_KONG if act == A_KONG else CLAIM_PENG if act == A_PENG else CLAIM_CHI_LOW + act - A_CHI_LOW
        if mk[act] == 0 or not claim_outcome(st, w, gold, t, col):
            continue
        s = w[WS_RESULT]
        a = w[WS_RESULT + 1]
        if col == CLAIM_KONG and s <= 0 and _pinghu_alive(o):
            continue
        if claim_gain(s, a, best_s, best_a, col) > 0:
            action = act
            best_s = s
            best_a = a
    return action


SWIM_MIN_DRAWABLE = 8  # enter swimming instead of winning only while at least this many draws remain


@njit(cache=True, inline="always")  # one caller (heuristic_kernel): not compiled on its own
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


# compiled into each kernel that calls it (heuristic_kernel, heuristic_kernel_parallel, defend_kernel)
@njit(cache=True, inline="always")
def heuristic_row(st, wt, o, mk, w, counts):
    """The heuristic's decision for one row: observation ``o`` (99, 27), mask ``mk`` (62,); ``w``
    and ``counts`` are scratch (``WS_SIZE`` int64, 27 int8). Returns ``(action, gold, turn)``:
    ``turn`` is true when the action is the turn's choice (``_turn``), and then ``w`` holds the row
    decoded (``decode``) and ``gold`` its gold kind, for a caller that reconsiders the discard
    (``defend_kernel``). Pass the action through :func:`legal_or_first`."""
    if mk[A_ROB]:
        return A_ROB, -1, False
    if mk[A_HU]:
        k = _swim_instead(o, mk, wt, counts)
        return (A_HU if k < 0 else k), -1, False
    gold = decode(o, w)
    if o[P_PHASE, PC_CLAIM]:
        return _claim(st, o, mk, w, gold), gold, False
    return _turn(st, o, mk, w, gold), gold, True


@njit(cache=True, inline="always")
def legal_or_first(a, mk):
    """``a`` if ``mk`` allows it, else the first legal action (never expected: a safety net)."""
    if 0 <= a < mk.shape[0] and mk[a] != 0:
        return a
    for j in range(mk.shape[0]):
        if mk[j]:
            return j
    return -1


@njit(cache=True, nogil=True)
def heuristic_kernel(obs, mask, shanten_table, win_table, out):
    """One decision per row: ``out[i]`` from ``obs[i]`` (99, 27) int8 and ``mask[i]`` (62,)."""
    w = np.zeros(WS_SIZE, np.int64)
    counts = np.zeros(27, np.int8)  # int8 like the engine's hand rows: one compiled swims_counts for both
    for i in range(obs.shape[0]):
        a, _, _ = heuristic_row(shanten_table, win_table, obs[i], mask[i], w, counts)
        out[i] = legal_or_first(a, mask[i])


@njit(cache=True, parallel=True, nogil=True)
def heuristic_kernel_parallel(obs, mask, shanten_table, win_table, out, n):
    """:func:`heuristic_kernel` in ``n`` contiguous chunks of rows, one per thread (the same
    decisions: rows are independent). Compiled only where a caller asks for threads."""
    rows = obs.shape[0]
    chunk = (rows + n - 1) // n
    for c in prange(n):
        w = np.zeros(WS_SIZE, np.int64)
        counts = np.zeros(27, np.int8)
        for i in range(c * chunk, min(rows, (c + 1) * chunk)):
            a, _, _ = heuristic_row(shanten_table, win_table, obs[i], mask[i], w, counts)
            out[i] = legal_or_first(a, mask[i])


class HeuristicAgent(Agent):
    """Deterministic rule-based baseline (see the module docstring). ``threads`` > 1 splits a
    large batch over that many Numba threads (the trainer's opponents on a many-core host); the
    decisions are the same."""

    def __init__(self, name: str = "heuristic", threads: int = 1):
        self.name = name
        self.threads = threads
        self._st = get_shanten_table()
        self._wt = get_win_table()

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = map(read_only, as_batch(obs, mask))  # one compiled kernel, whoever owns the arrays
        out = np.empty(obs.shape[0], dtype=np.int64)
        n = parallel_chunks(obs.shape[0], self.threads)
        if n > 1:
            heuristic_kernel_parallel(obs, mask, self._st, self._wt, out, n)
        else:
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


def warm_heuristic() -> None:
    """``fzmj-warmup heuristic``: the one-thread batch kernel (every heuristic player, the
    trainer's opponents and teacher), on a made-up batch: no engine kernel compiles with it."""
    from fzmj_env.warmup import synthetic_batch

    HeuristicAgent().act(*synthetic_batch())


def warm_threads() -> None:
    """``fzmj-warmup threads`` (the ``fzmj.warmup`` entry point in pyproject.toml): compile the
    threaded batch kernel, which the trainer's opponents use on a many-core host."""
    from fzmj_env.vector import VectorEnv

    obs, mask, _ = VectorEnv(2 * PARALLEL_MIN_ROWS, seed=0).reset()
    HeuristicAgent(threads=2).act(obs, mask)


# ==== Patient-style variants (``heuristic:patient[:goal=...]``) ===================================
# Baselines that decline a win to wait for a bigger one, the opponents a value-aware agent must
# also beat (issue "Targets"). Everything else is the heuristic's decision.
PATIENT_GOALS = ("jinque", "selfdraw", "golds")
PATIENT_MIN_DRAWABLE = 8  # decline only while at least this many tiles are drawable: late, take any win


@njit(cache=True)
def _declines(o, mk, win_table, counts, goal):
    """Whether the patient variant ``goal`` (index into PATIENT_GOALS) declines the hu offered in
    ``mk``: jinque (0) a win that is not 金雀 while holding exactly two golds; selfdraw (1) every win
    on a discard; golds (2) a win on a discard while holding a gold. Never 抢金 or 天胡, never late."""
    if o[P_PHASE, PC_HEAVENLY] or not o[P_DRAWABLE, PATIENT_MIN_DRAWABLE - 1]:
        return False
    gold = -1
    for k in range(27):
        counts[k] = np.int64(o[P_HAND, k]) + o[P_HAND + 1, k] + o[P_HAND + 2, k] + o[P_HAND + 3, k]
        if o[P_GOLD_KIND, k]:
            gold = k
    if gold < 0:
        return False
    on_discard = o[P_PHASE, PC_CLAIM] != 0
    if goal == 1:
        return on_discard
    if goal == 2:
        return on_discard and counts[gold] > 0
    if counts[gold] != 2:
        return False
    if on_discard:
        for k in range(27):
            if o[P_CLAIM_TILE, k]:
                counts[k] += 1
    return not is_golden_pair_counts(win_table, counts, gold)


@njit(cache=True)
def patient_kernel(obs, mask, shanten_table, win_table, goal, out):
    """The heuristic's decisions (``heuristic_kernel``), except that a win ``_declines`` rejects is
    answered as if it were not offered: the claim (or pass) in a claim window, the turn otherwise."""
    heuristic_kernel(obs, mask, shanten_table, win_table, out)
    w = np.zeros(WS_SIZE, np.int64)
    counts = np.zeros(27, np.int64)
    for i in range(obs.shape[0]):
        mk = mask[i]
        if out[i] != A_HU or mk[A_ROB] or not _declines(obs[i], mk, win_table, counts, goal):
            continue
        o = obs[i]
        gold = decode(o, w)
        a = _claim(shanten_table, o, mk, w, gold) if o[P_PHASE, PC_CLAIM] else _turn(shanten_table, o, mk, w, gold)
        if 0 <= a < mk.shape[0] and mk[a] and a != A_HU:
            out[i] = a


class PatientAgent(HeuristicAgent):
    """The heuristic, declining some wins to wait for bigger ones (``goal`` in PATIENT_GOALS)."""

    def __init__(self, goal: str = "jinque", name: str | None = None):
        super().__init__(name or f"heuristic:patient:goal={goal}")
        if goal not in PATIENT_GOALS:
            raise ValueError(f"unknown patient goal {goal!r}: expected one of {', '.join(PATIENT_GOALS)}")
        self.goal = goal

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = map(read_only, as_batch(obs, mask))
        out = np.empty(obs.shape[0], dtype=np.int64)
        patient_kernel(obs, mask, self._st, self._wt, PATIENT_GOALS.index(self.goal), out)
        return out
