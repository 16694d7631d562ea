"""A league of many agents: every pair plays duplicate matches, results are cached, agents are rated.

    fzmj-league --agents random random:1 heuristic ppo:runs/x/checkpoints/update_000100.pt \\
                --hands-per-pairing 2000 --workers 2 --dir league

**Matches.** Every pair of agents (a *pairing*) plays on the same walls, through the duplicate
evaluator (:func:`fzmj.agents.evaluate.evaluate`, reused as it is: this package has no game loop).
Format ``1v3`` (default): two matches, ``[A, B]`` (A against three B) and ``[B, A]`` (B
against three A), each playing ``W = hands_per_pairing / 8`` walls in all four seat
rotations; format ``2v2``: one match ``[A, B, A, B]`` (alternating seats) on
``W = hands_per_pairing / 4`` walls. Every match of a league uses the league's seed, so
wall ``w`` is the same deal in every match of every pairing.

**Pair statistic.** For a pairing (A, B) and wall w, ``d_w`` is A's mean score per hand on
that wall minus B's (in 1v3 the mean of the two matches' differences on the wall); the pair's
``mean_diff`` is the mean of ``d_w`` over the walls and its 95% interval the Student-t
interval over walls (walls are independent, the hands within a wall are not).

**Rating.** A score-margin paired-comparison model (the Gaussian counterpart of
Bradley-Terry, a.k.a. Massey ratings): ratings ``r`` with ``sum(r) = 0`` that fit
``r_A - r_B ≈ mean_diff(A, B)`` by least squares over the pairings. In a full round robin
``r_A`` is A's mean score difference per hand against the league's agents, counting itself as
0 (``sum_B mean_diff(A, B) / n``), in points per hand. Its 95% interval is a percentile
bootstrap over walls: the walls are resampled jointly for every pairing (they are the same
deals), and the fit is redone per resample. Why not OpenSkill or Elo: both update game by
game, so a rating would depend on the order the league grew in (not only on its results), and
a win/loss model throws away the margin, which is the whole score in mahjong.

**Cache.** ``LEAGUE_DIR/matches/<key>.json`` holds one match; the key hashes the agents'
identities in slot order, the walls, the seed, the batch and the rules' identity. An agent's
identity is its spec for a built-in (``random``, ``random:1``, ``heuristic``), the SHA-256 of
the file for an agent loaded from a file (``ppo:PATH``), and the SHA-256 of the module file for
``python:module:Class``. So adding an agent plays only its pairings, an interrupted league
resumes at the first missing match, and a changed checkpoint is a new agent. The folder also
holds ``config.json`` (seed, format, hands per pairing, batch, rules: fixed for the folder),
``roster.json`` (the agents, added to by ``--agents`` and by ``fzmj-train``'s ``league_dir``),
and the outputs ``league.json`` and ``league.html``.

**A checked cache.** Every cache entry carries the SHA-256 of its own content: an entry changed
after it was written (one agent's results edited by hand, say) is refused with one line naming
the file and exit 2, not replayed (an edit is deliberate; replaying would hide it); deleting the
file replays that match. Entries, the config and the roster are also checked field by field:
NaN or Infinity, a wrong type, a negative or wrong hand count are refused the same way, and no
NaN is ever written. ``league.json`` and ``league.html`` are checked to be writable before any
match is played.

Modules: :mod:`.folder` (settings, roster, identities), :mod:`.cache` (schedule, entries,
playing), :mod:`.ratings` (the table), :mod:`.report` (Markdown, HTML), :mod:`.cli` (``fzmj-league``).
"""

from __future__ import annotations

from .cache import Match, play, schedule
from .cli import main
from .folder import (
    BOOTSTRAP,
    CONFIG_FILE,
    DEFAULT_HANDS,
    FORMATS,
    LEAGUE_VERSION,
    MATCH_DIR,
    ROSTER_FILE,
    Entrant,
    LeagueConfig,
    LeagueError,
    add_agents,
    add_to_league,
    agent_identity,
    check_league,
    entrants,
    normalize_spec,
    open_league,
    remove_agents,
    rules_identity,
    save_config,
    write_roster,
)
from .ratings import standings
from .report import html_page, markdown

__all__ = [
    "LeagueError",
    "LeagueConfig",
    "Entrant",
    "Match",
    "open_league",
    "save_config",
    "add_agents",
    "remove_agents",
    "write_roster",
    "entrants",
    "normalize_spec",
    "schedule",
    "play",
    "standings",
    "markdown",
    "html_page",
    "add_to_league",
    "check_league",
    "agent_identity",
    "rules_identity",
    "main",
    "BOOTSTRAP",
    "CONFIG_FILE",
    "DEFAULT_HANDS",
    "FORMATS",
    "LEAGUE_VERSION",
    "MATCH_DIR",
    "ROSTER_FILE",
]
