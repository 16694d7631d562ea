"""R9 (winning: shape, self-draw, gold-discard penalty, 过水, 闲金) and R10 (天胡, 抢金)."""

from __future__ import annotations

import pytest
from rules_helpers import (
    A_CHI_HIGH,
    A_HU,
    A_KONG,
    A_PASS,
    A_PENG,
    A_ROB,
    K,
    act,
    discard,
    kong,
    new_game,
    pass_all,
    resolve,
    tsumogiri,
    window,
)

# Gold 9s everywhere unless said otherwise (tail "9s"). Ready hands used below:
READY_A = "46m 789m 234p 567p 678s 11s"  # waits 5m (and 抢金: 4m 6m + gold)
READY_B = "46m 345p 789p 456s 567s 22s"  # waits 5m
JUNK_DEALER = "5m 11223m 3m 789m 99p 11s 33s 5s"  # 17 tiles, ready for nothing useful


def asked(g, seat):
    return window(g).get(seat, set())


# ---- R9.2 self-draw, win on a kong replacement ---------------------------------------------
def test_r9_self_draw_win():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, draws="9p 5m", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)  # seat 1 draws and discards 9p
    assert g.seat == 2 and A_HU in g.legal_actions  # seat 2 drew 5m
    act(g, 2, A_HU)
    r = g.result
    assert (r["winner"], r["win_type"], r["discarder"]) == (2, "self_draw", None)
    # no flower, no kong, no gold: V = (0 + 0 + 0 + 5) * 2 + 30 (平胡) = 40; 3 seats pay 40
    assert r["value"] == 40
    assert r["points"] == [-40, -40, 120, -40]


def test_r9_win_on_kong_replacement_is_self_draw():
    hands = {0: "1122334455667788m9m", 2: "1111s 456p 789p 234p 567s"}
    g = new_game(dealer=0, hands=hands, draws="3s 8s", tail="9s 8s")
    discard(g, 0, "9m")
    pass_all(g)
    tsumogiri(g, turns=1)  # seat 1: 3s
    assert g.seat == 2 and A_HU not in g.legal_actions  # drew 8s: not a win yet
    kong(g, 2, "1s")  # replacement 8s from the tail: 456p 789p 234p 567s 88s + kong
    act(g, 2, A_HU)
    r = g.result
    assert (r["winner"], r["win_type"]) == (2, "self_draw")
    # concealed kong = 2 flower points, no gold, no special (a kong): V = (2 + 0 + 0 + 5) * 2 = 14
    assert r["flower_points"] == 2 and r["specials"] == []
    assert r["value"] == 14
    assert r["points"] == [-14, -14, 42, -14]


def test_r9_win_on_exposed_kong_replacement_is_self_draw():
    hands = {0: "7p 1122m 33m 789m 99p 22s 33s 5s", 2: "777p 456m 789m 234p 567s 8s"}
    g = new_game(dealer=0, hands=hands, tail="9s 8s")
    discard(g, 0, "7p")
    resolve(g, {2: A_KONG})  # replacement 8s: 456m 789m 234p 567s 88s + the kong
    assert g.seat == 2 and A_HU in g.legal_actions
    act(g, 2, A_HU)
    r = g.result
    assert (r["winner"], r["win_type"], r["discarder"]) == (2, "self_draw", None)
    # exposed kong 1: V = (1 + 0 + 0 + 5) * 2 = 12, each other seat pays
    assert r["value"] == 12 and r["points"] == [-12, -12, 36, -12]


# ---- R9.3 / R7 gold-discard penalty -----------------------------------------------------------
def test_r9_3_gold_discarder_never_wins_on_discard_but_may_self_draw():
    # Seat 2 discards its gold 9s, then waits on 5m: seat 3's 5m is not offered to it,
    # its own 5m draw is.
    hands = {0: JUNK_DEALER, 2: "9s 46m 789m 234p 567p 678s 1s"}
    g = new_game(dealer=0, hands=hands, draws="9p 1s 5m 1p 1p 5m", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)  # seat 1: 9p
    assert g.seat == 2  # drew 1s
    discard(g, 2, "9s")  # a gold: never claimable, no window
    assert g.seat == 3 and g.phase == "turn"
    assert int(g.view.gold_thrown[2]) == 1
    discard(g, 3, "5m")
    assert A_HU not in asked(g, 2)
    pass_all(g)
    tsumogiri(g, turns=2)  # seats 0, 1 discard 1p, 1p
    pass_all(g)
    assert g.seat == 2 and A_HU in g.legal_actions  # self-drawn 5m is fine
    act(g, 2, A_HU)
    assert (g.result["winner"], g.result["win_type"]) == (2, "self_draw")


# ---- R9.4 过水 ----------------------------------------------------------------------------------
SEAT2_TWO_SIDED = "34m 789m 234p 567p 678s 11s"  # waits 2m / 5m


def test_r9_4_passed_win_blocks_that_kind_until_next_discard():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: SEAT2_TWO_SIDED}, draws="9p 9p 5m 2m 5m 1p 5m", tail="9s")
    discard(g, 0, "9p")
    assert A_ROB in asked(g, 2)
    pass_all(g)  # declining 抢金 is not 过水 (R10)
    tsumogiri(g, turns=2)  # seat 1: 9p, seat 2: 9p
    discard(g, 3, "5m")
    assert A_HU in asked(g, 2)  # not blocked by the declined rob
    resolve(g, {2: A_PASS})  # 过水 on 5m
    discard(g, 0, "2m")
    assert A_HU in asked(g, 2)  # another kind is still allowed
    resolve(g, {2: A_PASS})  # 过水 on 2m too
    discard(g, 1, "5m")
    assert A_HU not in asked(g, 2)  # blocked: seat 2 has not discarded since
    pass_all(g)
    assert g.seat == 2
    discard(g, 2, "1p")  # its discard lifts the block
    pass_all(g)
    discard(g, 3, "5m")
    assert A_HU in asked(g, 2)
    resolve(g, {2: A_HU})
    assert (g.result["winner"], g.result["discarder"]) == (2, 3)


def test_r9_4_discard_after_chi_lifts_the_block():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: SEAT2_TWO_SIDED}, draws="9p 9p 5m 1p 8s 5m", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=2)
    discard(g, 3, "5m")
    resolve(g, {2: A_PASS})  # 过水 on 5m
    tsumogiri(g, turns=1)  # seat 0: 1p
    discard(g, 1, "8s")
    resolve(g, {2: A_CHI_HIGH})  # 6s 7s + 8s
    discard(g, 2, "8s")  # a discard after a chi counts
    pass_all(g)
    discard(g, 3, "5m")
    assert A_HU in asked(g, 2)


def test_r9_4_self_draw_unaffected_by_passed_win():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: SEAT2_TWO_SIDED}, draws="5m 5m", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    discard(g, 1, "5m")
    assert A_HU in asked(g, 2)
    resolve(g, {2: A_PASS})
    assert g.seat == 2 and A_HU in g.legal_actions  # drew 5m
    act(g, 2, A_HU)
    assert g.result["win_type"] == "self_draw"


# ---- R9.5 闲金 ----------------------------------------------------------------------------------
def test_r9_5_idle_gold_no_discard_win_without_golden_pair():
    # 5 complete melds + 1 gold: wins on every kind, but never with two golds as the pair.
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: "123m 456m 789m 123p 456p 9s"}, draws="5p 2s", tail="9s")
    discard(g, 0, "9p")
    assert asked(g, 2) == {A_ROB}  # 抢金 yes (R10), a win on 9p no
    pass_all(g)
    discard(g, 1, "5p")
    assert A_HU not in asked(g, 2)
    pass_all(g)
    assert g.seat == 2 and A_HU in g.legal_actions  # self-draw 2s is allowed
    act(g, 2, A_HU)
    r = g.result
    assert (r["winner"], r["win_type"]) == (2, "self_draw")
    # 1 gold, no flower/kong: V = (0 + 1 + 0 + 5) * 2 + 30 (平胡) = 42
    assert r["value"] == 42


def test_r9_5_idle_gold_may_win_on_discard_only_with_golden_pair():
    # 4 melds + 1s 3s + two golds: idle gold (any kind wins). A 2s discard makes 123s with the
    # two golds as the pair (金雀): allowed. A 5p discard only wins as 13s+gold, 5p+gold: not.
    hands = {0: JUNK_DEALER, 2: "123m 456m 789m 123p 13s 9s9s"}
    g = new_game(dealer=0, hands=hands, draws="5p 1p 2s", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    discard(g, 1, "5p")
    assert A_HU not in asked(g, 2)
    pass_all(g)
    assert g.seat == 2 and A_HU in g.legal_actions  # self-draw is always fine
    discard(g, 2, "1p")
    pass_all(g)
    discard(g, 3, "2s")
    assert A_HU in asked(g, 2)
    resolve(g, {2: A_HU})
    r = g.result
    assert (r["winner"], r["win_type"], r["discarder"]) == (2, "discard", 3)
    assert "golden_pair" in r["specials"]
    # 2 golds, no flower/kong: V = (0 + 2 + 0 + 5) * 2 + 60 (金雀) = 74, seat 3 pays
    assert r["value"] == 74
    assert r["points"] == [0, 0, 74, -74]


# ---- R10 天胡 -----------------------------------------------------------------------------------
def test_r10_heavenly_win():
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail="9s")
    act(g, 0, A_HU)
    r = g.result
    assert (r["winner"], r["win_type"]) == (0, "heavenly")
    assert set(r["specials"]) == {"heavenly", "no_flower_no_kong"}
    # V = (0 + 0 + 0 + 5) * 2 + 30 = 40; self-draw payment
    assert r["value"] == 40
    assert r["points"] == [120, -40, -40, -40]


def test_r10_heavenly_three_golds():
    g = new_game(dealer=1, hands={1: "9s9s9s 1m 4m 7m 2p 5p 8p 3s 6s 1p 4p 7p 2m 5m 8m"}, tail="9s")
    assert A_HU in g.legal_actions
    act(g, 1, A_HU)
    r = g.result
    assert (r["winner"], r["win_type"]) == (1, "heavenly")
    assert {"heavenly", "three_golds"} <= set(r["specials"])
    # golds 3: V = (0 + 3 + 0 + 5) * 2 + 40 (三金倒 beats 天胡 30 / 平胡 30) = 56
    assert r["gold_points"] == 3
    assert r["value"] == 56
    assert r["points"] == [-56, 168, -56, -56]


def test_r10_heavenly_only_at_the_very_first_decision():
    # A winning 17 with 1111m: after a kong, the same win is a plain self-draw.
    g = new_game(dealer=0, hands={0: "1111m 23m 123p 456p 789p 55s"}, tail="9s 4m")
    assert A_HU in g.legal_actions
    kong(g, 0, "1m")
    assert A_HU in g.legal_actions  # 23m + 4m
    act(g, 0, A_HU)
    r = g.result
    assert r["win_type"] == "self_draw" and "heavenly" not in r["specials"]
    # concealed kong 2: V = (2 + 0 + 0 + 5) * 2 = 14 (no special: a kong)
    assert r["value"] == 14


# ---- R10 抢金 -----------------------------------------------------------------------------------
def test_r10_rob_gold_non_dealer():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, tail="9s")
    discard(g, 0, "9p")
    assert asked(g, 2) == {A_ROB}
    resolve(g, {2: A_ROB})
    r = g.result
    assert (r["winner"], r["win_type"]) == (2, "rob_gold")
    assert g.hand(2)[K("9s")] == 1  # the indicator joined the hand as a gold
    assert "rob_gold" in r["specials"]
    # 1 gold (the robbed one): V = (0 + 1 + 0 + 5) * 2 + 30 = 42, self-draw payment
    assert r["gold_points"] == 1 and r["value"] == 42
    assert r["points"] == [-42, -42, 126, -42]


@pytest.mark.parametrize("dealer, near, far", [(0, 1, 3), (2, 3, 1)])
def test_r10_rob_gold_nearest_seat_after_dealer_first(dealer, near, far):
    hands = {dealer: JUNK_DEALER, near: READY_A, far: READY_B}
    g = new_game(dealer=dealer, hands=hands, tail="9s")
    discard(g, dealer, "9p")
    resolve(g, {near: A_ROB, far: A_ROB})
    assert (g.result["winner"], g.result["win_type"]) == (near, "rob_gold")


def test_r10_non_dealer_rob_beats_nearer_discard_win():
    # Dealer discards 5m: seat 1 wins on it, seat 3 robs the gold -> seat 3.
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 1: READY_A, 3: READY_B}, tail="9s")
    discard(g, 0, "5m")
    assert A_HU in asked(g, 1) and A_ROB in asked(g, 3)
    resolve(g, {1: A_HU, 3: A_ROB})
    assert (g.result["winner"], g.result["win_type"]) == (3, "rob_gold")


DEALER_READY = "123p 456p 789p 123s 46m 77s 5m"  # after discarding 5m: ready, may rob


def test_r10_discard_win_beats_dealer_rob():
    g = new_game(dealer=0, hands={0: DEALER_READY, 2: READY_A}, tail="9s")
    discard(g, 0, "5m")
    assert A_ROB in asked(g, 0) and A_HU in asked(g, 2)
    resolve(g, {0: A_ROB, 2: A_HU})
    r = g.result
    assert (r["winner"], r["win_type"], r["discarder"]) == (2, "discard", 0)


def test_r10_dealer_rob_beats_peng():
    hands = {0: DEALER_READY, 3: "55m 1m 4m 7m 2p 5p 8p 3s 6s 9p 1p 4p 7p 2m 8m"}
    g = new_game(dealer=0, hands=hands, tail="9s")
    discard(g, 0, "5m")
    assert A_PENG in asked(g, 3) and A_ROB in asked(g, 0)
    resolve(g, {3: A_PENG, 0: A_ROB})
    r = g.result
    assert (r["winner"], r["win_type"]) == (0, "rob_gold")
    # dealer: 1 gold, no flower, no kong: V = (0 + 1 + 0 + 5) * 2 + 30 = 42
    assert r["value"] == 42 and r["points"] == [126, -42, -42, -42]


def test_r10_rob_offered_after_dealer_kong():
    hands = {0: "1111m 123p 456p 789p 46m 77s", 2: READY_A}
    g = new_game(dealer=0, hands=hands, tail="9s 5s")
    kong(g, 0, "1m")
    discard(g, 0, "5s")
    w = window(g)
    assert A_ROB in w[0] and A_ROB in w[2]
    resolve(g, {0: A_ROB})
    r = g.result
    assert (r["winner"], r["win_type"]) == (0, "rob_gold")
    # concealed kong 2 + 1 gold: V = (2 + 1 + 0 + 5) * 2 + 30 (抢金) = 46
    assert r["value"] == 46


def test_r10_rob_offered_when_dealer_first_discard_is_gold():
    g = new_game(dealer=0, hands={0: "9s 1122m 3m 3m 789m 99p 11s 33s 5s", 2: READY_A}, tail="9s")
    discard(g, 0, "9s")
    assert asked(g, 2) == {A_ROB}  # no claim on a gold, but the rob is offered
    resolve(g, {2: A_ROB})
    assert (g.result["winner"], g.result["win_type"]) == (2, "rob_gold")


def test_r10_rob_only_in_the_dealer_first_window():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, draws="1p 1p 1p 2p", tail="9s")
    discard(g, 0, "9p")
    assert A_ROB in asked(g, 2)
    pass_all(g)
    for _ in range(3):  # seats 1, 2, 3 discard what they draw
        tsumogiri(g, turns=1)
        assert A_ROB not in asked(g, 2) and A_ROB not in asked(g, 0)
    pass_all(g)
    discard(g, 0, "9p")  # the dealer's second discard
    assert A_ROB not in asked(g, 2)


def test_r10_rob_with_two_golds_by_shape_is_not_three_golds():
    # Two golds + 4 melds + 1s 1s: the robbed third gold completes an R9.1 shape (the golds as
    # their own triplet: 金龙), so the rob is allowed; 三金倒 never applies to 抢金 (R11.3).
    g = new_game(dealer=0, hands={0: JUNK_DEALER.replace("11s", "22s"), 2: "9s9s 456m 789m 234p 567p 11s"}, tail="9s")
    discard(g, 0, "9p")
    assert A_ROB in asked(g, 2)
    resolve(g, {2: A_ROB})
    r = g.result
    assert r["win_type"] == "rob_gold"
    assert "three_golds" not in r["specials"]
    assert {"rob_gold", "golden_pair", "golden_dragon"} <= set(r["specials"])
    # 3 golds: V = (0 + 3 + 0 + 5) * 2 + 120 (金龙) = 136, each other seat pays
    assert r["value"] == 136 and r["points"] == [-136, -136, 408, -136]


def test_r10_two_golds_cannot_rob_the_third():
    hands = {0: JUNK_DEALER, 2: "9s9s 1m 4m 7m 2p 5p 8p 3s 6s 1p 4p 7p 2m 5m 8m"}
    g = new_game(dealer=0, hands=hands, tail="9s")
    discard(g, 0, "9p")
    assert A_ROB not in asked(g, 2)


def test_r10_dealer_may_rob_after_discarding_a_gold_first():
    """docs/rules.md R9.3 (readings): 抢金 is not a win on a discard, so R9.3 does not forbid it."""
    g = new_game(dealer=0, hands={0: "9s 123p 456p 789p 234s 567s 1m"}, tail="9s")
    discard(g, 0, "9s")  # the dealer's first discard is a gold: 16 tiles left, ready on 1m + a gold
    assert asked(g, 0) == {A_ROB}
    resolve(g, {0: A_ROB})
    r = g.result
    assert (r["winner"], r["win_type"]) == (0, "rob_gold")
    # the robbed gold is the only gold, no flower, no kong: V = (0 + 1 + 0 + 5) * 2 + 30 = 42
    assert r["value"] == 42 and r["points"] == [126, -42, -42, -42]
