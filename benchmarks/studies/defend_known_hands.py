"""``heuristic:defend``'s folding rule with a perfect danger: what a belief model could give it.

One seat plays ``heuristic:defend`` (the same expected-value rule and options, ``--spec``) whose
danger is not estimated but read off the three hidden hands (the oracle planes): 1 for a kind
that completes a ready opponent's hand (the engine's ``wait_mask_counts``, its 过水 kinds and a
seat that threw a gold excluded), else 0. Against three ``heuristic`` (their game is exactly 0
against themselves in the duplicate format), so its mean score is its paired gain over the
heuristic. A diagnostic, never a playable agent (it reads hidden tiles). Compare with
``benchmarks/studies/defence_ceiling.py`` (a defender that never deals in where a safe tile exists).

    python benchmarks/studies/defend_known_hands.py [--walls 500] [--seed 7] [--spec heuristic:defend]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fzmj.agents import make_agent
from fzmj.agents.defend import defend_kernel
from fzmj.agents.defend_tables import COST
from fzmj.agents.evaluate import mean_ci95, wall_seeds
from fzmj_env.core.hand import get_shanten_table, get_win_table, wait_mask_counts
from fzmj_env.encode import F_GOLD_THROWN, O_HANDS, O_PASSED, P_GOLD_KIND, P_SEAT, S_FLAGS, SEAT_PLANES
from fzmj_env.vector import RESULT_POINTS, VectorEnv


def known_win_on(obs_row, oracle_row, win_table) -> np.ndarray:
    """(3, 27): 1 where relative seat r + 1 may win on a discard of kind k now."""
    gold = int(np.argmax(obs_row[P_GOLD_KIND]))
    out = np.zeros((3, 27))
    waits = np.zeros(27, dtype=np.int8)
    for r in range(3):
        if obs_row[P_SEAT + (r + 1) * SEAT_PLANES + S_FLAGS, F_GOLD_THROWN]:
            continue
        counts = oracle_row[O_HANDS + 4 * r : O_HANDS + 4 * r + 4].sum(0).astype(np.int64)
        if counts.sum() % 3 != 1:
            continue
        wait_mask_counts(win_table, counts, gold, waits)
        waits[oracle_row[O_PASSED + r] > 0] = 0
        out[r] = waits > 0
    out[:, gold] = 0
    return out


def run(walls: int, seed: int, spec: str) -> dict:
    st, wt = get_shanten_table(), get_win_table()
    heuristic = make_agent("heuristic")
    defender = make_agent(spec)
    B = 4 * walls
    env = VectorEnv(B, seed=0, oracle=True, auto_reset=False)
    obs, mask, seat = env.reset(seeds=np.repeat(wall_seeds(seed, walls), 4))
    oracle = env.oracle_planes
    me = np.tile(np.arange(4), walls)
    finished = np.zeros(B, dtype=bool)
    score = np.zeros(B)
    dealt_in = np.zeros(B, dtype=bool)
    actions = np.zeros(B, dtype=np.int64)
    t0 = time.perf_counter()
    while not finished.all():
        live = np.flatnonzero(~finished)
        actions[live] = heuristic.act(obs[live], mask[live])
        mine = live[seat[live] == me[live]]
        if len(mine):
            win_on = np.stack([known_win_on(obs[t], oracle[t], wt) for t in mine])
            out = np.empty(len(mine), np.int64)
            defend_kernel(obs[mine], mask[mine], st, wt, win_on, COST, defender.params, out)
            actions[mine] = out
        obs, mask, seat, _r, done, info = env.step_tables(live, actions[live])
        oracle = info["oracle"]
        for t in np.flatnonzero(done):
            finished[t] = True
            score[t] = info["results"][t, RESULT_POINTS + me[t]]
            dealt_in[t] = info["results"][t, 2] == me[t]
    mean, ci = mean_ci95(score.reshape(walls, 4).mean(axis=1))
    return {"hands": B, "mean": mean, "ci95": ci, "deal_in": float(dealt_in.mean()), "s": time.perf_counter() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walls", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--spec", default="heuristic:defend", help="a heuristic:defend spec (its options are used)")
    a = ap.parse_args(argv)
    if a.walls < 1:
        ap.error("--walls must be positive")
    if not a.spec.startswith("heuristic:defend") or "belief=" in a.spec or "base=" in a.spec:
        ap.error("--spec must be heuristic:defend[:options] without belief= or base=")
    res = run(a.walls, a.seed, a.spec)
    lo, hi = res["ci95"]
    print(
        f"{a.spec} with the hidden hands as its danger vs 3 heuristic, {res['hands']} hands (seed {a.seed}): "
        f"{res['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] per hand, deal-in {res['deal_in']:.1%} ({res['s']:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
