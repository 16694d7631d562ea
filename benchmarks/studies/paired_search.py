"""Paired comparison of an agent against a reference in the same seat, on the same walls.

For each wall (game seed) and each seat s (all four in turn), one hand with AGENT in seat s and
OPPONENT in the three others, and one with REF in seat s against the same opponents; the
difference of seat s's points is the paired gain. When REF and OPPONENT are the same spec the
reference hand is one game for all four seats. The 95% CI is over walls (the four seats of a
wall averaged first: they share the wall). Also: the agent's win and deal-in rates against the
reference's, and the search counters (searched decisions, deviations, ms per search).

    nice -n 10 python benchmarks/studies/paired_search.py --agent search:heuristic:worlds=64 \\
        --ref heuristic --opponent heuristic --walls 50 --seed 1000 [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np


def clairvoyant(agent):
    """A check of the machinery, not an agent: ``agent`` searches on the TRUE state (every
    world is the real table, so one world suffices) instead of worlds from its view."""

    def _search(o, mk, base):
        cands = agent.candidates(o, mk, base)
        if len(cands) < 2:
            return base
        env = agent._env(agent.rules_for(o), len(cands))
        tables = np.arange(len(cands))
        env.buf[tables] = agent.truth.buf[0]
        env.buf["m"][tables, 5] = 1  # HANDS_PER_GAME: stop at the end of this hand
        env.buf["m"][tables, 4] = 0
        env._observe_tables(tables)
        obs, mask, seat, *_ = env.step_tables(tables, np.asarray(cands, np.int64))
        live = tables[seat[tables] >= 0]
        while len(live):
            obs, mask, seat, *_ = env.step_tables(
                live, np.asarray(agent.blueprint.act(obs[live], mask[live]), np.int64)
            )
            live = live[seat[live] >= 0]
        pts = env.buf["points"][tables, agent.truth.seat]
        agent.stats["searched"] += 1
        j = int(np.argmax(pts))
        if pts[j] > pts[0]:
            agent.stats["deviated"] += 1
            return cands[j]
        return base

    agent._search = _search
    return agent


def play(specs, seed, rules):
    """One hand; ``specs`` are four agents by seat. Returns the finished hand's result dict."""
    from fzmj_env import Game, encode

    game = Game(rules)
    game.reset(seed=seed)
    obs = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
    while not game.done:
        encode.encode_table(game.buf, 0, game.seat, obs)
        specs[game.seat].truth = game  # read only by the --clairvoyant check
        game.step(int(specs[game.seat].act(obs[None], game.mask[None])[0]))
    return game.result


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="search:heuristic")
    ap.add_argument("--ref", default="heuristic")
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--walls", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--rules", default="fuzhou-lianzhong")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clairvoyant", action="store_true", help="check: search on the true state (not an agent)")
    args = ap.parse_args(argv)
    if args.walls < 2:
        ap.error("--walls must be at least 2")

    from fzmj.agents import make_agent, reset_agent

    agent, ref, opp = make_agent(args.agent), make_agent(args.ref), make_agent(args.opponent)
    if args.clairvoyant:
        agent = clairvoyant(agent)
    same_ref = args.ref == args.opponent
    per_wall, wins, deal_ins = [], np.zeros(2), np.zeros(2)
    t0 = time.perf_counter()
    for w in range(args.walls):
        seed = args.seed + w
        ref_res = play([ref] * 4, seed, args.rules) if same_ref else None
        gains = []
        for s in range(4):
            reset_agent(agent, seed * 4 + s, args.rules)  # the preset played: a search never guesses it
            specs = [opp] * 4
            specs[s] = agent
            a = play(specs, seed, args.rules)
            if not same_ref:
                specs[s] = ref
                ref_res = play(specs, seed, args.rules)
            gains.append(a["points"][s] - ref_res["points"][s])
            for i, r in enumerate((a, ref_res)):
                wins[i] += r["winner"] == s
                deal_ins[i] += r["discarder"] == s
        per_wall.append(float(np.mean(gains)))
    g = np.asarray(per_wall)
    mean, se = float(g.mean()), float(g.std(ddof=1) / math.sqrt(len(g)))
    hands = 4 * args.walls
    stats = getattr(agent, "stats", {})
    res = {
        "agent": args.agent,
        "ref": args.ref,
        "opponent": args.opponent,
        "walls": args.walls,
        "hands": hands,
        "seed": args.seed,
        "paired_mean": mean,
        "ci95": [mean - 1.96 * se, mean + 1.96 * se],
        "win_rate": [float(wins[0] / hands), float(wins[1] / hands)],
        "deal_in_rate": [float(deal_ins[0] / hands), float(deal_ins[1] / hands)],
        "wall_s": time.perf_counter() - t0,
    }
    if stats.get("searched"):
        res.update(
            searched=stats["searched"],
            deviated=stats["deviated"],
            fallback=stats["fallback"],
            ms_per_search=1000 * stats["search_s"] / stats["searched"],
            rollouts_per_s=stats["rollouts"] / max(stats["search_s"], 1e-9),
        )
    if args.json:
        print(json.dumps(res))
    else:
        print(
            f"{args.agent} vs {args.ref} in the same seat (opponents {args.opponent}), {hands} hands "
            f"({args.walls} walls x 4 seats, seed {args.seed}): paired gain {mean:+.2f} "
            f"[{res['ci95'][0]:+.2f}, {res['ci95'][1]:+.2f}] per hand; win rate {res['win_rate'][0]:.3f} vs "
            f"{res['win_rate'][1]:.3f}, deal-in {res['deal_in_rate'][0]:.3f} vs {res['deal_in_rate'][1]:.3f}; "
            f"{res['wall_s']:.0f} s"
        )
        if "searched" in res:
            print(
                f"  searched {res['searched']} decisions, deviated {res['deviated']}, fallback {res['fallback']}, "
                f"{res['ms_per_search']:.0f} ms/search, {res['rollouts_per_s']:,.0f} rollouts/s"
            )
    return res


if __name__ == "__main__":
    main()
