"""R6: the reserve N, the drawable count D, the final round (最后一组牌) and the drawn hand.

Most walls here deal all 36 flowers into the hands (9 per seat, no complete set), so the
wall holds only suit tiles after the deal and the arithmetic is exact:
tiles left after the deal = 144 - 65 dealt - 36 replacements - 1 gold indicator = 42,
N = 18, D = 42 - 18 = 24.
"""

from __future__ import annotations

from rules_helpers import A_HU, A_KONG, K, discard, kong, new_game, pass_all, resolve, state, tsumogiri

FL = {s: "1234567z" + f"{s + 1}f{s + 5}f" for s in range(4)}  # 9 flowers each, no set
GOLD = "5s"


def head(g) -> int:
    return int(g.view.m[state.HEAD])


def final_left(g) -> int:
    return int(g.view.m[state.FINAL_LEFT])


def test_r6_reserve_base_and_drawable():
    g = new_game(dealer=0, flowers=FL, tail=GOLD)
    assert g.tiles_left == 42
    assert g.reserve == 18
    assert g.drawable == 24


def test_r6_final_round_draws_min_d_4_then_hand_is_drawn():
    g = new_game(dealer=0, flowers=FL, tail=GOLD)
    tsumogiri(g)
    r = g.result
    assert r["winner"] is None and r["points"] == [0, 0, 0, 0]
    # Normal draw i (1-based) is due with D = 24 - (i - 1): draws 1..20 have D = 24..5 > 4;
    # draw 21 is due with D = 4 -> final round of min(4, 4) = 4 draws by seats 1, 2, 3, 0.
    assert final_left(g) == 4
    assert head(g) == 65 + 20 + 4
    assert g.tiles_left == 42 - 24 == g.reserve
    # no discard in the final round: 1 (dealer's first) + 20 normal draws = 21 discards
    assert sum(1 for _, a in g.decisions if a < 27) == 21
    assert all(g.hand(s).sum() == 17 for s in range(4))  # each kept its final-round tile


def test_r6_final_round_auto_win_is_self_draw_with_no_decision():
    # Seat 2 waits on 7p; the 22nd draw (the second of the final round: seats 1, 2, 3, 0) is 7p.
    g = new_game(dealer=0, flowers=FL, hands={2: "123m 456m 789m 123p 456p 7p"}, draws=[None] * 21 + ["7p"], tail=GOLD)
    tsumogiri(g)
    r = g.result
    assert (r["winner"], r["win_type"], r["discarder"]) == (2, "self_draw", None)
    assert (2, A_HU) not in g.decisions
    assert head(g) == 65 + 20 + 2  # the round stopped at the win
    # 9 flowers, no gold, no kong, no special: V = (9 + 0 + 0 + 5) * 2 = 28, self-draw
    assert r["flower_points"] == 9 and r["specials"] == []
    assert r["value"] == 28
    assert r["points"] == [-28, -28, 84, -28]


def test_r6_final_round_three_golds_wins_at_once():
    # Seat 3 holds two golds and junk; its final-round draw (the 23rd) is the third gold.
    hands = {3: "5s5s 1m 4m 7m 2p 5p 8p 3s 6s 1p 4p 7p 2m 5m 8m"}
    g = new_game(dealer=0, flowers=FL, hands=hands, draws=[None] * 22 + ["5s"], tail=GOLD)
    tsumogiri(g)
    r = g.result
    assert (r["winner"], r["win_type"]) == (3, "three_golds")
    assert "three_golds" in r["specials"]
    # 9 flowers, 3 golds: V = (9 + 3 + 0 + 5) * 2 + 40 (三金倒) = 74
    assert r["value"] == 74
    assert r["points"] == [-74, -74, -74, 222]


def test_r6_final_round_flower_laid_out_without_replacement_count_fixed():
    # 35 flowers in the hands (seat 2 holds three 1z); the 4th 1z is seat 2's final draw.
    # tiles left = 144 - 65 - 35 - 1 = 43, D = 25: draws 1..21 have D = 25..5, the final
    # round starts at draw 22 (seat 2) with D = 4.
    fl = {
        2: "1z1z1z 2z 3z 4z 5z 3f 6f",
        0: "2z 3z 4z 5z 6z 7z 6z 7z 2f",
        1: "2z 3z 4z 5z 6z 7z 1f 5f",
        3: "2z 3z 4z 5z 6z 7z 4f 7f 8f",
    }
    g = new_game(dealer=0, flowers=fl, draws=[None] * 21 + ["1z"], tail=GOLD)
    assert g.drawable == 25
    tsumogiri(g)
    assert g.result["winner"] is None
    assert g.flowers(2).count("1z") == 4
    assert g.reserve == 18 + 2  # the set completed in the final round (R6)...
    assert final_left(g) == 4 and head(g) == 65 + 21 + 4  # ...did not cut the round short
    assert g.hand(2).sum() == 16  # no replacement for the flower
    assert all(g.hand(s).sum() == 17 for s in (3, 0, 1))


def test_r6_kongs_leaving_d_le_0_end_the_hand_at_the_next_draw():
    hands = {0: "1111m 2222m 4p 7p 1s 2s 4s 6s 7s 3p 9p"}
    g = new_game(dealer=0, flowers=FL, hands=hands, tail=GOLD)
    tsumogiri(g, turns=20, first_discard={0: "9p"})
    pass_all(g)
    # the dealer made the 20th normal draw, due with D = 24 - 19 = 5
    assert g.seat == 0 and g.phase == "turn" and g.drawable == 4
    kong(g, 0, "1m")  # one tile from the tail, N + 2: D = 4 - 1 - 2 = 1
    assert g.drawable == 1 and g.reserve == 20
    kong(g, 0, "2m")  # D = 1 - 1 - 2 = -2
    assert g.drawable == -2
    h = head(g)
    tsumogiri(g)
    assert g.result["winner"] is None
    assert head(g) == h == 65 + 20  # nobody drew again: no final round
    assert final_left(g) == -1
    assert g.hand(1).sum() == 16


def test_r6_final_round_with_d_below_4_draws_only_d_tiles():
    hands = {0: "1111m 2222m 4p 7p 1s 2s 4s 6s 7s 3p 9p"}
    g = new_game(dealer=0, flowers=FL, hands=hands, tail=GOLD)
    tsumogiri(g, turns=20, first_discard={0: "9p"})
    pass_all(g)
    assert g.seat == 0 and g.drawable == 4
    kong(g, 0, "1m")  # D = 4 - 1 - 2 = 1
    tsumogiri(g)
    # seat 1's normal draw is due with D = 1: a final round of min(1, 4) = 1 draw
    assert g.result["winner"] is None
    assert final_left(g) == 1
    assert head(g) == 65 + 20 + 1
    assert g.hand(1).sum() == 17 and g.hand(2).sum() == 16


# The reserve grows with kongs and flower sets, so the final round starts earlier (R6).
FL_SET = {  # seat 1 holds all four 1z: a flower set in the deal
    1: "1z1z1z1z 2z 3z 4z 5z 2f",
    0: "2z 3z 4z 5z 6z 7z 1f 5f 6z",
    2: "2z 3z 4z 5z 6z 7z 3f 6f 7z",
    3: "2z 3z 4z 5z 6z 7z 4f 7f 8f",
}


def test_r6_reserve_growth_none():
    g = new_game(dealer=0, flowers=FL, tail=GOLD)
    tsumogiri(g)
    assert head(g) == 65 + 20 + 4  # D = 24: 20 normal draws, final round of 4


def test_r6_reserve_growth_flower_set_in_deal():
    g = new_game(dealer=0, flowers=FL_SET, tail=GOLD)
    assert g.reserve == 20  # 18 + 2
    tsumogiri(g)
    # D = 42 - 20 = 22: draws 1..18 have D = 22..5, final round at draw 19
    assert head(g) == 65 + 18 + 4


def test_r6_reserve_growth_concealed_kong():
    hands = {0: "1111m 3m 6m 9m 3p 6p 9p 1s 4s 7s 2s 8s 5p 1p"}
    g = new_game(dealer=0, flowers=FL, hands=hands, tail=GOLD)
    kong(g, 0, "1m")
    assert g.reserve == 20 and g.tiles_left == 41
    tsumogiri(g)
    # D = 41 - 20 = 21: draws 1..17 have D = 21..5, final round at draw 18
    assert head(g) == 65 + 17 + 4


def test_r6_reserve_growth_exposed_kong():
    hands = {
        0: "7p 3m 6m 9m 3p 6p 9p 1s 4s 7s 2s 8s 8m 2m 5m 5p 1p",
        2: "777p 1m 4m 7m 2p 5p 8p 3s 6s 1p 4p 2m 5m 9m",
    }
    g = new_game(dealer=0, flowers=FL, hands=hands, tail=GOLD)
    discard(g, 0, "7p")
    resolve(g, {2: A_KONG})
    assert g.reserve == 19 and g.tiles_left == 41
    tsumogiri(g)
    # D = 41 - 19 = 22: draws 1..18 have D = 22..5, final round at draw 19
    assert head(g) == 65 + 18 + 4


def test_r6_flower_set_completed_in_play_adds_2():
    g = new_game(dealer=0, flowers={1: "2z2z2z"}, draws="2z", tail=GOLD)
    assert g.reserve == 18
    tsumogiri(g, turns=1)
    pass_all(g)
    assert g.seat == 1 and g.flowers(1).count("2z") == 4
    assert g.reserve == 20
    assert g.hand(1).sum() == 17  # the flower was replaced from the tail (not the final round)
    assert K("2z") == 28
