"""``fzmj-demo``: a short match between four agents (heuristic players by default), hand by hand:
who wins, how, the value line and the running scores."""

from __future__ import annotations

import sys
import time

import numpy as np

from fzmj_env.checks import check_hands_per_game, check_seed
from fzmj_env.cli import OneLineParser
from fzmj_env.encode import NUM_CHANNELS, encode_table
from fzmj_env.game import Game
from fzmj_env.rules import DEFAULT_RULES, RulesError, available_rules
from fzmj_env.tiles import kind_name

from .base import reset_agent
from .specs import SPEC_HELP, AgentSpecError, make_agent

DEFAULT_AGENTS = ["heuristic"]


def _describe(r: dict) -> str:
    """One hand's result as a line: the winner, the win, its value and what it is made of."""
    if r["winner"] is None:
        return "drawn hand (和局)"
    specials = ""
    if r["specials"]:
        values = ", ".join(f"{k} {v}" for k, v in r["special_values"].items())
        specials = f", specials {values} (counted: {', '.join(r['specials_counted']) or 'none'})"
    on = f" on seat {r['discarder']}'s discard" if r["discarder"] is not None else ""
    return (
        f"seat {r['winner']} wins by {r['win_type']}{on}, value {r['value']} "
        f"(flowers {r['flower_points']}, golds {r['gold_points']}{specials})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="fzmj-demo", description=__doc__)
    parser.add_argument("--hands", type=int, default=8, help="hands to play (a match: dealer and streak carry over)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the walls, the first dealer and the agents")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=DEFAULT_AGENTS,
        metavar="SPEC",
        help=f"one spec for all four seats, or four (seat order; default: heuristic). {SPEC_HELP}",
    )
    parser.add_argument(
        "--rules",
        default=DEFAULT_RULES,
        help=f"rule preset ({', '.join(available_rules())}) or a preset YAML file (default {DEFAULT_RULES})",
    )
    args = parser.parse_args(argv)
    try:  # usage errors: one line, exit 2, before any work
        check_hands_per_game(args.hands)
        check_seed(args.seed)
    except ValueError as e:
        parser.error(str(e).replace("hands_per_game", "--hands", 1).replace("seed", "--seed", 1))
    if len(args.agents) not in (1, 4):
        parser.error(f"--agents takes one spec (all four seats) or four, got {len(args.agents)}")
    specs = args.agents * 4 if len(args.agents) == 1 else args.agents

    t0 = time.perf_counter()
    try:
        game = Game(args.rules, hands_per_game=args.hands)
        agents = [make_agent(s) for s in specs]
    except (RulesError, AgentSpecError) as exc:
        parser.error(str(exc))
    for seat, agent in enumerate(agents):
        reset_agent(agent, (args.seed * 4 + seat) % 2**64, game.rules)
    print(f"rules: {game.rules.name}; seats 0-3: {', '.join(specs)}")
    game.reset(seed=args.seed)
    obs = np.zeros((NUM_CHANNELS, 27), dtype=np.int8)
    done_hands = 0
    print(f"hand 1: dealer seat {game.dealer}, gold {kind_name(game.gold)}")
    while not game.done:
        seat = game.seat
        encode_table(game.buf, 0, seat, obs)
        game.step(int(np.asarray(agents[seat].act(obs[None], game.mask[None])).reshape(-1)[0]))
        if len(game.results) > done_hands:
            r = game.results[-1]
            done_hands += 1
            print(f"  result: {_describe(r)}; points {r['points']}; scores {game.scores}")
            if not game.done:
                print(
                    f"hand {done_hands + 1}: dealer seat {game.dealer} (streak {game.streak}), gold {kind_name(game.gold)}"
                )
    wins = sum(r["winner"] is not None for r in game.results)
    print(
        f"final scores: {game.scores} ({wins} of {len(game.results)} hands won, {len(game.decisions)} decisions, "
        f"{time.perf_counter() - t0:.1f} s; the first run compiles the Numba kernels)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
