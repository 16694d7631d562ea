"""``heuristic:defend``: the heuristic, folding by expected value when a discard looks dangerous.

At a discard (its own turn, or after chi / peng) it scores every legal non-gold discard that
leaves at most ``slack`` shanten above the lowest (``fzmj_env/features.py``'s
:func:`~fzmj_env.features.discard_table`: the heuristic's shanten and acceptance for every
candidate) by

    EV(k) = P(nobody wins on k) * gain * win_chance(shanten_k, acceptance_k, draws) - sum_r P(r wins on k) * C_r

* ``P(r wins on k)``, the *danger*, comes from a pluggable source, an array ``win_on``
  ``(N, 3, 27)`` (relative seats 1..3, every kind): ``public`` (the default,
  :func:`public_win_on`: a readiness table by the seat's discards and melds times a wait table
  by what the kind looks like from here, both fitted on self-play with the hidden hands as
  labels, ``benchmarks/studies/defend_fit.py``), or ``belief=SPEC``, a learned belief model
  (``fzmj.agents.belief.load_belief(SPEC).predict(obs)["win_on"]``; any object with that
  ``predict`` may be passed as ``belief``).
* :func:`win_chance` is the offence a discard keeps: the chance that the s + 1 improvements
  the hand needs come within its remaining draws (drawable / 4 * ``pace``), the first at the
  discard's acceptance, the later ones at the heuristic's mean acceptance at that shanten.
* ``C_r`` is the mean value a discard win by a seat with r's visible flowers costs its discarder.

It plays the candidate of the highest EV when that beats the heuristic's own discard by more
than ``margin`` points, otherwise the heuristic's discard. Every other decision (wins, kongs,
claims, home's swimming) is the heuristic's (``agents/heuristic.py``), so with no danger it is
the heuristic move for move (``base=pretrained``: the same folding over the shipped policy's
discards, :func:`defend_over`). Only public facts enter the public danger (R12): what each seat
discarded and in which order (the last four), its melds, whether it threw a gold (then it may
never win on a discard, R9.3), the tiles in sight, and that a kind discarded by a later seat
since r's last discard is safe against r (r would have won on it, or it is 过水 for r, R9.4).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fzmj_env.checks import read_only
from fzmj_env.core.hand import get_shanten_table, get_win_table
from fzmj_env.encode import (
    F_GOLD_THROWN,
    F_MELDS,
    P_DRAWABLE,
    P_DRAWABLE_COARSE,
    P_PHASE,
    P_SEAT,
    PC_CLAIM,
    PC_TURN,
    S_DISC,
    S_FLAGS,
    S_FLOWER_COUNT,
    S_RECENT,
    SEAT_PLANES,
)
from fzmj_env.features import NO_SHANTEN, WS_SIZE, WS_UNSEEN, decode, discard_table, edge_class

from .base import Agent, AgentSpecError, as_batch, reset_agent
from .defend_tables import COST, READY, WAIT
from .heuristic import heuristic_row, legal_or_first

__all__ = ["DefendAgent", "defend_kernel", "public_win_on", "danger_cells", "parse_defend_options"]

# ---- the cells of the fitted tables (benchmarks/studies/defend_fit.py fits them) ---------------------------
READY_DISC = 18  # discards made by the seat: 0..17 (17 = 17 or more)
READY_MELDS = 5  # melds (concealed kongs included): 0..4
READY_CELLS = READY_DISC * READY_MELDS
KIND_CELLS = 2 * 4 * 3 * 2 * 2  # discarded by r, unseen 0..3, edge class, suji, near r's recent discards
COST_FLOWERS = 13


@njit(cache=True)
def danger_cells(o, w, cells):
    """Public facts about each opponent and kind, as table cells, from one observation decoded by
    ``decode`` into ``w``. ``cells`` (3, 28) int64: ``cells[r, 27]`` the readiness cell of relative
    seat r + 1 (-1: it threw a gold and may not win on a discard, R9.3); ``cells[r, k]`` the wait
    cell of kind k against it (-1: safe, a later seat discarded k since r's last discard)."""
    turn = o[P_PHASE, PC_TURN] != 0  # after a draw: the discards since r's last are the later seats' last
    for r in range(3):
        b = P_SEAT + (r + 1) * SEAT_PLANES
        nd = 0
        for t in range(4):
            for k in range(27):
                nd += o[b + S_DISC + t, k]
        melds = 0
        for j in range(5):
            melds += o[b + S_FLAGS, F_MELDS + j]
        if nd > READY_DISC - 1:
            nd = READY_DISC - 1
        if melds > READY_MELDS - 1:
            melds = READY_MELDS - 1
        cells[r, 27] = -1 if o[b + S_FLAGS, F_GOLD_THROWN] else nd * READY_MELDS + melds
        for k in range(27):
            safe = False
            if turn:
                for q in range(r + 2, 4):
                    if o[P_SEAT + q * SEAT_PLANES + S_RECENT, k]:
                        safe = True
            if safe:
                cells[r, k] = -1
                continue
            disc = 1 if o[b + S_DISC, k] else 0
            u = w[WS_UNSEEN + k]
            if u > 3:
                u = 3
            base = k - k % 9
            suji = 0
            if (k - 3 >= base and o[b + S_DISC, k - 3]) or (k + 3 <= base + 8 and o[b + S_DISC, k + 3]):
                suji = 1
            near = 0
            for i in range(4):
                for j in range(max(base, k - 2), min(base + 8, k + 2) + 1):
                    if o[b + S_RECENT + i, j]:
                        near = 1
            cells[r, k] = (((disc * 4 + u) * 3 + edge_class(k)) * 2 + suji) * 2 + near
    return 0


@njit(cache=True)
def public_win_on_batch(obs, ready_t, wait_t, out):
    """``out[i, r, k]`` = P(relative seat r + 1 may win on a discard of kind k) from public facts:
    ``ready_t[ready cell] * wait_t[wait cell]`` (0 for a safe kind, the gold, a seat that threw a gold)."""
    w = np.zeros(WS_SIZE, np.int64)
    cells = np.zeros((3, 28), np.int64)
    for i in range(obs.shape[0]):
        o = obs[i]
        gold = decode(o, w)
        danger_cells(o, w, cells)
        for r in range(3):
            rc = cells[r, 27]
            for k in range(27):
                kc = cells[r, k]
                out[i, r, k] = 0.0 if rc < 0 or kc < 0 or k == gold else ready_t[rc] * wait_t[kc]


def public_win_on(obs: np.ndarray) -> np.ndarray:
    """The public danger ``(N, 3, 27)`` float64 of a batch of observations (see :func:`danger_cells`)."""
    out = np.zeros((obs.shape[0], 3, 27), np.float64)
    public_win_on_batch(obs, READY, WAIT, out)
    return out


# ---- the decision ------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def drawable_of(o):
    """Drawable tiles from the fine (0..27) and coarse (28..81, step 2) thermometers."""
    d = 0
    for j in range(27):
        d += o[P_DRAWABLE, j]
    if d >= 27:
        for j in range(27):
            d += 2 * o[P_DRAWABLE_COARSE, j]
    return d


TYPICAL_ACCEPTANCE = np.array(
    [11.0, 21.0, 32.0, 41.0]
)  # mean acceptance of the heuristic's discards at shanten 0, 1, 2, 3+ (self-play)


@njit(cache=True)
def win_chance(s, acc, unseen, draws):
    """P(a hand at shanten ``s`` with acceptance ``acc`` wins within ``draws`` draws): it needs
    s + 1 improvements, the first at probability acc / unseen per draw, each later one (at
    shanten s - 1, ..., 0) at TYPICAL_ACCEPTANCE / unseen. A discard's own acceptance only sets
    the first step: a worse hand has more tiles that improve it, not a better chance to win."""
    if unseen <= 0 or draws <= 0 or s < 0:
        return 0.0
    need = s + 1
    if need > draws:
        return 0.0
    dist = np.zeros(need + 1)  # dist[j]: j improvements made so far
    dist[0] = 1.0
    for _ in range(draws):
        for j in range(need - 1, -1, -1):
            if j == 0:
                q = acc / unseen
            else:
                level = s - j
                q = TYPICAL_ACCEPTANCE[level if level < 3 else 3] / unseen
            if q > 1.0:
                q = 1.0
            moved = dist[j] * q
            dist[j] -= moved
            dist[j + 1] += moved
    return dist[need]


@njit(cache=True)
def _defend_discard(st, o, mk, w, gold, win_on, cost_table, params, dt, action):
    """The discard of the highest EV (module docstring), or ``action`` (the heuristic's)."""
    risk, margin, slack, gain, pace = params[0], params[1], np.int64(params[2]), params[3], params[4]
    if gold >= 0 and action == gold:
        return action
    if discard_table(st, w, gold, mk, slack, dt) == NO_SHANTEN or dt[action, 0] == NO_SHANTEN:
        return action
    draws = np.int64(drawable_of(o) * pace / 4.0 + 0.5)
    unseen = 0
    for k in range(27):
        unseen += w[WS_UNSEEN + k]
    cost = np.zeros(3)
    for r in range(3):
        f = 0
        for j in range(27):
            f += o[P_SEAT + (r + 1) * SEAT_PLANES + S_FLOWER_COUNT, j]
        cost[r] = cost_table[f if f < COST_FLOWERS else COST_FLOWERS - 1]
    # the offence of each candidate, capped by every candidate of a lower shanten: a worse hand
    # has more tiles that improve it, which must not make breaking a shape look faster
    offence = np.zeros(27)
    cap = np.full(8, 1.0)  # cap[s]: the lowest offence among candidates of shanten < s
    for k in range(27):
        if dt[k, 0] != NO_SHANTEN:
            offence[k] = win_chance(dt[k, 0], dt[k, 1], unseen, draws)
    for s in range(1, 8):
        cap[s] = cap[s - 1]
        for k in range(27):
            if dt[k, 0] == s - 1 and offence[k] < cap[s]:
                cap[s] = offence[k]
    best_k = -1
    best_ev = -1e18
    ev_action = -1e18
    for k in range(27):
        if dt[k, 0] == NO_SHANTEN:
            continue
        off = offence[k]
        sk = dt[k, 0] if dt[k, 0] < 7 else 7
        if sk >= 0 and off > cap[sk]:
            off = cap[sk]
        p_none = 1.0
        loss = 0.0
        for r in range(3):
            p = risk * win_on[r, k]
            if p > 1.0:
                p = 1.0
            loss += p * cost[r]
            p_none *= 1.0 - p
        ev = p_none * gain * off - loss
        if k == action:
            ev_action = ev
        if ev > best_ev:
            best_ev = ev
            best_k = k
    if best_k >= 0 and best_k != action and best_ev > ev_action + margin:
        return best_k
    return action


@njit(cache=True)
def defend_over(obs, mask, st, win_on, cost_table, params, base, out):
    """Another agent's decisions ``base`` with the same folding: a discard of ``base`` is replaced
    by the discard of the highest EV (``_defend_discard``); every other action is kept."""
    w = np.zeros(WS_SIZE, np.int64)
    dt = np.zeros((27, 2), np.int64)
    for i in range(obs.shape[0]):
        a = base[i]
        o = obs[i]
        if 0 <= a < 27 and not o[P_PHASE, PC_CLAIM] and mask[i, a]:
            gold = decode(o, w)
            a = _defend_discard(st, o, mask[i], w, gold, win_on[i], cost_table, params, dt, a)
        out[i] = a


@njit(cache=True)
def defend_kernel(obs, mask, st, wt, win_on, cost_table, params, out):
    """One decision per row: the heuristic's (``heuristic_row``), except that a turn's discard is
    reconsidered (``_defend_discard``). ``params`` = (risk, margin, slack, gain, pace)."""
    w = np.zeros(WS_SIZE, np.int64)
    counts = np.zeros(27, np.int8)
    dt = np.zeros((27, 2), np.int64)
    for i in range(obs.shape[0]):
        o = obs[i]
        mk = mask[i]
        a, gold, turn = heuristic_row(st, wt, o, mk, w, counts)
        if turn and 0 <= a < 27:
            a = _defend_discard(st, o, mk, w, gold, win_on[i], cost_table, params, dt, a)
        out[i] = legal_or_first(a, mk)


BASES = ("heuristic", "pretrained")  # base=heuristic is the kernel's own heuristic, move for move
DEFAULTS = {"risk": 1.0, "margin": 1.0, "slack": 0, "gain": 40.0, "pace": 1.0}  # tuned on seeds 1, 2


def parse_defend_options(spec: str, text: str) -> dict:
    """``risk=X,margin=M,slack=0|1|2,gain=G,pace=P,base=B,belief=SPEC`` (any subset, any order; belief
    last) -> options; one-line errors."""
    opts: dict = {}
    if not text:
        return opts
    # belief=SPEC takes the rest: a belief spec may itself hold ':' (belief:PATH)
    head, sep, belief = text.partition("belief=")
    if sep:
        if not belief:
            raise AgentSpecError(f"bad agent spec {spec!r}: belief= needs a belief model spec (e.g. belief=belief)")
        opts["belief"] = belief
    for item in [x for x in head.replace(":", ",").split(",") if x]:
        key, eq, val = item.partition("=")
        if key == "base":
            if val not in BASES:
                raise AgentSpecError(f"bad agent spec {spec!r}: base must be one of {', '.join(BASES)}, got {val!r}")
            opts["base"] = val
            continue
        if not eq or key not in DEFAULTS:
            raise AgentSpecError(
                f"bad agent spec {spec!r}: unknown option {item!r} (expected risk=X, margin=M, slack=0|1|2, gain=G, pace=P, base=heuristic|pretrained, belief=SPEC)"
            )
        try:
            v = float(val)
        except ValueError:
            raise AgentSpecError(f"bad agent spec {spec!r}: {key} needs a number, got {val!r}") from None
        if not np.isfinite(v) or v < 0:
            raise AgentSpecError(f"bad agent spec {spec!r}: {key} must be a finite number >= 0, got {val!r}")
        if key == "slack" and v not in (0, 1, 2):
            raise AgentSpecError(f"bad agent spec {spec!r}: slack must be 0, 1 or 2, got {val!r}")
        opts[key] = int(v) if key == "slack" else v
    return opts


class DefendAgent(Agent):
    """The heuristic with expected-value folding (module docstring); deterministic."""

    def __init__(self, name: str = "heuristic:defend", belief=None, base=None, **options):
        self.name = name
        self._base = base  # an Agent whose decisions are folded over, or None: the heuristic (in the kernel)
        unknown = set(options) - set(DEFAULTS)
        if unknown:
            raise TypeError(f"unknown options {sorted(unknown)}")
        opts = {**DEFAULTS, **options}
        self.params = np.array([opts[k] for k in DEFAULTS], np.float64)
        self.belief_spec = belief if isinstance(belief, str) else None
        self._belief = None
        if isinstance(belief, str):
            from .belief import load_belief  # torch: only for the belief danger

            self._belief = load_belief(belief)
        elif belief is not None:  # a model object: anything with predict(obs) -> {"win_on": (N, 3, 27)}
            if not callable(getattr(belief, "predict", None)):
                raise AgentSpecError(f"a belief must be a spec string or have predict(obs), got {belief!r}")
            self._belief = belief
        self._st = get_shanten_table()
        self._wt = get_win_table()

    def win_on(self, obs: np.ndarray) -> np.ndarray:
        """The danger source: (N, 3, 27) P(relative seat r + 1 may win on a discard of kind k)."""
        if self._belief is None:
            return public_win_on(obs)
        return np.ascontiguousarray(self._belief.predict(obs)["win_on"], dtype=np.float64)

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = map(read_only, as_batch(obs, mask))  # one compiled kernel, whoever owns the arrays
        out = np.empty(obs.shape[0], dtype=np.int64)
        if self._base is not None:
            base = np.ascontiguousarray(self._base.act(obs, mask), dtype=np.int64)
            defend_over(obs, mask, self._st, self.win_on(obs), COST, self.params, base, out)
            return out
        defend_kernel(obs, mask, self._st, self._wt, self.win_on(obs), COST, self.params, out)
        return out

    def reset(self, seed=None, rules=None):
        if self._base is not None:
            reset_agent(self._base, seed, rules)

    def __getstate__(self):  # tables are memory-mapped; the belief model is reloaded from its spec
        d = self.__dict__.copy()
        for key in ("_st", "_wt", "_belief"):
            d.pop(key, None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._st = get_shanten_table()
        self._wt = get_win_table()
        self._belief = None
        if self.belief_spec is not None:
            from .belief import load_belief

            self._belief = load_belief(self.belief_spec)
