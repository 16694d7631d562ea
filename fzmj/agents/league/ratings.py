"""The league table from the cache: pair statistics, ratings with bootstrap intervals, per-agent totals."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fzmj_env.core.state import SPECIAL_NAMES

from ..evaluate.stats import mean_ci95
from .cache import _load_entry, iter_schedule
from .folder import BOOTSTRAP, LEAGUE_VERSION, Entrant, LeagueConfig, LeagueError

RATING_MODEL = (
    "score-margin paired comparison (least squares, sum zero; Gaussian Bradley-Terry / Massey): "
    "r_a - r_b fits the mean score difference per hand of each pairing; in a full round robin r_a is a's "
    "mean difference against the league's agents (itself counted as 0). 95% interval: percentile "
    f"bootstrap over walls ({BOOTSTRAP} resamples, walls resampled jointly for every pairing)"
)


def _pair_walls(cfg: LeagueConfig, entries: list[dict], ia: str, ib: str) -> np.ndarray:
    """``d_w``: A's mean score per hand on wall w minus B's, averaged over the pairing's matches."""
    d = [np.asarray(e["agents"][ia]["per_wall"]) - np.asarray(e["agents"][ib]["per_wall"]) for e in entries]
    return np.mean(d, axis=0)


def _oriented(pair: dict, rank: dict) -> dict:
    """``pair`` as "a vs b" with a the better-ranked agent (the difference and interval flipped if needed)."""
    if rank[pair["a"]] < rank[pair["b"]]:
        return pair
    ci = pair["ci95"]
    return {**pair, "a": pair["b"], "b": pair["a"], "mean_diff": -pair["mean_diff"], "ci95": ci and [-ci[1], -ci[0]]}


def _fit(X_pinv: np.ndarray, diffs: np.ndarray) -> np.ndarray:
    """Least-squares ratings (sum zero: the minimum-norm solution) for pair differences ``diffs`` (P, ...)."""
    return X_pinv @ diffs


def _entries(root: Path, cfg: LeagueConfig, ents: list[Entrant]) -> dict[tuple[int, int], list[dict]]:
    """Every pairing's cache entries; a pairing not played yet is a :class:`LeagueError`."""
    out = {}
    for (i, j), matches in iter_schedule(cfg, ents):
        entries = [_load_entry(root, m) for m in matches]
        if any(e is None for e in entries):
            raise LeagueError(f"pairing {ents[i].name} vs {ents[j].name} is not played yet; run the league first")
        out[(i, j)] = entries
    return out


FAULT_FLAG = 0.05
"""A ranking is flagged when more than this share of an agent's decisions were its fallback's."""


def fallback_use(entry: dict, ident: str) -> tuple[int, float, bool]:
    """(fallback decisions, decisions, exact) of agent ``ident`` in one cache entry.

    The fallback count is the evaluator's (``bot_faults``, exec bots only; 0 for the others). The
    decisions are the evaluator's count of the agent's own decisions (``agents[...]["decisions"]``).
    An entry cached before the evaluator counted them has the bot's own count when the evaluator
    reported one (``bot_faults[...]["decisions"]``), else the match's decisions times the agent's
    share of the seats (``exact`` False: seats of one table take about the same number of decisions).
    """
    slots = list(entry["inputs"]["slots"])
    seats = slots + [slots[-1]] * (4 - len(slots))  # the evaluator fills the 4 slots with the last one
    spec = next(sp for sp, i in zip(entry["specs"], slots, strict=True) if i == ident).strip()
    f = (entry.get("bot_faults") or {}).get(spec) or {}
    fallback = int(f.get("fallback_decisions", 0))
    own = (entry.get("agents") or {}).get(ident, {}).get("decisions")
    if own is not None:
        return fallback, float(own), True
    if "decisions" in f:
        return fallback, float(f["decisions"]), True
    return fallback, entry["decisions"] * seats.count(ident) / 4, False


def _totals(ents: list[Entrant], played: dict[tuple[int, int], list[dict]]) -> list[dict]:
    """Per agent: hands, score sum, win / self-draw / deal-in counts, win values, specials, win types,
    fallback decisions and decisions."""
    totals = [
        {"hands": 0, "score_sum": 0.0, "wins": 0, "self_draws": 0, "deal_ins": 0, "win_value_sum": 0.0,
         "specials": dict.fromkeys(SPECIAL_NAMES, 0), "win_types": {}, "fallback": 0, "decisions": 0.0,
         "exact": True}
        for _ in ents
    ]  # fmt: skip
    for (i, j), entries in played.items():
        for k in (i, j):
            t = totals[k]
            for e in entries:
                fb, dec, exact = fallback_use(e, ents[k].identity)
                t["fallback"] += fb
                t["decisions"] += dec
                t["exact"] &= exact
                a = e["agents"][ents[k].identity]
                t["hands"] += a["hands"]
                t["score_sum"] += a["mean_score"] * a["hands"]
                for c in ("wins", "self_draws", "deal_ins", "win_value_sum"):
                    t[c] += a[c]
                for c in ("specials", "win_types"):
                    for s, v in a[c].items():
                        t[c][s] = t[c].get(s, 0) + v
    return totals


def _ratings(cfg: LeagueConfig, n: int, pairings: list[tuple[int, int]], D: np.ndarray):
    """Ratings and their 95% bootstrap intervals from the pairings' per-wall differences ``D`` (P, W)."""
    X = np.zeros((len(pairings), n))
    for p, (i, j) in enumerate(pairings):
        X[p, i], X[p, j] = 1.0, -1.0
    X_pinv = np.linalg.pinv(X)
    rating = _fit(X_pinv, D.mean(axis=1))
    W = D.shape[1]
    rng = np.random.default_rng([cfg.seed & (2**63 - 1), 16])
    counts = rng.multinomial(W, np.full(W, 1.0 / W), size=BOOTSTRAP)  # (B, W) resampled walls, shared by all pairs
    boot = _fit(X_pinv, D @ counts.T / W)  # (n, B)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=1)
    return rating, lo, hi


def _agent_row(e: Entrant, t: dict, rating: float, ci: list[float]) -> dict:
    h = t["hands"]
    share = min(1.0, t["fallback"] / t["decisions"]) if t["decisions"] > 0 else 0.0
    return {
        "name": e.name,
        "spec": e.spec,
        "identity": e.identity,
        "rating": rating,
        "rating_ci95": ci,
        "mean_score": t["score_sum"] / h,
        "hands": h,
        "win_rate": t["wins"] / h,
        "self_draw_rate": t["self_draws"] / h,
        "deal_in_rate": t["deal_ins"] / h,
        "wins": t["wins"],
        "mean_win_value": t["win_value_sum"] / t["wins"] if t["wins"] else None,
        "win_types": t["win_types"],
        "specials": t["specials"],
        # faults (docs/league.md, Faults): the share of the agent's decisions its fallback played
        "fallback_decisions": t["fallback"],
        "decisions": round(t["decisions"]),
        "decisions_exact": t["exact"],
        "fault_share": share,
        "fault_flag": share > FAULT_FLAG,
    }


def standings(path: str | Path, cfg: LeagueConfig, ents: list[Entrant], played: dict | None = None) -> dict:
    """The league table (``league.json``) from the cache: ratings, pairs and per-agent statistics.

    Every pairing of ``ents`` must be in the cache (run :func:`play` first).
    """
    by_pair = _entries(Path(path), cfg, ents)
    D = np.array([_pair_walls(cfg, es, ents[i].identity, ents[j].identity) for (i, j), es in by_pair.items()])
    pairs = []
    for ((i, j), _), d in zip(by_pair.items(), D, strict=True):
        mean, ci = mean_ci95(d)
        pairs.append({"a": ents[i].name, "b": ents[j].name, "mean_diff": mean, "ci95": ci, "walls": int(d.size)})
    rating, lo, hi = _ratings(cfg, len(ents), list(by_pair), D)
    totals = _totals(ents, by_pair)
    agents = [_agent_row(e, totals[k], float(rating[k]), [float(lo[k]), float(hi[k])]) for k, e in enumerate(ents)]
    order = sorted(range(len(ents)), key=lambda k: (-agents[k]["rating"], agents[k]["name"]))
    rank = {}
    for r, k in enumerate(order, 1):
        agents[k]["rank"] = rank[agents[k]["name"]] = r
    pairs = [_oriented(p, rank) for p in pairs]  # the better-ranked agent first, in leaderboard order
    pairs.sort(key=lambda p: (rank[p["a"]], rank[p["b"]]))
    return {
        "fzmj_league": LEAGUE_VERSION,
        "config": cfg.as_dict(),
        "walls_per_match": cfg.walls,
        "hands_per_match": cfg.hands_per_match,
        "matches_per_pairing": 2 if cfg.format == "1v3" else 1,
        "rating_model": RATING_MODEL,
        "fault_flag_share": FAULT_FLAG,
        "agents": [agents[k] for k in order],
        "pairs": pairs,
        "played": played,
    }
