"""``fzmj-league``: add agents to a league folder, play the missing matches, print and write the table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fzmj_env.atomic import write_atomic
from fzmj_env.cli import OneLineParser, check_output_file, run_cli
from fzmj_env.rules import DEFAULT_RULES

from .. import SPEC_HELP, AgentSpecError
from ..evaluate.play import EvalConfigError
from .cache import play
from .folder import (
    DEFAULT_HANDS,
    FORMATS,
    LeagueError,
    _write_json,
    add_agents,
    check_roster_size,
    entrants,
    folder_lock,
    open_league,
    remove_agents,
    roster_estimate,
    save_config,
    write_roster,
)
from .ratings import standings
from .report import html_page, markdown

OUTPUTS = ("league.json", "league.html")


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="fzmj-league",
        description="Rank many agents: every pair plays duplicate matches on shared walls; results are cached "
        "in the league folder, so adding an agent plays only its new pairings and a stopped league resumes.",
        epilog=f"Agent specs: {SPEC_HELP}. Outputs: a Markdown leaderboard on stdout, DIR/league.json, DIR/league.html.",
    )
    p.add_argument("--agents", nargs="+", default=[], metavar="SPEC", help="agents to add to the league (its roster)")
    p.add_argument("--remove", nargs="+", default=[], metavar="NAME", help="agents to take out of the roster")
    p.add_argument("--dir", default="league", metavar="LEAGUE_DIR", help="league folder (default ./league)")
    p.add_argument(
        "--hands-per-pairing", type=int, help=f"hands per pair of agents (default {DEFAULT_HANDS}; fixed per folder)"
    )
    p.add_argument("--format", choices=FORMATS, help="1v3 (default): A vs three B and B vs three A; 2v2: A B A B")
    p.add_argument("--rules", help=f"rule preset or rules file (default {DEFAULT_RULES}; fixed per folder)")
    p.add_argument(
        "--seed", type=int, help="seed of the walls (default: drawn at random for a new folder; fixed per folder)"
    )
    p.add_argument(
        "--workers", type=int, default=1, help="processes playing matches (default 1; results do not depend on it)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress output")
    return p


def _check_outputs(root: Path) -> None:
    """The tables are written after the matches: a folder or a read-only file in their place is
    refused before any match is played."""
    for name in OUTPUTS:
        try:
            check_output_file(root / name, name)
        except ValueError as e:
            raise LeagueError(str(e)) from None


def _run(args) -> int:
    root = Path(args.dir)
    if root.exists() and not root.is_dir():
        raise LeagueError(f"league folder {str(root)!r} is not a directory")
    with folder_lock(root, "run"):  # a second run on the folder waits (docs/league.md, Concurrent runs)
        return _run_locked(args, root)


def _run_locked(args, root: Path) -> int:
    with folder_lock(root, "roster"):  # read, extend and write the roster and the settings at once
        cfg = open_league(
            args.dir, seed=args.seed, format=args.format, hands_per_pairing=args.hands_per_pairing, rules=args.rules,
            write=False,
        )  # fmt: skip
        roster = remove_agents(add_agents(args.dir, args.agents, write=False), args.remove)
        if len(roster) < 2:
            raise LeagueError(
                f"a league needs at least 2 agents, the folder {args.dir!r} would have {len(roster)}; "
                "add some with --agents"
            )
        check_roster_size(len(roster), cfg)  # before any agent is loaded
        if not args.no_progress:
            sys.stderr.write(f"fzmj-league: {roster_estimate(len(roster), cfg)}\n")
        ents = entrants(roster)  # every agent loads and is distinct before the roster is saved
        save_config(args.dir, cfg)
        _check_outputs(root)
        write_roster(args.dir, roster)
    played = play(args.dir, cfg, ents, workers=args.workers, progress=not args.no_progress)
    res = standings(args.dir, cfg, ents, played)
    try:
        _write_json(root / "league.json", res)
        write_atomic(root / "league.html", html_page(res))
    except OSError as e:  # a full disk, a folder removed meanwhile: one line naming the file, exit 1
        sys.stderr.write(f"fzmj-league: error: {e}\n")
        return 1
    print(markdown(res))
    return 0


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be >= 1")
    if args.hands_per_pairing is not None and args.hands_per_pairing < 1:
        p.error("--hands-per-pairing must be >= 1")
    if len(set(args.agents)) != len(args.agents):
        dup = next(s for s in args.agents if args.agents.count(s) > 1)
        p.error(f"duplicate agent spec {dup!r}")
    return run_cli(
        p,
        lambda: _run(args),
        (LeagueError, AgentSpecError, EvalConfigError),
        "interrupted; the finished matches are saved, run it again to resume",
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
