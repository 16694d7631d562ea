"""Duplicate-format evaluation of four agents: the library function and the ``fzmj-eval`` CLI.

    fzmj-eval --agents heuristic random random random --hands 10000 --seed 0 --workers 2 --out results.json

**Duplicate format.** A *wall* is one shuffled deal (wall order, gold, first dealer): the seed
of wall ``w`` is ``game_seed(seed, w, 0)``. Every wall is played 4 times, once per *seat
rotation* ``r = 0..3``: in rotation r the agent of slot i (its position in ``--agents``; with
fewer than 4 agents the last one fills the remaining slots, so ``A B`` is A against three B)
sits at seat ``(i + r) % 4``. So each slot plays every seat of every wall, holding the same
tiles another slot held in another rotation, and the luck of the deal cancels out of the
comparison. ``--hands`` is rounded up to a multiple of 4 (``hands = 4 x walls``); each game
is a single hand.

**Statistics.** An agent is a distinct spec (or Agent object); an agent in several slots is
pooled over them. Its *score* is its points per hand. ``mean_score`` is the mean over walls
of its mean score on that wall (4 rotations x its slots), and ``ci95`` the Student-t 95%
interval of that mean over the walls (walls are independent; the hands within a wall are
not). Rates are per hand it played: ``win_rate``, ``self_draw_rate`` (wins not on a discard:
self-draw, 三金倒, 天胡 and 抢金, all paid by the three others), ``deal_in_rate`` (放胡: it
discarded the winning tile), ``draw_rate`` (hands nobody won). ``mean_win_value`` is the mean
V (R11.4) of its wins and ``specials`` counts each special its wins qualified for.
``per_slot`` gives the main figures per slot as well (four copies of one deterministic agent
score exactly 0 in every slot: each wall is then the same game in all 4 rotations).
With two or more distinct agents: a pairwise table (mean score difference per hand, its CI
over walls, and how often the row agent out-scores the column agent in a hand) and OpenSkill
(Plackett-Luce) ratings, updated hand by hand in wall order with the agents' hand scores.

**Paired evaluation** (``--paired REF``, ``evaluate(..., paired=REF)``): every wall and seat
rotation is played a second time with REF in slot 0 instead of the first agent, against the same
opponents in the same seats (``--agents X Y --paired REF``: X against three Y, then REF against
the same three Y; the other slots' agents keep their reset seeds). ``paired`` in the results
holds the mean per-hand difference of slot 0's score (X − REF) over the ``hands`` paired hands
and its Student-t 95% interval over walls: the luck of the deal and of the opponents' seats
cancels hand by hand, so it is far narrower than the difference of two separate evaluations.
A REF equal to the first agent plays the same games: exactly 0, interval [0, 0].

**Determinism.** The walls are split into fixed batches of ``batch // 4`` walls (``batch``
tables at once); every agent is ``reset(seed)`` at the start of each batch with a seed
derived from (seed, batch index, agent). The results depend on (agents, hands, seed,
batch, rules) only, never on ``workers``.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from fzmj_env.core.engine import GAMMA, mix64
from fzmj_env.core.state import SPECIAL_NAMES, WIN_TYPE_NAMES, WT_DISCARD
from fzmj_env.rules import DEFAULT_RULES
from fzmj_env.validate import MAX_TABLES, OneLineParser, check_int, check_memory, check_output_file, check_seed, run_cli

from . import SPEC_HELP, Agent, AgentSpecError, make_agent, reset_agent
from .tables import interval as _ci
from .tables import md_table, pct
from .tables import num as _f

__all__ = [
    "evaluate",
    "main",
    "markdown",
    "plot",
    "EvalConfigError",
    "wall_seeds",
    "mean_ci95",
    "t_quantile_975",
    "DEFAULT_BATCH",
]


class EvalConfigError(ValueError):
    """A bad evaluation setting (number of agents, hands, workers, seed, batch, rules)."""


DEFAULT_BATCH = 512  # tables stepped together = 128 walls x 4 rotations
RESULT_VERSION = 1
_MAX_STEPS = 5000  # a hand takes < 300 decisions; more means an agent or engine bug

# Student t 0.975 quantiles, df = 1..30
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------
def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (exact to 4 decimals
    up to 30, then the Cornish-Fisher expansion, error < 1e-5)."""
    if df < 1:
        raise ValueError("df must be >= 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_ci95(x) -> tuple[float, list[float] | None]:
    """Mean of ``x`` and its two-sided 95% Student-t interval ``[low, high]`` (None if n < 2)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if n == 0:
        return float("nan"), None
    m = float(x.mean())
    if n < 2:
        return m, None
    half = t_quantile_975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return m, [m - half, m + half]


# ---------------------------------------------------------------------------------------------
# seeds and jobs
# ---------------------------------------------------------------------------------------------
def _mix64(z: int) -> int:
    """The engine's SplitMix64 finalizer ``mix64`` on the low 64 bits of ``z``."""
    return int(mix64(np.uint64(z & (2**64 - 1))))


def wall_seeds(seed: int, walls: int, start: int = 0) -> np.ndarray:
    """Seeds (uint64) of walls ``start .. start + walls - 1``: ``game_seed(seed, w, 0)``."""
    from fzmj_env.vector import game_seed

    return np.array([int(game_seed(np.uint64(seed), w, 0)) for w in range(start, start + walls)], dtype=np.uint64)


def _agent_seed(seed: int, batch: int, agent: int, own_seed=0) -> int:
    """Seed of distinct agent ``agent`` in batch ``batch``: a function of the evaluation seed, and
    of the agent's own seed (``random:SEED``) when it has one other than 0, so that ``random:1``
    and ``random:2`` play different games while ``random`` (= ``random:0``) keeps its streams."""
    g = int(GAMMA)
    z = _mix64(_mix64(seed + g * (batch + 1)) ^ (g * (agent + 1) + 0x632BE59BD9B4E019))
    if isinstance(own_seed, (int, np.integer)) and not isinstance(own_seed, bool) and own_seed:
        z = _mix64(z ^ _mix64(int(own_seed) % 2**64))
    return z >> 1


@dataclass
class _Setup:
    """What a worker needs to play batches (inherited by forked workers, pickled for spawned ones)."""

    slot_agent: np.ndarray  # (4,) distinct agent index of each slot
    agents: list  # distinct agents (objects) or their specs (built lazily in a worker)
    rules: object  # fzmj_env.rules.Rules
    seed: int
    batch: int
    walls: int
    log: bool = False  # keep every table's decisions (for --save-records)


_WORKER_SETUP: _Setup | None = None


def _worker_init(setup: _Setup) -> None:
    global _WORKER_SETUP
    agents = [a if isinstance(a, Agent) else make_agent(a) for a in setup.agents]
    torch = sys.modules.get("torch")  # one thread per worker process (only if an agent uses torch)
    if torch is not None:
        torch.set_num_threads(1)
    _WORKER_SETUP = _Setup(setup.slot_agent, agents, setup.rules, setup.seed, setup.batch, setup.walls, setup.log)


def _worker_play(b: int):
    return (*_play_batch(_WORKER_SETUP, b), _pop_faults(_WORKER_SETUP.agents))


def _pop_faults(agents) -> list:
    """Each agent's fault counts since the last call (agents that report them: ``exec:``), else None."""
    return [a.pop_faults() if callable(getattr(a, "pop_faults", None)) else None for a in agents]


def _add_faults(total: list, part: list) -> None:
    for i, f in enumerate(part):
        if f is not None:
            total[i] = {k: (total[i] or {}).get(k, 0) + v for k, v in f.items()}


def _play_batch(setup: _Setup, b: int, progress=None):
    """Play batch ``b`` (walls ``b * wpb ...``): returns (results (jobs, RESULT_WIDTH) int32, decisions, log).

    ``log`` (only with ``setup.log``): (acting seats, actions), both (steps, jobs) int8, seat -1
    where the job's game was over; otherwise None.
    """
    from fzmj_env.vector import RESULT_WIDTH, VectorEnv

    wpb = setup.batch // 4
    w0 = b * wpb
    nw = min(wpb, setup.walls - w0)
    n = 4 * nw
    seeds = np.repeat(wall_seeds(setup.seed, nw, w0), 4)  # job j = 4 * wall + rotation
    rot = np.tile(np.arange(4), nw)
    for i, agent in enumerate(setup.agents):
        reset_agent(agent, _agent_seed(setup.seed, b, i, getattr(agent, "seed", 0)))
    env = VectorEnv(n, rules=setup.rules, hands_per_game=1, auto_reset=False)
    obs, mask, seat = env.reset(seeds=seeds)
    results = np.zeros((n, RESULT_WIDTH), dtype=np.int32)
    active = np.ones(n, dtype=bool)
    actions = np.zeros(n, dtype=np.int64)
    slot_agent = setup.slot_agent
    decisions = 0
    steps = 0
    log_seats: list = []
    log_actions: list = []
    while True:
        owner = np.where(active, slot_agent[(seat - rot) % 4], -1)
        actions[~active] = 0  # finished tables (auto_reset=False) ignore their action
        for i, agent in enumerate(setup.agents):
            sel = np.flatnonzero(owner == i)
            if sel.size == 0:
                continue
            if sel.size == n:  # the whole batch (one agent, no idle table): no copy
                a = agent.act(obs, mask)
            else:
                a = agent.act(obs[sel], mask[sel])
            a = np.asarray(a).reshape(-1)
            if a.shape != (sel.size,):
                raise RuntimeError(f"agent {_label(agent)} returned {a.shape[0]} actions for {sel.size} observations")
            a = a.astype(np.int64, copy=False)
            ok = (a >= 0) & (a < mask.shape[1])
            ok[ok] = mask[sel[ok], a[ok]] == 1
            if not ok.all():
                t = int(sel[np.flatnonzero(~ok)[0]])
                bad = int(a[np.flatnonzero(~ok)[0]])
                raise RuntimeError(
                    f"agent {_label(agent)} chose illegal action {bad} (legal: {np.flatnonzero(mask[t]).tolist()})"
                )
            actions[sel] = a
            decisions += sel.size
        if setup.log:
            log_seats.append(np.where(active, seat, -1).astype(np.int8))
            log_actions.append(actions.astype(np.int8))
        obs, mask, seat, _, done, info = env.step(actions)
        fin = active & info["hand_over"]
        if fin.any():
            results[fin] = info["results"][fin]
        active &= ~done
        steps += 1
        if not active.any():
            break
        if progress is not None:
            progress(n - int(active.sum()))
        if steps > _MAX_STEPS:
            raise RuntimeError(f"batch {b}: games still running after {_MAX_STEPS} decisions")
    if progress is not None:
        progress(n)
    log = (np.stack(log_seats), np.stack(log_actions)) if setup.log else None
    return results, decisions, log


def _keep(keeper, setup: _Setup, b: int, results: np.ndarray, log) -> None:
    """Offer batch ``b``'s hands to the record keeper (``--save-records``)."""
    if keeper is None:
        return
    wpb = setup.batch // 4
    nw = min(wpb, setup.walls - b * wpb)
    keeper.add_batch(b * wpb, np.repeat(wall_seeds(setup.seed, nw, b * wpb), 4), results, log)


def _label(agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


# ---------------------------------------------------------------------------------------------
# aggregation
# ---------------------------------------------------------------------------------------------
def _slot_view(results: np.ndarray, walls: int) -> dict:
    """The job results by (wall, rotation), with seats turned into slots: ``points`` [w, r, slot],
    ``win_slot`` / ``disc_slot`` [w, r] (-1: none), ``wtype``, ``specials``, ``value`` [w, r]."""
    from fzmj_env.vector import RESULT_POINTS, RESULT_WIDTH

    R = results.reshape(walls, 4, RESULT_WIDTH)  # [wall, rotation]
    rot = np.arange(4)[None, :, None]
    seat_of = (np.arange(4)[None, None, :] + rot) % 4  # [1, r, i]: seat of slot i in rotation r
    pts_seat = R[:, :, RESULT_POINTS:RESULT_WIDTH].astype(np.int64)
    winner = R[:, :, 0].astype(np.int64)
    disc = R[:, :, 2].astype(np.int64)
    return {
        "points": np.take_along_axis(pts_seat, np.broadcast_to(seat_of, (walls, 4, 4)), axis=2),
        "win_slot": np.where(winner >= 0, (winner - rot[:, :, 0]) % 4, -1),
        "disc_slot": np.where(disc >= 0, (disc - rot[:, :, 0]) % 4, -1),
        "wtype": R[:, :, 1],
        "specials": R[:, :, 5],
        "value": R[:, :, 6],
        "drawn": winner < 0,
    }


def _agent_stats(v: dict, S: np.ndarray) -> dict:
    """The statistics of the agent holding slots ``S``."""
    pts, wtype = v["points"][:, :, S], v["wtype"]
    hand_seats = pts.shape[0] * 4 * len(S)
    mean, ci = mean_ci95(pts.mean(axis=(1, 2)))
    won = np.isin(v["win_slot"], S)
    n_win = int(won.sum())
    return {
        "slots": [int(s) for s in S],
        "hands": int(hand_seats),
        "mean_score": mean,
        "ci95": ci,
        "score_std": float(pts.std()),
        "win_rate": n_win / hand_seats,
        "self_draw_rate": int((won & (wtype != WT_DISCARD)).sum()) / hand_seats,
        "deal_in_rate": int(np.isin(v["disc_slot"], S).sum()) / hand_seats,
        "draw_rate": float(v["drawn"].mean()),
        "wins": n_win,
        "mean_win_value": float(v["value"][won].mean()) if n_win else None,
        "win_types": {nm: int((wtype[won] == i).sum()) for i, nm in enumerate(WIN_TYPE_NAMES)},
        "specials": {nm: int(((v["specials"][won] >> i) & 1).sum()) for i, nm in enumerate(SPECIAL_NAMES)},
    }


def _slot_stats(v: dict, i: int, name: str) -> dict:
    mean, ci = mean_ci95(v["points"][:, :, i].mean(axis=1))
    won = v["win_slot"] == i
    return {
        "slot": i,
        "agent": name,
        "mean_score": mean,
        "ci95": ci,
        "win_rate": float(won.mean()),
        "self_draw_rate": float((won & (v["wtype"] != WT_DISCARD)).mean()),
        "deal_in_rate": float((v["disc_slot"] == i).mean()),
    }


def _pair_stats(v: dict, per_wall: dict, slot_agent: np.ndarray, names: list[str], a: int, b: int) -> dict:
    """Row agent ``a`` against ``b``: the mean score difference per hand, its interval over walls,
    and how often a out-scores b in a hand (ties count half)."""
    diff, ci = mean_ci95(per_wall[names[a]] - per_wall[names[b]])
    pa = v["points"][:, :, np.flatnonzero(slot_agent == a)][..., :, None]
    pb = v["points"][:, :, np.flatnonzero(slot_agent == b)][..., None, :]
    beats = float((pa > pb).mean() + 0.5 * (pa == pb).mean())
    return {"a": names[a], "b": names[b], "mean_diff": diff, "ci95": ci, "a_outscores_b": beats}


def _aggregate(results: np.ndarray, walls: int, slot_agent: np.ndarray, names: list[str]) -> tuple[dict, dict]:
    """Statistics dict and the raw per-slot arrays (for plots) from the job results."""
    v = _slot_view(results, walls)
    pts = v["points"]
    agents = {name: _agent_stats(v, np.flatnonzero(slot_agent == a)) for a, name in enumerate(names)}
    per_wall = {name: pts[:, :, slot_agent == a].mean(axis=(1, 2)) for a, name in enumerate(names)}
    per_hand = {name: pts[:, :, slot_agent == a].mean(axis=2).reshape(-1) for a, name in enumerate(names)}
    n = len(names)
    stats = {
        "draw_rate": float(v["drawn"].mean()),
        "agents": agents,
        "per_slot": [_slot_stats(v, i, names[slot_agent[i]]) for i in range(4)],
        "pairwise": [_pair_stats(v, per_wall, slot_agent, names, a, b) for a in range(n) for b in range(a + 1, n)],
        "ratings": _ratings(per_hand, names) if n > 1 else None,
    }
    raw = {"slot_points": pts, "per_hand": per_hand, "per_wall": per_wall}
    return stats, raw


def _ratings(per_hand: dict, names: list[str]) -> dict | None:
    """OpenSkill Plackett-Luce ratings, one update per hand (in wall order) with the hand scores."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    model = PlackettLuce()
    ratings = [model.rating(name=n) for n in names]
    scores = np.stack([per_hand[n] for n in names], axis=1)
    for row in scores:
        new = model.rate([[r] for r in ratings], scores=[float(x) for x in row])
        ratings = [t[0] for t in new]
    return {
        "model": "openskill PlackettLuce: one update per hand (wall order), agents ranked by their hand score",
        "agents": {
            n: {"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())}
            for n, r in zip(names, ratings, strict=True)
        },
    }


# ---------------------------------------------------------------------------------------------
# the library entry point
# ---------------------------------------------------------------------------------------------
def _fill_slots(agents) -> list:
    """The 4 slots: 1-4 agents, the last one repeated (``[A, B]`` = A B B B: one against three)."""
    if isinstance(agents, (str, Agent)) or not hasattr(agents, "__len__"):
        raise EvalConfigError("agents must be a list of 1 to 4 agents or specs")
    agents = list(agents)
    if not 1 <= len(agents) <= 4:
        raise EvalConfigError(f"need 1 to 4 agents (4 seats; the last one fills the rest), got {len(agents)}")
    return agents + [agents[-1]] * (4 - len(agents))


def _distinct(agents) -> tuple[np.ndarray, list, list[str], list]:
    """Slot -> distinct agent index, the distinct agents (objects), their names, their specs."""
    agents = _fill_slots(agents)
    keys: list = []
    objs: list = []
    specs: list = []
    slot_agent = np.zeros(4, dtype=np.int64)
    for i, a in enumerate(agents):
        key = a.strip() if isinstance(a, str) else id(a)
        if key not in keys:
            keys.append(key)
            objs.append(make_agent(a))  # raises AgentSpecError on a bad spec
            specs.append(a.strip() if isinstance(a, str) else a)
        slot_agent[i] = keys.index(key)
    names: list[str] = []
    for k, o in zip(keys, objs, strict=True):
        base = k if isinstance(k, str) else _label(o)
        name = base
        n = 2
        while name in names:
            name = f"{base}#{n}"
            n += 1
        names.append(name)
    return slot_agent, objs, names, specs


def _check_settings(hands, workers, seed, batch, max_records) -> tuple[int, int, int, int]:
    """The integer settings through the one validator (a bad one is an :class:`EvalConfigError`)."""
    try:
        out = (check_int("hands", hands, 1), check_int("workers", workers, 1), check_seed(seed))
        batch = check_int("batch", batch, 4, MAX_TABLES)
        if batch % 4:
            raise ValueError(f"batch must be a positive multiple of 4, got {batch}")
        if max_records is not None:
            check_int("max_records", max_records, 1)
    except ValueError as e:
        raise EvalConfigError(str(e)) from None
    return (*out, batch)


def _load_rules(rules):
    from fzmj_env.rules import load_rules

    try:
        return load_rules(rules)  # parsed once, shared by every batch's env
    except Exception as e:  # noqa: BLE001
        raise EvalConfigError(f"unknown rules {rules!r}: {e}") from e


def _with_ref(setup: _Setup, specs: list, paired) -> tuple[_Setup, list, str]:
    """The paired run's setup: REF in slot 0, every other slot's agent at its index (so with its
    reset seeds); REF reuses an index when it is one of the agents already. Also REF's specs list and name."""
    key = paired.strip() if isinstance(paired, str) else id(paired)
    keys = [sp if isinstance(sp, str) else id(sp) for sp in specs]
    agents, specs = list(setup.agents), list(specs)
    if key in keys:
        idx = keys.index(key)
    else:
        idx = len(agents)
        agents.append(make_agent(paired))  # raises AgentSpecError on a bad spec, before any play
        specs.append(paired.strip() if isinstance(paired, str) else paired)
    slot_agent = setup.slot_agent.copy()
    slot_agent[0] = idx
    name = paired.strip() if isinstance(paired, str) else _label(paired)
    return replace(setup, slot_agent=slot_agent, agents=agents, log=False), specs, name


def _default_start_method() -> str:
    """Fork (cheap) unless torch is loaded here: a forked child of a process that ran torch ops may
    hang in its thread pool."""
    return "fork" if "fork" in mp.get_all_start_methods() and "torch" not in sys.modules else "spawn"


def _play(setup: _Setup, specs: list, workers: int, start_method, keeper, bar, faults: list) -> tuple[np.ndarray, int]:
    """Every batch of ``setup``, in this process or in ``workers`` processes (same results): the
    job results in wall order and the number of decisions taken; exec bots' faults are added
    to ``faults`` (one slot per distinct agent)."""
    n_batches = -(-setup.walls // (setup.batch // 4))
    parts: list = []
    decisions = 0
    if workers == 1:
        for b in range(n_batches):
            done_before = bar.n

            def tick(k, base=done_before):
                bar.update(base + k - bar.n)

            res, dec, log = _play_batch(setup, b, tick)
            _add_faults(faults, _pop_faults(setup.agents))
            parts.append(res)
            decisions += dec
            _keep(keeper, setup, b, res, log)
        return np.concatenate(parts), decisions
    remote = replace(setup, agents=list(specs))  # specs are rebuilt in each worker; objects are inherited
    ctx = mp.get_context(start_method or _default_start_method())
    with ctx.Pool(workers, initializer=_worker_init, initargs=(remote,)) as pool:
        for b, (res, dec, log, f) in enumerate(pool.imap(_worker_play, range(n_batches))):
            _add_faults(faults, f)
            parts.append(res)
            decisions += dec
            _keep(keeper, setup, b, res, log)
            bar.update(len(res))
    return np.concatenate(parts), decisions


def _paired_stats(results: np.ndarray, ref_results: np.ndarray, walls: int, agent: str, ref: str) -> dict:
    """Slot 0's score per hand minus REF's in the same seat on the same wall: mean, interval over walls."""
    d = _slot_view(results, walls)["points"][:, :, 0] - _slot_view(ref_results, walls)["points"][:, :, 0]
    mean, ci = mean_ci95(d.mean(axis=1))
    return {"agent": agent, "ref": ref, "slot": 0, "mean": mean, "ci95": ci, "hands": 4 * walls}


def _result(setup: _Setup, names: list[str], hands: int, results: np.ndarray, timing: dict, total: int):
    """The results dict (``results.json``) and the raw arrays of the plots."""
    stats, raw = _aggregate(results, setup.walls, setup.slot_agent, names)
    elapsed = timing["elapsed_s"]
    out = {
        "version": RESULT_VERSION,
        "format": "duplicate: every wall played once per seat rotation (4 hands per wall)",
        "seed": setup.seed,
        "hands": 4 * setup.walls,
        "hands_requested": hands,
        "walls": setup.walls,
        "rules": setup.rules.name,
        "batch": setup.batch,
        "slots": [names[setup.slot_agent[i]] for i in range(4)],
        **stats,
        "timing": {
            "elapsed_s": elapsed,
            "hands_per_s": total / elapsed if elapsed > 0 else None,
            "decisions": timing["decisions"],
            "workers": timing["workers"],
        },
    }
    return out, raw


def evaluate(
    agents: list,
    hands: int,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    *,
    rules: str = DEFAULT_RULES,
    batch: int = DEFAULT_BATCH,
    start_method: str | None = None,
    save_records: str | None = None,
    max_records: int | None = None,
    paired=None,
    _raw: bool = False,
) -> dict:
    """Play ``hands`` hands in the duplicate format and return the statistics (``results.json``).

    ``agents``: 4 agents or spec strings, one per slot (equal specs are one agent, pooled);
    with fewer, the last one fills the remaining slots (``[A, B]`` = A against three B).
    ``hands`` is rounded up to a multiple of 4. ``workers`` > 1 plays batches in that many
    processes (same results). ``batch``: tables per batch (a multiple of 4). ``start_method``
    of the worker processes: default "fork" (cheap), or "spawn" once torch is imported here
    (a forked child of a process that ran torch ops may hang in its thread pool); then the
    agents passed as objects must be picklable.

    ``save_records``: a directory to write game records into (created if missing): the worst
    and best hands of each agent, at most ``max_records`` (default 2 per agent; more keep the
    2nd, 3rd ... worst and best too). Their paths are listed under ``"records"``.

    ``paired``: an agent or spec REF; every hand is played again with REF in slot 0 and the
    result gains ``"paired"`` (see the module docstring).
    """
    hands, workers, seed, batch = _check_settings(hands, workers, seed, batch, max_records)
    rules_obj = _load_rules(rules)
    slot_agent, objs, names, specs = _distinct(agents)
    walls = -(-hands // 4)
    try:  # what this machine cannot hold is refused now, not after hours of play
        check_memory(f"hands={hands}", 4 * walls * 14 * 4)  # every hand's result row is kept for the statistics
    except ValueError as e:
        raise EvalConfigError(str(e)) from None
    keeper = None
    if save_records is not None:
        from .eval_records import RecordKeeper

        keeper = RecordKeeper(names, slot_agent, rules_obj, seed, max_records)
    setup = _Setup(slot_agent, objs, rules_obj, seed, batch, walls, keeper is not None)
    ref = None if paired is None else _with_ref(setup, specs, paired)
    workers = min(workers, -(-walls // (batch // 4)))
    t0 = time.perf_counter()
    from tqdm.auto import tqdm

    total = 4 * walls * (1 if ref is None else 2)
    bar = tqdm(total=total, unit="hand", desc="fzmj-eval", disable=not progress, file=sys.stderr, smoothing=0.1)
    faults: list = [None] * len(objs)  # per distinct agent: exec bots' fault counts
    try:
        results, decisions = _play(setup, specs, workers, start_method, keeper, bar, faults)
        if ref is not None:
            ref_faults: list = [None] * len(ref[0].agents)
            ref_results, ref_decisions = _play(ref[0], ref[1], workers, start_method, None, bar, ref_faults)
            decisions += ref_decisions
    finally:
        bar.close()
    timing = {"elapsed_s": time.perf_counter() - t0, "decisions": int(decisions), "workers": workers}
    out, raw = _result(setup, names, hands, results, timing, total)
    if ref is not None:
        out["paired"] = _paired_stats(results, ref_results, walls, names[slot_agent[0]], ref[2])
    if any(f is not None for f in faults):  # only with exec: agents (docs/protocol.md, Faults)
        out["bot_faults"] = {names[i]: f for i, f in enumerate(faults) if f is not None}
    if keeper is not None:
        out["records"] = [str(p) for p in keeper.write(save_records)]
    if _raw:
        return out, raw
    return out


# ---------------------------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------------------------
def markdown(res: dict) -> str:
    """The results as Markdown tables."""
    lines = [
        f"**fzmj-eval** — {res['hands']} hands ({res['walls']} walls × 4 seat rotations, duplicate), "
        f"seed {res['seed']}, rules `{res['rules']}`; drawn hands {100 * res['draw_rate']:.1f}%",
        "",
    ]
    rates = ("win_rate", "self_draw_rate", "deal_in_rate")
    head = ["mean score / hand", "95% CI", "win %", "self-draw %", "deal-in %"]
    rows = [
        [name, ",".join(map(str, a["slots"])), _f(a["mean_score"]), _ci(a["ci95"]), *(pct(a[r]) for r in rates),
         _f(a["mean_win_value"], "{:.1f}")]
        for name, a in res["agents"].items()
    ]  # fmt: skip
    lines += md_table(["agent", "slots", *head, "mean win value"], "llrlrrrr", rows)
    if len(res["agents"]) < 4:  # an agent holds several slots: show each slot too
        rows = [
            [str(p["slot"]), p["agent"], _f(p["mean_score"]), _ci(p["ci95"]), *(pct(p[r]) for r in rates)]
            for p in res["per_slot"]
        ]
        lines += ["", *md_table(["slot", "agent", *head], "rlrlrrr", rows)]
    rows = [[name, *(str(a["specials"][s]) for s in SPECIAL_NAMES)] for name, a in res["agents"].items()]
    lines += ["", *md_table(["agent", *SPECIAL_NAMES], "l" + "r" * len(SPECIAL_NAMES), rows)]
    if res.get("pairwise"):
        head = ["pair (a vs b)", "mean score diff / hand (a − b)", "95% CI", "a out-scores b"]
        rows = [
            [f"{p['a']} vs {p['b']}", _f(p["mean_diff"]), _ci(p["ci95"]), f"{100 * p['a_outscores_b']:.1f}%"]
            for p in res["pairwise"]
        ]
        lines += ["", *md_table(head, "lrlr", rows)]
    if res.get("ratings"):
        rated = [(name, res["ratings"]["agents"].get(name)) for name in res["agents"]]
        rows = [
            [n, f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}"] for n, r in rated if isinstance(r, dict)
        ]
        lines += ["", *md_table(["agent", "OpenSkill μ", "σ", "ordinal (μ − 3σ)"], "lrrr", rows)]
    if res.get("paired"):
        p = res["paired"]
        head = [
            f"paired: slot {p['slot']} vs REF in its seat",
            "mean score diff / hand (agent − REF)",
            "95% CI",
            "hands",
        ]
        lines += [
            "",
            *md_table(head, "lrlr", [[f"{p['agent']} vs {p['ref']}", _f(p["mean"]), _ci(p["ci95"]), str(p["hands"])]]),
        ]
    for name, f in (res.get("bot_faults") or {}).items():
        if any(f.values()):
            lines += ["", f"**{name}** faults: " + ", ".join(f"{k} {v}" for k, v in f.items()) + " (docs/protocol.md)"]
    t = res.get("timing", {})
    if t.get("hands_per_s"):
        lines += ["", f"_{t['elapsed_s']:.1f} s, {t['hands_per_s']:.0f} hands/s, {t['workers']} worker(s)_"]
    return "\n".join(lines)


def plot(res: dict, raw: dict, path: str) -> None:
    """Score distribution and cumulative score per agent into ``path`` (PNG)."""
    from matplotlib.figure import Figure  # no pyplot: no global backend state is touched

    fig = Figure(figsize=(12, 4.5))
    ax1, ax2 = fig.subplots(1, 2)
    pts = raw["slot_points"]
    lo, hi = np.percentile(pts, [0.5, 99.5])
    bins = np.linspace(lo, hi if hi > lo else lo + 1, 61)
    for name, info in res["agents"].items():
        x = pts[:, :, info["slots"]].reshape(-1)
        ax1.hist(np.clip(x, bins[0], bins[-1]), bins=bins, alpha=0.5, label=name, density=True)
        ax2.plot(np.arange(1, len(raw["per_hand"][name]) + 1), np.cumsum(raw["per_hand"][name]), label=name)
    ax1.set_title("score per hand (0.5–99.5 percentile range)")
    ax1.set_xlabel("points")
    ax1.set_yscale("log")
    ax1.legend()
    ax2.set_title("cumulative score (hands in wall order)")
    ax2.set_xlabel("hand")
    ax2.set_ylabel("points")
    ax2.axhline(0, color="grey", lw=0.5)
    ax2.legend()
    fig.suptitle(f"fzmj-eval: {res['hands']} hands, seed {res['seed']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------
# what matplotlib's savefig writes (Agg, PDF, PS, SVG, PGF backends; jpg/tif/webp via Pillow)
PLOT_SUFFIXES = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp", "pgf", "raw", "rgba")


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="fzmj-eval",
        description="Benchmark four agents on Fuzhou Mahjong in the duplicate format "
        "(every wall played once per seat rotation).",
        epilog=f"Agent specs: {SPEC_HELP}.",
    )
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="1 to 4 agent specs, one per seat slot; the last fills the remaining slots (A B = A against three B)",
    )
    p.add_argument(
        "--hands", type=int, default=1000, help="hands to play, rounded up to a multiple of 4 (default 1000)"
    )
    p.add_argument("--seed", type=int, default=0, help="evaluation seed (default 0)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1; results do not depend on it)")
    p.add_argument("--out", metavar="FILE.json", help="write the results as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="plot score distributions and cumulative scores")
    p.add_argument("--rules", default=DEFAULT_RULES, help=f"rule preset (default {DEFAULT_RULES})")
    p.add_argument(
        "--batch", type=int, default=DEFAULT_BATCH, help=f"tables per batch, a multiple of 4 (default {DEFAULT_BATCH})"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--save-records",
        metavar="DIR",
        help="write game records of the worst and best hands of each agent into DIR (for fzmj-replay)",
    )
    p.add_argument(
        "--max-records", type=int, metavar="N", help="records to keep with --save-records (default: 2 per agent)"
    )
    p.add_argument(
        "--paired",
        metavar="REF",
        help="play every hand again with REF in slot 0 against the same opponents; report the mean per-hand "
        "difference (first agent - REF) and its 95%% CI",
    )
    return p


def _check_args(p: argparse.ArgumentParser, args) -> None:
    """Everything the command line can get wrong, refused before any play (one line, exit 2)."""
    if len(args.agents) > 4:
        p.error(f"--agents takes at most 4 specs (one per seat), got {len(args.agents)}")
    for flag, value in (("--hands", args.hands), ("--workers", args.workers)):
        if value < 1:
            p.error(f"{flag} must be >= 1")
    if args.batch < 4 or args.batch % 4:
        p.error("--batch must be a positive multiple of 4")
    if not 0 <= args.seed < 2**64:
        p.error("--seed must be in 0..2**64-1")
    try:  # the outputs are written after the work: check them before it
        if args.out is not None:
            check_output_file(args.out, "--out")
        if args.plot is not None:
            check_output_file(args.plot, "--plot", PLOT_SUFFIXES)
    except ValueError as e:
        p.error(str(e))
    if args.max_records is not None and (args.max_records < 1 or not args.save_records):
        p.error("--max-records needs --save-records and must be >= 1")
    if args.save_records and os.path.exists(args.save_records) and not os.path.isdir(args.save_records):
        p.error(f"--save-records: {args.save_records!r} is not a directory")


def _run(args) -> int:
    res, raw = evaluate(
        args.agents,
        args.hands,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
        rules=args.rules,
        batch=args.batch,
        save_records=args.save_records,
        max_records=args.max_records,
        paired=args.paired,
        _raw=True,
    )
    print(markdown(res))
    if res.get("records"):
        print(
            f"\nsaved {len(res['records'])} game records to {args.save_records} (view one: fzmj-replay {res['records'][0]})"
        )
    try:
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump(res, f, indent=2, ensure_ascii=False)
                f.write("\n")
        if args.plot:
            plot(res, raw, args.plot)
    except OSError as e:  # a full disk, a folder removed meanwhile: one line, exit 1
        sys.stderr.write(f"fzmj-eval: error: cannot write {e.filename or 'the output'}: {e.strerror or e}\n")
        return 1
    return 0


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    _check_args(p, args)
    return run_cli(p, lambda: _run(args), (AgentSpecError, EvalConfigError))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
