"""Statistics of a duplicate evaluation: per-agent and per-slot figures, pairwise tables, ratings
and the paired difference, each with its Student-t 95% interval over walls (walls are independent,
the hands within a wall are not)."""

from __future__ import annotations

import math

import numpy as np

from fzmj_env.core.state import SPECIAL_NAMES, WIN_TYPE_NAMES, WT_DISCARD

# Student t 0.975 quantiles, df = 1..30
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip


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


def slot_view(results: np.ndarray, walls: int) -> dict:
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


def aggregate(results: np.ndarray, walls: int, slot_agent: np.ndarray, names: list[str]) -> tuple[dict, dict]:
    """Statistics dict and the raw per-slot arrays (for plots) from the job results."""
    v = slot_view(results, walls)
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


def paired_stats(
    results: np.ndarray,
    ref_results: np.ndarray,
    walls: int,
    agent: str,
    ref: str,
    fell_back: np.ndarray | None = None,
    ref_fell_back: np.ndarray | None = None,
) -> dict:
    """Slot 0's score per hand minus REF's in the same seat on the same wall: mean, interval over walls.

    ``fell_back`` / ``ref_fell_back`` (jobs,) bool: the hands of each run in which a fallback
    played for a faulting bot. The opponents of such a hand are not the same in the two runs, so
    its wall is left out of the mean and the interval, and the result says so: ``clean`` is
    False, ``walls_excluded`` counts them (a run without faults is ``clean``)."""
    d = slot_view(results, walls)["points"][:, :, 0] - slot_view(ref_results, walls)["points"][:, :, 0]
    bad = np.zeros(walls, dtype=bool)
    for fb in (fell_back, ref_fell_back):
        if fb is not None:
            bad |= np.asarray(fb, dtype=bool).reshape(walls, 4).any(axis=1)
    keep = ~bad
    mean, ci = mean_ci95(d[keep].mean(axis=1)) if keep.any() else (None, None)
    out = {"agent": agent, "ref": ref, "slot": 0, "mean": mean, "ci95": ci, "hands": 4 * int(keep.sum())}
    out["clean"] = not bad.any()
    out["walls_excluded"] = int(bad.sum())
    if bad.any():
        out["warning"] = (
            f"a fallback played for a faulting bot in {int(bad.sum())} of {walls} walls (in either run): their "
            "opponents differ between the runs, so they are left out; the remaining walls may not be a fair sample"
        )
    return out
