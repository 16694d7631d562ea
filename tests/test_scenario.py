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
