"""``search``: rollout policy improvement over a blueprint agent, from one seat's view.

Spec grammar (``make_agent``, ``fzmj-eval --agents``)::

    search[:BLUEPRINT][:key=value[,key=value...]]

``BLUEPRINT`` is any agent spec without a colon (``heuristic``, the default; ``random``;
``pretrained``); keys:

* ``worlds=M`` (64) worlds drawn from the seat's view per searched decision;
* ``top=K`` (3) candidates: the blueprint's own choice, then up to K-1 other legal actions
  (claim windows: every legal answer; turns: the discards and kongs leaving the lowest shanten);
* ``z=Z`` (2.0) deviate from the blueprint only when a candidate's mean gain over the
  blueprint's choice, on the same worlds, exceeds Z paired standard errors;
* ``where=all|claims|turns`` (all) which decisions are searched;
* ``late=D`` (999) search only when at most D tiles are drawable (the late hand);
* ``belief=F`` (0: off) belief filter: draw F x M worlds and keep the M that best explain the
  other seats' last discards under the blueprint (after SPARTA's belief weighting);
* ``sir=F`` (0: off) worlds from the learned belief (``fzmj/agents/belief.py``, ``docs/belief.md``):
  draw F x M uniform worlds and keep M of them drawn with probability proportional to their
  importance weight under the belief (sampling-importance-resampling; ``fzmj_env/resample.py``);
* ``model=NAME`` (``belief``) the belief model of ``sir``: ``belief`` (shipped) or a checkpoint
  path without a colon;
* ``margin=P`` (0: off) search only the close decisions: those where the blueprint's own
  probability of its choice is below P (a policy blueprint: ``pretrained``, ``ppo:PATH``);
* ``like=F`` (0: off) worlds weighted by what the other seats did, with the blueprint as their
  model: draw F x M worlds, weigh each by the blueprint's probability of every other seat's last
  discard from that world's hand, and keep M of them drawn in proportion to that weight;
* ``wins=0|1`` (0) whether a win the blueprint declares may be searched (and declined): off by
  default, since uniform worlds overrate waiting (measured in docs/baselines.md);
* ``seed=S`` (0) the stream of the worlds (reseeded by ``reset(seed)``).

Example: ``search:heuristic:worlds=128,z=2.5,where=claims``.

How one decision is searched: the observation is turned back into a table state that encodes
to the same observation (the seat's information only: ``state_from_obs``; when that fails the
blueprint's action is played), M worlds are drawn from it (``fzmj_env/resample.py``) and loaded
into K x M tables of one ``VectorEnv``: every candidate on the same M worlds (common random
numbers); the candidate is played, then every seat is played by the blueprint's batch ``act``
to the end of the hand, all tables stepped together in Numba. The score is the searching seat's
hand points. The searched decisions of one ``act`` batch are rolled out together, in one
``VectorEnv``, so the blueprint acts once per step for all of them (a policy's forward pass
costs little more for a thousand rows than for forty); each decision's worlds, seeds and choice
are the same as when searched alone.
"""

from __future__ import annotations

import functools
import itertools
import time

import numpy as np
from numba import njit

from fzmj_env.core import engine, state
from fzmj_env.core.hand import get_shanten_table, get_win_table, shanten_counts, wait_mask_counts
from fzmj_env.core.scoring import flower_sets_of
from fzmj_env.encode import (
    F_CLAIM_FROM,
    F_CONC_KONGS,
    F_DEALER,
    F_GOLD_THROWN,
    F_MELDS,
    NUM_CHANNELS,
    P_CLAIM_TILE,
    P_DRAWABLE,
    P_GOLD_KIND,
    P_HAND,
    P_HANDS_LEFT,
    P_LAST_DRAW,
    P_OWN_CONCEALED_KONG,
    P_OWN_PASSED,
    P_PHASE,
    P_PRESET,
    P_SEAT,
    P_STREAK,
    P_SWIM,
    PC_CLAIM,
    PC_DISCARD,
    PC_HEAVENLY,
    PC_ROB_WINDOW,
    PC_TURN,
    PRC_LOSS_CAP,
    S_CLAIMED,
    S_DISC,
    S_FLAGS,
    S_FLOWERS,
    S_HONOR_FLOWERS,
    S_KONG,
    S_MELD,
    S_PENG,
    S_RECENT,
    S_TAKEN,
    SEAT_PLANES,
    encode_table,
    encode_v1,
)
from fzmj_env.rules import Rules, available_rules, load_rules

from .base import Agent, AgentSpecError, as_batch, reset_agent
from .heuristic import HeuristicAgent

__all__ = ["SearchAgent", "parse_search_spec", "state_from_obs"]

DEFAULTS = {
    "worlds": 64,
    "top": 3,
    "z": 2.0,
    "where": "all",
    "late": 999,
    "belief": 0,
    "sir": 0,
    "model": "belief",
    "margin": 0.0,
    "like": 0,
    "wins": 0,
    "seed": 0,
}
_OPT_OF = {
    state.A_HU: state.OPT_HU,
    state.A_PENG: state.OPT_PENG,
    state.A_KONG: state.OPT_KONG,
    state.A_CHI_LOW: state.OPT_CHI_LOW,
    state.A_CHI_MID: state.OPT_CHI_MID,
    state.A_CHI_HIGH: state.OPT_CHI_HIGH,
    state.A_ROB: state.OPT_ROB,
}


def plane_scheme(obs) -> tuple[int, bool]:
    """The scheme (``SCHEME_NAMES`` index) and loss-cap flag the v2 preset plane shows."""
    return int(np.argmax(obs[P_PRESET, :5])), bool(obs[P_PRESET, PRC_LOSS_CAP])


def plane_scheme_of(rules: Rules) -> tuple[int, bool]:
    """The scheme and loss-cap flag a table of ``rules`` shows on the preset plane."""
    p = rules.params
    return int(p[state.R_SCHEME - state.R_RESERVE_BASE]), bool(p[state.R_LOSS_CAP - state.R_RESERVE_BASE])


@functools.cache
def _shipped_rules(name: str) -> Rules:
    return load_rules(name)


@functools.cache
def _shipped(names: tuple[str, ...], scheme: int, cap: bool) -> tuple[str, ...]:
    return tuple(n for n in names if plane_scheme_of(_shipped_rules(n)) == (scheme, cap))


def rules_of(obs, rules=None) -> Rules | None:
    """The rules a decision is searched under: ``rules`` (what the caller plays: the evaluator
    passes its preset to ``reset``), checked against the observation's preset plane; without
    them, the one shipped preset the plane shows (None: none does). The plane shows the scheme,
    not the numbers (a copy of a preset with another base shows the same plane), so two shipped
    presets showing it is an error, never a guess."""
    if rules is not None:
        rules = load_rules(rules)
        if plane_scheme(obs) != plane_scheme_of(rules):
            raise ValueError(
                f"search: playing under rules {rules.name!r} (scheme {rules.scheme}) but the observation "
                f"shows scheme {state.SCHEME_NAMES[plane_scheme(obs)[0]]}"
            )
        return rules
    names = _shipped(tuple(available_rules()), *plane_scheme(obs))
    if len(names) > 1:
        raise ValueError(
            f"search: presets {' and '.join(names)} show the same scheme; pass the rules "
            "(reset(seed, rules=...), SearchAgent(rules=...), or the evaluator's --rules)"
        )
    return _shipped_rules(names[0]) if names else None


def _seat_melds(o, s, own_kongs):
    """The melds of relative seat ``s`` from its block: (type, kind, taken, from) rows."""
    b = P_SEAT + s * SEAT_PLANES
    mc = o[b + S_MELD : b + S_MELD + 4].sum(0).astype(np.int64)
    peng, kong, taken = o[b + S_PENG].astype(np.int64), o[b + S_KONG].astype(np.int64), o[b + S_TAKEN]
    rows = []
    for k in np.flatnonzero(peng):
        rows.append((state.MELD_PENG, k, k, (s + 1) % 4))
    for k in np.flatnonzero(kong):
        rows.append((state.MELD_EXPOSED_KONG, k, k, (s + 1) % 4))
    chi = mc - 3 * peng - 4 * kong
    lows = []
    for k in range(27):  # runs, lowest tile first (the decomposition of run counts is unique)
        while chi[k] > 0:
            if k % 9 > 6 or chi[k + 1] <= 0 or chi[k + 2] <= 0:
                return None
            chi[k : k + 3] -= 1
            lows.append(k)
    # each chi's taken tile: a choice whose union with the pengs' and kongs' is the taken plane
    want = set(np.flatnonzero(taken).tolist())
    fixed = set(np.flatnonzero(peng | kong).tolist())
    choices = [[x for x in (k, k + 1, k + 2) if x in want] or [k] for k in lows]
    pick = next((c for c in itertools.product(*choices) if fixed | set(c) == want), None)
    if pick is None:
        return None
    rows += [(state.MELD_CHI, k, t, (s + 3) % 4) for k, t in zip(lows, pick, strict=True)]
    n_conc = int(o[b + S_FLAGS, F_CONC_KONGS : F_CONC_KONGS + 4].sum())
    kinds = list(np.flatnonzero(own_kongs)) if s == 0 else [0] * n_conc
    if len(kinds) != n_conc:
        return None
    rows += [(state.MELD_CONCEALED_KONG, k, -1, -1) for k in kinds]
    if len(rows) != int(o[b + S_FLAGS, F_MELDS : F_MELDS + 5].sum()) or len(rows) > state.MAX_MELDS:
        return None
    return rows


def _seat_discards(v, o, s):
    """Discards of relative seat ``s``: the last four in order, the others in kind order; one
    discard marked claimed per kind flagged. Returns the number marked."""
    b = P_SEAT + s * SEAT_PLANES
    dc = o[b + S_DISC : b + S_DISC + 4].sum(0).astype(np.int64)
    recent = [int(np.argmax(o[b + S_RECENT + i])) for i in range(4) if o[b + S_RECENT + i].any()]
    rest = dc.copy()
    for k in recent:
        rest[k] -= 1
    order = list(np.repeat(np.arange(27), np.maximum(rest, 0))) + recent[::-1]
    claimed = o[b + S_CLAIMED].astype(bool).copy()
    v.n_disc[s] = len(order)
    marked = 0
    for i, k in enumerate(order):
        v.disc[s, i] = k
        v.disc_claimed[s, i] = claimed[k]
        marked += int(claimed[k])
        claimed[k] = False
    dcb = v.disc_counts[s].view(np.uint8)  # byte k of the 4 words is kind k (little-endian)
    dcb[:27] = dc
    v.claimed_kinds[s].view(np.uint8)[:27] = o[b + S_CLAIMED]
    return marked


def _claims_add_up(v) -> bool:
    """Mark more discards claimed where one seat had two discards of a kind taken (the plane
    shows a flag per kind): the claimed discards of each kind must match the melds' taken tiles."""
    need = np.zeros(27, np.int64)
    for s in range(4):
        for j in range(v.n_melds[s]):
            if v.meld[s, j, 0] != state.MELD_CONCEALED_KONG:
                need[v.meld[s, j, 2]] += 1
    nd = v.n_disc
    have = np.zeros(27, np.int64)
    for s in range(4):
        np.add.at(have, v.disc[s, : nd[s]], v.disc_claimed[s, : nd[s]])
    for k in np.flatnonzero(need != have):
        for s in range(4):
            if not v.claimed_kinds[s].view(np.uint8)[k]:
                continue
            for i in range(nd[s]):
                if have[k] < need[k] and v.disc[s, i] == k and not v.disc_claimed[s, i]:
                    v.disc_claimed[s, i] = 1
                    have[k] += 1
        if have[k] != need[k]:
            return False
    return True


def _fill_seat(v, o, s):
    """Flowers, flags and swim of relative seat ``s``."""
    b = P_SEAT + s * SEAT_PLANES
    fl = o[b + S_FLOWERS, :15].astype(np.int64)
    fl[:7] += o[b + S_HONOR_FLOWERS, :7] + o[b + S_HONOR_FLOWERS, 7:14] + o[b + S_FLOWERS, 15:22]
    v.flowers[s] = fl
    v.gold_thrown[s] = o[b + S_FLAGS, F_GOLD_THROWN]
    v.swim[s] = o[P_SWIM, 3 * s : 3 * s + 3].sum()


def state_from_obs(obs: np.ndarray, mask: np.ndarray, wt=None, rules=None) -> np.ndarray | None:
    """A one-table state buffer that encodes to ``obs`` for seat 0 (the observing seat, seats
    relative to it) with legal mask ``mask``, built from the observation alone; the other seats'
    concealed tiles, concealed kong kinds and the wall are placeholders (a world resamples them).
    None when the observation cannot be inverted (the round trip fails), so the caller can fall
    back. ``rules``: the preset played (:func:`rules_of`). (One pass over the planes, by encode.py.)"""
    wt = get_win_table() if wt is None else wt
    o = obs
    rules = rules_of(o, rules)
    ph = o[P_PHASE]
    if rules is None or not (ph[PC_TURN] or ph[PC_DISCARD] or ph[PC_CLAIM]):
        return None
    buf = state.new_state(1)
    engine.set_rules(buf, 0, rules.params)
    v = state.numpy_view(buf, 0)
    m = v.m
    gold = int(np.argmax(o[P_GOLD_KIND]))
    m[state.GOLD] = gold
    v.hand[0] = o[P_HAND : P_HAND + 4].sum(0)
    v.passed[0] = o[P_OWN_PASSED]
    exp_kongs = conc_kongs = 0
    dealer = claim_from = -1
    for s in range(4):
        rows = _seat_melds(o, s, o[P_OWN_CONCEALED_KONG])
        if rows is None:
            return None
        for j, row in enumerate(rows):
            v.meld[s, j] = row
            mt = row[0]
            exp_kongs += mt == state.MELD_EXPOSED_KONG
            conc_kongs += mt == state.MELD_CONCEALED_KONG
        v.n_melds[s] = len(rows)
        b = P_SEAT + s * SEAT_PLANES
        v.meld_counts[s].view(np.uint8)[:27] = o[b + S_MELD : b + S_MELD + 4].sum(0)
        _seat_discards(v, o, s)
        _fill_seat(v, o, s)
        dealer = s if o[b + S_FLAGS, F_DEALER] else dealer
        claim_from = s if o[b + S_FLAGS, F_CLAIM_FROM] else claim_from
        if s:
            v.hand[s, 0] = 16 - 3 * len(rows)  # size only: a world redraws it
    if dealer < 0 or not _claims_add_up(v):
        return None
    m[state.DEALER] = dealer
    m[state.STREAK] = o[P_STREAK].sum()
    m[state.HAND_NO], m[state.HANDS_PER_GAME] = 0, 1
    m[state.EXP_KONGS], m[state.CONC_KONGS] = exp_kongs, conc_kongs
    m[state.FLOWER_SETS] = sum(flower_sets_of(buf[0], s) for s in range(4))
    m[state.FINAL_LEFT] = -1
    m[state.ROB_WINDOW] = ph[PC_ROB_WINDOW]
    m[state.HEAVENLY_OK] = ph[PC_HEAVENLY]
    m[state.DEALER_DISCARDED] = v.n_disc[dealer] > 0
    m[state.HAND_ACTIVE] = 1
    m[state.WINNER] = -1
    m[state.CLAIM_TILE] = m[state.CLAIM_FROM] = m[state.LAST_DISCARD_SEAT] = -1
    m[state.LAST_DRAW] = int(np.argmax(o[P_LAST_DRAW])) if o[P_LAST_DRAW].any() else -1
    v.choice[:] = state.A_PASS
    if ph[PC_CLAIM]:
        m[state.PHASE], m[state.CUR] = state.PH_CLAIM, claim_from
        m[state.CLAIM_TILE], m[state.CLAIM_FROM] = int(np.argmax(o[P_CLAIM_TILE])), claim_from
        m[state.N_ASK], m[state.ASK_POS] = 1, 0
        v.opts[0] = sum(bit for a, bit in _OPT_OF.items() if mask[a])
        wait_mask_counts(wt, v.hand[0], gold, v.waits[0])
    else:
        m[state.PHASE] = state.PH_TURN if ph[PC_TURN] else state.PH_DISCARD
        m[state.CUR] = 0
        last = m[state.LAST_DRAW]
        if last >= 0:
            v.hand[0, last] -= 1
            wait_mask_counts(wt, v.hand[0], gold, v.waits[0])
            v.hand[0, last] += 1
    # the wall: only its size matters (a world redraws it); the unseen count fixes it
    from fzmj_env.resample import unseen_counts

    unseen = np.zeros(42, np.int64)
    hidden_kongs = unseen_counts(buf[0], 0, unseen)
    live = int(unseen.sum()) - int(v.hand[1:].sum()) - 4 * hidden_kongs
    if hidden_kongs < 0 or live < 1:
        return None
    m[state.HEAD], m[state.TAIL] = 143 - live, 142
    return buf if _round_trip(buf, o, mask, wt) else None


def _round_trip(buf, obs, mask, wt) -> bool:
    """The rebuilt state shows the seat exactly ``obs`` (the matches-left plane aside) and ``mask``."""
    out = np.zeros_like(obs)
    encode_table(buf, 0, 0, out)
    out[P_HANDS_LEFT] = obs[P_HANDS_LEFT]
    got = np.zeros(state.NUM_ACTIONS, np.int8)
    seat = engine.table_mask(buf, 0, wt, got)
    return seat == 0 and np.array_equal(out, obs) and np.array_equal(got, mask)


def parse_search_spec(spec: str) -> tuple[str, dict]:
    """``search[:BLUEPRINT][:key=value,...]`` -> (blueprint spec, options); AgentSpecError (one
    line) for anything else."""
    parts = spec.split(":")
    if parts[0] != "search" or len(parts) > 3:
        raise AgentSpecError(f"bad agent spec {spec!r}: expected search[:BLUEPRINT][:key=value,...]")
    blueprint, opts = "heuristic", dict(DEFAULTS)
    rest = parts[1:]
    if rest and "=" not in rest[0]:
        blueprint = rest.pop(0) or "heuristic"
    if blueprint == "search":
        raise AgentSpecError(f"bad agent spec {spec!r}: the blueprint cannot be a search")
    for item in rest[0].split(",") if rest else []:
        key, eq, val = item.partition("=")
        if not eq or key not in DEFAULTS:
            raise AgentSpecError(f"bad agent spec {spec!r}: unknown option {item!r} (keys: {', '.join(DEFAULTS)})")
        try:
            opts[key] = type(DEFAULTS[key])(val)
        except ValueError:
            raise AgentSpecError(f"bad agent spec {spec!r}: {key} needs a {type(DEFAULTS[key]).__name__}") from None
    return blueprint, check_search_opts(opts, f"bad agent spec {spec!r}: ")


def check_search_opts(opts: dict, prefix: str = "") -> dict:
    """The options with their ranges checked: AgentSpecError (one line) otherwise."""
    checks = (
        (opts["worlds"] >= 2, "worlds must be >= 2"),
        (opts["top"] >= 2, "top must be >= 2"),
        (opts["z"] >= 0, "z must be >= 0"),
        (opts["where"] in ("all", "claims", "turns"), "where must be all, claims or turns"),
        (opts["late"] >= 0, "late must be >= 0"),
        (0 <= opts["belief"] <= 64, "belief must be 0..64"),
        (0 <= opts["sir"] <= 64, "sir must be 0..64"),
        (0 <= opts["margin"] <= 1, "margin must be in 0..1"),
        (0 <= opts["like"] <= 64, "like must be 0..64"),
        (
            sum(opts[k] > 1 for k in ("belief", "sir", "like")) <= 1,
            "belief, sir and like are three world filters: use one",
        ),
        (isinstance(opts["model"], str) and opts["model"] != "", "model must name a belief model"),
        (opts["wins"] in (0, 1), "wins must be 0 or 1"),
        (0 <= opts["seed"] < 2**64, "seed must be in 0..2**64-1"),
    )
    for ok, msg in checks:
        if not ok:
            raise AgentSpecError(prefix + msg)
    return opts


class SearchAgent(Agent):
    """Rollouts of a blueprint on worlds drawn from the seat's view (see the module docstring).

    ``stats`` counts decisions seen, searched, deviations, fallbacks (observation not inverted),
    rollouts and the time spent searching, over the agent's life (``reset`` keeps them)."""

    def __init__(self, blueprint: Agent | None = None, name: str | None = None, rules=None, **opts):
        """``blueprint``: the agent the search improves on (the heuristic when None); a spec
        string goes through ``make_agent("search:BLUEPRINT")``. ``rules``: the preset the games
        are played under (a name, a YAML path or a ``Rules``; ``reset(seed, rules)`` sets it too,
        as the evaluator does); None: the one shipped preset the observation shows."""
        unknown = set(opts) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"unknown search options {sorted(unknown)} (keys: {', '.join(DEFAULTS)})")
        self.opts = check_search_opts({**DEFAULTS, **opts})
        if blueprint is None:
            blueprint = HeuristicAgent()
        if not isinstance(blueprint, Agent):
            raise TypeError(
                f"the blueprint must be an Agent (make_agent('search:SPEC') takes a spec), got {blueprint!r}"
            )
        if self.opts["margin"] > 0 and not hasattr(blueprint, "action_probs"):
            raise AgentSpecError(f"margin needs a policy blueprint (pretrained, ppo:PATH), not {blueprint.name!r}")
        self.blueprint = blueprint
        self.rules = None if rules is None else load_rules(rules)
        self.name = name or f"search:{self.blueprint.name}"
        self._wt = get_win_table()
        self._st = get_shanten_table()
        self._envs: dict = {}
        self.belief_model = None
        if self.opts["sir"] > 1:  # loaded (and checked) before anything plays
            from .belief import load_belief

            m = self.opts["model"]
            self.belief_model = load_belief(m if m == "belief" or m.startswith("belief:") else f"belief:{m}")
        self.reset(self.opts["seed"])

    def __getstate__(self):  # memory-mapped tables and the rollout envs are rebuilt, not pickled
        d = self.__dict__.copy()
        for k in ("_st", "_wt", "_envs"):
            d.pop(k, None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._st, self._wt, self._envs = get_shanten_table(), get_win_table(), {}

    def reset(self, seed=None, rules=None):
        """Reseed; ``rules`` (when given): the preset of the games that follow."""
        self._seed = int(self.opts["seed"] if seed is None else seed)
        self._n = 0
        if rules is not None:
            self.rules = load_rules(rules)
        reset_agent(self.blueprint, seed, rules)
        if not hasattr(self, "stats"):  # counters over the agent's life (not per game)
            self.stats = {"decisions": 0, "searched": 0, "deviated": 0, "fallback": 0, "search_s": 0.0, "rollouts": 0}

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = as_batch(obs, mask)
        base = np.asarray(self.blueprint.act(obs, mask), dtype=np.int64)
        out = base.copy()
        rows = self._rows_to_search(obs, mask, base)
        if "_search" in vars(self):  # a diagnostic's own per-decision search (benchmarks/studies/paired_search.py)
            for i in rows:
                out[i] = self._search(obs[i], mask[i], int(base[i]))
            return out
        t0 = time.perf_counter()
        jobs = {i: job for i in rows if (job := self._prepare(obs[i], mask[i], int(base[i]))) is not None}
        rules = {i: self.rules_for(obs[i]) for i in jobs}
        for key in {(r.name, r.digest) for r in rules.values()}:
            group = [i for i in jobs if (rules[i].name, rules[i].digest) == key]
            tables = sum(len(jobs[i][0]) * len(jobs[i][2]) for i in group)
            env = self._rollout_env(rules[group[0]], tables)
            points = rollout_many(env, self.blueprint, [jobs[i] for i in group])
            for i, pts in zip(group, points, strict=True):
                out[i] = self._choose(jobs[i][0], pts, jobs[i][2])
        if jobs:
            self.stats["searched"] += len(jobs)
            self.stats["search_s"] += time.perf_counter() - t0
        return out

    def _rows_to_search(self, obs, mask, base) -> list[int]:
        """The rows of a batch to search: the kind of decision asked for (``where``, ``late``), not
        a win the blueprint declares (unless ``wins``), and, with ``margin``, a close one."""
        rows = []
        for i in range(obs.shape[0]):
            self.stats["decisions"] += 1
            if self._wanted(obs[i], mask[i]) and (self.opts["wins"] or base[i] not in (state.A_HU, state.A_ROB)):
                rows.append(i)
        if rows and self.opts["margin"] > 0:  # the blueprint's own probability of its choice
            probs, _ = self.blueprint.action_probs(obs[rows], mask[rows])
            own = probs[np.arange(len(rows)), base[rows]]
            rows = [i for i, p in zip(rows, own, strict=True) if p < self.opts["margin"]]
        return rows

    def _wanted(self, o, mk) -> bool:
        if mk.sum() < 2:
            return False
        claim = bool(o[P_PHASE, PC_CLAIM])
        where = self.opts["where"]
        if (where == "claims" and not claim) or (where == "turns" and claim):
            return False
        return int(o[P_DRAWABLE].sum()) <= self.opts["late"] if self.opts["late"] < 27 else True

    def candidates(self, o, mk, base) -> list[int]:
        """The blueprint's choice first, then up to top-1 other legal actions: every claim
        answer; at a turn, the discards and self kongs leaving the lowest shanten."""
        legal = [int(a) for a in np.flatnonzero(mk) if a != base]
        if not o[P_PHASE, PC_CLAIM]:
            hand = o[P_HAND : P_HAND + 4].sum(0).astype(np.int8)
            gold = int(np.argmax(o[P_GOLD_KIND]))

            def after(a):
                h = hand.copy()
                if a < 27:
                    h[a] -= 1
                elif state.A_SELF_KONG <= a < state.A_SELF_KONG + 27:
                    k = a - state.A_SELF_KONG
                    h[k] -= 4 if h[k] >= 4 else 1
                else:
                    return -9  # a win: always a candidate
                return int(shanten_counts(self._st, h, gold))

            legal.sort(key=lambda a: (after(a), a))
        return [base] + legal[: self.opts["top"] - 1]

    def rules_for(self, o) -> Rules | None:
        """The rules the decision of observation ``o`` is searched under (:func:`rules_of`)."""
        return rules_of(o, self.rules)

    def _env(self, rules: Rules, n: int):
        from fzmj_env.vector import VectorEnv

        key = (rules.name, rules.digest, n)
        if key not in self._envs:
            env = VectorEnv(n, rules=rules, auto_reset=False)
            env.reset()
            self._envs[key] = env
        return self._envs[key]

    def _search(self, o, mk, base) -> int:
        """One decision searched alone (what ``act`` does for a batch of them)."""
        job = self._prepare(o, mk, base)
        if job is None:
            return base
        t0 = time.perf_counter()
        pts = rollout_many(self._rollout_env(self.rules_for(o), len(job[0]) * len(job[2])), self.blueprint, [job])[0]
        self.stats["searched"] += 1
        self.stats["search_s"] += time.perf_counter() - t0
        return self._choose(job[0], pts, job[2])

    def _rollout_env(self, rules: Rules, n: int):
        """A rollout env of at least ``n`` tables (sizes rounded up to a power of two, so a few
        envs serve every batch)."""
        return self._env(rules, 1 << max(4, (n - 1).bit_length()))

    def _prepare(self, o, mk, base):
        """``(candidates, state, world seeds)`` of one decision to search, or None when there is
        one candidate or the observation cannot be turned back into a state (the blueprint plays)."""
        cands = self.candidates(o, mk, base)
        buf = state_from_obs(o, mk, self._wt, self.rules) if len(cands) >= 2 else None
        if buf is None:
            self.stats["fallback"] += len(cands) >= 2
            return None
        M = self.opts["worlds"]
        self._n += 1
        seeds = engine_seeds(self._seed, self._n, M * max(1, self.opts["belief"], self.opts["sir"], self.opts["like"]))
        if self.opts["belief"] > 1:
            seeds = self._filter(o, buf, seeds, M)
        elif self.opts["sir"] > 1:
            seeds = self._sir(o, buf, seeds, M)
        elif self.opts["like"] > 1:
            seeds = self._likely(o, buf, seeds, M)
        self.stats["rollouts"] += len(cands) * M
        return cands, buf, seeds

    def _choose(self, cands, pts, seeds) -> int:
        """The candidate with the best mean hand points on the same M worlds (``pts``: (K, M)),
        if its paired gain over the blueprint's choice clears z standard errors; else the
        blueprint's choice."""
        diff = pts[1:] - pts[0]  # (K-1, M) paired gains over the blueprint's choice
        mean = diff.mean(1)
        # worlds kept by resampling (sir, like) repeat: M copies of fewer distinct worlds are fewer samples
        se = diff.std(1, ddof=1) / np.sqrt(len(np.unique(seeds)))
        ok = mean > self.opts["z"] * se
        if not ok.any():
            return cands[0]
        self.stats["deviated"] += 1
        return cands[1 + int(np.argmax(np.where(ok, mean, -np.inf)))]

    def _resampled(self, seeds, log_w, M) -> np.ndarray:
        """M of ``seeds`` drawn with replacement in proportion to ``exp(log_w)``."""
        w = np.exp(log_w - log_w.max()) if np.isfinite(log_w).any() else np.ones(len(log_w))
        rng = np.random.default_rng(np.random.SeedSequence([self._seed & 0xFFFFFFFF, self._seed >> 32, self._n, 7]))
        return seeds[rng.choice(len(seeds), size=M, p=w / w.sum())]

    def _sir(self, o, buf, seeds, M) -> np.ndarray:
        """M of ``seeds`` drawn with replacement, each with probability proportional to its
        world's importance weight under the belief model (``sir`` option)."""
        env = self._env(self.rules_for(o), len(seeds))
        tables = np.arange(len(seeds))
        env.load_worlds(tables, buf, 0, 0, seeds, belief=belief_factors(self.belief_model, o, buf))
        return self._resampled(seeds, env.world_log_weights, M)

    def _filter(self, o, buf, seeds, M) -> np.ndarray:
        """The M of ``seeds`` whose worlds best explain the other seats' last discards under the
        blueprint (belief filter, after SPARTA): a world scores one point per other seat whose
        world hand plus its last discard makes the blueprint discard that tile."""
        env = self._env(self.rules_for(o), len(seeds))
        tables = np.arange(len(seeds))
        env.load_worlds(tables, buf, 0, 0, seeds)
        score = explained_discards(env.buf, len(seeds), self.blueprint, self._wt)
        keep = np.argsort(-score, kind="stable")[:M]
        return seeds[keep]

    def _likely(self, o, buf, seeds, M) -> np.ndarray:
        """M of ``seeds`` drawn in proportion to how likely the blueprint, as the other seats'
        model, finds their last discards in each world (``like`` option)."""
        env = self._env(self.rules_for(o), len(seeds))
        env.load_worlds(np.arange(len(seeds)), buf, 0, 0, seeds)
        return self._resampled(seeds, discard_log_likelihood(env.buf, len(seeds), self.blueprint, self._wt), M)


def belief_factors(model, o, buf) -> np.ndarray:
    """``(3, 27, 5)`` weights that make the uniform worlds of seat 0 of ``buf`` follow the belief
    ``model``'s per-kind marginals for observation ``o`` (belief / uniform prior; floored so a
    confident zero never rules a world out)."""
    from fzmj_env.resample import prior_count_dist

    dist = model.predict(o[None])["concealed_dist"][0].astype(np.float64)
    prior = prior_count_dist(buf, 0, 0)
    return np.where(prior > 0, np.maximum(dist, 1e-3) / np.maximum(prior, 1e-12), 1.0)


def last_discard_rows(buf, n, wt):
    """Seats 1-3 of tables 0..n-1 of ``buf`` (worlds of seat 0) just before their last discard,
    each holding its world hand plus that tile: ``(obs, masks, tile, rows)``, row ``3t+s-1``,
    ``tile`` the discard (-1: none yet), ``rows`` the rows that have one."""
    obs = np.zeros((3 * n, NUM_CHANNELS, 27), np.int8)
    masks = np.zeros((3 * n, state.NUM_ACTIONS), np.int8)
    tile = np.full(3 * n, -1, np.int64)
    size = state.STATE_DTYPE.itemsize
    scratch = state.new_state(1)
    _before_last_discards(
        buf.view(np.uint8).reshape(len(buf), size),
        n,
        scratch,
        scratch.view(np.uint8).reshape(1, size),
        wt,
        obs,
        masks,
        tile,
    )
    return obs, masks, tile, np.flatnonzero(tile >= 0)


def explained_discards(buf, n, blueprint, wt) -> np.ndarray:
    """For tables 0..n-1 of ``buf`` (worlds of seat 0): how many of seats 1-3 the blueprint
    would have discarded their last discard for, holding their world hand plus that tile."""
    obs, masks, tile, rows = last_discard_rows(buf, n, wt)
    score = np.zeros(n, np.int64)
    if len(rows):
        hit = np.asarray(blueprint.act(obs[rows], masks[rows])) == tile[rows]
        np.add.at(score, rows // 3, hit.astype(np.int64))
    return score


def discard_log_likelihood(buf, n, blueprint, wt, floor: float = 1e-3) -> np.ndarray:
    """For tables 0..n-1 of ``buf`` (worlds of seat 0): the log-probability, under the blueprint
    as every other seat's model, of seats 1-3's last discards from their world hands (each
    probability floored at ``floor``, so one odd discard never rules a world out). A blueprint
    without ``action_probs`` counts 1 for its own choice, ``floor`` otherwise."""
    obs, masks, tile, rows = last_discard_rows(buf, n, wt)
    logp = np.zeros(n)
    if len(rows):
        if hasattr(blueprint, "action_probs"):
            p = blueprint.action_probs(obs[rows], masks[rows])[0][np.arange(len(rows)), tile[rows]]
        else:
            p = (np.asarray(blueprint.act(obs[rows], masks[rows])) == tile[rows]).astype(np.float64)
        np.add.at(logp, rows // 3, np.log(np.maximum(p, floor)))
    return logp


@njit(cache=True)
def _before_last_discards(src_bytes, n, scratch, scratch_bytes, wt, obs, masks, tile):
    """Row 3t+s-1: seat s of table t just before its last discard (its hand plus the tile,
    discard only), observed by s; ``tile`` gets the discard (-1: no discard yet)."""
    for t in range(n):
        for s in range(1, 4):
            scratch_bytes[0, :] = src_bytes[t, :]
            tb = scratch[0]
            nd = tb.n_disc[s]
            if nd == 0:
                continue
            d = tb.disc[s, nd - 1]
            tb.hand[s, d] += 1
            tb.m[state.PHASE] = state.PH_DISCARD
            tb.m[state.CUR] = s
            tb.m[state.LAST_DRAW] = -1
            r = 3 * t + s - 1
            engine.legal_mask(tb, wt, masks[r])
            encode_v1(tb, s, obs[r])
            tile[r] = d


def engine_seeds(seed: int, n: int, M: int) -> np.ndarray:
    """M world seeds of the n-th searched decision of an agent seeded ``seed``."""
    ss = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, n])
    return ss.generate_state(M, np.uint64)


def rollout_many(env, blueprint, jobs) -> list[np.ndarray]:
    """:func:`rollout` of several decisions at once: ``jobs`` are ``(candidates, state, seeds)``;
    each gets K x M tables of ``env`` (every candidate on its own M worlds), and all of them are
    played by the blueprint together, one batch ``act`` per step. Returns each job's ``(K, M)``."""
    spans, off = [], 0
    for cands, buf, seeds in jobs:
        K, M = len(cands), len(seeds)
        env.load_worlds(np.arange(off, off + K * M), buf, 0, 0, np.tile(seeds, K))
        spans.append((off, K, M))
        off += K * M
    tables = np.arange(off)
    first = np.concatenate([np.repeat(np.asarray(c, np.int64), len(sd)) for c, _, sd in jobs])
    obs, mask, seat, *_ = env.step_tables(tables, first)
    live = tables[seat[tables] >= 0]
    while len(live):
        acts = np.asarray(blueprint.act(obs[live], mask[live]), dtype=np.int64)
        obs, mask, seat, *_ = env.step_tables(live, acts)
        live = live[seat[live] >= 0]
    pts = env.buf["points"][:off, 0].astype(np.float64)
    return [pts[o : o + K * M].reshape(K, M) for o, K, M in spans]
