"""R11: flower points, kong points, gold points, streak, specials, V and the payments.

Every expected value is worked out by hand from R11.4:
V = (flower + gold + streak + 5) × 2 + max_special; a discard win: the discarder pays V;
a self-drawn win (自摸, 天胡, 抢金, 三金倒): each of the other three pays V.
"""

from __future__ import annotations

import pytest
from rules_helpers import A_HU, A_KONG, A_PENG, A_ROB, act, discard, kong, new_game, pass_all, resolve, tsumogiri

GOLD = "9s"
JUNK_DEALER = "5m 11223m 3m 789m 99p 11s 33s 5s"  # discards 9p first
READY_A = "46m 789m 234p 567p 678s 11s"  # waits 5m


def self_draw_pay(v, winner):
    return [3 * v if s == winner else -v for s in range(4)]


def seat2_self_draw(hand2, draw, flowers2=None, streak=0):
    """Dealer 0 discards 9p, seat 1 draws and discards 9p, seat 2 draws ``draw`` and wins."""
    flowers = {2: flowers2} if flowers2 else None
    g = new_game(
        dealer=0, hands={0: JUNK_DEALER, 2: hand2}, flowers=flowers, draws=["9p", draw], tail=GOLD, streak=streak
    )
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)
    pass_all(g)
    act(g, 2, A_HU)
    r = g.result
    assert sum(r["points"]) == 0
    return r


# ---- R11.1 flowers -------------------------------------------------------------------------
def test_r11_single_flowers_and_a_gold_self_draw():
    r = seat2_self_draw("46m 789m 234p 567p 678s 1s 9s", "5m", flowers2="1f 5f")
    assert r["win_type"] == "self_draw"
    assert (r["flower_points"], r["gold_points"]) == (2, 1)
    assert r["specials"] == []
    # V = (2 + 1 + 0 + 5) * 2 = 16, each of the three others pays 16
    assert r["value"] == 16
    assert r["points"] == self_draw_pay(16, 2)


def test_r11_honor_set_counts_6():
    r = seat2_self_draw(READY_A, "5m", flowers2="2z2z2z2z 3f")
    # four 南 = 6 instead of 4, plus 3f = 7: V = (7 + 0 + 0 + 5) * 2 = 24
    assert r["flower_points"] == 7
    assert r["value"] == 24
    assert r["points"] == self_draw_pay(24, 2)


def test_r11_season_and_plant_sets_count_6_each():
    r = seat2_self_draw(READY_A, "5m", flowers2="1f2f3f4f 5f6f7f8f 1z")
    # 春夏秋冬 6 + 梅兰竹菊 6 + 东 1 = 13: V = (13 + 0 + 0 + 5) * 2 = 36
    assert r["flower_points"] == 13
    assert r["value"] == 36


def test_r11_mixed_flowers_are_no_set():
    r = seat2_self_draw(READY_A, "5m", flowers2="1f2f3f5f")
    # 春夏秋 + 梅 is no set: 4 points, V = (4 + 0 + 0 + 5) * 2 = 18
    assert r["flower_points"] == 4
    assert r["value"] == 18


def test_r11_gold_flip_flower_belongs_to_the_dealer():
    # 天胡 with the flipped 东: 1 flower -> 平胡 one flower 15 < 天胡 30
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail="1z 9s")
    act(g, 0, A_HU)
    r = g.result
    assert set(r["specials"]) == {"heavenly", "one_flower"}
    # V = (1 + 0 + 0 + 5) * 2 + 30 = 42
    assert r["flower_points"] == 1 and r["value"] == 42
    assert r["points"] == self_draw_pay(42, 0)


# ---- R11.1 kongs -----------------------------------------------------------------------------
def test_r11_exposed_kong_1_concealed_kong_2():
    hands = {0: "7p 1122m 33m 789m 99p 22s 33s 5s", 2: "777p 1111s 456m 234p 5s 88s"}
    g = new_game(dealer=0, hands=hands, draws="2p 2p 2p 7s", tail="9s 6s 9p")
    discard(g, 0, "7p")
    resolve(g, {2: A_KONG})  # replacement 6s
    kong(g, 2, "1s")  # replacement 9p
    discard(g, 2, "9p")  # 456m 234p 56s 88s: waits 4s / 7s
    pass_all(g)
    tsumogiri(g, turns=3)
    pass_all(g)
    act(g, 2, A_HU)  # drew 7s
    r = g.result
    assert r["win_type"] == "self_draw"
    # exposed 1 + concealed 2 = 3, no gold, no special (kongs): V = (3 + 0 + 0 + 5) * 2 = 16
    assert r["flower_points"] == 3 and r["specials"] == []
    assert r["value"] == 16
    assert r["points"] == self_draw_pay(16, 2)


def test_r11_added_kong_1():
    hands = {0: "7p 1122m 33m 789m 99p 22s 33s 5s", 2: "777p 456m 234p 567s 88s 1m 9p"}
    g = new_game(dealer=0, hands=hands, draws="2p 2p 2p 2m", tail="9s 3m")
    discard(g, 0, "7p")
    resolve(g, {2: A_PENG})
    discard(g, 2, "9p")
    pass_all(g)
    tsumogiri(g, turns=3)
    pass_all(g)
    kong(g, 2, "7p")  # added kong, replacement 3m: 123m 456m 234p 567s 88s
    act(g, 2, A_HU)
    r = g.result
    assert g.melds(2)[0]["type"] == "added_kong"
    # added kong 1: V = (1 + 0 + 0 + 5) * 2 = 12
    assert r["flower_points"] == 1 and r["value"] == 12
    assert r["points"] == self_draw_pay(12, 2)


# ---- R11.2 / R11.3 / R11.4 -----------------------------------------------------------------
def test_r11_streak_adds_to_v():
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail=GOLD, streak=3)
    act(g, 0, A_HU)
    # V = (0 + 0 + 3 + 5) * 2 + 30 = 46
    assert g.result["value"] == 46
    assert g.result["streak"] == 3


def test_r11_heavenly_30():
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, flowers={0: "1f2f"}, tail=GOLD)
    act(g, 0, A_HU)
    r = g.result
    assert r["specials"] == ["heavenly"]
    # V = (2 + 0 + 0 + 5) * 2 + 30 = 44
    assert r["value"] == 44
    assert r["points"] == self_draw_pay(44, 0)


def test_r11_rob_gold_30():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, flowers={2: "1f2f"}, tail=GOLD)
    discard(g, 0, "9p")
    resolve(g, {2: A_ROB})
    r = g.result
    assert r["specials"] == ["rob_gold"]
    # 2 flowers + the robbed gold: V = (2 + 1 + 0 + 5) * 2 + 30 = 46
    assert r["value"] == 46
    assert r["points"] == self_draw_pay(46, 2)


def test_r11_no_flower_no_kong_30():
    r = seat2_self_draw(READY_A, "5m")
    assert r["specials"] == ["no_flower_no_kong"]
    assert r["value"] == 40  # (0 + 0 + 0 + 5) * 2 + 30


def test_r11_one_flower_15():
    r = seat2_self_draw(READY_A, "5m", flowers2="3f")
    assert r["specials"] == ["one_flower"]
    assert r["value"] == 27  # (1 + 0 + 0 + 5) * 2 + 15


def test_r11_three_golds_40_in_play():
    r = seat2_self_draw("9s9s 1m 4m 7m 2p 5p 8p 3s 6s 1p 4p 7p 2m 5m 8m", "9s", flowers2="1f2f")
    assert r["win_type"] == "three_golds"
    assert r["specials"] == ["three_golds"]
    # V = (2 + 3 + 0 + 5) * 2 + 40 = 60
    assert r["gold_points"] == 3 and r["value"] == 60
    assert r["points"] == self_draw_pay(60, 2)


def test_r11_golden_pair_60_only_highest_paid():
    r = seat2_self_draw("46m 789m 234p 567p 678s 9s9s", "5m", flowers2="1f")
    assert set(r["specials"]) == {"golden_pair", "one_flower"}
    # V = (1 + 2 + 0 + 5) * 2 + 60 (not 60 + 15) = 76
    assert r["value"] == 76


def test_r11_golden_dragon_120_self_drawn():
    r = seat2_self_draw("9s9s9s 456m 789m 234p 567p 1s", "1s", flowers2="1f2f")
    assert r["win_type"] == "three_golds"
    assert set(r["specials"]) == {"three_golds", "golden_pair", "golden_dragon"}
    # V = (2 + 3 + 0 + 5) * 2 + 120 = 140
    assert r["value"] == 140
    assert r["points"] == self_draw_pay(140, 2)


def test_r11_golden_dragon_on_a_discard():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: "9s9s9s 456m 789m 234p 567p 1s"}, draws="1s", tail=GOLD)
    discard(g, 0, "9p")
    pass_all(g)
    discard(g, 1, "1s")
    resolve(g, {2: A_HU})  # idle gold, but the win is 金雀 (R9.5)
    r = g.result
    assert (r["win_type"], r["discarder"]) == ("discard", 1)
    assert set(r["specials"]) == {"golden_pair", "golden_dragon", "no_flower_no_kong"}
    # no 三金倒 on a discard win; V = (0 + 3 + 0 + 5) * 2 + 120 = 136, the discarder pays
    assert r["value"] == 136
    assert r["points"] == [0, -136, 136, 0]


def test_r11_discard_win_only_discarder_pays():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, flowers={2: "1f2f3f"}, draws="5m", tail=GOLD)
    discard(g, 0, "9p")
    pass_all(g)
    discard(g, 1, "5m")
    resolve(g, {2: A_HU})
    r = g.result
    # V = (3 + 0 + 0 + 5) * 2 = 16, no special (3 flowers)
    assert r["value"] == 16 and r["specials"] == []
    assert r["points"] == [0, -16, 16, 0]


@pytest.mark.parametrize("streak", [0, 1, 4])
def test_r11_scores_cumulate_and_sum_to_zero(streak):
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail=GOLD, streak=streak)
    act(g, 0, A_HU)
    v = (0 + 0 + streak + 5) * 2 + 30
    assert g.scores == self_draw_pay(v, 0)
    assert sum(g.scores) == 0
