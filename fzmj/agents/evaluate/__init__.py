"""Duplicate-format evaluation of four agents: the library function and the ``fzmj-eval`` CLI.

    fzmj-eval --agents heuristic random random random --hands 10000 --seed 0 --workers 2 --out results.json

**Duplicate format.** A *wall* is one shuffled deal (wall order, gold, first dealer): the seed
of wall ``w`` is ``game_seed(seed, w, 0)``. Every wall is played 4 times, once per *seat
rotation* ``r = 0..3``: in rotation r the agent of slot i (its position in ``--agents``; with
fewer than 4 agents the last one fills the remaining slots, so ``A B`` is A against three B)
sits at seat ``(i + r) % 4``. So each slot plays every seat of every wall, holding the same
tiles another slot held in another rotation, and the luck of the deal cancels out of the
comparison. ``--hands`` is rounded up to a multiple of 4 (``hands = 4 x walls``); each game
is a single hand.

**Statistics.** An agent is a distinct spec (or Agent object); an agent in several slots is
pooled over them. Its *score* is its points per hand. ``mean_score`` is the mean over walls
of its mean score on that wall (4 rotations x its slots), and ``ci95`` the Student-t 95%
interval of that mean over the walls (walls are independent; the hands within a wall are
not). Rates are per hand it played: ``win_rate``, ``self_draw_rate`` (wins not on a discard:
self-draw, 三金倒, 天胡 and 抢金, all paid by the three others), ``deal_in_rate`` (放胡: it
discarded the winning tile), ``draw_rate`` (hands nobody won). ``mean_win_value`` is the mean
V (R11.4) of its wins and ``specials`` counts each special its wins qualified for.
``per_slot`` gives the main figures per slot as well (four copies of one deterministic agent
score exactly 0 in every slot: each wall is then the same game in all 4 rotations).
With two or more distinct agents: a pairwise table (mean score difference per hand, its CI
over walls, and how often the row agent out-scores the column agent in a hand) and OpenSkill
(Plackett-Luce) ratings, updated hand by hand in wall order with the agents' hand scores.

**Paired evaluation** (``--paired REF``, ``evaluate(..., paired=REF)``): every wall and seat
rotation is played a second time with REF in slot 0 instead of the first agent, against the same
opponents in the same seats (``--agents X Y --paired REF``: X against three Y, then REF against
the same three Y; the other slots' agents keep their reset seeds). ``paired`` in the results
holds the mean per-hand difference of slot 0's score (X − REF) over the ``hands`` paired hands
and its Student-t 95% interval over walls: the luck of the deal and of the opponents' seats
cancels hand by hand, so it is far narrower than the difference of two separate evaluations.
A REF equal to the first agent plays the same games: exactly 0, interval [0, 0].

**Determinism.** The walls are split into fixed batches of ``batch // 4`` walls (``batch``
tables at once); every agent is ``reset(seed)`` at the start of each batch with a seed
``keyed_agent_seed(agent_seed, batch index, agent, own seed)``: a keyed BLAKE2b hash, which tells
the agent nothing about the walls' seed. The results depend on (agents, hands, seed, agent_seed,
batch, rules) only, never on ``workers``.

**Secret seeds.** Without ``--seed``, a run draws a secret 64-bit walls' seed; without
``--agent-seed``, ``fzmj-eval`` draws the agents' key too (the library's ``evaluate`` derives it
from ``seed`` instead). Both are shown only after the play, in the report, ``results.json``
(``seed``, ``agent_seed``, ``reproduce``) and the records: ``--seed S --agent-seed K`` replays
the run exactly; ``--seed S`` alone gives the same walls, and the same results for agents that
do not draw random numbers. A seed a bot knows (a small or published one) lets it deal every
wall: see docs/protocol.md, "Threat model".
"""

from .cli import main
from .play import wall_seeds
from .report import markdown, plot
from .run import DEFAULT_BATCH, EvalConfigError, evaluate
from .stats import mean_ci95, t_quantile_975

__all__ = [
    "evaluate",
    "main",
    "markdown",
    "plot",
    "EvalConfigError",
    "wall_seeds",
    "mean_ci95",
    "t_quantile_975",
    "DEFAULT_BATCH",
]
