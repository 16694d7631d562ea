"""R7 (a turn) and R8 (claims on a discard), with the R5 gold restrictions on claims."""

from __future__ import annotations

import numpy as np
import pytest
from rules_helpers import (
    A_CHI_HIGH,
    A_CHI_LOW,
    A_CHI_MID,
    A_HU,
    A_KONG,
    A_PASS,
    A_PENG,
    A_SELF_KONG,
    K,
    act,
    counts,
    discard,
    kong,
    new_game,
    pass_all,
    resolve,
    tsumogiri,
    window,
)

CHIS = {A_CHI_LOW, A_CHI_MID, A_CHI_HIGH}

# ---- chi (R8) ----------------------------------------------------------------------------------
# Dealer 0 discards 5m. Seat 1 (the next player) holds 3m 4m 6m 7m: all three chi positions.
# Seats 2 and 3 also hold 4m 6m but are not the next player. Nobody is ready (no 抢金).
CHI_HANDS = {
    0: "5m 112233445566p 7p 8p 1s 2s",
    1: "3467m 112233445566s",
    2: "46m 1234567p 899p 7788s",
    3: "1233m 46m 89m 7788s 3456s",
}


@pytest.mark.parametrize(
    "action, low, used",
    [
        (A_CHI_LOW, "5m", "67m"),  # 5m 6m 7m, the discard lowest
        (A_CHI_MID, "4m", "46m"),  # 4m 5m 6m
        (A_CHI_HIGH, "3m", "34m"),  # 3m 4m 5m
    ],
)
def test_r8_chi_only_next_player_each_position(action, low, used):
    g = new_game(dealer=0, hands=CHI_HANDS, tail="9s")
    discard(g, 0, "5m")
    w = window(g)
    assert w[1] & CHIS == CHIS  # all three ways for the next player
    for s in (2, 3):  # they hold 4m 6m too, but only the next player may chi
        assert not (w.get(s, set()) & CHIS)
    before = g.hand(1)
    resolve(g, {1: action})
    assert g.melds(1) == [{"type": "chi", "kind": low, "taken": "5m", "from": 0}]
    np.testing.assert_array_equal(before - g.hand(1), counts(used))
    # R7: after a chi the player must discard: discards only, no win, no kong
    assert g.seat == 1 and g.phase == "discard_after_claim"
    assert set(g.legal_actions) == {k for k in range(27) if g.hand(1)[k] > 0}


def test_r5_gold_never_used_for_chi():
    # Same hands, gold 4m: seat 1's 4m is a gold, so 4-5-6 and 3-4-5 are not offered.
    g = new_game(dealer=0, hands=CHI_HANDS, tail="4m")
    assert g.gold == K("4m")
    discard(g, 0, "5m")
    assert window(g)[1] & CHIS == {A_CHI_LOW}


def test_r8_chi_by_next_player_of_a_non_dealer_discard():
    # Seat 1 draws 5m and discards it: now seat 2 (its next player) may chi, seat 1 can't.
    hands = dict(CHI_HANDS)
    g = new_game(dealer=0, hands=hands, draws="5m", tail="9s")
    discard(g, 0, "1s")
    pass_all(g)
    act(g, 1, K("5m"))
    w = window(g)
    assert w[2] & CHIS == {A_CHI_MID}  # 4m 5m 6m
    assert not (w.get(3, set()) & CHIS) and not (w.get(0, set()) & CHIS)


# ---- peng / kong, golds (R5, R7, R8) ---------------------------------------------------------
# Dealer 0 discards 7p; seat 2 holds 777p and 1111s.
PENG_HANDS = {
    0: "7p 123456789m 1p 2p 3p 5s 6s 7s 8s",
    1: "112233m 445566m 8p 9p 2s 3s",
    2: "777p 1111s 123m 456m 789m",
    3: "8m 1p 2p 3p 4p 4p 5p 5p 6p 6p 2s 3s 5s 6s 7s 8s",
}


def test_r8_peng_then_discard_only_then_added_and_concealed_kong():
    g = new_game(dealer=0, hands=PENG_HANDS, draws="9p 9p 9p 4s", tail="9s 1z 4s 5s")
    discard(g, 0, "7p")
    w = window(g)
    assert {A_PENG, A_KONG} <= w[2]
    resolve(g, {2: A_PENG})
    assert g.melds(2) == [{"type": "peng", "kind": "7p", "taken": "7p", "from": 0}]
    # R7: after a peng only discards — no kong even with the 4th 7p and four 1s in hand;
    # the claimed kind itself may be discarded.
    assert g.seat == 2 and g.phase == "discard_after_claim"
    assert set(g.legal_actions) == {k for k in range(27) if g.hand(2)[k] > 0}
    assert K("7p") in g.legal_actions
    assert g.hand(2).sum() + 3 * len(g.melds(2)) == 17
    discard(g, 2, "9m")
    pass_all(g)
    # play passes from seat 2 to seat 3 (seat 1 was skipped by the claim)
    assert g.seat == 3 and g.phase == "turn"
    tsumogiri(g, turns=3)  # seats 3, 0, 1 discard the 9p 9p 9p they draw
    assert g.seat == 2 and g.phase == "turn"  # seat 2 drew 4s
    assert A_SELF_KONG + K("7p") in g.legal_actions  # added kong, the 4th held all along
    assert A_SELF_KONG + K("1s") in g.legal_actions  # concealed kong
    left, reserve = g.tiles_left, g.reserve
    assert reserve == 18
    kong(g, 2, "7p")
    assert g.melds(2)[0]["type"] == "added_kong"
    # replacement from the tail: tail[1] = 1z is a flower, laid out, then tail[2] = 4s
    assert g.flowers(2) == ["1z"]
    assert g.tiles_left == left - 2
    assert g.reserve == 18 + 1  # R6: +1 per added kong
    assert g.seat == 2 and g.phase == "turn"  # no claim window: nobody may rob a kong (R7)
    assert g.hand(2)[K("4s")] == 2
    kong(g, 2, "1s")
    assert g.melds(2)[1] == {"type": "concealed_kong", "kind": "1s", "taken": None, "from": None}
    assert g.reserve == 18 + 1 + 2  # R6: +2 per concealed kong
    assert g.hand(2)[K("5s")] == 1  # tail[3]
    assert g.seat == 2 and g.phase == "turn"
    # a hand holds 16 between turns counting melds as 3 (kongs too): 17 during the turn
    assert g.hand(2).sum() + 3 * len(g.melds(2)) == 17


def test_r8_exposed_kong_from_discard_then_turn_choices():
    g = new_game(dealer=0, hands=PENG_HANDS, tail="9s 4s")
    discard(g, 0, "7p")
    left = g.tiles_left
    resolve(g, {2: A_KONG})
    assert g.melds(2) == [{"type": "exposed_kong", "kind": "7p", "taken": "7p", "from": 0}]
    assert g.tiles_left == left - 1 and g.hand(2)[K("4s")] == 1  # tail replacement
    assert g.reserve == 19
    # after a kong the player has the choices of a turn again (R7): e.g. the concealed kong
    assert g.seat == 2 and g.phase == "turn"
    assert A_SELF_KONG + K("1s") in g.legal_actions


def test_r5_gold_never_used_for_peng_or_kong():
    # Gold 1s. Seat 2 holds one 8p and two golds: no peng (golds never stand in for a claim).
    # Seat 3 holds 8p 8p and a gold: peng yes, exposed kong no.
    hands = {
        0: "8p 123456789m 1p 2p 3p 5s 6s 7s 8s",
        1: "112233m 445566m 7p 9p 2s 3s",
        2: "777p 8p 11s 123m 456m 789m 2p",
        3: "88p 1s 8m 3p 44p 55p 66p 2s 3s 5s 6s 7s",
    }
    g = new_game(dealer=0, hands=hands, tail="1s")
    assert g.gold == K("1s")
    discard(g, 0, "8p")
    w = window(g)
    assert not (w.get(2, set()) & {A_PENG, A_KONG})
    assert A_PENG in w[3] and A_KONG not in w[3]


def test_r5_discarded_gold_is_never_claimable():
    # Seat 1 discards the gold 9s. Seat 2 (next) holds 7s 8s (a chi if 9s were no gold) and the
    # dealer's hand would win with it: nobody may claim it, not even with a win (R5, R9.3).
    hands = {
        0: "1m 123p 456p 789p 123s 456s 7m",  # after 1m: 5 melds + 7m, waits 7m (or a gold)
        1: "9s 112233m 445566m 8p 9p 2s",
        2: "78s 1s 2s 2p 3p 4p 4p 5p 5p 6p 6p 8m 8m 9m 9m",
        3: "1p 2p 3p 7p 8p 5s 6s 8s 2m 3m 5m 6m 9m 4s 1p 7m",
    }
    g = new_game(dealer=0, hands=hands, draws="4m 5m", tail="9s")
    discard(g, 0, "1m")
    pass_all(g)
    act(g, 1, K("9s"))
    assert g.phase == "turn" and g.seat == 2  # no claim window; seat 2 drew
    assert g.hand(2)[K("5m")] == 1
    assert int(g.view.gold_thrown[1]) == 1


# ---- priority (R8) -----------------------------------------------------------------------------
# Seat 1 draws 5m and discards it: seat 2 (next) can chi 4-5-6, seat 3 can peng, the
# dealer (after discarding 9m) is ready on 5m.
PRIO_HANDS = {
    0: "123p 456p 789p 123s 46m 77s 9m",
    1: "11223m 445566s 88s 1p 3p 5p",
    2: "46m 55p 66p 7p 88p 1s 2s 33s 7s 2m 8m",
    3: "55m 7m 3m 1p 44p 99p 2s 4s 6s 8s 7s 3p 2p",
}


def _prio_game():
    g = new_game(dealer=0, hands=PRIO_HANDS, draws="5m", tail="9s")
    discard(g, 0, "9m")
    pass_all(g)
    act(g, 1, K("5m"))
    w = window(g)
    assert A_HU in w[0] and A_PENG in w[3] and A_CHI_MID in w[2]
    return g


def test_r8_hu_beats_peng_and_chi():
    g = _prio_game()
    resolve(g, {2: A_CHI_MID, 3: A_PENG, 0: A_HU})
    r = g.result
    assert (r["winner"], r["win_type"], r["discarder"]) == (0, "discard", 1)


def test_r8_peng_beats_chi():
    g = _prio_game()
    resolve(g, {2: A_CHI_MID, 3: A_PENG, 0: A_PASS})
    assert g.result is None
    assert g.melds(3) == [{"type": "peng", "kind": "5m", "taken": "5m", "from": 1}]
    assert g.melds(2) == []
    assert g.seat == 3 and g.phase == "discard_after_claim"


def test_r8_chi_when_nobody_claims_higher():
    g = _prio_game()
    resolve(g, {2: A_CHI_MID})
    assert g.melds(2) == [{"type": "chi", "kind": "4m", "taken": "5m", "from": 1}]
    assert g.seat == 2 and g.phase == "discard_after_claim"
    assert g.view.disc_claimed[1, 0] == 1


def test_r8_claims_are_blind_later_seats_see_the_same_choices():
    masks = []
    for first in (A_CHI_MID, A_PASS):
        g = _prio_game()
        assert g.seat == 2
        act(g, 2, first)
        masks.append((g.seat, tuple(g.legal_actions)))
    assert masks[0] == masks[1]


def test_r8_nobody_claims_next_player_draws():
    g = _prio_game()
    resolve(g, {})
    assert g.seat == 2 and g.phase == "turn"
    assert g.view.disc_claimed[1, 0] == 0


# ---- 截胡 (R8) ----------------------------------------------------------------------------------
# Seat 1 draws 5m and discards it. Seats 2, 3 and the dealer each win on it.
JIEHU_HANDS = {
    0: "123p 456p 789p 123s 46m 77s 1m",  # plain; discards 1m first
    1: "22m 33m 88m 11p 99p 44s 55s 88s",
    2: "46m 789m 234p 567p 678s 11s",
    3: "46m 345p 789p 456s 567s 22s",
}


def _jiehu_game(dealer_hand=None):
    hands = dict(JIEHU_HANDS)
    if dealer_hand:
        hands[0] = dealer_hand
    g = new_game(dealer=0, hands=hands, draws="5m", tail="9s")
    discard(g, 0, "1m")
    pass_all(g)  # 抢金 offers declined
    act(g, 1, K("5m"))
    w = window(g)
    assert all(A_HU in w[s] for s in (2, 3, 0))
    return g


def test_r8_jiehu_nearest_plain_winner_wins():
    g = _jiehu_game()
    resolve(g, {2: A_HU, 3: A_HU, 0: A_HU})
    r = g.result
    assert (r["winner"], r["discarder"], r["win_type"]) == (2, 1, "discard")
    # no flower, no kong, no gold: V = (0 + 0 + 0 + 5) * 2 + 30 (平胡) = 40, discarder pays
    assert r["value"] == 40
    assert r["points"] == [0, -40, 40, 0]


def test_r8_jiehu_next_nearest_when_nearest_passes():
    g = _jiehu_game()
    resolve(g, {2: A_PASS, 3: A_HU, 0: A_HU})
    assert g.result["winner"] == 3


def test_r8_golden_pair_win_beats_nearer_plain_win():
    # The dealer (farthest from seat 1) waits with two golds 9s as its pair: 金雀.
    g = _jiehu_game(dealer_hand="123p 456p 789p 123s 46m 9s9s 1m")
    resolve(g, {2: A_HU, 3: A_HU, 0: A_HU})
    r = g.result
    assert (r["winner"], r["discarder"], r["win_type"]) == (0, 1, "discard")
    assert "golden_pair" in r["specials"]
    # flowers 0, golds 2, streak 0: V = (0 + 2 + 0 + 5) * 2 + 60 (金雀; 平胡 30 not paid) = 74
    assert r["value"] == 74
    assert r["points"] == [74, -74, 0, 0]
