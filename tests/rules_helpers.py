"""Small helpers for the rule tests (``test_rules_*.py``): build a scripted game, act as a
seat with checks, open and resolve claim windows.

Expected values in the tests are always worked out by hand from docs/rules.md; nothing here calls
the engine's scoring or win detection.
"""

from __future__ import annotations

import numpy as np

from fzmj_env import Game
from fzmj_env.actions import A_CHI_HIGH, A_CHI_LOW, A_CHI_MID, A_HU, A_KONG, A_PASS, A_PENG, A_ROB, A_SELF_KONG
from fzmj_env.core import state
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_index, parse_tile_list

__all__ = [
    "K",
    "counts",
    "new_game",
    "act",
    "discard",
    "kong",
    "window",
    "resolve",
    "pass_all",
    "tsumogiri",
    "A_CHI_LOW",
    "A_CHI_MID",
    "A_CHI_HIGH",
    "A_PENG",
    "A_KONG",
    "A_SELF_KONG",
    "A_HU",
    "A_ROB",
    "A_PASS",
    "state",
]

_OPT_ACTIONS = [
    (state.OPT_HU, A_HU),
    (state.OPT_PENG, A_PENG),
    (state.OPT_KONG, A_KONG),
    (state.OPT_CHI_LOW, A_CHI_LOW),
    (state.OPT_CHI_MID, A_CHI_MID),
    (state.OPT_CHI_HIGH, A_CHI_HIGH),
    (state.OPT_ROB, A_ROB),
]


def K(tile: str) -> int:
    """Kind index of one tile in notation: ``K("5m") == 4``."""
    return kind_index(tile)


def counts(text: str) -> np.ndarray:
    """Counts over the 27 suit kinds of a notation string (hand comparisons)."""
    c = np.zeros(27, dtype=np.int32)
    for k in parse_tile_list(text):
        c[k] += 1
    return c


def new_game(
    dealer=0,
    hands=None,
    draws="",
    tail="",
    flowers=None,
    streak=0,
    hands_per_game=1,
    seed=1,
    rules="fuzhou-lianzhong",
    **kw,
) -> Game:
    """A game whose first hand is dealt from ``make_wall(...)`` (R3), under preset ``rules``."""
    wall = make_wall(dealer=dealer, hands=hands, draws=draws, tail=tail, flowers=flowers, **kw)
    g = Game(rules, hands_per_game=hands_per_game)
    g.reset(seed=seed, wall=wall, dealer=dealer, streak=streak)
    return g


def act(g: Game, seat: int, action: int) -> int:
    """Step ``action`` as ``seat``, checking that it is that seat's turn and the action is legal."""
    assert g.seat == seat, f"expected seat {seat} to act, got seat {g.seat} (phase {g.phase})"
    assert g.mask[action], f"action {action} not legal for seat {seat}; legal: {g.legal_actions}"
    return g.step(action)


def discard(g: Game, seat: int, tile: str) -> int:
    return act(g, seat, K(tile))


def kong(g: Game, seat: int, tile: str) -> int:
    """Concealed or added kong of ``tile`` at ``seat``'s own turn."""
    return act(g, seat, A_SELF_KONG + K(tile))


def window(g: Game) -> dict[int, set[int]]:
    """The open claim window: every seat asked (nearest to the discarder first) -> its legal
    actions (pass excluded). Empty if no window is open."""
    if g.phase != "claim":
        return {}
    v = g.view
    out = {}
    for i in range(int(v.m[state.N_ASK])):
        s = int(v.ask[i])
        o = int(v.opts[s])
        out[s] = {a for bit, a in _OPT_ACTIONS if o & bit}
    return out


def resolve(g: Game, choices: dict[int, int] | None = None) -> int:
    """Answer the open claim window: each seat in ``choices`` takes its action, every other
    asked seat passes. Every seat in ``choices`` must be asked. Returns the last step code."""
    choices = dict(choices or {})
    asked = list(window(g))
    assert asked, f"no claim window is open (phase {g.phase})"
    missing = set(choices) - set(asked)
    assert not missing, f"seats {sorted(missing)} were not asked; asked: {asked}"
    code = 0
    for s in asked:
        code = act(g, s, choices.get(s, A_PASS))
    return code


def pass_all(g: Game) -> int:
    """Pass on the open claim window, if any."""
    return resolve(g) if g.phase == "claim" else 0


def tsumogiri(g: Game, turns: int | None = None, first_discard: dict[int, str] | None = None) -> int:
    """Play on: every claim window is passed, every turn discards the tile just drawn (a turn
    without a draw discards ``first_discard[seat]``, else the seat's lowest tile). Stops after
    ``turns`` discards or when the game is over. Returns the last step code."""
    first_discard = dict(first_discard or {})
    code = 0
    n = 0
    while not g.done and (turns is None or n < turns):
        if g.phase == "claim":
            code = pass_all(g)
            continue
        seat = g.seat
        last = int(g.view.m[state.LAST_DRAW])
        if seat in first_discard:
            k = K(first_discard.pop(seat))
        elif last >= 0:
            k = last
        else:
            k = int(np.flatnonzero(g.hand(seat))[0])
        code = act(g, seat, k)
        n += 1
    return code
