"""Scoring of a finished hand (R11, docs/presets.md P0–P5). Preset numbers and the scheme come from
the rule slots of ``tb.m``: the default (P1) is the first branch, the presets' formulas follow."""

from __future__ import annotations

from .hand import (
    is_gold_kan_counts,
    is_golden_dragon_counts,
    is_golden_pair_counts,
    is_plain_win_counts,
    is_win_counts,
)
from .jit import njit
from .state import (
    DEALER,
    DISCARDER,
    FLOWER_PTS,
    GOLD,
    GOLD_PTS,
    LAST_DRAW,
    MELD_ADDED_KONG,
    MELD_CONCEALED_KONG,
    MELD_EXPOSED_KONG,
    N_SPECIALS,
    R_BASE,
    R_DISCARD_BONUS,
    R_FLOWER_SET_BONUS,
    R_KONG_CONCEALED_PTS,
    R_KONG_EXPOSED_PTS,
    R_LOSS_CAP,
    R_MULT,
    R_SCHEME,
    R_SPECIAL_BONUS,
    R_SPECIAL_VALUES,
    R_SWIM_MULT,
    RES_SPECIAL_VALUES,
    SCHEME_BIANFENG,
    SCHEME_CLASSIC,
    SCHEME_LIANZHONG,
    SCHEME_LIANZHONG_2,
    SP_FULL_FLUSH,
    SP_GOLD_KAN,
    SP_GOLDEN_DRAGON,
    SP_GOLDEN_PAIR,
    SP_HALF_FLUSH,
    SP_HEAVENLY,
    SP_NO_FLOWER,
    SP_ONE_FLOWER,
    SP_ROB_GOLD,
    SP_THREE_GOLDS,
    SPECIALS,
    SPECIALS_COUNTED,
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


@njit(cache=True, inline="always")
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
def _highest(m, bits):
    """(value, bit set) of the highest-valued special among ``bits`` (the first one on a tie)."""
    best = 0
    best_bit = 0
    for i in range(N_SPECIALS):
        v = m[RES_SPECIAL_VALUES + i]
        if bits & (1 << i) and (best_bit == 0 or v > best):
            best = v
            best_bit = 1 << i
    return best, best_bit


@njit(cache=True)
def _pay(tb, winner, win_type, discarder, each):
    """Base payments: the discarder pays ``each`` on a discard win, else every other seat does."""
    for s in range(4):
        tb.points[s] = 0
    if win_type == WT_DISCARD:
        tb.points[discarder] = -each
        tb.points[winner] = each
    else:
        for s in range(4):
            if s != winner:
                tb.points[s] = -each
        tb.points[winner] = 3 * each


@njit(cache=True)
def _dealer_pays_streak(tb, winner, amount):
    """抓庄 (P0): a non-dealer winner also gets ``amount`` (the streak) from the dealer."""
    m = tb.m
    d = m[DEALER]
    if winner != d and amount > 0:
        tb.points[d] -= amount
        tb.points[winner] += amount


@njit(cache=True, inline="always")
def _flush_bits(tb, wt, winner, gold, kan):
    """混一色 / 清一色 bit of the winning hand (P2): concealed tiles and melds, golds aside."""
    hand = tb.hand[winner]
    suits = 0
    for k in range(27):
        if hand[k] > 0 and k != gold:
            suits |= 1 << (k // 9)
    for j in range(tb.n_melds[winner]):
        suits |= 1 << (tb.meld[winner, j, 1] // 9)
    if suits != 1 and suits != 2 and suits != 4:
        return 0
    x = 0 if suits == 1 else (1 if suits == 2 else 2)
    if hand[gold] == 0 or (gold // 9 == x and (kan or is_plain_win_counts(wt, hand))):
        return 1 << SP_FULL_FLUSH
    return 1 << SP_HALF_FLUSH


@njit(cache=True, inline="always")
def score_win(tb, wt, winner, win_type, discarder):
    """Fill the result slots and ``tb.points`` for a win (R11.2–R11.4; docs/presets.md per scheme)."""
    m = tb.m
    gold = m[GOLD]
    hand = tb.hand[winner]
    n_flowers = flower_count(tb, winner)
    exposed, concealed = kongs_of(tb, winner)
    n_kongs = exposed + concealed
    golds = hand[gold]
    scheme = m[R_SCHEME]

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
    for i in range(N_SPECIALS):
        m[RES_SPECIAL_VALUES + i] = m[R_SPECIAL_VALUES + i]

    fp = flower_points(tb, winner)
    if scheme == SCHEME_LIANZHONG:  # P1 = R11.4: only the highest special is paid
        best, counted = _highest(m, bits)
        value = (fp + golds + m[STREAK] + m[R_BASE]) * m[R_MULT] + best
        _pay(tb, winner, win_type, discarder, value)
    else:
        bits, counted, value, fp = _score_preset(tb, wt, winner, win_type, discarder, bits, fp, golds, scheme)

    m[WINNER] = winner
    m[WIN_TYPE] = win_type
    m[DISCARDER] = discarder
    m[FLOWER_PTS] = fp
    m[GOLD_PTS] = golds
    m[SPECIALS] = bits
    m[SPECIALS_COUNTED] = counted
    m[VALUE] = value


@njit(cache=True, inline="always")
def _score_preset(tb, wt, winner, win_type, discarder, bits, fp, golds, scheme):
    """The preset schemes P2–P5 (the default's specials ``bits`` already found). Writes the
    payments; returns (listed specials, counted specials, value one paying seat pays before
    抓庄 and cap, the flower + kong points the scheme counted)."""
    m = tb.m
    gold = m[GOLD]
    hand = tb.hand[winner]
    dealer_won = winner == m[DEALER]
    streak = m[STREAK]
    self_like = win_type != WT_DISCARD
    no_fk = (bits >> SP_NO_FLOWER) & 1 == 1  # no flower and no kong
    if scheme == SCHEME_CLASSIC:  # P2
        kan = win_type == WT_SELF_DRAW and m[LAST_DRAW] == gold and is_gold_kan_counts(wt, hand, gold)
        if kan:
            bits |= 1 << SP_GOLD_KAN
        if kan or golds >= 3 or is_win_counts(wt, hand, gold):
            bits |= _flush_bits(tb, wt, winner, gold, kan)
        if win_type == WT_HEAVENLY or win_type == WT_ROB_GOLD or win_type == WT_THREE_GOLDS:
            group = (1 << SP_THREE_GOLDS) | (1 << SP_ROB_GOLD) | (1 << SP_GOLDEN_PAIR) | (1 << SP_GOLDEN_DRAGON)
            top, counted = _highest(m, bits & group)
            sp = top
            for i in range(N_SPECIALS):  # every special outside the group adds on
                if (bits & ~group) >> i & 1:
                    sp += m[RES_SPECIAL_VALUES + i]
                    counted |= 1 << i
        else:
            sp, counted = _highest(m, bits)
        n = fp + golds + m[R_BASE] + (streak if dealer_won else 0)
        value = n * m[R_MULT] + sp if self_like else n + sp
        _pay(tb, winner, win_type, discarder, value)
        _dealer_pays_streak(tb, winner, streak)
        return bits, counted, value, fp
    if scheme == SCHEME_LIANZHONG_2 or scheme == SCHEME_BIANFENG:
        rob = win_type == WT_HEAVENLY or win_type == WT_ROB_GOLD
        if scheme == SCHEME_LIANZHONG_2:  # P3: widened 抢金
            dealer = m[DEALER]
            if self_like and dealer_won and tb.n_disc[dealer] == 0:
                rob = True  # a dealer win before its first discard
            if win_type == WT_DISCARD and discarder == dealer and tb.n_disc[dealer] == 1:
                rob = True  # a win on the dealer's first discard (its claim window)
        if rob:
            bits |= 1 << SP_ROB_GOLD
        bits &= ~((1 << SP_HEAVENLY) | (1 << SP_ONE_FLOWER) | (1 << SP_GOLDEN_DRAGON))
        if scheme == SCHEME_LIANZHONG_2:
            if bits & ((1 << SP_ROB_GOLD) | (1 << SP_THREE_GOLDS) | (1 << SP_GOLDEN_PAIR)):
                bits &= ~(1 << SP_NO_FLOWER)  # 平胡 only without 金雀, 三金倒, 抢金
            if no_fk:  # +10 to 抢金, 三金倒, 金雀 with no flower and no kong
                for i in (SP_ROB_GOLD, SP_THREE_GOLDS, SP_GOLDEN_PAIR):
                    m[RES_SPECIAL_VALUES + i] += m[R_SPECIAL_BONUS]
        sp, counted = _highest(m, bits)
        f = fp + golds + (streak if dealer_won else 0)
        if scheme == SCHEME_LIANZHONG_2:  # P3 (base 1: every payment times base)
            if counted:
                p = f * m[R_MULT] + sp
            elif self_like:
                p = f * m[R_MULT]
            else:
                p = f
            value = p * m[R_BASE]
            _pay(tb, winner, win_type, discarder, value)
            _dealer_pays_streak(tb, winner, streak * m[R_BASE])
            return bits, counted, value, fp
        # P4 bianfeng
        if counted:
            p = sp + f * m[R_MULT]
            value = p if self_like else p * m[R_MULT]
        else:
            p = m[R_BASE] + f
            value = p * m[R_MULT]
        _pay(tb, winner, win_type, discarder, value)
        _dealer_pays_streak(tb, winner, streak)
        cap = m[R_LOSS_CAP]
        if cap > 0:  # 封顶: what is capped is simply not paid
            gain = 0
            for s in range(4):
                if s != winner:
                    if tb.points[s] < -cap:
                        tb.points[s] = -cap
                    gain -= tb.points[s]
            tb.points[winner] = gain
        return bits, counted, value, fp
    # P5 home: 天胡, 抢金, 三金倒 listed with value 0; nothing else is a special
    bits &= (1 << SP_HEAVENLY) | (1 << SP_ROB_GOLD) | (1 << SP_THREE_GOLDS)
    fl = tb.flowers[winner]
    f8 = 0
    for i in range(7, 15):  # 1f..8f only, no set bonus
        f8 += fl[i]
    exposed, concealed = kongs_of(tb, winner)
    kg = m[R_KONG_EXPOSED_PTS] * exposed + m[R_KONG_CONCEALED_PTS] * concealed
    n = m[R_BASE] + f8 + golds + streak + kg + (m[R_DISCARD_BONUS] if win_type == WT_DISCARD else 0)
    if not self_like:
        value = n
    else:
        lv = tb.swim[winner]
        if lv > 0 and (win_type == WT_SELF_DRAW or win_type == WT_THREE_GOLDS):
            value = n * m[R_SWIM_MULT + lv - 1]  # a win on its own draw while swimming at level L
        else:
            value = n * m[R_MULT]
    _pay(tb, winner, win_type, discarder, value)
    return bits, 0, value, f8 + kg


@njit(cache=True, inline="always")
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
    m[SPECIALS_COUNTED] = 0
    m[VALUE] = 0
