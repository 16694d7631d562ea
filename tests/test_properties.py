"""Property tests over many random games (hypothesis): invariants that hold at every decision.

* R1: the 144 tiles are conserved: wall (head..tail) + concealed hands + melds + laid-out
  flowers + unclaimed discards + the gold indicator (R5; it joins a hand only on 抢金, which
  ends the hand).
* R7: between turns every hand holds 16 tiles counting each meld as 3 (kongs too); the seat
  whose turn it is holds 17.
* R11.4: every hand's points sum to zero, and so do the cumulative scores.
* Every decision offers at least one legal action; an illegal action raises
  ``IllegalActionError`` naming the seat and leaves the state untouched.
* Determinism: the same seed and the same actions give the same game, bit for bit.
* The public counts the engine keeps for the encoder (``disc_counts``, ``claimed_kinds``,
  ``meld_counts``) always equal a recount of the discards and open melds.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fzmj_env import Game, IllegalActionError, available_rules, is_win, shanten, special_shapes
from fzmj_env.actions import (
    A_CHI_HIGH,
    A_CHI_LOW,
    A_CHI_MID,
    A_HU,
    A_KONG,
    A_PASS,
    A_PENG,
    A_ROB,
    A_SELF_KONG,
    NUM_ACTIONS,
)
from fzmj_env.core import state
from fzmj_env.tiles import COPIES

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MELD_TILES = {
    state.MELD_PENG: 3,
    state.MELD_EXPOSED_KONG: 4,
    state.MELD_ADDED_KONG: 4,
    state.MELD_CONCEALED_KONG: 4,
}


def tile_census(g: Game) -> np.ndarray:
    """Counts over the 42 kinds of every tile the state accounts for."""
    v = g.view
    m = v.m
    c = np.zeros(42, dtype=np.int64)
    np.add.at(c, v.wall[int(m[state.HEAD]) : int(m[state.TAIL]) + 1], 1)
    c[:27] += v.hand.sum(axis=0)
    c[27:] += v.flowers.sum(axis=0)
    for s in range(4):
        for j in range(int(v.n_melds[s])):
            t, k = int(v.meld[s, j, 0]), int(v.meld[s, j, 1])
            if t == state.MELD_CHI:
                c[k : k + 3] += 1
            else:
                c[k] += MELD_TILES[t]
        n = int(v.n_disc[s])
        for i in range(n):
            if not v.disc_claimed[s, i]:
                c[int(v.disc[s, i])] += 1
    c[int(m[state.GOLD])] += 1  # the indicator, set aside
    return c


def kind_bytes(words: np.ndarray) -> np.ndarray:
    """The 27 per-kind bytes of a byte-per-kind count (4 little-endian uint64 words)."""
    return np.frombuffer(words.astype("<u8").tobytes(), dtype=np.uint8)[:27].astype(np.int64)


def check_public_counts(g: Game) -> None:
    v = g.view
    for s in range(4):
        n = int(v.n_disc[s])
        disc = v.disc[s, :n].astype(np.int64)
        assert np.array_equal(kind_bytes(v.disc_counts[s]), np.bincount(disc, minlength=27)), f"disc_counts seat {s}"
        claimed = np.zeros(27, np.int64)
        claimed[disc[v.disc_claimed[s, :n] == 1]] = 1
        assert np.array_equal(kind_bytes(v.claimed_kinds[s]), claimed), f"claimed_kinds seat {s}"
        melded = np.zeros(27, np.int64)
        for j in range(int(v.n_melds[s])):
            t, k = int(v.meld[s, j, 0]), int(v.meld[s, j, 1])
            if t == state.MELD_CHI:
                melded[k : k + 3] += 1
            elif t != state.MELD_CONCEALED_KONG:  # concealed kongs are not public
                melded[k] += MELD_TILES[t]
        assert np.array_equal(kind_bytes(v.meld_counts[s]), melded), f"meld_counts seat {s}"


def check_invariants(g: Game) -> None:
    check_public_counts(g)
    c = tile_census(g)
    assert np.array_equal(c, COPIES), (
        f"tiles not conserved: diff {dict((k, int(d)) for k, d in enumerate(c - COPIES) if d)}"
    )
    cur = int(g.view.m[state.CUR])
    for s in range(4):
        size = int(g.view.hand[s].sum()) + 3 * int(g.view.n_melds[s])
        want = 17 if (g.phase in ("turn", "discard_after_claim") and s == cur) else 16
        assert size == want, f"seat {s} holds {size} (phase {g.phase}, cur {cur})"
    assert g.mask.sum() >= 1, "a decision with no legal action"
    assert np.all(g.view.hand >= 0)
    swim = g.view.swim
    assert np.all((swim >= 0) & (swim <= state.MAX_SWIM))
    if g.rules.scheme != "home":
        assert not swim.any(), "swim levels outside fuzhou-home (P5)"
    if g.rules.scheme == "classic" and g.phase != "claim":
        assert not g.mask[g.gold], "a gold discard offered under classic (P2)"


def policy(rng: random.Random, g: Game, greed: float) -> int:
    legal = g.legal_actions
    for a in (A_HU, A_ROB):
        if a in legal and rng.random() < greed:
            return a
    if g.phase == "claim" and rng.random() < 0.5:
        return A_PASS
    return rng.choice(legal)


def smart_policy(rng: random.Random, g: Game, greed: float) -> int:
    """Discard towards a ready hand (fewest shanten), so that wins, 过水 and 闲金 come up often;
    take a win or a rob with probability ``greed``; otherwise pass on claims."""
    legal = g.legal_actions
    for a in (A_HU, A_ROB):
        if a in legal and rng.random() < greed:
            return a
    if g.phase == "claim":
        return A_PASS if rng.random() < 0.9 else rng.choice(legal)
    hand = g.view.hand[g.seat].astype(np.int64)
    best, choices = None, []
    for k in (a for a in legal if a < 27):
        hand[k] -= 1
        v = shanten(hand, g.gold)
        hand[k] += 1
        if best is None or v < best:
            best, choices = v, [k]
        elif v == best:
            choices.append(k)
    return rng.choice(choices)


def play(
    seed: int,
    policy_seed: int,
    hands: int,
    greed: float,
    probe_illegal: bool = False,
    smart: bool = False,
    rules: str = "fuzhou-lianzhong",
) -> Game:
    rng = random.Random(policy_seed)
    g = Game(rules, hands_per_game=hands)
    g.reset(seed=seed)
    n_results = 0
    while not g.done:
        check_invariants(g)
        if probe_illegal and rng.random() < 0.05:
            illegal = [a for a in range(NUM_ACTIONS) if not g.mask[a]] + [NUM_ACTIONS, -1]
            a = rng.choice(illegal)
            before, seat, mask = g.buf.tobytes(), g.seat, g.mask
            with pytest.raises(IllegalActionError, match=f"seat {seat}"):
                g.step(a)
            assert g.buf.tobytes() == before, "an illegal action changed the state"
            assert g.seat == seat and np.array_equal(g.mask, mask)
        g.step((smart_policy if smart else policy)(rng, g, greed))
        if len(g.results) > n_results:  # a hand ended at this step
            n_results = len(g.results)
            assert sum(g.results[-1]["points"]) == 0
            assert sum(g.scores) == 0
    assert len(g.results) == hands
    assert g.scores == [sum(r["points"][s] for r in g.results) for s in range(4)]
    return g


seeds = st.integers(min_value=0, max_value=2**64 - 1)


@SETTINGS
@given(
    seed=seeds,
    policy_seed=st.integers(0, 2**32),
    hands=st.integers(1, 3),
    greed=st.sampled_from([0.0, 0.3, 1.0]),
    smart=st.booleans(),
)
def test_invariants_hold_at_every_decision(seed, policy_seed, hands, greed, smart):
    play(seed, policy_seed, hands, greed, probe_illegal=True, smart=smart)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    policy_seed=st.integers(0, 2**32),
    hands=st.integers(1, 3),
    greed=st.sampled_from([0.0, 0.3, 1.0]),
    smart=st.booleans(),
    rules=st.sampled_from(available_rules()),
)
def test_invariants_hold_under_every_preset(seed, policy_seed, hands, greed, smart, rules):
    """Zero-sum, a legal action always exists, 144 tiles conserved, no gold discard
    under classic, swim levels only under home, over every shipped preset."""
    play(seed, policy_seed, hands, greed, probe_illegal=True, smart=smart, rules=rules)


@settings(max_examples=30, deadline=None)
@given(seed=seeds, policy_seed=st.integers(0, 2**32))
def test_same_seed_same_game(seed, policy_seed):
    a = play(seed, policy_seed, 2, 0.5)
    b = play(seed, policy_seed, 2, 0.5)
    assert a.decisions == b.decisions
    assert a.results == b.results
    assert a.hand_starts == b.hand_starts
    assert a.buf.tobytes() == b.buf.tobytes()


def test_different_seeds_differ():
    walls = set()
    for seed in range(5):
        g = Game()
        g.reset(seed=seed)
        walls.add(tuple(g.view.wall.tolist()))
    assert len(walls) == 5


@pytest.mark.parametrize("bad", [62, -1, 100])
def test_out_of_range_action_raises_with_seat(bad):
    g = Game()
    g.reset(seed=3)
    before = g.buf.tobytes()
    with pytest.raises(IllegalActionError, match=f"seat {g.seat}"):
        g.step(bad)
    assert g.buf.tobytes() == before


# ---- the legal mask against the rules, with an independent record of 过水 and gold discards ----
def _win(counts, gold) -> bool:
    return bool(is_win(np.asarray(counts, dtype=np.int64), gold))


def expected_claims(g: Game, s: int, d: int, t: int, rob: bool, passed: set, thrown: bool, hand) -> set[int]:
    """What R5, R8, R9.3-R9.5 and R10 allow seat ``s`` (concealed ``hand``) on seat ``d``'s
    discard of kind ``t``; ``rob``: this is the dealer's first discard."""
    gold = g.gold
    hand = np.asarray(hand, dtype=np.int64)
    out = set()
    if s != d and t != gold:
        plus = hand.copy()
        plus[t] += 1
        if not thrown and t not in passed and _win(plus, gold):
            idle = "idle_gold" in special_shapes(hand, gold)
            if not idle or "golden_pair" in special_shapes(plus, gold):
                out.add(A_HU)
        if hand[t] >= 2:
            out.add(A_PENG)
        if hand[t] >= 3 and g.tiles_left >= 1:
            out.add(A_KONG)
        if s == (d + 1) % 4:
            for a, lo in ((A_CHI_LOW, t), (A_CHI_MID, t - 1), (A_CHI_HIGH, t - 2)):
                run = [k for k in range(lo, lo + 3) if k != t]
                if lo >= 0 and lo // 9 == t // 9 and lo % 9 <= 6:
                    if all(k != gold and hand[k] > 0 for k in run):
                        out.add(a)
    if rob:
        plus = hand.copy()
        plus[gold] += 1
        if _win(plus, gold):
            out.add(A_ROB)
    return out


def expected_turn(g: Game) -> set[int]:
    """R7: discards; after a draw also hu (R9.1 or 3 golds) and kongs (never of golds)."""
    v = g.view
    s, gold = g.seat, g.gold
    hand = v.hand[s].astype(np.int64)
    out = {k for k in range(27) if hand[k] > 0}
    if g.phase == "discard_after_claim":
        return out
    if hand[gold] >= 3 or _win(hand, gold):
        out.add(A_HU)
    pengs = {int(v.meld[s, j, 1]) for j in range(int(v.n_melds[s])) if v.meld[s, j, 0] == state.MELD_PENG}
    for k in range(27):
        if k != gold and (hand[k] == 4 or (hand[k] >= 1 and k in pengs)):
            out.add(A_SELF_KONG + k)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    policy_seed=st.integers(0, 2**32),
    greed=st.sampled_from([0.0, 0.5]),
    smart=st.sampled_from([True, False]),
)
def test_legal_mask_matches_the_rules(seed, policy_seed, greed, smart):
    """Every mask equals what the rules allow, with 过水 (R9.4), the gold discards (R9.3) and
    the 抢金 window (R10) recorded by this test, not read from the engine."""
    rng = random.Random(policy_seed)
    g = Game(hands_per_game=2)
    g.reset(seed=seed)
    passed = {s: set() for s in range(4)}
    thrown: set[int] = set()
    dealer_discarded = False
    window = None  # (kind, {seat: expected options}, {seat: choice}) of the open claim window
    while not g.done:
        legal = set(g.legal_actions)
        seat, phase, hand_no = g.seat, g.phase, len(g.results)
        if phase == "claim":
            assert legal == window[1][seat] | {A_PASS}, f"seat {seat}: {sorted(legal)} vs {sorted(window[1][seat])}"
            closing = int(g.view.m[state.ASK_POS]) == int(g.view.m[state.N_ASK]) - 1
        else:
            assert legal == expected_turn(g), f"seat {seat} {phase}: {sorted(legal)} vs {sorted(expected_turn(g))}"
        a = (smart_policy if smart else policy)(rng, g, greed)
        if phase != "claim" and a < 27:  # a discard: what may each seat do with it?
            rob = seat == g.dealer and not dealer_discarded
            after = g.view.hand.astype(np.int64)
            after[seat, a] -= 1
            thrown_now = thrown | ({seat} if a == g.gold else set())
            opts = {
                s: expected_claims(g, s, seat, a, rob, set() if s == seat else passed[s], s in thrown_now, after[s])
                for s in range(4)
            }
        g.step(a)
        if len(g.results) > hand_no:  # the hand ended: fresh records for the next one
            if phase != "claim" and a < 27:
                assert not any(opts.values()), f"no claim window opened, expected {opts}"
            passed = {s: set() for s in range(4)}
            thrown, dealer_discarded, window = set(), False, None
            continue
        if phase == "claim":
            window[2][seat] = a
            if closing:  # 过水: offered a discard win, did not declare it
                for s, o in window[1].items():
                    if A_HU in o and window[2].get(s) != A_HU:
                        passed[s].add(window[0])
                window = None
        elif a < 27:
            passed[seat].clear()
            if a == g.gold:
                thrown.add(seat)
            if seat == g.dealer:
                dealer_discarded = True
            want = [(seat + i) % 4 for i in range(1, 5) if opts[(seat + i) % 4]]
            if g.phase == "claim":
                asked = [int(x) for x in g.view.ask[: int(g.view.m[state.N_ASK])]]
                assert asked == want, f"asked {asked}, expected {want} ({opts})"
                window = (a, opts, {})
            else:
                assert want == [], f"no claim window opened, expected {opts}"
