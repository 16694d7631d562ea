"""The rules engine: deal, legal mask and step for one table of the state buffer (R2–R11).

Every function takes ``tb`` (one table's record ``buf[t]``, see ``state.py``) and
``wt`` (the win table of ``hand.py``). ``step`` applies one decision and then advances the
game through everything automatic (draws, flower replacement, the final round, claim
resolution) until the next decision or the end of the game.
"""

from __future__ import annotations

import numpy as np

from .hand import (
    is_gold_kan_counts,
    is_golden_pair_counts,
    is_idle_gold_counts,
    is_win_counts,
    swims_counts,
    wait_mask_counts,
)
from .jit import njit
from .scoring import flower_sets_of, score_draw, score_win
from .state import (
    A_CHI_HIGH,
    A_CHI_LOW,
    A_CHI_MID,
    A_HU,
    A_KONG,
    A_PASS,
    A_PENG,
    A_ROB,
    A_SELF_KONG,
    ASK_POS,
    CLAIM_FROM,
    CLAIM_TILE,
    CONC_KONGS,
    CUR,
    DEALER,
    DEALER_DISCARDED,
    EXP_KONGS,
    FINAL_LEFT,
    FLOWER_SETS,
    GOLD,
    HAND_ACTIVE,
    HAND_NO,
    HANDS_PER_GAME,
    HEAD,
    HEAVENLY_OK,
    LAST_DISCARD_SEAT,
    LAST_DRAW,
    MAX_DISCARDS,
    MELD_ADDED_KONG,
    MELD_CHI,
    MELD_CONCEALED_KONG,
    MELD_EXPOSED_KONG,
    MELD_PENG,
    N_ASK,
    N_DECISIONS,
    NUM_ACTIONS,
    OPT_CHI_HIGH,
    OPT_CHI_LOW,
    OPT_CHI_MID,
    OPT_HU,
    OPT_KONG,
    OPT_PENG,
    OPT_ROB,
    PH_CLAIM,
    PH_DISCARD,
    PH_OVER,
    PH_TURN,
    PHASE,
    R_RESERVE_BASE,
    R_RESERVE_CONCEALED_KONG,
    R_RESERVE_EXPOSED_KONG,
    R_RESERVE_FLOWER_SET,
    R_SCHEME,
    RES_DEALER,
    RES_HAND_NO,
    RES_STREAK,
    ROB_WINDOW,
    SCHEME_CLASSIC,
    SCHEME_HOME,
    SEED_HI,
    SEED_LO,
    STREAK,
    TAIL,
    WINNER,
    WT_DISCARD,
    WT_HEAVENLY,
    WT_ROB_GOLD,
    WT_SELF_DRAW,
    WT_THREE_GOLDS,
)

# step() results
STEP_ILLEGAL = -1
STEP_OK = 0  # the game goes on
STEP_HAND_OVER = 1  # a hand ended at this step and the next hand of the match was dealt
STEP_GAME_OVER = 2  # the last hand ended: the game is over

# ---------------------------------------------------------------------------------------------
# Seeded randomness: splitmix64, so a table's games depend on its seed only (any thread count).
# ---------------------------------------------------------------------------------------------
GAMMA = np.uint64(0x9E3779B97F4A7C15)  # splitmix64 increment, shared by every seeded stream
_MASK32 = np.uint64(0xFFFFFFFF)


@njit(cache=True)
def mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def set_seed(tb, seed):
    """Store a uint64 game seed in the table's two int32 seed slots (bit for bit)."""
    tb.m[SEED_LO] = np.int32(np.int64(seed & _MASK32))  # truncation keeps the low bits
    tb.m[SEED_HI] = np.int32(np.int64(seed >> np.uint64(32)))


@njit(cache=True)
def hand_rng_state(tb):
    """The RNG stream of the current hand: a hash of (game seed, hand number)."""
    m = tb.m
    seed = (np.uint64(m[SEED_HI]) & _MASK32) << np.uint64(32) | (np.uint64(m[SEED_LO]) & _MASK32)
    return mix64(seed + GAMMA * np.uint64(m[HAND_NO] + 1))


@njit(cache=True)
def shuffle_wall(tb, rng):
    """Fill the wall with the 144 tiles (R1) in a seeded random order (R3). Returns the RNG."""
    i = 0
    for k in range(42):
        for _ in range(4 if k < 34 else 1):
            tb.wall[i] = k
            i += 1
    for i in range(143, 0, -1):
        rng += GAMMA
        j = np.int64(((mix64(rng) >> np.uint64(32)) * np.uint64(i + 1)) >> np.uint64(32))  # Lemire
        t = tb.wall[i]
        tb.wall[i] = tb.wall[j]
        tb.wall[j] = t
    return rng


# ---------------------------------------------------------------------------------------------
# The wall (R3, R6)
# ---------------------------------------------------------------------------------------------
@njit(cache=True)
def tiles_left(tb):
    return tb.m[TAIL] - tb.m[HEAD] + 1


@njit(cache=True)
def reserve(tb):
    """R6: N = 18 + 1 per exposed/added kong + 2 per concealed kong + 2 per flower set."""
    m = tb.m
    return (
        m[R_RESERVE_BASE]
        + m[R_RESERVE_EXPOSED_KONG] * m[EXP_KONGS]
        + m[R_RESERVE_CONCEALED_KONG] * m[CONC_KONGS]
        + m[R_RESERVE_FLOWER_SET] * m[FLOWER_SETS]
    )


@njit(cache=True)
def drawable(tb):
    return tiles_left(tb) - reserve(tb)


@njit(cache=True)
def take_head(tb):
    k = tb.wall[tb.m[HEAD]]
    tb.m[HEAD] += 1
    return k


@njit(cache=True)
def take_tail(tb):
    k = tb.wall[tb.m[TAIL]]
    tb.m[TAIL] -= 1
    return k


@njit(cache=True)
def lay_flower(tb, seat, kind):
    """Lay out a flower for ``seat`` (R4); a newly completed set raises the reserve (R6)."""
    before = flower_sets_of(tb, seat)
    tb.flowers[seat, kind - 27] += 1
    tb.flower_at[seat, min(tb.n_disc[seat], 26)] += 1
    tb.m[FLOWER_SETS] += flower_sets_of(tb, seat) - before


@njit(cache=True)
def draw_into_hand(tb, seat, from_head):
    """Draw for ``seat`` in play; flowers are laid out and replaced from the tail (R4).

    Returns the suit kind that joined the hand, or -1 if the wall ran out.
    """
    if tiles_left(tb) <= 0:
        return -1
    k = take_head(tb) if from_head else take_tail(tb)
    while k >= 27:
        lay_flower(tb, seat, k)
        if tiles_left(tb) <= 0:
            return -1
        k = take_tail(tb)
    tb.hand[seat, k] += 1
    tb.m[LAST_DRAW] = k
    return k


# ---------------------------------------------------------------------------------------------
# Starting a hand: deal (R3), flower rounds (R4), gold flip (R5)
# ---------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def clear_hand_state(tb):
    m = tb.m
    tb.hand[:, :] = 0
    tb.flowers[:, :] = 0
    tb.meld[:, :, :] = 0
    tb.n_melds[:] = 0
    tb.disc[:, :] = 0
    tb.disc_claimed[:, :] = 0
    tb.n_disc[:] = 0
    tb.disc_t[:, :] = 0
    tb.meld_at[:, :, :] = 0
    tb.flower_at[:, :] = 0
    tb.disc_counts[:, :] = 0
    tb.claimed_kinds[:, :] = 0
    tb.meld_counts[:, :] = 0
    tb.passed[:, :] = 0
    tb.waits[:, :] = 0
    tb.gold_thrown[:] = 0
    tb.swim[:] = 0
    tb.opts[:] = 0
    tb.ask[:] = 0
    tb.choice[:] = A_PASS
    for f in (EXP_KONGS, CONC_KONGS, FLOWER_SETS, ROB_WINDOW, DEALER_DISCARDED, N_ASK, ASK_POS):
        m[f] = 0
    m[FINAL_LEFT] = -1
    m[LAST_DRAW] = -1
    m[LAST_DISCARD_SEAT] = -1
    m[CLAIM_TILE] = -1
    m[CLAIM_FROM] = -1
    m[HEAVENLY_OK] = 1
    m[HAND_ACTIVE] = 1


@njit(cache=True)
def deal(tb, wt):
    """Deal the wall in ``tb.wall`` to the four seats, replace flowers, flip the gold.

    Leaves the table at the dealer's first decision (17 tiles, no draw, R7).
    """
    m = tb.m
    dealer = m[DEALER]
    clear_hand_state(tb)
    held = np.zeros((4, 42), dtype=np.int32)  # hands incl. flowers, only during the deal
    for i in range(4):  # R3: 16-tile blocks in seat order from the dealer, then tile 64
        seat = (dealer + i) % 4
        for j in range(16):
            held[seat, tb.wall[16 * i + j]] += 1
    held[dealer, tb.wall[64]] += 1
    m[HEAD] = 65
    m[TAIL] = 143

    # R4 flower rounds: round 1 everyone, round k+1 only seats whose round-k draws had a flower
    active = np.ones(4, dtype=np.bool_)
    while active.any():
        again = np.zeros(4, dtype=np.bool_)
        for i in range(4):
            seat = (dealer + i) % 4
            if not active[seat]:
                continue
            n = 0
            for k in range(27, 42):
                for _ in range(held[seat, k]):
                    lay_flower(tb, seat, k)
                n += held[seat, k]
                held[seat, k] = 0
            for _ in range(n):
                k = take_tail(tb)
                held[seat, k] += 1
                if k >= 27:
                    again[seat] = True
        active = again
    for seat in range(4):
        for k in range(27):
            tb.hand[seat, k] = held[seat, k]

    # R5: flip tail tiles; flowers go to the dealer (no replacement) until a suit tile appears
    k = take_tail(tb)
    while k >= 27:
        lay_flower(tb, dealer, k)
        k = take_tail(tb)
    m[GOLD] = k  # the indicator is set aside: it left the wall with the tail index
    for seat in range(4):
        if seat != dealer:
            update_waits(tb, wt, seat)

    m[CUR] = dealer
    m[PHASE] = PH_TURN


@njit(cache=True)
def reset_table(tb, wt, dealer, streak, hands_per_game, scripted):
    """Start a game on one table whose seed slots are set.

    The seed gives the walls (unless ``scripted``: then ``tb.wall`` already holds the first
    hand's wall) and, if ``dealer`` is -1, the first dealer (R2). Rule slots are kept.
    """
    m = tb.m
    m[HAND_NO] = 0
    m[HANDS_PER_GAME] = hands_per_game
    m[STREAK] = streak
    m[N_DECISIONS] = 0
    m[WINNER] = -1
    tb.scores[:] = 0
    tb.points[:] = 0
    rng = hand_rng_state(tb)
    if not scripted:
        rng = shuffle_wall(tb, rng)
    if dealer < 0:
        rng += GAMMA
        dealer = np.int64(mix64(rng ^ np.uint64(0xD1CE)) % np.uint64(4))
    m[DEALER] = dealer
    deal(tb, wt)


@njit(cache=True)
def end_hand(tb, wt):
    """Book the finished hand; deal the next hand of the match or end the game (R2)."""
    m = tb.m
    for s in range(4):
        tb.scores[s] += tb.points[s]
    m[HAND_ACTIVE] = 0
    m[RES_HAND_NO] = m[HAND_NO]
    m[RES_DEALER] = m[DEALER]
    m[RES_STREAK] = m[STREAK]
    if m[HAND_NO] + 1 >= m[HANDS_PER_GAME]:
        m[PHASE] = PH_OVER
        m[CUR] = -1
        return STEP_GAME_OVER
    winner = m[WINNER]
    if winner == -1 or winner == m[DEALER]:  # dealer wins or the hand is drawn: 连庄
        m[STREAK] += 1
    else:
        m[DEALER] = (m[DEALER] + 1) % 4
        m[STREAK] = 0
    m[HAND_NO] += 1
    shuffle_wall(tb, hand_rng_state(tb))
    deal(tb, wt)
    return STEP_HAND_OVER


@njit(cache=True)
def finish_win(tb, wt, winner, win_type, discarder):
    score_win(tb, wt, winner, win_type, discarder)
    return end_hand(tb, wt)


@njit(cache=True)
def finish_draw(tb, wt):
    score_draw(tb)
    return end_hand(tb, wt)


# ---------------------------------------------------------------------------------------------
# Decisions
# ---------------------------------------------------------------------------------------------
@njit(cache=True)
def can_self_win(tb, wt, seat):
    """R9.1 shape, or 3 golds (三金倒, R11.3), on a hand of 3n+2 concealed tiles; under the
    classic preset also the wrap-around 金坎 of a drawn gold (docs/presets.md P2)."""
    m = tb.m
    gold = m[GOLD]
    if tb.hand[seat, gold] >= 3:
        return True
    last = m[LAST_DRAW]
    if last < 0:  # the dealer's first turn: 17 dealt tiles, no draw
        return is_win_counts(wt, tb.hand[seat], gold)
    if tb.waits[seat, last] == 1:  # the hand before this draw was 3n+1
        return True
    # P2: a drawn gold onto a hand without golds that holds both neighbours (ranks 1, 9 wrap)
    return m[R_SCHEME] == SCHEME_CLASSIC and last == gold and is_gold_kan_counts(wt, tb.hand[seat], gold)


@njit(cache=True)
def update_waits(tb, wt, seat):
    """Cache the kinds that complete ``seat``'s 3n+1 hand (R9.1), so every later win check on
    a discard or a draw is one lookup. Called whenever that hand changes: after the deal,
    after the seat's discard, and after its kongs (before the replacement draw)."""
    wait_mask_counts(wt, tb.hand[seat], tb.m[GOLD], tb.waits[seat])


@njit(cache=True)
def acting_seat(tb):
    """The seat that must decide now, or -1 when the game is over."""
    m = tb.m
    if m[PHASE] == PH_OVER:
        return -1
    if m[PHASE] == PH_CLAIM:
        return tb.ask[m[ASK_POS]]
    return m[CUR]


@njit(cache=True)
def legal_mask(tb, wt, out):
    """Write the legal actions of the acting seat into ``out[62]`` (1 = legal)."""
    m = tb.m
    out[:] = 0
    ph = m[PHASE]
    if ph == PH_OVER:
        return
    gold = m[GOLD]
    if ph == PH_CLAIM:
        s = tb.ask[m[ASK_POS]]
        o = tb.opts[s]
        if o & OPT_CHI_LOW:
            out[A_CHI_LOW] = 1
        if o & OPT_CHI_MID:
            out[A_CHI_MID] = 1
        if o & OPT_CHI_HIGH:
            out[A_CHI_HIGH] = 1
        if o & OPT_PENG:
            out[A_PENG] = 1
        if o & OPT_KONG:
            out[A_KONG] = 1
        if o & OPT_HU:
            out[A_HU] = 1
        if o & OPT_ROB:
            out[A_ROB] = 1
        out[A_PASS] = 1
        return
    s = m[CUR]
    hand = tb.hand[s]
    for k in range(27):  # (branch-free loops: these run at every decision)
        out[k] = hand[k] > 0
    if m[R_SCHEME] == SCHEME_CLASSIC:  # P2: golds may not be discarded
        out[gold] = 0
    if ph == PH_DISCARD:  # after chi/peng: discard only (R7)
        return
    if can_self_win(tb, wt, s):
        out[A_HU] = 1
    if tiles_left(tb) >= 1:  # R6: a kong only while the wall has a tile
        pengs = 0  # bit k: the seat holds a peng of kind k (may be added to)
        for j in range(tb.n_melds[s]):
            if tb.meld[s, j, 0] == MELD_PENG:
                pengs |= 1 << tb.meld[s, j, 1]
        for k in range(27):  # concealed kong of 4 in hand, or added kong onto a peng; never of the gold
            c = hand[k]
            out[A_SELF_KONG + k] = (k != gold) & ((c == 4) | ((c >= 1) & ((pengs >> k) & 1 == 1)))


@njit(cache=True, inline="always")
def kind_unit(kind):
    """1 in the byte of ``kind`` in its word of a byte-per-kind count (kind k: byte k % 8 of
    word k // 8; ``tb.disc_counts``, ``tb.claimed_kinds``, ``tb.meld_counts``)."""
    return np.uint64(1) << np.uint64((kind & 7) << 3)


@njit(cache=True, inline="always")
def add_kind_count(words, kind, n):
    """Add ``n`` to the count of ``kind`` in a byte-per-kind count (``tb.disc_counts[seat]`` ...)."""
    words[kind >> 3] += np.uint64(n) * kind_unit(kind)


@njit(cache=True)
def add_meld(tb, seat, mtype, kind, taken, source):
    if mtype == MELD_CHI:
        add_kind_count(tb.meld_counts[seat], kind, 1)
        add_kind_count(tb.meld_counts[seat], kind + 1, 1)
        add_kind_count(tb.meld_counts[seat], kind + 2, 1)
    elif mtype == MELD_PENG:
        add_kind_count(tb.meld_counts[seat], kind, 3)
    elif mtype == MELD_EXPOSED_KONG:
        add_kind_count(tb.meld_counts[seat], kind, 4)
    j = tb.n_melds[seat]
    tb.meld[seat, j, 0] = mtype
    tb.meld[seat, j, 1] = kind
    tb.meld[seat, j, 2] = taken
    tb.meld[seat, j, 3] = source
    tb.meld_at[seat, j, 0] = tb.n_disc[seat]
    tb.meld_at[seat, j, 1] = -1
    tb.n_melds[seat] = j + 1


@njit(cache=True, inline="always")
def discard_win_allowed(tb, wt, seat, kind):
    """Whether ``seat`` may win on a discard of ``kind`` (R8, R9.3–R9.5, R5)."""
    m = tb.m
    gold = m[GOLD]
    if kind == gold or tb.gold_thrown[seat] or tb.passed[seat, kind] or not tb.waits[seat, kind]:
        return False
    hand = tb.hand[seat]
    hand[kind] += 1
    ok = is_win_counts(wt, hand, gold)
    golden = ok and is_golden_pair_counts(wt, hand, gold)
    hand[kind] -= 1
    if ok and not golden:  # 闲金 (on the 16-tile hand): a discard win only if 金雀 (R9.5)
        ok = not is_idle_gold_counts(wt, hand, gold)
    return ok


@njit(cache=True, inline="always")
def can_rob_gold(tb, wt, seat):
    """R10: the 16-tile hand plus one gold is an R9.1 shape (never 三金倒 by itself)."""
    gold = tb.m[GOLD]
    hand = tb.hand[seat]
    hand[gold] += 1
    ok = is_win_counts(wt, hand, gold)
    hand[gold] -= 1
    return ok


@njit(cache=True, inline="always")
def claim_options(tb, wt, seat, discarder, kind):
    """OPT_* bits of what ``seat`` may do with the discard (R8) and the rob (R10)."""
    m = tb.m
    gold = m[GOLD]
    hand = tb.hand[seat]
    o = 0
    if seat != discarder and kind != gold:  # a gold is never claimed (R5)
        if discard_win_allowed(tb, wt, seat, kind):
            o |= OPT_HU
        # P2 (classic): no chi or peng that would leave only golds, which could not be discarded
        open_ok = True
        if m[R_SCHEME] == SCHEME_CLASSIC:
            total = 0
            for k in range(27):
                total += hand[k]
            open_ok = total - 2 > hand[gold]
        if hand[kind] >= 2 and open_ok:
            o |= OPT_PENG
        if hand[kind] >= 3 and tiles_left(tb) >= 1:
            o |= OPT_KONG
        if seat == (discarder + 1) % 4 and open_ok:  # chi: only the next player, no golds (R8, R5)
            r = kind % 9
            if r <= 6 and kind + 1 != gold and kind + 2 != gold and hand[kind + 1] > 0 and hand[kind + 2] > 0:
                o |= OPT_CHI_LOW
            if 1 <= r <= 7 and kind - 1 != gold and kind + 1 != gold and hand[kind - 1] > 0 and hand[kind + 1] > 0:
                o |= OPT_CHI_MID
            if r >= 2 and kind - 2 != gold and kind - 1 != gold and hand[kind - 2] > 0 and hand[kind - 1] > 0:
                o |= OPT_CHI_HIGH
    if m[ROB_WINDOW] and can_rob_gold(tb, wt, seat):
        o |= OPT_ROB
    return o


@njit(cache=True, inline="always")
def open_claims(tb, wt, discarder, kind):
    """Open the claim window on a discard; ask only seats with an option, nearest first."""
    m = tb.m
    m[CLAIM_TILE] = kind
    m[CLAIM_FROM] = discarder
    n = 0
    for i in range(1, 5):  # the discarder itself (distance 4) only for the dealer's rob
        seat = (discarder + i) % 4
        if i == 4 and not m[ROB_WINDOW]:
            break
        o = claim_options(tb, wt, seat, discarder, kind)
        tb.opts[seat] = o
        tb.choice[seat] = A_PASS
        if o:
            tb.ask[n] = seat
            n += 1
    m[N_ASK] = n
    m[ASK_POS] = 0
    if n == 0:
        m[ROB_WINDOW] = 0
        return next_draw(tb, wt, (discarder + 1) % 4)
    m[PHASE] = PH_CLAIM
    return 0


@njit(cache=True)
def mark_last_discard_claimed(tb, discarder):
    i = tb.n_disc[discarder] - 1
    tb.disc_claimed[discarder, i] = 1
    k = tb.disc[discarder, i]
    tb.claimed_kinds[discarder, k >> 3] |= kind_unit(k)


@njit(cache=True, inline="always")
def resolve_claims(tb, wt):
    """Apply the blind decisions by priority (R8, R10)."""
    m = tb.m
    d = m[CLAIM_FROM]
    t = m[CLAIM_TILE]
    gold = m[GOLD]
    rob = m[ROB_WINDOW]
    m[ROB_WINDOW] = 0
    # 1. non-dealer 抢金, the seat nearest after the dealer (= the discarder) first
    if rob:
        for i in range(1, 4):
            s = (d + i) % 4
            if tb.choice[s] == A_ROB:
                tb.hand[s, gold] += 1  # the indicator joins the hand as a gold
                return finish_win(tb, wt, s, WT_ROB_GOLD, -1)
    # 2. a win on the discard: a 金雀 win first whatever the seat, then the nearest seat (截胡)
    plain = -1
    for i in range(1, 4):
        s = (d + i) % 4
        if tb.choice[s] == A_HU:
            tb.hand[s, t] += 1
            if is_golden_pair_counts(wt, tb.hand[s], gold):
                mark_last_discard_claimed(tb, d)
                return finish_win(tb, wt, s, WT_DISCARD, d)
            tb.hand[s, t] -= 1
            if plain < 0:
                plain = s
    if plain >= 0:
        tb.hand[plain, t] += 1
        mark_last_discard_claimed(tb, d)
        return finish_win(tb, wt, plain, WT_DISCARD, d)
    # 3. the dealer's own 抢金
    if rob and tb.choice[d] == A_ROB:
        tb.hand[d, gold] += 1
        return finish_win(tb, wt, d, WT_ROB_GOLD, -1)
    # 过水 (R9.4): offered a discard win, did not declare it
    for i in range(1, 4):
        s = (d + i) % 4
        if tb.opts[s] & OPT_HU:
            tb.passed[s, t] = 1
    m[LAST_DRAW] = -1
    # 4. peng / exposed kong (at most one seat can hold two copies)
    for i in range(1, 4):
        s = (d + i) % 4
        c = tb.choice[s]
        if c == A_PENG:
            tb.swim[s] = 0  # P5: a claim ends swimming
            tb.hand[s, t] -= 2
            add_meld(tb, s, MELD_PENG, t, t, d)
            mark_last_discard_claimed(tb, d)
            m[CUR] = s
            m[PHASE] = PH_DISCARD
            return 0
        if c == A_KONG:
            tb.swim[s] = 0
            tb.hand[s, t] -= 3
            add_meld(tb, s, MELD_EXPOSED_KONG, t, t, d)
            m[EXP_KONGS] += 1
            mark_last_discard_claimed(tb, d)
            m[CUR] = s
            update_waits(tb, wt, s)
            if draw_into_hand(tb, s, False) < 0:
                return finish_draw(tb, wt)
            m[PHASE] = PH_TURN
            return 0
    # 5. chi, by the next player only
    s = (d + 1) % 4
    c = tb.choice[s]
    if c == A_CHI_LOW or c == A_CHI_MID or c == A_CHI_HIGH:
        tb.swim[s] = 0
        low = t - (c - A_CHI_LOW)
        for k in range(low, low + 3):
            if k != t:
                tb.hand[s, k] -= 1
        add_meld(tb, s, MELD_CHI, low, t, d)
        mark_last_discard_claimed(tb, d)
        m[CUR] = s
        m[PHASE] = PH_DISCARD
        return 0
    # 6. nobody claims: the next player draws
    return next_draw(tb, wt, (d + 1) % 4)


@njit(cache=True, inline="always")
def final_round(tb, wt, first, n):
    """R6: ``n`` players draw one tile each in seat order; a completed win wins at once."""
    m = tb.m
    m[FINAL_LEFT] = n
    gold = m[GOLD]
    for i in range(n):
        s = (first + i) % 4
        m[CUR] = s
        k = take_head(tb)
        if k >= 27:  # laid out, no replacement in the final round
            lay_flower(tb, s, k)
            continue
        tb.hand[s, k] += 1
        m[LAST_DRAW] = k
        if can_self_win(tb, wt, s):
            wtype = WT_THREE_GOLDS if tb.hand[s, gold] >= 3 else WT_SELF_DRAW
            return finish_win(tb, wt, s, wtype, -1)
    return finish_draw(tb, wt)


@njit(cache=True)
def next_draw(tb, wt, seat):
    """A normal draw from the head for ``seat`` (R6 reserve rules first)."""
    m = tb.m
    d = drawable(tb)
    if d <= 0:
        return finish_draw(tb, wt)
    if d <= 4:
        return final_round(tb, wt, seat, d)
    m[CUR] = seat
    if draw_into_hand(tb, seat, True) < 0:
        return finish_draw(tb, wt)
    m[PHASE] = PH_TURN
    return 0


@njit(cache=True, inline="always")
def update_swim(tb, wt, seat, kind):
    """游金 after ``seat`` discarded ``kind`` (docs/presets.md P5): up a level (at most 3) when it
    swam, its last draw was a gold and it discarded a gold keeping the shape; else level 1 if
    its hand has the shape, else 0. Call before LAST_DRAW is cleared."""
    m = tb.m
    gold = m[GOLD]
    if swims_counts(wt, tb.hand[seat], gold):
        lv = tb.swim[seat]
        if lv >= 1 and kind == gold and m[LAST_DRAW] == gold:
            tb.swim[seat] = min(lv + 1, 3)
        else:
            tb.swim[seat] = 1
    else:
        tb.swim[seat] = 0


@njit(cache=True, inline="always")
def discard(tb, wt, seat, kind):
    m = tb.m
    tb.hand[seat, kind] -= 1
    i = tb.n_disc[seat]
    if i >= MAX_DISCARDS:
        raise RuntimeError("discard log overflow")
    tb.disc[seat, i] = kind
    tb.disc_claimed[seat, i] = 0
    table_t = tb.n_disc[0] + tb.n_disc[1] + tb.n_disc[2] + tb.n_disc[3]
    tb.disc_t[seat, i] = min(table_t, 127) | (128 if m[PHASE] == PH_DISCARD else 0)
    tb.n_disc[seat] = i + 1
    add_kind_count(tb.disc_counts[seat], kind, 1)
    update_waits(tb, wt, seat)
    tb.passed[seat, :] = 0  # 过水 lasts until the seat next discards (R9.4)
    if m[R_SCHEME] == SCHEME_HOME:
        update_swim(tb, wt, seat, kind)
    if kind == m[GOLD]:
        tb.gold_thrown[seat] = 1  # only self-draw wins from now on (R7, R9.3)
    m[HEAVENLY_OK] = 0
    m[LAST_DRAW] = -1
    m[LAST_DISCARD_SEAT] = seat
    if seat == m[DEALER] and not m[DEALER_DISCARDED]:
        m[ROB_WINDOW] = 1  # R10: 抢金 is offered in this window only
        m[DEALER_DISCARDED] = 1
    return open_claims(tb, wt, seat, kind)


@njit(cache=True, inline="always")
def self_kong(tb, wt, seat, kind):
    """Concealed or added kong, then a replacement from the tail (R7)."""
    m = tb.m
    if tb.hand[seat, kind] == 4:
        tb.hand[seat, kind] = 0
        add_meld(tb, seat, MELD_CONCEALED_KONG, kind, -1, -1)
        m[CONC_KONGS] += 1
    else:
        for j in range(tb.n_melds[seat]):
            if tb.meld[seat, j, 0] == MELD_PENG and tb.meld[seat, j, 1] == kind:
                tb.meld[seat, j, 0] = MELD_ADDED_KONG
                tb.meld_at[seat, j, 1] = tb.n_disc[seat]
        add_kind_count(tb.meld_counts[seat], kind, 1)
        tb.hand[seat, kind] -= 1
        m[EXP_KONGS] += 1
    m[HEAVENLY_OK] = 0
    update_waits(tb, wt, seat)
    if draw_into_hand(tb, seat, False) < 0:
        return finish_draw(tb, wt)
    m[PHASE] = PH_TURN
    return 0


@njit(cache=True, inline="always")
def self_win(tb, wt, seat):
    """Declared win at the seat's own turn: 天胡, 三金倒 or self-draw (R9.2, R10, R11.3)."""
    m = tb.m
    if m[HEAVENLY_OK]:
        wtype = WT_HEAVENLY
    elif tb.hand[seat, m[GOLD]] >= 3:
        wtype = WT_THREE_GOLDS
    else:
        wtype = WT_SELF_DRAW
    return finish_win(tb, wt, seat, wtype, -1)


@njit(cache=True, inline="always")
def is_legal(tb, wt, action):
    if action < 0 or action >= NUM_ACTIONS:
        return False
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    legal_mask(tb, wt, mask)
    return mask[action] == 1


@njit(cache=True)
def step(tb, wt, action):
    """Apply the acting seat's ``action``; advance to the next decision. Returns a STEP_* code."""
    if not is_legal(tb, wt, action):
        return STEP_ILLEGAL
    return apply_action(tb, wt, action)


@njit(cache=True)
def apply_action(tb, wt, action):
    """``step`` for an action the caller already checked against ``legal_mask``."""
    m = tb.m
    m[N_DECISIONS] += 1
    if m[PHASE] == PH_CLAIM:
        seat = tb.ask[m[ASK_POS]]
        tb.choice[seat] = action
        m[ASK_POS] += 1
        if m[ASK_POS] < m[N_ASK]:
            return STEP_OK
        return resolve_claims(tb, wt)
    seat = m[CUR]
    if action < 27:
        return discard(tb, wt, seat, action)
    if action == A_HU:
        return self_win(tb, wt, seat)
    return self_kong(tb, wt, seat, action - A_SELF_KONG)


# ---------------------------------------------------------------------------------------------
# Entry points on the whole buffer ``buf`` (B records) and a table index
# ---------------------------------------------------------------------------------------------
@njit(cache=True)
def set_rules(buf, t, params):
    """Copy a preset's parameters (``rules.Rules.params``) into table ``t``."""
    m = buf[t].m
    for i in range(params.shape[0]):
        m[R_RESERVE_BASE + i] = params[i]


@njit(cache=True)
def table_reset(buf, t, wt, seed_lo, seed_hi, dealer, streak, hands_per_game, scripted):
    """Start a game on table ``t`` (see ``reset_table``); seed halves are int32 bit patterns."""
    tb = buf[t]
    tb.m[SEED_LO] = seed_lo
    tb.m[SEED_HI] = seed_hi
    reset_table(tb, wt, dealer, streak, hands_per_game, scripted)


@njit(cache=True)
def table_wall_counts(buf, t):
    """(tiles left in the wall, reserve N) of table ``t`` (R6); drawable D is their difference."""
    tb = buf[t]
    return tiles_left(tb), reserve(tb)


@njit(cache=True)
def table_mask(buf, t, wt, out):
    """Legal mask of table ``t`` into ``out``; returns the acting seat (-1: game over)."""
    tb = buf[t]
    legal_mask(tb, wt, out)
    return acting_seat(tb)


@njit(cache=True)
def table_step(buf, t, wt, action):
    """One decision on table ``t``; returns a STEP_* code."""
    return step(buf[t], wt, action)
