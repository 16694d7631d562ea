"""Is a table record one the engine could have reached? A cheap check for restored states.

A state handed back to an env (``restore_state``, an unpickled env) may come from a file, from
another program or from an edit. The engine trusts its record (a wrong index reads out of
bounds), so a restored record is checked first: ranges of the scalars and counts, the wall a
permutation of the 144-tile set (R1), and, while a hand is being played, every tile accounted
for exactly once: the tiles drawn from the wall are the hands, the flowers laid out, the melds,
the unclaimed discards and the gold indicator (R3-R5). The rules themselves are not repeated
here: the acting seat's legal mask (the engine's ``legal_mask``) must just offer something.

``table_problem`` returns 0 or the index of the first failed check in ``PROBLEMS`` (~1 µs).
"""

from __future__ import annotations

import numpy as np

from .engine import acting_seat, legal_mask
from .jit import njit
from .state import (
    ASK_POS,
    CUR,
    DEALER,
    GOLD,
    HAND_ACTIVE,
    HAND_NO,
    HANDS_PER_GAME,
    HEAD,
    MAX_DISCARDS,
    MAX_MELDS,
    MELD_CHI,
    MELD_CONCEALED_KONG,
    MELD_PENG,
    N_ASK,
    NUM_ACTIONS,
    PH_CLAIM,
    PH_OVER,
    PHASE,
    TAIL,
)

PROBLEMS = (
    "",
    "a scalar is out of range (phase, seat to act, dealer, hand number, wall indices or gold)",
    "the wall is not the 144-tile set (R1)",
    "a count is out of range (concealed tiles, flowers, melds or discards)",
    "a meld is not a meld (type or kind)",
    "the tiles do not add up: drawn from the wall != hands + flowers + melds + discards + gold indicator",
    "the claim window asks no seat, or a seat outside 0..3",
    "the seat to act has no legal action",
)
(
    OK,
    BAD_SCALAR,
    BAD_WALL,
    BAD_COUNT,
    BAD_MELD,
    BAD_TILES,
    BAD_CLAIM,
    NO_ACTION,
) = range(len(PROBLEMS))


@njit(cache=True, inline="always")
def _scalars_ok(m):
    if m[PHASE] < 0 or m[PHASE] > PH_OVER or m[CUR] > 3 or m[DEALER] < 0 or m[DEALER] > 3:
        return False
    if m[CUR] < (-1 if m[PHASE] == PH_OVER else 0):  # -1 once the game is over
        return False
    if m[HANDS_PER_GAME] < 1 or m[HAND_NO] < 0 or m[HAND_NO] > m[HANDS_PER_GAME]:
        return False
    return 65 <= m[HEAD] <= 144 and m[HEAD] - 1 <= m[TAIL] <= 143 and 0 <= m[GOLD] < 27


@njit(cache=True, inline="always")
def _wall_ok(wall):
    counts = np.zeros(42, dtype=np.int64)
    for i in range(144):
        k = wall[i]
        if k < 0 or k >= 42:
            return False
        counts[k] += 1
    for k in range(42):
        if counts[k] != (4 if k < 34 else 1):
            return False
    return True


@njit(cache=True, inline="always")
def _counts_ok(tb):
    for s in range(4):
        if tb.n_melds[s] < 0 or tb.n_melds[s] > MAX_MELDS or tb.n_disc[s] < 0 or tb.n_disc[s] > MAX_DISCARDS:
            return False
        for k in range(27):
            if tb.hand[s, k] < 0 or tb.hand[s, k] > 4:
                return False
        for k in range(15):
            if tb.flowers[s, k] < 0 or tb.flowers[s, k] > (4 if k < 7 else 1):
                return False
        for j in range(tb.n_disc[s]):
            if tb.disc[s, j] < 0 or tb.disc[s, j] >= 27:
                return False
    return True


@njit(cache=True, inline="always")
def _melds_into(tb, held):
    """Add every meld's tiles to ``held``; False for a meld that is not one."""
    for s in range(4):
        for j in range(tb.n_melds[s]):
            t, k = tb.meld[s, j, 0], tb.meld[s, j, 1]
            if t < MELD_CHI or t > MELD_CONCEALED_KONG or k < 0 or k >= 27:
                return False
            if t == MELD_CHI:
                if k % 9 > 6 or k >= 27:
                    return False
                held[k] += 1
                held[k + 1] += 1
                held[k + 2] += 1
            else:
                held[k] += 3 if t == MELD_PENG else 4
    return True


@njit(cache=True, inline="always")
def _tiles_add_up(tb, held):
    """Tiles drawn from the wall (outside ``HEAD..TAIL``) == ``held`` + hands + flowers + discards + gold."""
    m = tb.m
    drawn = np.zeros(42, dtype=np.int64)
    for i in range(m[HEAD]):
        drawn[tb.wall[i]] += 1
    for i in range(m[TAIL] + 1, 144):
        drawn[tb.wall[i]] += 1
    held[m[GOLD]] += 1  # the indicator, set aside (R5)
    for s in range(4):
        for k in range(27):
            held[k] += tb.hand[s, k]
        for k in range(15):
            held[27 + k] += tb.flowers[s, k]
        for j in range(tb.n_disc[s]):
            if not tb.disc_claimed[s, j]:
                held[tb.disc[s, j]] += 1
    for k in range(42):
        if drawn[k] != held[k]:
            return False
    return True


@njit(cache=True)
def table_problem(tb):
    """0 if ``tb`` passes every check (see the module docstring), else the first failed one's index."""
    m = tb.m
    if not _scalars_ok(m):
        return BAD_SCALAR
    if not _wall_ok(tb.wall):
        return BAD_WALL
    if not _counts_ok(tb):
        return BAD_COUNT
    if m[PHASE] == PH_OVER or m[HAND_ACTIVE] != 1:
        return OK  # a finished game: nothing is played from it
    held = np.zeros(42, dtype=np.int64)
    if not _melds_into(tb, held):
        return BAD_MELD
    if not _tiles_add_up(tb, held):
        return BAD_TILES
    if m[PHASE] == PH_CLAIM:
        if m[N_ASK] < 1 or m[N_ASK] > 4 or m[ASK_POS] < 0 or m[ASK_POS] >= m[N_ASK]:
            return BAD_CLAIM
        for i in range(m[N_ASK]):
            if tb.ask[i] < 0 or tb.ask[i] > 3:
                return BAD_CLAIM
    return OK


@njit(cache=True)
def check_and_mask(buf, t, wt, mask):
    """``table_problem`` of table ``t``, then its acting seat's legal mask into ``mask``; returns
    ``(problem, seat)`` (seat -1: the game is over)."""
    tb = buf[t]
    p = table_problem(tb)
    if p != OK:
        return p, -1
    legal_mask(tb, wt, mask)
    seat = acting_seat(tb)
    if seat >= 0:
        n = 0
        for a in range(NUM_ACTIONS):
            n += mask[a]
        if n == 0:
            return NO_ACTION, seat
    return OK, seat
