"""Observation encoder v2: a ``(NUM_CHANNELS, 27)`` int8 tensor per seat (Numba).

v2 = v1's planes 0..96 unchanged, then planes 97..98 with the preset-public information
(docs/presets.md P0/P5): the rule preset the table plays (one network can play several
presets) and every seat's public swim level (游金, fuzhou-home). Later versions may only
append planes after these.

Every plane is binary (0/1): tile planes have one column per suit kind (0–26 = 1m…9s, R1),
counts are thresholds (``>= 1`` … ``>= 4``), scalars are thermometers over the columns
(column ``j`` is 1 when the value is ``> j``) or one-hot flags at named columns. Seats are in
relative order from the observing seat ``me``: relative seat ``r = (seat - me) % 4``
(0 = me, 1 = 下家 next, 2 = opposite, 3 = 上家 previous). ``PLANES`` names every channel;
``docs/observation.md`` is the table.

Information (R12): only what ``me`` may know. Never read here for another seat: its concealed
tiles (``tb.hand``), its concealed kong kinds, its 过水 state (``tb.passed``: it would tell that
it could have won), its claim options or decision (``tb.opts``, ``tb.ask``, ``tb.choice``), the
wall order or the last drawn tile of another seat. ``tests/test_encode.py`` checks this by
scrambling those fields.

Oracle encoder (``oracle_v2``, ``ORACLE_PLANES``): the hidden part of the state from the same
seat's perspective, for centralized critics and oracle guiding; a separate output, never part
of an agent's observation.

Entry points: ``encode_v1(tb, seat, out)`` inside Numba, ``encode_table(buf, t, seat, out)``,
``encode_batch(buf, seats, out)`` on ``(B, C, 27)``, ``oracle_table``, ``oracle_batch`` and
``step_observe`` (one engine step + legal mask + observation of the next acting seat in one
call, for the AEC env).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from .core.engine import acting_seat, drawable, kind_unit, legal_mask, reserve, step, tiles_left
from .core.intrinsics import borrow, load8, store8
from .core.state import (
    A_CHI_HIGH,
    A_CHI_LOW,
    A_HU,
    A_KONG,
    A_PASS,
    A_PENG,
    A_ROB,
    ASK_POS,
    CLAIM_FROM,
    CLAIM_TILE,
    CUR,
    DEALER,
    GOLD,
    HAND_NO,
    HANDS_PER_GAME,
    HEAD,
    HEAVENLY_OK,
    LAST_DRAW,
    MAX_MELDS,
    MELD_CHI,
    MELD_CONCEALED_KONG,
    MELD_PENG,
    N_ASK,
    PH_CLAIM,
    PH_OVER,
    PH_TURN,
    PHASE,
    R_LOSS_CAP,
    R_RESERVE_BASE,
    R_SCHEME,
    ROB_WINDOW,
    SCHEME_HOME,
    STREAK,
    TAIL,
)

OBS_VERSION = "v2"
NUM_COLUMNS = 27
V1_CHANNELS = 97  # planes 0..96 are exactly the v1 layout

# ---- plane layout (v1) --------------------------------------------------------------------------
P_HAND = 0  # 4 planes: own concealed count >= 1..4 (golds included)
P_GOLD_KIND = 4
P_OWN_GOLDS = 5
P_OWN_PASSED = 6
P_OWN_CONCEALED_KONG = 7
P_LAST_DRAW = 8
P_SEAT = 9  # 4 blocks of SEAT_PLANES, relative seat r at P_SEAT + r * SEAT_PLANES
# offsets inside a seat block
S_MELD = 0  # 4 planes: tiles in open melds >= 1..4
S_PENG = 4
S_KONG = 5
S_TAKEN = 6
S_DISC = 7  # 4 planes: discards >= 1..4
S_CLAIMED = 11
S_RECENT = 12  # 4 planes: last, 2nd last, 3rd last, 4th last discard (one-hot)
S_FLOWERS = 16
S_HONOR_FLOWERS = 17
S_FLOWER_COUNT = 18
S_FLAGS = 19
SEAT_PLANES = 20
P_GLOBAL = P_SEAT + 4 * SEAT_PLANES  # 89
P_DRAWABLE = P_GLOBAL + 0
P_DRAWABLE_COARSE = P_GLOBAL + 1
P_TILES_LEFT = P_GLOBAL + 2
P_RESERVE = P_GLOBAL + 3
P_STREAK = P_GLOBAL + 4
P_HANDS_LEFT = P_GLOBAL + 5
P_PHASE = P_GLOBAL + 6
P_CLAIM_TILE = P_GLOBAL + 7
# v2: preset-public planes, appended after v1's 97
P_PRESET = P_GLOBAL + 8  # 97: cols 0-4 one-hot rule scheme (SCHEME_NAMES order); col 5 a loss cap is set (P4)
P_SWIM = P_GLOBAL + 9  # 98: col 3r + j = relative seat r swims at a level > j (P5), j = 0..2
NUM_CHANNELS = P_GLOBAL + 10  # 99
PRC_LOSS_CAP = 5  # column of P_PRESET

# flag columns of the per-seat S_FLAGS plane
F_DEALER = 0
F_GOLD_THROWN = 1
F_CURRENT = 2
F_CLAIM_FROM = 3
F_MELDS = 4  # 5 columns: number of melds (concealed kongs included) > j
F_CONC_KONGS = 9  # 4 columns: concealed kongs > j
F_DISCARDS = 13  # 14 columns: number of discards > 2j
# columns of the P_PHASE plane
PC_TURN, PC_DISCARD, PC_CLAIM, PC_OVER, PC_ROB_WINDOW, PC_HEAVENLY, PC_ME_ACTING = 0, 1, 2, 3, 4, 5, 6
# columns of S_FLOWERS past the 15 flower kinds: the 9 sets (7 honors, 春夏秋冬, 梅兰竹菊)
FLOWER_SET_COL = 15

_REL = ("self", "next (下家)", "opposite", "previous (上家)")


def _planes() -> list[tuple[str, str]]:
    # Long on purpose: the table of every plane's name and meaning, in layout order (a test checks
    # docs/observation.md against it).
    p: list[tuple[str, str]] = []
    for i in range(4):
        p.append(
            (
                f"hand_ge{i + 1}",
                f"own concealed tiles: count of the kind >= {i + 1} (golds included, as tiles of the gold kind)",
            )
        )
    p.append(("gold_kind", "one-hot: the gold kind (R5)"))
    p.append(("own_golds", "thermometer: column j = 1 if this seat holds more than j golds"))
    p.append(("own_passed", "this seat's 过水 kinds (R9.4): kinds it may not win on by discard until it next discards"))
    p.append(
        (
            "own_concealed_kongs",
            "kinds of this seat's own concealed kongs (only its own: other seats' kinds are hidden)",
        )
    )
    p.append(
        (
            "last_draw",
            "one-hot: the tile this seat just drew (or its kong replacement); only at its own turn (phase turn)",
        )
    )
    for r in range(4):
        pre = f"r{r}_"
        who = f"relative seat {r} ({_REL[r]})"
        for i in range(4):
            p.append(
                (
                    f"{pre}meld_ge{i + 1}",
                    f"{who}: tiles of the kind in its open melds (chi, peng, exposed/added kong) >= {i + 1}",
                )
            )
        p.append((f"{pre}peng", f"{who}: kinds it holds as a peng (not yet an added kong)"))
        p.append((f"{pre}kong", f"{who}: kinds it holds as an exposed or added kong"))
        p.append((f"{pre}taken", f"{who}: kinds of the tiles it took from a discard into a meld"))
        for i in range(4):
            p.append((f"{pre}disc_ge{i + 1}", f"{who}: its discards of the kind (claimed ones included) >= {i + 1}"))
        p.append((f"{pre}claimed", f"{who}: kinds of its discards that were claimed by another seat"))
        for i in range(4):
            p.append(
                (f"{pre}recent{i}", f"{who}: one-hot of its {['last', '2nd last', '3rd last', '4th last'][i]} discard")
            )
        p.append(
            (
                f"{pre}flowers",
                f"{who}: columns 0–14 = flower kind 1z..7z,1f..8f laid out (>= 1); columns 15–23 = set complete "
                "(15–21 four of honor 1z..7z, 22 春夏秋冬, 23 梅兰竹菊)",
            )
        )
        p.append((f"{pre}honor_flowers", f"{who}: columns 0–6 = honor flower 1z..7z count >= 2; columns 7–13 = >= 3"))
        p.append(
            (f"{pre}flower_count", f"{who}: thermometer of its number of flowers (column j = count > j, capped at 27)")
        )
        p.append(
            (
                f"{pre}flags",
                f"{who}: col 0 dealer; 1 has discarded a gold; 2 current seat (turn, or discarder during a claim window); "
                "3 discarder of the tile under claim; 4–8 melds (concealed kongs included) > j; 9–12 concealed kongs > j; "
                "13–26 discards > 2j",
            )
        )
    p.append(("drawable", "thermometer: drawable tiles D (R6) > j, columns 0–26"))
    p.append(("drawable_coarse", "thermometer: D > 27 + 2j"))
    p.append(("tiles_left", "thermometer: tiles left in the wall > 4j"))
    p.append(("reserve", "thermometer: reserve N minus its base (R6) > j"))
    p.append(("streak", "thermometer: dealer streak (R2) > j"))
    p.append(("hands_left", "thermometer: hands of the match still to play after this one > j"))
    p.append(
        (
            "phase",
            "col 0 turn (after a draw); 1 discard after chi/peng; 2 claim window; 3 game over; 4 抢金 window open "
            "(dealer's first discard); 5 天胡 still possible; 6 this seat is the one to act",
        )
    )
    p.append(("claim_tile", "one-hot: the discard under claim (claim window only)"))
    # v2
    p.append(
        (
            "preset",
            "v2: the rule preset's scheme, one-hot: col 0 fuzhou-lianzhong, 1 fuzhou-lianzhong-classic, "
            "2 fuzhou-lianzhong-2, 3 fuzhou-bianfeng, 4 fuzhou-home (a custom rules file: its scheme); "
            "col 5 a per-hand loss cap is set (P4)",
        )
    )
    p.append(
        (
            "swim",
            "v2: 游金 swim levels (P5, public): col 3r + j = relative seat r (0 self .. 3 上家) swims at a level > j, "
            "j = 0..2; all zero outside fuzhou-home",
        )
    )
    return p


PLANES = _planes()
assert len(PLANES) == NUM_CHANNELS

# ---- v3: the public history (planes NUM_CHANNELS .. V3_CHANNELS-1) -------------------------------
# v3 = v2's 99 planes unchanged, then, for each relative seat, its discards in order with their
# turn, its melds one by one (type, tiles, source, when) and when its flowers were laid out; then
# the match scores and the hand number. docs/observation.md gives the table and the reasons.
# "Position p" of a seat = how many discards it had made at that moment (its own clock); "time T" =
# how many discards the whole table had made (the table's clock). A seat block:
H_DISC_N = 24  # discard order planes per seat (a seat makes at most ~20 discards in a hand)
H_DISC = 0  # 24 planes: one-hot of the kind of its discard i (i = 0 first)
H_DISC_CLAIMED = 24  # column i: discard i was claimed by another seat
H_DISC_AFTER_CLAIM = 25  # column i: discard i came right after its own chi or peng (no draw)
H_DISC_GOLD = 26  # column i: discard i was a gold (R7: from then on it may only win by self-draw)
H_DISC_TIME = 27  # 3 planes: column T % 27 of plane T // 27 = the table's discard T was this seat's
H_TIME_PLANES = 3
H_MELD = 30  # MAX_MELDS planes: meld j's tiles (chi 3 kinds; peng/kong its kind; another seat's
#              concealed kong: empty, its kind is hidden)
H_MELD_TYPE = 35  # column 5j + t: meld j is of type t (0 chi, 1 peng, 2 exposed kong, 3 added kong, 4 concealed kong)
H_MELD_SOURCE = 36  # column 3j + d - 1: meld j's tile came from the seat d places after the melder (3 = 上家)
H_MELD_TAKEN = 37  # column 3j + i: chi j took its tile i (0 lowest .. 2 highest) from the discard
H_MELD_WHEN = 38  # MAX_MELDS planes: column p = meld j was made at the melder's position p; a second
#                   column (always later) = when a peng became an added kong
H_FLOWER_WHEN = 43  # 4 planes: column p = flowers laid out at position p >= 1 .. >= 4 (deal: p 0)
H_SEAT_PLANES = 47
P_HIST = NUM_CHANNELS  # 99: relative seat r's block starts at P_HIST + r * H_SEAT_PLANES
P_SCORES = P_HIST + 4 * H_SEAT_PLANES  # 4 planes, relative seat r: match score (see PLANES_V3)
P_HAND_NO = P_SCORES + 4  # thermometer: hands of the match already played > j
V3_CHANNELS = P_HAND_NO + 1  # 292
H_MAX_T = 27 * H_TIME_PLANES - 1  # 80: a later discard is shown at T = 80 (a hand has at most ~64)
SCORE_BITS = 13  # score planes: columns 0-12 score >= 2**j, 13-25 score <= -(2**j), 26 leads
OBS_VERSIONS = {"v2": NUM_CHANNELS, "v3": V3_CHANNELS}  # layout name -> planes


def obs_channels(version: str) -> int:
    """Planes of the observation layout ``version`` ("v2" or "v3")."""
    return OBS_VERSIONS[version]


def v2_planes(obs):
    """The v2 observation inside a v2 or v3 one: ``obs[..., :NUM_CHANNELS, :]`` (a view, no copy;
    numpy arrays and torch tensors alike). v3 starts with v2's planes unchanged."""
    return obs[..., :NUM_CHANNELS, :]


def _planes_v3() -> list[tuple[str, str]]:
    p = list(PLANES)
    for r in range(4):
        pre = f"r{r}_"
        who = f"relative seat {r} ({_REL[r]})"
        for i in range(H_DISC_N):
            p.append((f"{pre}disc{i}", f"v3: {who}: one-hot of the kind of its discard number {i} (0 = first)"))
        p.append((f"{pre}disc_claimed_at", f"v3: {who}: column i = its discard i was claimed by another seat"))
        p.append(
            (
                f"{pre}disc_after_claim_at",
                f"v3: {who}: column i = its discard i came right after its own chi or peng (no draw in between)",
            )
        )
        p.append((f"{pre}disc_gold_at", f"v3: {who}: column i = its discard i was a gold"))
        for i in range(H_TIME_PLANES):
            p.append(
                (
                    f"{pre}disc_time{i}",
                    f"v3: {who}: column c = the table's discard number {27 * i} + c (table time T, 0 = first) was "
                    f"its{' (T >= 80: column 26)' if i == H_TIME_PLANES - 1 else ''}",
                )
            )
        for j in range(MAX_MELDS):
            p.append(
                (
                    f"{pre}meld{j}",
                    f"v3: {who}: kinds of the tiles of its meld number {j} (chi: 3 kinds; peng, kong: its kind; "
                    "another seat's concealed kong: empty)",
                )
            )
        p.append(
            (
                f"{pre}meld_type",
                f"v3: {who}: column 5j + t = its meld j is of type t (0 chi, 1 peng, 2 exposed kong, "
                "3 added kong, 4 concealed kong)",
            )
        )
        p.append(
            (
                f"{pre}meld_source",
                f"v3: {who}: column 3j + d - 1 = the claimed tile of its meld j came from the seat d places after it "
                "(1 下家, 2 opposite, 3 上家)",
            )
        )
        p.append((f"{pre}meld_taken", f"v3: {who}: column 3j + i = its chi j took tile i (0 lowest .. 2 highest)"))
        for j in range(MAX_MELDS):
            p.append(
                (
                    f"{pre}meld{j}_when",
                    f"v3: {who}: column p = its meld {j} was made when it had made p discards; for an added kong "
                    "a second, later column = when the peng became a kong",
                )
            )
        for i in range(4):
            p.append(
                (
                    f"{pre}flowers_when_ge{i + 1}",
                    f"v3: {who}: column p = flowers it laid out when it had made p discards >= {i + 1} (p 0: the deal "
                    "and its first turn; p >= 26: column 26)",
                )
            )
    for r in range(4):
        p.append(
            (
                f"r{r}_score",
                f"v3: relative seat {r} ({_REL[r]}): its match score (the hands already finished): columns j = 0-12: >= 2^j; "
                "13 + j: <= -(2^j); 26: it has the highest score (ties included)",
            )
        )
    p.append(("hand_no", "v3: thermometer: hands of the match already played (the hand number) > j"))
    return p


PLANES_V3 = _planes_v3()
assert len(PLANES_V3) == V3_CHANNELS

# ---- oracle layout ---------------------------------------------------------------------------------
O_HANDS = 0  # 12 planes: relative seats 1..3, concealed count >= 1..4
O_CONC_KONG = 12  # 3 planes: concealed kong kinds of relative seats 1..3
O_PASSED = 15  # 3 planes: 过水 kinds of relative seats 1..3
O_WALL = 18  # 4 planes: suit tiles left in the wall (head..tail) >= 1..4
O_HEAD = 22  # 8 planes: one-hot of the next 8 head tiles in order (a flower: row empty)
O_TAIL = 30  # 4 planes: one-hot of the next 4 tail tiles in order (a flower: row empty)
O_CLAIM = 34  # 3 planes: claim window of relative seats 1..3 (see ORACLE_PLANES)
O_WAITS = 37  # 3 planes: kinds that complete relative seat r's 3n+1 hand (empty: not ready now)
O_WINS_ON = 40  # 3 planes: kinds relative seat r may win on if discarded now (R9: not 过水, not the gold)
ORACLE_CHANNELS = 43
ORACLE_VERSION = "oracle_v2"  # v1: the first 37 planes (no waits); a checkpoint's critic says which it read
N_HEAD_PLANES = 8
N_TAIL_PLANES = 4


def _oracle_planes() -> list[tuple[str, str]]:
    p: list[tuple[str, str]] = []
    for r in range(1, 4):
        for i in range(4):
            p.append((f"r{r}_hand_ge{i + 1}", f"relative seat {r}: concealed tiles of the kind >= {i + 1}"))
    for r in range(1, 4):
        p.append((f"r{r}_concealed_kongs", f"relative seat {r}: kinds of its concealed kongs"))
    for r in range(1, 4):
        p.append((f"r{r}_passed", f"relative seat {r}: its 过水 kinds"))
    for i in range(4):
        p.append((f"wall_ge{i + 1}", f"suit tiles left in the wall (head to tail, reserve included) >= {i + 1}"))
    for i in range(N_HEAD_PLANES):
        p.append((f"head{i}", f"one-hot: the head tile {i} draws ahead (empty row: a flower, or past the wall)"))
    for i in range(N_TAIL_PLANES):
        p.append((f"tail{i}", f"one-hot: the tail tile {i} places ahead (empty row: a flower, or past the wall)"))
    for r in range(1, 4):
        p.append(
            (
                f"r{r}_claim",
                f"relative seat {r} in an open claim window: cols 0–6 its options (hu, peng, kong, chi low, chi mid, "
                "chi high, rob); col 7 asked; col 8 already answered; cols 9–14 its answer (hu, peng, kong, chi, rob, pass)",
            )
        )
    for r in range(1, 4):
        p.append((f"r{r}_waits", f"relative seat {r}: the kinds that complete its 3n+1 hand (all empty: not ready)"))
    for r in range(1, 4):
        p.append(
            (
                f"r{r}_wins_on",
                f"relative seat {r}: the kinds it may win on if one is discarded now (its waits, less its 过水 kinds "
                "and the gold; empty after it threw a gold: R9)",
            )
        )
    return p


ORACLE_PLANES = _oracle_planes()
assert len(ORACLE_PLANES) == ORACLE_CHANNELS


# ---- kernels -----------------------------------------------------------------------------------------
# Speed. A count plane group (``>= 1 .. >= 4``) is built 8 columns at a time: eight
# counts (0..7, three bits per byte) sit in one uint64 and each threshold is a few bit operations
# on it, stored as one uint64 (``store8``); a 27-column row takes the words at columns 0, 8, 16
# and 19 (the last overlaps, same bytes). The public counts come ready in that form from the
# record (``disc_counts``, ``claimed_kinds``, ``meld_counts``, kept by the engine), so no plane
# loops over a seat's discards. Thermometer rows are straight loops with no early exit; rows
# that are not written in full are cleared first.
_ONES = np.uint64(0x0101010101010101)  # bit 0 of every byte


@njit(cache=True, inline="always")
def _threshold_word(out, at, c):
    """Thresholds of the 8 counts in ``c`` into columns at flat offset ``at`` of 4 consecutive planes."""
    c1 = c >> np.uint64(1)
    c2 = c >> np.uint64(2)
    store8(out, at, (c | c1 | c2) & _ONES)  # any of bits 0-2: c >= 1
    store8(out, at + 27, (c1 | c2) & _ONES)  # bit 1 or 2: c >= 2
    store8(out, at + 54, (c2 | (c1 & c)) & _ONES)  # bit 2, or bits 0 and 1: c >= 3
    store8(out, at + 81, c2 & _ONES)  # bit 2: c >= 4


_COLUMNS = (0, 8, 16, 19)  # first columns of the four 8-byte words covering a 27-column row


@njit(cache=True, inline="always")
def _row_words(words):
    """The words for columns 0-7, 8-15, 16-23 and 19-26 of a byte-per-kind count in 4 uint64
    ``words`` (array or tuple): the last is bytes 3..7 of word 2 and 0..2 of word 3."""
    return words[0], words[1], words[2], (words[2] >> np.uint64(24)) | (words[3] << np.uint64(40))


@njit(cache=True, inline="always")
def _thresholds(out, p, counts, offset):
    """Planes ``p .. p+3`` of ``out`` (C, 27): ``c >= 1 .. >= 4`` for the 27 counts ``c`` (each
    0..7) at flat byte ``offset`` of the int8 array ``counts``."""
    for col in _COLUMNS:
        _threshold_word(out, p * 27 + col, load8(counts, offset + col))


@njit(cache=True, inline="always")
def _thresholds_words(out, p, words):
    """As ``_thresholds``, for a byte-per-kind count in 4 uint64 ``words`` (``tb.disc_counts[s]``)."""
    w = _row_words(words)
    for i in range(4):
        _threshold_word(out, p * 27 + _COLUMNS[i], w[i])


@njit(cache=True, inline="always")
def _flag_row(out, p, words):
    """Plane ``p``: the 0/1 bytes of a byte-per-kind flag set in 4 uint64 ``words``."""
    w = _row_words(words)
    for i in range(4):
        store8(out, p * 27 + _COLUMNS[i], w[i])


@njit(cache=True, inline="always")
def _thermometer(row, value, step, offset):
    """A full row: column j = 1 if ``value > offset + step * j``."""
    for j in range(27):
        row[j] = value > offset + step * j


@njit(cache=True, inline="always")
def _clear_rows(out, p, n):
    """Zero planes ``p .. p+n-1``."""
    for i in range(p * 27, (p + n) * 27 - 7, 8):
        store8(out, i, 0)
    store8(out, (p + n) * 27 - 8, 0)


@njit(cache=True, inline="always")
def _byte_sum(w):
    """Sum of the 8 bytes of ``w`` (each small enough that the sum stays below 256)."""
    return (w * _ONES) >> np.uint64(56)


@njit(cache=True, inline="always")
def seat_block(tb, s, out, b):
    """Planes S_MELD .. S_FLOWER_COUNT of seat ``s`` (its public melds, discards, flowers) into
    ``out[b + S_MELD .. b + S_FLOWER_COUNT]``."""
    _thresholds_words(out, b + S_MELD, tb.meld_counts[s])
    _clear_rows(out, b + S_PENG, 3)  # S_PENG, S_KONG, S_TAKEN
    for j in range(tb.n_melds[s]):
        mt = tb.meld[s, j, 0]
        if mt == MELD_CONCEALED_KONG:  # hidden from everyone but its owner (R12)
            continue
        k = tb.meld[s, j, 1]
        if mt == MELD_PENG:
            out[b + S_PENG, k] = 1
        elif mt != MELD_CHI:
            out[b + S_KONG, k] = 1
        taken = tb.meld[s, j, 2]
        if taken >= 0:
            out[b + S_TAKEN, taken] = 1
    _thresholds_words(out, b + S_DISC, tb.disc_counts[s])
    _flag_row(out, b + S_CLAIMED, tb.claimed_kinds[s])
    _clear_rows(out, b + S_RECENT, S_FLAGS - S_RECENT)  # recent discards, the three flower planes
    nd = tb.n_disc[s]
    disc = tb.disc[s]
    for i in range(min(nd, 4)):
        out[b + S_RECENT + i, disc[nd - 1 - i]] = 1
    # flowers: 15 counts (kinds 27..41) in bytes s*15 .. s*15+14 of the flowers field
    total = int(_byte_sum(load8(tb.flowers, s * 15)) + _byte_sum(load8(tb.flowers, s * 15 + 7) & ~np.uint64(0xFF)))
    if total == 0:  # most seats most of the time: the three flower planes stay zero
        return
    fl = tb.flowers[s]
    for i in range(15):
        out[b + S_FLOWERS, i] = fl[i] > 0
    for i in range(7):
        c = fl[i]
        out[b + S_HONOR_FLOWERS, i] = c > 1
        out[b + S_HONOR_FLOWERS, 7 + i] = c > 2
        out[b + S_FLOWERS, FLOWER_SET_COL + i] = c > 3
    out[b + S_FLOWERS, FLOWER_SET_COL + 7] = fl[7] + fl[8] + fl[9] + fl[10] == 4
    out[b + S_FLOWERS, FLOWER_SET_COL + 8] = fl[11] + fl[12] + fl[13] + fl[14] == 4
    _thermometer(out[b + S_FLOWER_COUNT], total, 1, 0)


@njit(cache=True, inline="always")
def _seat_flags(tb, s, row):
    """The S_FLAGS plane of seat ``s`` (every column written)."""
    m = tb.m
    ph = m[PHASE]
    n_conc = 0
    nm = tb.n_melds[s]
    for j in range(nm):
        n_conc += tb.meld[s, j, 0] == MELD_CONCEALED_KONG
    row[F_DEALER] = m[DEALER] == s
    row[F_GOLD_THROWN] = tb.gold_thrown[s] != 0
    row[F_CURRENT] = ph != PH_OVER and m[CUR] == s
    row[F_CLAIM_FROM] = ph == PH_CLAIM and m[CLAIM_FROM] == s
    for j in range(5):
        row[F_MELDS + j] = nm > j
    for j in range(4):
        row[F_CONC_KONGS + j] = n_conc > j
    nd = tb.n_disc[s]
    for j in range(14):
        row[F_DISCARDS + j] = nd > 2 * j


@njit(cache=True, inline="always")
def _own_planes(tb, me, out):
    """Planes 0-8: this seat's private view (hand, golds, 过水, own concealed kongs, draw)."""
    m = tb.m
    gold = m[GOLD]
    _thresholds(out, P_HAND, tb.hand, me * 27)
    _clear_rows(out, P_GOLD_KIND, P_OWN_PASSED - P_GOLD_KIND)  # gold kind, own golds
    _clear_rows(out, P_OWN_CONCEALED_KONG, 2)  # own concealed kongs, last draw
    passed = tb.passed[me]
    passed_row = out[P_OWN_PASSED]
    for k in range(27):
        passed_row[k] = passed[k] != 0
    if 0 <= gold < 27:
        out[P_GOLD_KIND, gold] = 1
        _thermometer(out[P_OWN_GOLDS], tb.hand[me, gold], 1, 0)
    if m[PHASE] == PH_TURN and m[CUR] == me and m[LAST_DRAW] >= 0:
        out[P_LAST_DRAW, m[LAST_DRAW]] = 1
    for j in range(tb.n_melds[me]):
        if tb.meld[me, j, 0] == MELD_CONCEALED_KONG:
            out[P_OWN_CONCEALED_KONG, tb.meld[me, j, 1]] = 1


@njit(cache=True, inline="always")
def _global_planes(tb, me, out):
    """Planes 89-96: wall counts, streak, match, phase and the tile under claim."""
    m = tb.m
    ph = m[PHASE]
    d = drawable(tb)
    _thermometer(out[P_DRAWABLE], d, 1, 0)
    _thermometer(out[P_DRAWABLE_COARSE], d, 2, 27)
    _thermometer(out[P_TILES_LEFT], tiles_left(tb), 4, 0)
    _thermometer(out[P_RESERVE], reserve(tb) - m[R_RESERVE_BASE], 1, 0)
    _thermometer(out[P_STREAK], m[STREAK], 1, 0)
    _thermometer(out[P_HANDS_LEFT], m[HANDS_PER_GAME] - m[HAND_NO] - 1, 1, 0)
    _clear_rows(out, P_PHASE, 2)  # phase, claim tile
    if 0 <= ph <= 3:
        out[P_PHASE, ph] = 1  # PC_TURN, PC_DISCARD, PC_CLAIM, PC_OVER
    out[P_PHASE, PC_ROB_WINDOW] = m[ROB_WINDOW] != 0
    out[P_PHASE, PC_HEAVENLY] = m[HEAVENLY_OK] != 0 and ph != PH_OVER
    out[P_PHASE, PC_ME_ACTING] = acting_seat(tb) == me
    if ph == PH_CLAIM and m[CLAIM_TILE] >= 0:
        out[P_CLAIM_TILE, m[CLAIM_TILE]] = 1


@njit(cache=True, inline="always")
def _preset_planes(tb, me, out):
    """Planes 97-98 (v2): the preset scheme and every seat's public swim level (P5)."""
    _clear_rows(out, P_PRESET, 2)
    m = tb.m
    scheme = m[R_SCHEME]
    if 0 <= scheme < 5:
        out[P_PRESET, scheme] = 1
    out[P_PRESET, PRC_LOSS_CAP] = m[R_LOSS_CAP] > 0
    if scheme != SCHEME_HOME:  # nobody swims outside fuzhou-home: the cleared row is right
        return
    row = out[P_SWIM]
    for r in range(4):
        lv = tb.swim[(me + r) % 4]
        for j in range(3):
            row[3 * r + j] = lv > j


@njit(cache=True)
def encode_v1(tb, seat, out):
    """Write the observation of ``seat`` (0..3) into ``out[NUM_CHANNELS, 27]`` (int8, C-contiguous;
    every byte is written). Despite the historical name this writes the current layout
    (``OBS_VERSION``, v2): the v1 planes 0..96, then the v2 planes."""
    _own_planes(tb, seat, out)
    for r in range(4):  # every seat in relative order: its public planes, then its flags
        s = (seat + r) % 4
        b = P_SEAT + r * SEAT_PLANES
        seat_block(tb, s, out, b)
        _seat_flags(tb, s, out[b + S_FLAGS])
    _global_planes(tb, seat, out)
    _preset_planes(tb, seat, out)


# Speed (v3). The history planes are mostly zero (a seat's discard rows past its last discard,
# its meld rows past its last meld, its flower rows without flowers): the four seat blocks are
# cleared with one ``_clear_rows`` and only the ones are written after it. The score and hand
# number rows are copied whole from small constant tables (the bit loops took 40 ns a table).
@njit(cache=True, inline="always")
def _history_discards(tb, s, gold, out, b):
    """The discard rows (0-29) of seat ``s``'s block, onto zeroed rows."""
    disc = tb.disc[s]
    claimed = tb.disc_claimed[s]
    times = tb.disc_t[s]
    for i in range(tb.n_disc[s]):
        k = disc[i]
        if i < H_DISC_N:
            out[b + H_DISC + i, k] = 1
        if i < 27:
            out[b + H_DISC_CLAIMED, i] = claimed[i]
            out[b + H_DISC_AFTER_CLAIM, i] = times[i] >> 7
            out[b + H_DISC_GOLD, i] = k == gold
        t = min(times[i] & 127, H_MAX_T)
        out[b + H_DISC_TIME + t // 27, t % 27] = 1


@njit(cache=True, inline="always")
def _history_melds(tb, s, me, out, b):
    """The meld rows (30-42) of seat ``s``'s block, onto zeroed rows."""
    for j in range(tb.n_melds[s]):
        mt = tb.meld[s, j, 0]
        k = tb.meld[s, j, 1]
        out[b + H_MELD_TYPE, 5 * j + mt - 1] = 1
        if mt == MELD_CHI:
            row = out[b + H_MELD + j]
            row[k] = 1
            row[k + 1] = 1
            row[k + 2] = 1
            out[b + H_MELD_TAKEN, 3 * j + tb.meld[s, j, 2] - k] = 1
        elif mt != MELD_CONCEALED_KONG or s == me:  # another seat's concealed kong kind is hidden (R12)
            out[b + H_MELD + j, k] = 1
        src = tb.meld[s, j, 3]
        if src >= 0:
            out[b + H_MELD_SOURCE, 3 * j + (src - s + 3) % 4] = 1
        out[b + H_MELD_WHEN + j, min(tb.meld_at[s, j, 0], 26)] = 1
        if tb.meld_at[s, j, 1] >= 0:
            out[b + H_MELD_WHEN + j, min(tb.meld_at[s, j, 1], 26)] = 1


@njit(cache=True, inline="always")
def _history_seat(tb, s, me, gold, out, b):
    """The v3 block of seat ``s`` (relative to ``me``) at plane ``b``, onto zeroed rows."""
    _history_discards(tb, s, gold, out, b)
    _history_melds(tb, s, me, out, b)
    o = s * 27
    fl = tb.flower_at
    if load8(fl, o) | load8(fl, o + 8) | load8(fl, o + 16) | load8(fl, o + 19):  # else the rows stay zero
        _thresholds(out, b + H_FLOWER_WHEN, fl, o)  # counts kept at most 4 by the engine


def _score_rows() -> np.ndarray:
    """Row ``i`` of a score plane, columns 0-25, for ``i = min(bit_length(v), 13)`` (``v >= 0``) and
    ``i = 13 + min(bit_length(-v), 13)`` (``v < 0``): see ``_history_tail``."""
    rows = np.zeros((2 * SCORE_BITS + 1, 27), dtype=np.int8)
    for n in range(SCORE_BITS + 1):
        rows[n, :n] = 1  # v >= 2**j for j < n
        rows[SCORE_BITS + n, SCORE_BITS : SCORE_BITS + n] = 1  # v <= -(2**j) for j < n
    return rows


_SCORE_ROWS = _score_rows()
_THERMOMETER_ROWS = np.tril(np.ones((28, 27), dtype=np.int8), -1)  # row n: n ones, then zeros


@njit(cache=True, inline="always")
def _copy_row(out, p, rows, i):
    """Plane ``p`` of ``out`` = row ``i`` of the constant table ``rows`` (n, 27)."""
    for c in _COLUMNS:
        store8(out, p * 27 + c, load8(rows, i * 27 + c))


@njit(cache=True, inline="always")
def _history_tail(tb, seat, out):
    """The score planes and the hand number (whole rows, from the tables above)."""
    best = max(max(tb.scores[0], tb.scores[1]), max(tb.scores[2], tb.scores[3]))
    for r in range(4):
        v = tb.scores[(seat + r) % 4]
        if v >= 0:
            i = min(64 - leading_zeros(v), SCORE_BITS)
        else:
            i = SCORE_BITS + min(64 - leading_zeros(-v), SCORE_BITS)
        _copy_row(out, P_SCORES + r, _SCORE_ROWS, i)
        out[P_SCORES + r, 26] = v == best
    _copy_row(out, P_HAND_NO, _THERMOMETER_ROWS, min(max(tb.m[HAND_NO], 0), 27))


@njit(cache=True)
def encode_history(tb, seat, out):
    """The v3 planes ``NUM_CHANNELS .. V3_CHANNELS-1`` of ``seat`` into ``out[>= V3_CHANNELS, 27]``
    (planes 0..98 untouched: ``encode_v1`` writes them)."""
    out = borrow(out)  # no reference counting of the row views below (core/intrinsics.py)
    _clear_rows(out, P_HIST, P_SCORES - P_HIST)  # the four seat blocks; then the ones
    gold = tb.m[GOLD]
    for r in range(4):
        _history_seat(tb, (seat + r) % 4, seat, gold, out, P_HIST + r * H_SEAT_PLANES)
    _history_tail(tb, seat, out)


@njit(cache=True)
def encode_any(tb, seat, out):
    """The layout ``out`` has room for: v2 (``NUM_CHANNELS`` planes) or v3 (``V3_CHANNELS``)."""
    encode_v1(tb, seat, out)
    if out.shape[0] >= V3_CHANNELS:
        encode_history(tb, seat, out)


@njit(cache=True)
def encode_v3(tb, seat, out):
    """Observation v3 of ``seat`` into ``out[V3_CHANNELS, 27]``: the v2 planes, then the history."""
    encode_v1(tb, seat, out)
    encode_history(tb, seat, out)


encode = encode_v1  # the current encoder under its version-free name


@njit(cache=True)
def encode_table(buf, t, seat, out):
    """Observation of ``seat`` at table ``t`` of ``buf`` (B table records) into ``out[C, 27]``
    (C = NUM_CHANNELS: v2; C = V3_CHANNELS: v3)."""
    encode_any(buf[t], seat, out)


@njit(cache=True)
def encode_batch(buf, seats, out):
    """``out[t] = encode(table t, seats[t])`` for every table; a seat < 0 gives zeros."""
    for t in range(buf.shape[0]):
        if seats[t] < 0:
            out[t, :, :] = 0
        else:
            encode_any(buf[t], seats[t], out[t])


@njit(cache=True)
def _set_tile(out, p, k):
    if 0 <= k < 27:
        out[p, k] = 1


@njit(cache=True)
def oracle_v2(tb, seat, out):
    """The hidden part of the state from ``seat``'s perspective into ``out[ORACLE_CHANNELS, 27]``.

    Never give this to an acting policy: it is for critics (R12 "a separate, clearly named output").
    """
    out[:, :] = 0
    m = tb.m
    for r in range(1, 4):
        s = (seat + r) % 4
        _thresholds(out, O_HANDS + 4 * (r - 1), tb.hand, s * 27)
        passed = tb.passed[s]
        row = out[O_PASSED + r - 1]
        for k in range(27):
            row[k] = passed[k] != 0
        for j in range(tb.n_melds[s]):
            if tb.meld[s, j, 0] == MELD_CONCEALED_KONG:
                out[O_CONC_KONG + r - 1, tb.meld[s, j, 1]] = 1
    head = m[HEAD]
    tail = m[TAIL]
    if m[PHASE] != PH_OVER:
        w0 = w1 = w2 = w3 = np.uint64(0)  # byte-per-kind counts of the suit tiles left
        for i in range(head, tail + 1):
            k = tb.wall[i]
            if k < 27:
                one = kind_unit(k)
                q = k >> 3
                w0 += one * np.uint64(q == 0)
                w1 += one * np.uint64(q == 1)
                w2 += one * np.uint64(q == 2)
                w3 += one * np.uint64(q == 3)
        _thresholds_words(out, O_WALL, (w0, w1, w2, w3))
        for i in range(N_HEAD_PLANES):
            if head + i <= tail:
                _set_tile(out, O_HEAD + i, tb.wall[head + i])
        for i in range(N_TAIL_PLANES):
            if tail - i >= head:
                _set_tile(out, O_TAIL + i, tb.wall[tail - i])
    if m[PHASE] == PH_CLAIM:
        pos = m[ASK_POS]
        for r in range(1, 4):
            s = (seat + r) % 4
            p = O_CLAIM + r - 1
            o = tb.opts[s]
            for bit in range(7):
                if o >> bit & 1:
                    out[p, bit] = 1
            for q in range(m[N_ASK]):
                if tb.ask[q] == s:
                    out[p, 7] = 1
                    if q < pos:
                        out[p, 8] = 1
                        c = tb.choice[s]
                        if c == A_HU:
                            out[p, 9] = 1
                        elif c == A_PENG:
                            out[p, 10] = 1
                        elif c == A_KONG:
                            out[p, 11] = 1
                        elif A_CHI_LOW <= c <= A_CHI_HIGH:
                            out[p, 12] = 1
                        elif c == A_ROB:
                            out[p, 13] = 1
                        elif c == A_PASS:
                            out[p, 14] = 1
    gold = m[GOLD]
    for r in range(1, 4):
        s = (seat + r) % 4
        n = 0
        for k in range(27):
            n += tb.hand[s, k]
        if n % 3 != 1:  # holding 3n+2: it must discard first, and is not waiting now
            continue
        waits = tb.waits[s]  # the engine's cache of this very hand (core/engine.update_waits)
        for k in range(27):
            if waits[k]:
                out[O_WAITS + r - 1, k] = 1
                if k != gold and tb.passed[s, k] == 0 and tb.gold_thrown[s] == 0:
                    out[O_WINS_ON + r - 1, k] = 1


@njit(cache=True)
def oracle_table(buf, t, seat, out):
    oracle_v2(buf[t], seat, out)


@njit(cache=True)
def oracle_batch(buf, seats, out):
    for t in range(buf.shape[0]):
        if seats[t] < 0:
            out[t, :, :] = 0
        else:
            oracle_v2(buf[t], seats[t], out[t])


@njit(cache=True)
def oracle_all(buf, t, out):
    """Oracle planes of table ``t`` for each of the 4 seats: ``out[4, ORACLE_CHANNELS, 27]``."""
    tb = buf[t]
    for s in range(4):
        oracle_v2(tb, s, out[s])


@njit(cache=True)
def step_observe(buf, t, wt, action, mask, obs):
    """One decision on table ``t``, then the next acting seat's legal mask and observation.

    Returns ``(code + 1) * 8 + (seat + 1)``: ``code`` the engine's STEP_* result and ``seat``
    the seat to act next (-1 when the game is over). On an illegal action (code -1) nothing
    changes and ``mask``/``obs`` are left as they were. ``action`` < 0 only refreshes.
    """
    tb = buf[t]
    code = 0
    if action >= 0:
        code = step(tb, wt, action)
        if code < 0:
            return acting_seat(tb) + 1
    legal_mask(tb, wt, mask)
    s = acting_seat(tb)
    if s >= 0:
        encode_any(tb, s, obs)
    return (code + 1) * 8 + (s + 1)
