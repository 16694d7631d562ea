"""Scoring of a finished hand (R11). Preset numbers come from the rule slots of ``tb.m``."""

from __future__ import annotations

from numba import njit

from .hand import is_golden_dragon_counts, is_golden_pair_counts
from .state import (
    DISCARDER,
    FLOWER_PTS,
    GOLD,
    GOLD_PTS,
    MELD_ADDED_KONG,
    MELD_CONCEALED_KONG,
    MELD_EXPOSED_KONG,
    N_SPECIALS,
    R_BASE,
    R_FLOWER_SET_BONUS,
    R_KONG_CONCEALED_PTS,
    R_KONG_EXPOSED_PTS,
    R_MULT,
    R_SPECIAL_VALUES,
    SP_GOLDEN_DRAGON,
    SP_GOLDEN_PAIR,
    SP_HEAVENLY,
    SP_NO_FLOWER,
    SP_ONE_FLOWER,
    SP_ROB_GOLD,
    SP_THREE_GOLDS,
    SPECIALS,
    STREAK,
    VALUE,
    WIN_TYPE,
    WINNER,
    WT_DISCARD,
    WT_HEAVENLY,
    WT_ROB_GOLD,
    WT_SELF_DRAW,
    WT_THREE_GOLDS,
)


@njit(cache=True)
def flower_sets_of(tb, seat):
    """Complete flower sets laid out by ``seat``: 4 of one honor, 春夏秋冬, 梅兰竹菊 (R11.1)."""
    fl = tb.flowers[seat]
    n = 0
    for i in range(7):  # honors 1z..7z, 4 copies each
        if fl[i] == 4:
            n += 1
    if fl[7] + fl[8] + fl[9] + fl[10] == 4:  # 春夏秋冬 (1f..4f)
        n += 1
    if fl[11] + fl[12] + fl[13] + fl[14] == 4:  # 梅兰竹菊 (5f..8f)
        n += 1
    return n


@njit(cache=True)
def flower_count(tb, seat):
    """Flower tiles laid out by ``seat``."""
    n = 0
    for i in range(15):
        n += tb.flowers[seat, i]
    return n


@njit(cache=True)
def kongs_of(tb, seat):
    """(exposed or added kongs, concealed kongs) made by ``seat``."""
    exposed = 0
    concealed = 0
    for j in range(tb.n_melds[seat]):
        t = tb.meld[seat, j, 0]
        if t == MELD_EXPOSED_KONG or t == MELD_ADDED_KONG:
            exposed += 1
        elif t == MELD_CONCEALED_KONG:
            concealed += 1
    return exposed, concealed


@njit(cache=True)
def flower_points(tb, seat):
    """R11.1: 1 per flower laid out (a complete set counts 6 instead of 4) + kongs 1 / 2."""
    m = tb.m
    exposed, concealed = kongs_of(tb, seat)
    return (
        flower_count(tb, seat)
        + m[R_FLOWER_SET_BONUS] * flower_sets_of(tb, seat)
        + m[R_KONG_EXPOSED_PTS] * exposed
        + m[R_KONG_CONCEALED_PTS] * concealed
    )


@njit(cache=True)
def score_win(tb, wt, winner, win_type, discarder):
    """Fill the result slots and ``tb.points`` for a win (R11.2–R11.4)."""
    m = tb.m
    gold = m[GOLD]
    hand = tb.hand[winner]
    n_flowers = flower_count(tb, winner)
    exposed, concealed = kongs_of(tb, winner)
    n_kongs = exposed + concealed
    golds = hand[gold]

    bits = 0
    if win_type == WT_HEAVENLY:
        bits |= 1 << SP_HEAVENLY
    if win_type == WT_ROB_GOLD:
        bits |= 1 << SP_ROB_GOLD
    if n_kongs == 0 and n_flowers == 0:
        bits |= 1 << SP_NO_FLOWER
    if n_kongs == 0 and n_flowers == 1:
        bits |= 1 << SP_ONE_FLOWER
    # 三金倒: every self-drawn win holding 3 golds, never 抢金 or a discard win (R11.3)
    if golds >= 3 and (win_type == WT_HEAVENLY or win_type == WT_THREE_GOLDS or win_type == WT_SELF_DRAW):
        bits |= 1 << SP_THREE_GOLDS
    if is_golden_pair_counts(wt, hand, gold):
        bits |= 1 << SP_GOLDEN_PAIR
    if is_golden_dragon_counts(wt, hand, gold):
        bits |= 1 << SP_GOLDEN_DRAGON

    best = 0  # only the highest special is paid
    for i in range(N_SPECIALS):
        if bits & (1 << i) and m[R_SPECIAL_VALUES + i] > best:
            best = m[R_SPECIAL_VALUES + i]

    fp = flower_points(tb, winner)
    value = (fp + golds + m[STREAK] + m[R_BASE]) * m[R_MULT] + best

    for s in range(4):
        tb.points[s] = 0
    if win_type == WT_DISCARD:
        tb.points[discarder] = -value
        tb.points[winner] = value
    else:  # self-draw, 天胡, 抢金, 三金倒: each other seat pays V
        for s in range(4):
            if s != winner:
                tb.points[s] = -value
        tb.points[winner] = 3 * value

    m[WINNER] = winner
    m[WIN_TYPE] = win_type
    m[DISCARDER] = discarder
    m[FLOWER_PTS] = fp
    m[GOLD_PTS] = golds
    m[SPECIALS] = bits
    m[VALUE] = value


@njit(cache=True)
def score_draw(tb):
    """A drawn hand (和局) pays nothing (R11.4)."""
    m = tb.m
    for s in range(4):
        tb.points[s] = 0
    m[WINNER] = -1
    m[WIN_TYPE] = -1
    m[DISCARDER] = -1
    m[FLOWER_PTS] = 0
    m[GOLD_PTS] = 0
    m[SPECIALS] = 0
    m[VALUE] = 0
