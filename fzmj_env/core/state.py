"""The state of B tables: one structured numpy array ``buf`` of ``STATE_DTYPE`` records.

Inside Numba, ``tb = buf[t]`` is one table's record, passed by reference, with named integer
array fields: ``tb.hand[seat, kind]``, ``tb.wall[i]``, ``tb.m[CUR]``. Why a record: a Numba
call's cost grows with its arguments. A namedtuple of 17 array views cost ~400 ns per internal
call and ~11 µs per dispatch from Python here; a record costs a pointer. One buffer is also
trivial to copy, snapshot, compare bit for bit and hand to an oracle critic.

Scalars live in ``tb.m`` at the indices named below (``tb.m[CUR]``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

MAX_MELDS = 5  # 16 tiles between turns = at most 5 exposed melds + 1 tile
MAX_DISCARDS = 64  # per seat; a hand has ~61 head draws at most, claims add a few

# ---- scalar slots in tb.m -------------------------------------------------------------
PHASE = 0  # one of the PH_* values
CUR = 1  # seat whose turn it is (or who discarded, during a claim window)
DEALER = 2
STREAK = 3  # dealer streak (连庄数), R2
HAND_NO = 4  # index of the hand in the game (match), 0-based
HANDS_PER_GAME = 5
GOLD = 6  # gold kind (R5); the indicator is one tile of this kind, set aside
HEAD = 7  # index of the next head draw
TAIL = 8  # index of the next tail draw (counts down)
EXP_KONGS = 9  # exposed + added kongs on the table (reserve +1 each, R6)
CONC_KONGS = 10  # concealed kongs on the table (reserve +2 each)
FLOWER_SETS = 11  # complete flower sets held (reserve +2 each)
FINAL_LEFT = 12  # -1, or draws fixed for the final round when it started (R6)
CLAIM_TILE = 13
CLAIM_FROM = 14
ASK_POS = 15  # index into tb.ask of the seat being asked now
N_ASK = 16
ROB_WINDOW = 17  # 1 while the claim window of the dealer's first discard is open (R10)
HEAVENLY_OK = 18  # 1 until the dealer's first action (R10 天胡)
DEALER_DISCARDED = 19
LAST_DRAW = 20  # kind of the last suit tile drawn by CUR, -1 if none
LAST_DISCARD_SEAT = 21
N_DECISIONS = 22
WIN_CTX = 23  # set when a win is declared: 1 if it happens in the claim window of the dealer's first
#               discard or before that discard (P3's widened 抢金); 0 otherwise
WINNER = 24  # result of the last finished hand (valid once a hand has ended)
WIN_TYPE = 25
DISCARDER = 26
FLOWER_PTS = 27
GOLD_PTS = 28
SPECIALS = 29  # bit set of SPECIAL_* bits
VALUE = 30
SEED_LO = 31
SEED_HI = 32
HAND_ACTIVE = 33  # 1 while the current hand is being played
RES_HAND_NO = 34  # hand number, dealer and streak of the last finished hand
RES_DEALER = 35
RES_STREAK = 36
N_SPECIALS = 10
SPECIALS_COUNTED = 37  # bit set of the specials whose value was paid (docs/presets.md P0)
RES_SPECIAL_VALUES = 38  # N_SPECIALS slots: each listed special's value under the preset (P0)
# rule parameters (R6, R11) copied in from the preset at reset, so kernels need no extra argument
R_RESERVE_BASE = RES_SPECIAL_VALUES + N_SPECIALS  # 48
R_RESERVE_EXPOSED_KONG = R_RESERVE_BASE + 1
R_RESERVE_CONCEALED_KONG = R_RESERVE_BASE + 2
R_RESERVE_FLOWER_SET = R_RESERVE_BASE + 3
R_BASE = R_RESERVE_BASE + 4
R_MULT = R_RESERVE_BASE + 5
R_FLOWER_SET_BONUS = R_RESERVE_BASE + 6
R_KONG_EXPOSED_PTS = R_RESERVE_BASE + 7
R_KONG_CONCEALED_PTS = R_RESERVE_BASE + 8
R_SPECIAL_VALUES = R_RESERVE_BASE + 9  # N_SPECIALS consecutive slots, one per SPECIAL_* bit (-1: not a
#                                        special of this preset)
# preset branches (docs/presets.md P1-P5): which scoring/rule scheme the table plays, and its numbers
R_SCHEME = R_SPECIAL_VALUES + N_SPECIALS  # one of the SCHEME_* values
R_LOSS_CAP = R_SCHEME + 1  # P4: most a seat loses in one hand (0 = no cap)
R_SPECIAL_BONUS = R_SCHEME + 2  # P3: +10 to 抢金/三金倒/金雀 when the winner has no flower, no kong
R_DISCARD_BONUS = R_SCHEME + 3  # P5: d = 1 for a discard win
R_SWIM_MULT = R_SCHEME + 4  # P5: 3 slots, multipliers for swim levels 1, 2, 3
NUM_SCALARS = R_SCHEME + 7

# rule schemes (docs/presets.md): the branches of the one core
SCHEME_LIANZHONG, SCHEME_CLASSIC, SCHEME_LIANZHONG_2, SCHEME_BIANFENG, SCHEME_HOME = range(5)
SCHEME_NAMES = ("lianzhong", "classic", "lianzhong-2", "bianfeng", "home")
MAX_SWIM = 3  # P5: 单游, 双游, 三游


# ---- array fields: (name, shape) ---------------------------------------------------------
# Small dtypes keep a table's record at ~2 KB, so a batch of 1024 tables stays in cache.
_FIELDS = [
    ("m", np.int32, (NUM_SCALARS,)),
    ("wall", np.int8, (144,)),
    ("hand", np.int8, (4, 27)),  # concealed tiles, golds included as tiles of the gold kind
    ("flowers", np.int8, (4, 15)),  # flowers laid out, kinds 27..41 at index kind-27 (R4)
    ("meld", np.int8, (4, MAX_MELDS, 4)),  # (type, kind, taken kind or -1, from seat or -1)
    ("n_melds", np.int8, (4,)),
    ("disc", np.int8, (4, MAX_DISCARDS)),  # discarded kinds in order
    ("disc_claimed", np.int8, (4, MAX_DISCARDS)),  # 1 if that discard was claimed (chi/peng/kong/hu)
    ("n_disc", np.int8, (4,)),
    # Public tile counts kept up to date as the hand goes, for the observation encoder: a byte per
    # kind (kind k: byte k % 8 of word k // 8), so eight kinds are read in one load. Derived from
    # disc/disc_claimed/meld above; tests/test_properties.py checks they always agree.
    ("disc_counts", np.uint64, (4, 4)),  # discards of each kind (claimed ones included)
    ("claimed_kinds", np.uint64, (4, 4)),  # 1 if a discard of the kind was claimed by another seat
    ("meld_counts", np.uint64, (4, 4)),  # tiles of each kind in open melds (not concealed kongs)
    ("passed", np.int8, (4, 27)),  # 过水: kinds this seat may not win on by discard (R9.4)
    ("waits", np.int8, (4, 27)),  # cache: kinds that complete this seat's last 3n+1 hand (see engine)
    ("gold_thrown", np.int8, (4,)),  # seat discarded a gold (R7, R9.3)
    ("opts", np.int16, (4,)),  # claim options of each seat in the open window (OPT_* bits)
    ("ask", np.int8, (4,)),  # seats asked in the open window, nearest to the discarder first
    ("choice", np.int8, (4,)),  # each asked seat's decision (an action)
    ("swim", np.int8, (4,)),  # P5 游金: each seat's public swim level 0..3 (0 in other presets)
    ("points", np.int32, (4,)),  # score change of the last finished hand
    # cumulative over the game (match); 64 bits: a hand's points fit int32 by the rules files' bounds,
    # but 10,000 of the largest ones would not (docs/presets.md, "Limits on a rules file")
    ("scores", np.int64, (4,)),
    # Public history for observation v3 (docs/observation.md); appended last so the fields above keep
    # their offsets. "Position p" of a seat = how many discards it had made at that moment.
    # disc_t: the table's discard count before this discard (0..127: a hand has at most ~64 discards,
    # 43 wall draws + the dealer's 17th tile + one per chi/peng) in bits 0-6; bit 7 set when the
    # discard came right after the seat's own chi or peng (no draw in between).
    ("disc_t", np.uint8, (4, MAX_DISCARDS)),
    ("meld_at", np.int8, (4, MAX_MELDS, 2)),  # position p when the meld was made; when a peng became an
    #                                          added kong (-1 otherwise)
    ("flower_at", np.int8, (4, 27)),  # flowers the seat laid out at position p (p capped at 26; deal: p 0)
]

STATE_DTYPE = np.dtype([(name, dtype, shape) for name, dtype, shape in _FIELDS])
"""One table's state as a numpy record; ``buf = np.zeros(B, STATE_DTYPE)`` holds B tables."""

Table = namedtuple("Table", [name for name, _, _ in _FIELDS])


def flat_state(buf: np.ndarray, t: int = 0) -> np.ndarray:
    """Every field of table ``t`` concatenated in layout order, as one flat int32 array (a copy)."""
    return np.concatenate([buf[name][t].ravel().astype(np.int32) for name, _, _ in _FIELDS])


def numpy_view(buf: np.ndarray, t: int = 0) -> Table:
    """Named views of table ``t`` for Python code: ``numpy_view(buf).hand[seat]`` (no copy)."""
    return Table(*(buf[name][t] for name, _, _ in _FIELDS))


# ---- enums ---------------------------------------------------------------------------------
PH_TURN = 0  # after a draw / kong replacement / the dealer's start: hu, kong or discard (R7)
PH_DISCARD = 1  # after a chi or peng: discard only (R7)
PH_CLAIM = 2  # claim window on a discard (R8, R10)
PH_OVER = 3  # the game is over (all hands played)
PHASE_NAMES = ("turn", "discard_after_claim", "claim", "over")

MELD_CHI, MELD_PENG, MELD_EXPOSED_KONG, MELD_ADDED_KONG, MELD_CONCEALED_KONG = 1, 2, 3, 4, 5
MELD_NAMES = {1: "chi", 2: "peng", 3: "exposed_kong", 4: "added_kong", 5: "concealed_kong"}

OPT_HU, OPT_PENG, OPT_KONG, OPT_CHI_LOW, OPT_CHI_MID, OPT_CHI_HIGH, OPT_ROB = 1, 2, 4, 8, 16, 32, 64

WT_DISCARD, WT_SELF_DRAW, WT_HEAVENLY, WT_ROB_GOLD, WT_THREE_GOLDS = 0, 1, 2, 3, 4
WIN_TYPE_NAMES = ("discard", "self_draw", "heavenly", "rob_gold", "three_golds")

SPECIAL_NAMES = (
    "heavenly",  # 天胡
    "rob_gold",  # 抢金
    "no_flower_no_kong",  # 平胡 (no flower, no kong)
    "one_flower",  # 平胡 (one flower)
    "three_golds",  # 三金倒
    "golden_pair",  # 金雀
    "golden_dragon",  # 金龙
    "half_flush",  # 混一色 (P2)
    "full_flush",  # 清一色 (P2)
    "gold_kan",  # 金坎 (P2)
)
(
    SP_HEAVENLY,
    SP_ROB_GOLD,
    SP_NO_FLOWER,
    SP_ONE_FLOWER,
    SP_THREE_GOLDS,
    SP_GOLDEN_PAIR,
    SP_GOLDEN_DRAGON,
    SP_HALF_FLUSH,
    SP_FULL_FLUSH,
    SP_GOLD_KAN,
) = range(10)

# ---- action layout (public API, README) ------------------------------------------------------
NUM_ACTIONS = 62
A_DISCARD = 0  # 0..26: discard kind k
A_CHI_LOW, A_CHI_MID, A_CHI_HIGH = 27, 28, 29  # the discard as lowest / middle / highest tile
A_PENG = 30
A_KONG = 31  # exposed kong of the discard
A_SELF_KONG = 32  # 32..58: concealed or added kong of kind k-32
A_HU = 59
A_ROB = 60
A_PASS = 61


def new_state(num_tables: int) -> np.ndarray:
    """A zeroed state buffer for ``num_tables`` tables (a structured array of STATE_DTYPE)."""
    return np.zeros(num_tables, dtype=STATE_DTYPE)
