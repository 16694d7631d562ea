"""How much is there to win against three ``heuristic`` players by defence alone?

A *clairvoyant defender* plays one seat: it is the heuristic, except that it sees the other
three seats' hidden state (the oracle planes, ``fzmj_env/encode.py``: ``r*_wins_on``, the kinds
each may win on if discarded now) and, when the heuristic's discard would deal in, discards a
safe tile instead: the safe one among the lowest-shanten discards with the most acceptance,
else among them, else (``--slack 1``, the default) among the discards one shanten worse. It
never deals in where such a tile exists. It is the trainer's all-seeing teacher
``oracle:defend`` (``fzmj/train/oracle_teacher.py``, whose ``defend`` it calls).

It cannot be learned from a seat's own observation (it uses hidden tiles), so its score is an
upper bound on what better *discard defence* can add to the heuristic; offence (speed, hand
value) is not bounded here. Duplicate format as ``fzmj-eval``: every wall in all four seat
rotations; the 95% CI is over walls.

    python benchmarks/studies/defence_ceiling.py [--walls 1000] [--seed 7] [--slack 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from fzmj.agents import make_agent
from fzmj.agents.evaluate import mean_ci95, wall_seeds
from fzmj.train.oracle_teacher import defend, oracle_danger
from fzmj_env.vector import RESULT_POINTS, VectorEnv


def run(walls: int, seed: int, slack: bool) -> dict:
    heuristic = make_agent("heuristic")
    B = 4 * walls
    env = VectorEnv(B, seed=0, oracle=True, auto_reset=False)
    obs, mask, seat = env.reset(seeds=np.repeat(wall_seeds(seed, walls), 4))
    oracle = env.oracle_planes
    defender_seat = np.tile(np.arange(4), walls)  # the defender sits in each seat of each wall
    finished = np.zeros(B, dtype=bool)
    score = np.zeros(B)
    dealt_in = np.zeros(B, dtype=bool)
    actions = np.zeros(B, dtype=np.int64)
    changed = stuck = 0
    t0 = time.perf_counter()
    while not finished.all():
        live = np.flatnonzero(~finished)
        actions[live] = heuristic.act(obs[live], mask[live])
        mine = live[seat[live] == defender_seat[live]]
        c, s = defend(actions, mine, obs, mask, oracle_danger(oracle), slack)
        changed, stuck = changed + c, stuck + s
        obs, mask, seat, _r, done, info = env.step_tables(live, actions[live])
        oracle = info["oracle"]
        for t in np.flatnonzero(done):
            finished[t] = True
            score[t] = info["results"][t, RESULT_POINTS + defender_seat[t]]
            dealt_in[t] = info["results"][t, 2] == defender_seat[t]  # column 2: the discarder
    mean, ci = mean_ci95(score.reshape(walls, 4).mean(axis=1))
    return {
        "walls": walls,
        "hands": B,
        "seed": seed,
        "slack": int(slack),
        "mean_score": mean,
        "ci95": ci,
        "deal_in_rate": float(dealt_in.mean()),
        "discards_changed": changed,
        "no_safe_discard": stuck,
        "seconds": time.perf_counter() - t0,
        "machine": platform.platform(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walls", type=int, default=1000, help="walls, each played in 4 seat rotations (default 1000)")
    ap.add_argument("--seed", type=int, default=7, help="wall seed, as fzmj-eval --seed (default 7)")
    ap.add_argument("--slack", type=int, choices=(0, 1), default=1, help="1: a safe discard may cost one shanten")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    if a.walls < 1:
        ap.error("--walls must be positive")
    res = run(a.walls, a.seed, bool(a.slack))
    if a.json:
        print(json.dumps(res))
    else:
        lo, hi = res["ci95"]
        print(
            f"clairvoyant defender vs 3 heuristic, {res['hands']} hands (seed {a.seed}, slack {a.slack}): "
            f"{res['mean_score']:+.2f} [{lo:+.2f}, {hi:+.2f}] per hand, deal-in {res['deal_in_rate']:.1%}, "
            f"{res['discards_changed']} discards changed, {res['no_safe_discard']} without a safe one "
            f"({res['seconds']:.0f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
