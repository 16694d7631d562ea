"""``fzmj-demo``: play a few hands between random agents and print each result and score."""

from __future__ import annotations

import sys
import time

import numpy as np

from .checks import check_hands_per_game, check_seed
from .cli import OneLineParser
from .game import Game
from .rules import DEFAULT_RULES, RulesError, available_rules
from .tiles import kind_name


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="fzmj-demo", description=__doc__)
    parser.add_argument("--hands", type=int, default=8, help="hands to play (a match: dealer and streak carry over)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the walls, the first dealer and the random agents")
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

    t0 = time.perf_counter()
    try:
        game = Game(args.rules, hands_per_game=args.hands)
    except RulesError as exc:
        parser.error(str(exc))
    print(f"rules: {game.rules.name}")
    game.reset(seed=args.seed)
    print(f"engine ready in {time.perf_counter() - t0:.1f} s (the first run compiles the Numba kernels)")
    rng = np.random.default_rng(args.seed)
    done_hands = 0
    print(f"hand 1: dealer seat {game.dealer}, gold {kind_name(game.gold)}")
    while not game.done:
        game.step(int(rng.choice(game.legal_actions)))
        if len(game.results) > done_hands:
            r = game.results[-1]
            done_hands += 1
            if r["winner"] is None:
                what = "drawn hand (和局)"
            else:
                what = (
                    f"seat {r['winner']} wins by {r['win_type']}"
                    + (f" on seat {r['discarder']}'s discard" if r["discarder"] is not None else "")
                    + f", value {r['value']} (flowers {r['flower_points']}, golds {r['gold_points']}"
                    + (
                        ", specials "
                        + ", ".join(f"{k} {v}" for k, v in r["special_values"].items())
                        + f" (counted: {', '.join(r['specials_counted']) or 'none'})"
                        if r["specials"]
                        else ""
                    )
                    + ")"
                )
            print(f"  result: {what}; points {r['points']}; scores {game.scores}")
            if not game.done:
                print(
                    f"hand {done_hands + 1}: dealer seat {game.dealer} (streak {game.streak}), gold {kind_name(game.gold)}"
                )
    print(f"final scores: {game.scores} ({len(game.decisions)} decisions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
