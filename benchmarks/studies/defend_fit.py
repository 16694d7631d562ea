"""Fit the tables of ``heuristic:defend`` (``fzmj/agents/defend.py``) on heuristic self-play.

Four ``heuristic`` players on ``--walls`` walls (seed ``--seed``; keep it away from evaluation
seeds). At every discard decision, with the engine's hidden state as labels (the oracle planes):

* ``READY[cell]``: how often an opponent in that readiness cell (its discards, its melds) may win
  on some discard (ready, R9.1 with golds wild; not counting a seat that threw a gold);
* ``WAIT[cell]``: given that it is, how often a held kind in that wait cell completes its hand
  (its 过水 kinds excluded); kinds proven safe by the discard order are left out;
* ``COST[flowers]``: the mean value of a discard win by a winner with that many flower points.

Cells with few samples are shrunk towards their parent's mean (ready: the same discard count;
wait: the overall rate). Writes ``fzmj/agents/defend_tables.py``
with ``--write``, and prints held-out log-loss and AUC of the danger against a constant
(``--test-walls`` on seed ``--seed + 1``).

    nice -n 10 python benchmarks/studies/defend_fit.py --walls 4000 --write
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from numba import njit

from fzmj.agents import make_agent
from fzmj.agents.defend import (
    COST_FLOWERS,
    KIND_CELLS,
    READY_CELLS,
    READY_MELDS,
    danger_cells,
)
from fzmj.agents.evaluate import wall_seeds
from fzmj_env.core.hand import get_shanten_table, get_win_table, wait_mask_counts
from fzmj_env.encode import O_HANDS, O_PASSED, P_PHASE, PC_CLAIM
from fzmj_env.features import NO_SHANTEN, WS_SIZE, decode, discard_table
from fzmj_env.vector import VectorEnv

TABLES = Path(__file__).resolve().parents[2] / "fzmj" / "agents" / "defend_tables.py"


@njit(cache=True)
def _collect(obs, mask, oracle, rows, st, wt, dang, nd):
    """Danger samples (ready cell, wait cell, label, ready) per opponent and held legal non-gold kind
    of each discard decision in ``rows``."""
    w = np.zeros(WS_SIZE, np.int64)
    cells = np.zeros((3, 28), np.int64)
    dt = np.zeros((27, 2), np.int64)
    cnt = np.zeros(27, np.int64)
    waits = np.zeros(27, np.int8)
    for t in rows:
        o = obs[t]
        if o[P_PHASE, PC_CLAIM]:
            continue
        gold = decode(o, w)
        if gold < 0:
            continue
        danger_cells(o, w, cells)
        if discard_table(st, w, gold, mask[t], 26, dt) == NO_SHANTEN:  # slack 26: every candidate
            continue
        orc = oracle[t]
        for r in range(3):
            n = 0
            for k in range(27):
                c = np.int64(0)
                for j in range(4):
                    c += orc[O_HANDS + 4 * r + j, k]
                cnt[k] = c
                n += c
            ready = 0
            for k in range(27):
                waits[k] = 0
            if n % 3 == 1:
                wait_mask_counts(wt, cnt, gold, waits)
                for k in range(27):
                    if orc[O_PASSED + r, k]:
                        waits[k] = 0
                waits[gold] = 0
                for k in range(27):
                    if waits[k]:
                        ready = 1
            if cells[r, 27] < 0:
                ready = 0
            for k in range(27):
                if dt[k, 0] == NO_SHANTEN:
                    continue
                dang[nd, 0] = cells[r, 27]
                dang[nd, 1] = cells[r, k]
                dang[nd, 2] = waits[k] if cells[r, 27] >= 0 else 0
                dang[nd, 3] = ready
                nd += 1
    return nd


def play(walls: int, seed: int):
    st, wt = get_shanten_table(), get_win_table()
    heuristic = make_agent("heuristic")
    B = walls
    env = VectorEnv(B, seed=0, oracle=True, auto_reset=False)
    obs, mask, seat = env.reset(seeds=wall_seeds(seed, walls))
    oracle = env.oracle_planes
    finished = np.zeros(B, dtype=bool)
    dangs = []
    wins = []
    actions = np.zeros(B, dtype=np.int64)
    while not finished.all():
        live = np.flatnonzero(~finished)
        actions[live] = heuristic.act(obs[live], mask[live])
        dang = np.zeros((len(live) * 42, 4), np.int64)
        nd = _collect(obs, mask, oracle, live, st, wt, dang, 0)
        dangs.append(dang[:nd])
        obs, mask, seat, _r, done, info = env.step_tables(live, actions[live])
        oracle = info["oracle"]
        for t in np.flatnonzero(done):
            finished[t] = True
            res = info["results"][t]
            if res[2] >= 0 and res[0] >= 0:  # a discard win: winner, flower points, value
                wins.append((int(res[3]), int(res[6])))
    dang = np.concatenate(dangs)
    return dang, np.array(wins, dtype=np.int64).reshape(-1, 2)


def shrunk(num, den, prior, strength):
    return (num + strength * prior) / (den + strength)


def fit(dang, wins, strength=50.0):
    rc, kc, lab, rdy = dang[:, 0], dang[:, 1], dang[:, 2], dang[:, 3]
    live = rc >= 0
    # READY: one sample per (decision, opponent) would be exact; every held kind repeats it, which
    # only weights decisions by their number of candidates
    num = np.bincount(rc[live], weights=rdy[live], minlength=READY_CELLS)
    den = np.bincount(rc[live], minlength=READY_CELLS).astype(float)
    by_disc_num = num.reshape(-1, READY_MELDS).sum(1)
    by_disc_den = den.reshape(-1, READY_MELDS).sum(1)
    by_disc = by_disc_num / np.maximum(by_disc_den, 1)
    for d in range(1, len(by_disc)):  # discard counts never seen (long hands are rare): the last seen
        if by_disc_den[d] == 0:
            by_disc[d] = by_disc[d - 1]
    parent = np.repeat(by_disc, READY_MELDS)
    ready = shrunk(num, den, parent, strength)
    sel = live & (rdy == 1) & (kc >= 0)
    base = lab[sel].mean()
    wait = shrunk(
        np.bincount(kc[sel], weights=lab[sel], minlength=KIND_CELLS),
        np.bincount(kc[sel], minlength=KIND_CELLS).astype(float),
        base,
        strength,
    )
    f = np.minimum(wins[:, 0], COST_FLOWERS - 1)
    cnum = np.bincount(f, weights=wins[:, 1], minlength=COST_FLOWERS)
    cden = np.bincount(f, minlength=COST_FLOWERS).astype(float)
    cost = shrunk(cnum, cden, wins[:, 1].mean(), 20.0)
    return {"READY": ready, "WAIT": wait, "COST": cost}


def danger_metrics(tables, dang):
    """Held-out log-loss and AUC of P(deal-in to this opponent on this kind) vs a constant."""
    rc, kc, lab = dang[:, 0], dang[:, 1], dang[:, 2].astype(float)
    p = np.where((rc >= 0) & (kc >= 0), tables["READY"][np.maximum(rc, 0)] * tables["WAIT"][np.maximum(kc, 0)], 0.0)
    eps = 1e-6
    pc = np.clip(p, eps, 1 - eps)

    def ll(q):
        return float(-(lab * np.log(q) + (1 - lab) * np.log(1 - q)).mean())

    const = np.clip(np.full_like(lab, lab.mean()), eps, 1 - eps)
    order = np.argsort(p, kind="stable")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    # ties get their mean rank
    _, inv, counts = np.unique(p, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=ranks)
    ranks = (sums / counts)[inv]
    npos = lab.sum()
    auc = float((ranks[lab == 1].sum() - npos * (npos + 1) / 2) / (npos * (len(lab) - npos)))
    safe = kc < 0
    return {
        "samples": len(lab),
        "rate": float(lab.mean()),
        "logloss": ll(pc),
        "logloss_const": ll(const),
        "auc": auc,
        "safe_share": float(safe.mean()),
        "deal_in_rate_on_safe": float(lab[safe].mean()) if safe.any() else float("nan"),
    }


def write_tables(tables, note: str) -> None:
    def arr(a):
        return np.array2string(np.asarray(a), separator=", ", precision=4, threshold=10**6, max_line_width=110)

    lines = [
        f'"""Tables of ``heuristic:defend`` (``fzmj/agents/defend.py``), written by benchmarks/studies/defend_fit.py ({note})."""',
        "",
        "import numpy as np",
        "",
        "# fmt: off",
    ]
    for key in ("READY", "WAIT", "COST"):
        flat = np.asarray(tables[key], dtype=np.float64).ravel()
        lines.append(f"{key} = np.array({arr(np.round(flat, 4))})")
    lines.append("# fmt: on")
    TABLES.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walls", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=900)
    ap.add_argument("--test-walls", type=int, default=1000)
    ap.add_argument("--write", action="store_true", help="write fzmj/agents/defend_tables.py")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    dang, wins = play(a.walls, a.seed)
    tables = fit(dang, wins)
    print(
        f"fit on {a.walls} hands (seed {a.seed}): {len(dang)} danger samples, "
        f"{len(wins)} discard wins ({time.perf_counter() - t0:.0f} s)"
    )
    print("train", danger_metrics(tables, dang))
    if a.test_walls:
        dang_t, *_ = play(a.test_walls, a.seed + 1)
        print("held-out", danger_metrics(tables, dang_t))
    print("READY by discards (melds 0):", np.round(tables["READY"].reshape(-1, READY_MELDS)[:, 0], 3))
    print("COST:", np.round(tables["COST"], 1))
    if a.write:
        write_tables(tables, f"{a.walls} hands of 4 heuristic, seed {a.seed}")
        print("wrote", TABLES)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
