"""R2: seats, the first dealer, 连庄 and the dealer streak over a match (Game(hands_per_game=k))."""

from __future__ import annotations

import random

import pytest
from rules_helpers import A_HU, A_PASS, A_ROB, act, discard, new_game, resolve, tsumogiri

from fzmj_env import Game
from fzmj_env.core.engine import STEP_HAND_OVER

FL = {s: "1234567z" + f"{s + 1}f{s + 5}f" for s in range(4)}  # all flowers dealt, no set
JUNK_DEALER = "5m 11223m 3m 789m 99p 11s 33s 5s"
READY_A = "46m 789m 234p 567p 678s 11s"


def test_r2_first_dealer_is_seeded_random():
    dealers = []
    for seed in range(40):
        a, b = Game(), Game()
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.dealer == b.dealer
        dealers.append(a.dealer)
    assert set(dealers) == {0, 1, 2, 3}


def test_r2_dealer_win_keeps_the_deal_and_streak_rises():
    g = new_game(dealer=1, hands={1: "123m 456m 789m 123p 456p 77s"}, tail="9s", hands_per_game=3)
    assert act(g, 1, A_HU) == STEP_HAND_OVER
    assert g.dealer == 1
    assert g.hand_starts[1]["dealer"] == 1 and g.hand_starts[1]["streak"] == 1


def test_r2_drawn_hand_keeps_the_deal_and_streak_rises():
    g = new_game(dealer=3, flowers=FL, tail="5s", hands_per_game=2, streak=2)
    while not g.results:
        tsumogiri(g, turns=1)
    assert g.results[0]["winner"] is None
    assert g.hand_starts[1]["dealer"] == 3 and g.hand_starts[1]["streak"] == 3


def test_r2_non_dealer_win_passes_the_deal_to_the_next_seat():
    # Seat 2 robs the gold in dealer 0's hand: the deal goes to seat 1 (the next seat), streak 0.
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, tail="9s", hands_per_game=2, streak=4)
    discard(g, 0, "9p")
    assert resolve(g, {2: A_ROB}) == STEP_HAND_OVER
    assert g.hand_starts[1]["dealer"] == 1 and g.hand_starts[1]["streak"] == 0
    # the finished hand was scored with its own streak: V = (0 + 1 + 4 + 5) * 2 + 30 = 50
    assert g.results[0]["value"] == 50


def test_r2_result_describes_the_finished_hand():
    # The result of a hand that was followed by another hand must report that hand's
    # dealer, streak and number, not the next hand's.
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: READY_A}, tail="9s", hands_per_game=2, streak=4)
    discard(g, 0, "9p")
    resolve(g, {2: A_ROB})
    r = g.results[0]
    assert (r["hand_no"], r["dealer"], r["streak"]) == (0, 0, 4)


def _play_match(seed: int, hands: int) -> Game:
    rng = random.Random(seed)
    g = Game(hands_per_game=hands)
    g.reset(seed=seed)
    while not g.done:
        legal = g.legal_actions
        if A_HU in legal or A_ROB in legal:
            a = A_HU if A_HU in legal else A_ROB
        elif g.phase == "claim":
            a = A_PASS if rng.random() < 0.7 else rng.choice(legal)
        else:
            a = rng.choice(legal)
        g.step(a)
    return g


@pytest.mark.parametrize("seed", range(6))
def test_r2_match_dealer_and_streak_follow_each_result(seed):
    g = _play_match(seed, hands=6)
    assert len(g.results) == 6 and len(g.hand_starts) == 6
    assert g.hand_starts[0]["streak"] == 0
    for i in range(5):
        cur, nxt, winner = g.hand_starts[i], g.hand_starts[i + 1], g.results[i]["winner"]
        if winner is None or winner == cur["dealer"]:  # 连庄
            assert (nxt["dealer"], nxt["streak"]) == (cur["dealer"], cur["streak"] + 1)
        else:
            assert (nxt["dealer"], nxt["streak"]) == ((cur["dealer"] + 1) % 4, 0)
    # cumulative scores are the sum of the hands, and zero-sum
    totals = [sum(r["points"][s] for r in g.results) for s in range(4)]
    assert g.scores == totals and sum(g.scores) == 0
