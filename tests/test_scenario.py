"""fzmj_env.scenario.make_wall: scripted walls (R3) for exact scenarios."""

from __future__ import annotations

import numpy as np
import pytest

from fzmj_env import Game
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import COPIES, full_set, kind_index, parse_tile_list


def kinds(text):
    return parse_tile_list(text)


def is_full_set(wall):
    return sorted(wall) == sorted(full_set().tolist())


def test_places_blocks_draws_and_tail_per_r3():
    hands = {
        2: "1111m 2222m 3333m 4444m 5m",  # dealer: 17
        3: "1111p 2222p 3333p 4444p",
        0: "1111s 2222s 3333s 4444s",
        1: "6666m 7777m 8888m 9999m",
    }
    w = make_wall(dealer=2, hands=hands, draws="5p 6p", tail="7p 8p 9p")
    assert is_full_set(w)
    assert w[0:16] == kinds(hands[2])[:16] and w[64] == kind_index("5m")
    assert w[16:32] == kinds(hands[3])
    assert w[32:48] == kinds(hands[0])
    assert w[48:64] == kinds(hands[1])
    assert w[65:67] == kinds("5p6p")
    assert [w[143], w[142], w[141]] == kinds("7p8p9p")


def test_filler_keeps_flowers_in_the_middle_by_default():
    w = make_wall(dealer=0, draws="1m", tail="2m")
    free = w[66:143]
    flower_idx = [i for i, k in enumerate(free) if k >= 27]
    assert len(flower_idx) == 36
    assert flower_idx == list(range(flower_idx[0], flower_idx[0] + 36))  # one block
    assert free[0] < 27 and free[-1] < 27  # suit tiles right after the draws / before the tail
    assert flower_idx[0] >= 10 and len(free) - 1 - flower_idx[-1] >= 10
    # hands left out get suit tiles only
    assert all(k < 27 for k in w[:65])


@pytest.mark.parametrize("pos, first_flower", [(0.0, True), (1.0, False)])
def test_flower_pos_moves_the_flower_block(pos, first_flower):
    w = make_wall(dealer=0, draws="1m", tail="2m", flower_pos=pos)
    assert (w[66] >= 27) == first_flower
    assert (w[142] >= 27) == (not first_flower)


def test_flowers_param_puts_replacements_in_r4_order():
    hands = {1: "123456789m 12345678p", 0: "11m 22m 33m 44m 55m 66m 77m 88m"}
    w = make_wall(dealer=1, hands=hands, flowers={0: "1z 2z", 1: "1f"}, tail="9s")
    # round 1 starts with the dealer (seat 1): its last suit tile, then seat 0's last two
    assert [w[143], w[142], w[141], w[140]] == kinds("8p 8m 8m 9s")
    g = Game()
    g.reset(seed=0, wall=w, dealer=1)
    assert g.flowers(1) == ["1f"] and g.flowers(0) == ["1z", "2z"]
    for s, text in hands.items():
        c = np.zeros(27, dtype=np.int64)
        for k in kinds(text):
            c[k] += 1
        np.testing.assert_array_equal(g.hand(s), c)
    assert g.gold == kind_index("9s")


def test_none_in_draws_is_filler():
    w = make_wall(dealer=0, draws=[None, None, "9p"])
    assert w[67] == kind_index("9p") and w[65] < 27 and w[66] < 27
    assert is_full_set(w)


def test_seed_shuffles_filler_reproducibly():
    a, b, c = make_wall(seed=1), make_wall(seed=1), make_wall(seed=2)
    assert a == b and a != c and is_full_set(a)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"hands": {0: "11111m" + "2m" * 12}}, "1m requested 5 times"),
        (
            {"hands": {1: "1111m 2345678p 9p 1234s"}, "draws": "1m"},
            r"1m requested 5 times \(hand of seat 1: 4, draws: 1\)",
        ),
        ({"tail": "1f1f"}, "1f requested 2 times"),
        ({"hands": {0: "123456789m1234567p"}}, "must hold 17 tiles, got 16"),
        ({"hands": {1: "123456789m1234567p8p"}}, "must hold 16 tiles, got 17"),
        ({"hands": {4: "1m"}}, "not a seat"),
        ({"dealer": 5}, "dealer must be a seat"),
        ({"draws": [None] * 79, "tail": "1m"}, "do not fit"),
        ({"hands": {0: "1z" + "123456789m1234567p"}, "flowers": {1: "2z"}}, "cannot be mixed"),
        ({"flowers": {0: "1m"}}, "not flowers"),
        ({"draws": "1x"}, "unknown character"),
        ({"flower_pos": 2}, "flower_pos"),
    ],
)
def test_errors_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_wall(**kwargs)


def test_copies_constant_matches_r1():
    assert COPIES.sum() == 144


# ---- golden: make_wall's output for a spread of arguments, digit for digit -------------------------
_GOLDEN_CASES = [
    {},
    {"dealer": 3},
    {"dealer": 1, "hands": {1: "123456789m12345678p", 2: "1122334455667788s"}, "draws": "9s 1s", "tail": "5m"},
    {"dealer": 2, "draws": [None] * 20 + ["7p"], "tail": [None, "3z", "1f", "6s"]},
    {"dealer": 0, "flowers": {0: "1z 2f", 2: "5z 5z 8f"}, "tail": "4p"},
    {"dealer": 3, "flowers": {1: "1z"}, "hands": {1: "1111m2222m3333m4444m"}, "flower_pos": 0.0},
    {"dealer": 1, "flowers": {3: "7z 7z 7z"}, "flower_pos": 1.0, "draws": "1z 2z"},
    {"dealer": 0, "seed": 7},
    {"dealer": 2, "seed": 123, "flowers": {2: "3f"}, "draws": [None, "5p"], "flower_pos": 0.25},
    {"dealer": 0, "hands": {0: "1z2z3z 11223344556677m", 1: "1f 2f 123456789p12345s"}, "tail": "9m 9m 8m 7z 1p"},
]
_GOLDEN_ERRORS = [
    {"dealer": 4},
    {"flower_pos": 1.5},
    {"hands": {5: "1m"}},
    {"hands": {1: "123m"}},
    {"hands": {0: "1111m2222m3333m4444m5m"}, "draws": "1m"},
    {"flowers": {0: "1m"}},
    {"flowers": {0: "1z"}, "hands": {0: "1z 1111m2222m3333m4444m"}},
    {"flowers": {1: "1z"}, "hands": {0: "2z 1111m2222m3333m4444m"}},
    {"draws": [None] * 79},
    {"draws": [None] * 60, "tail": [None] * 20},
    {"draws": "1x"},
    {"tail": [3.5]},
    {"draws": ["12m"]},
]
_GOLDEN_DIGEST = "0e36426e79df4f8a"
_GOLDEN_MESSAGES = [
    "dealer must be a seat 0..3, got 4",
    "flower_pos must be in [0, 1], got 1.5",
    "hands: 5 is not a seat 0..3",
    "hand of seat 1 (a non-dealer) must hold 16 tiles, got 3",
    "too many copies: 1m requested 5 times (hand of seat 0: 4, draws: 1), the set has 4",
    "flowers of seat 0: 1m are not flowers (1z-7z, 1f-8f)",
    "seat 0: give its flowers either in flowers= or in its hand (then script the tail), not both",
    "flowers= cannot be mixed with flowers written into hands: the replacement order would be unknown",
    "the hands left out (seats [0, 1, 2, 3]) and the None draws/tail need 144 suit tiles, only 108 are left",
    "draws (60), tail (20) and flower replacements (0) do not fit: the wall has 79 tiles after the deal",
    "draws: bad tile notation '1x': unknown character 'x' at position 1",
    "tail: item 0 3.5 is not a tile kind (0..41 or notation)",
    "draws: item 0 '12m' is not exactly one tile",
]


def test_make_wall_outputs_unchanged():
    """The walls of a spread of scenarios (hands, flowers, None filler, flower_pos, seed) hash to the
    value recorded before make_wall was split into named steps."""
    import hashlib

    h = hashlib.sha256()
    for case in _GOLDEN_CASES:
        h.update(bytes(make_wall(**case)))
    assert h.hexdigest()[:16] == _GOLDEN_DIGEST


def test_make_wall_errors_unchanged():
    messages = []
    for case in _GOLDEN_ERRORS:
        with pytest.raises(ValueError) as e:
            make_wall(**case)
        messages.append(str(e.value))
    assert messages == _GOLDEN_MESSAGES
