"""R1, R3, R4, R5: the wall, the deal, flower replacement and the gold flip."""

from __future__ import annotations

import numpy as np
import pytest
from rules_helpers import K, counts, discard, new_game, pass_all

from fzmj_env import Game
from fzmj_env.scenario import make_wall


def block_counts(kinds) -> np.ndarray:
    c = np.zeros(27, dtype=np.int32)
    for k in kinds:
        assert k < 27, "this test expects suit tiles only in the dealt blocks"
        c[k] += 1
    return c


# ---- R1 ------------------------------------------------------------------------------------
def test_r1_scripted_wall_must_be_the_full_set():
    wall = make_wall(dealer=0)
    wall[0] = wall[1]  # one kind too many, another one too few
    with pytest.raises(ValueError, match="wrong counts"):
        Game().reset(seed=0, wall=wall, dealer=0)
    with pytest.raises(ValueError, match="144"):
        Game().reset(seed=0, wall=make_wall(dealer=0)[:-1], dealer=0)


# ---- R3 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_r3_deal_blocks_in_seat_order_dealer_gets_tile_64(dealer):
    # A shuffled wall with flowers kept out of the dealt blocks: the hands must be exactly
    # wall[0:16] (+ wall[64]) for the dealer, wall[16:32] for dealer+1, and so on (R3).
    wall = make_wall(dealer=dealer, seed=11 + dealer)
    g = Game()
    g.reset(seed=0, wall=wall, dealer=dealer)
    for i in range(4):
        seat = (dealer + i) % 4
        expect = block_counts(wall[16 * i : 16 * i + 16])
        if i == 0:
            expect[wall[64]] += 1
        np.testing.assert_array_equal(g.hand(seat), expect, err_msg=f"seat {seat}")
        assert g.hand(seat).sum() == (17 if i == 0 else 16)
        assert g.flowers(seat) == []
    # R7: the dealer starts with 17 tiles and no draw; the head is untouched (next = 65).
    assert g.seat == dealer and g.phase == "turn"
    assert int(g.view.m[7]) == 65  # HEAD
    # 144 - 65 dealt - 1 gold indicator (R5) = 78
    assert g.tiles_left == 78
    assert g.gold == wall[143]


def test_r3_first_draw_in_play_is_head_index_65():
    dealer = 2
    hands = {2: "1122334455667788m9m"}
    g = new_game(dealer=dealer, hands=hands, draws="7p 2s", tail="9s")
    before = g.hand(3)
    discard(g, 2, "9m")
    pass_all(g)
    # dealer+1 = seat 3 drew wall[65] = 7p
    assert g.seat == 3 and g.phase == "turn"
    np.testing.assert_array_equal(g.hand(3) - before, counts("7p"))


# ---- R4 ------------------------------------------------------------------------------------
def test_r4_flower_rounds_exact_tail_tiles_per_seat():
    # Dealer 1: seat order of every round is 1, 2, 3, 0.
    hands = {
        1: "1z1f" + "66m77m88m11p22p33p44p5p",  # 2 flowers + 15 suit
        2: "2z" + "99m55p66p77p88p11s22s3s",  # 1 flower + 15 suit
        3: "99p345678s345678s12s",  # no flower
        0: "3z2f" + "678m9m1234p5678p9p7s",  # 2 flowers + 14 suit
    }
    tail = " ".join(
        [
            "1m 4z",  # round 1 (every seat, from the dealer): seat 1 draws a flower -> round 2
            "2m",  # round 1, seat 2: suit only -> done
            "3f 3m",  # round 1, seat 0: a flower -> round 2
            "5z",  # round 2 (seats 1 and 0, dealer first): seat 1 replaces 4z, a flower again
            "4m",  # round 2, seat 0 replaces 3f
            "5m",  # round 3: seat 1 only
            "6z 4f 9s",  # gold flip (R5): flowers to the dealer, no replacement; gold 9s
        ]
    )
    g = new_game(dealer=1, hands=hands, tail=tail)
    assert g.flowers(1) == sorted(["1z", "1f", "4z", "5z", "6z", "4f"], key=K)
    assert g.flowers(2) == ["2z"]
    assert g.flowers(3) == []
    assert g.flowers(0) == sorted(["3z", "2f", "3f"], key=K)
    np.testing.assert_array_equal(g.hand(1), counts("66m77m88m11p22p33p44p5p" + "1m5m"))
    np.testing.assert_array_equal(g.hand(2), counts("99m55p66p77p88p11s22s3s" + "2m"))
    np.testing.assert_array_equal(g.hand(3), counts("99p345678s345678s12s"))
    np.testing.assert_array_equal(g.hand(0), counts("678m9m1234p5678p9p7s" + "3m4m"))
    assert g.gold == K("9s")
    # 79 tiles after the deal - 11 taken from the tail (8 replacements, 3 flips) = 68
    assert g.tiles_left == 68
    assert g.seat == 1 and g.hand(1).sum() == 17


def test_r4_in_play_flower_drawn_from_head_is_replaced_from_tail_repeatedly():
    hands = {0: "1122334455667788m9m"}
    # tail: gold 9s, then the in-play replacements 3f (another flower) and 4s
    g = new_game(dealer=0, hands=hands, draws="2z", tail="9s 3f 4s")
    before = g.hand(1)
    left = g.tiles_left
    discard(g, 0, "9m")
    pass_all(g)
    assert g.seat == 1 and g.phase == "turn"
    assert g.flowers(1) == ["2z", "3f"]
    np.testing.assert_array_equal(g.hand(1) - before, counts("4s"))
    assert g.tiles_left == left - 3  # one head draw + two tail replacements


# ---- R5 ------------------------------------------------------------------------------------
def test_r5_gold_flip_gives_flowers_to_dealer_without_replacement():
    g = new_game(dealer=2, tail="1z 8f 5p")
    assert g.gold == K("5p")
    assert g.flowers(2) == ["1z", "8f"]
    assert all(g.flowers(s) == [] for s in (0, 1, 3))
    assert g.hand(2).sum() == 17  # no replacement for the flipped flowers
    assert g.tiles_left == 79 - 3  # the indicator is set aside, not in the wall


def test_r5_gold_flip_after_all_flower_rounds():
    # The dealer lays out one flower; its replacement comes from the tail BEFORE the flip.
    hands = {0: "2z" + "123456789m1234567p"}
    g = new_game(dealer=0, hands=hands, tail="8s 7s")
    assert g.flowers(0) == ["2z"]
    np.testing.assert_array_equal(g.hand(0), counts("123456789m1234567p8s"))
    assert g.gold == K("7s")
