"""A world holds nothing the seat cannot know: games that differ only in hidden tiles.

Two games are built from scripted walls (R3) that differ only by two suit tiles swapped between
two other seats' starting hands, and played with the same public actions: the seat's own
actions are the same, the other seats discard the same kinds and pass every claim. Their claim
windows then ask different seats (a swapped tile gives a seat a peng option in one game only),
so the true games differ in the fields a window leaves behind (``opts``, ``ask``, ``choice``,
``N_ASK``, ``ASK_POS``) and in ``N_DECISIONS``. At every decision of the seat where the two
games look the same to it, the worlds of one seed must be bit-identical, and every world's
claim state must follow from the world's own hands.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_encode import claimy_action

from fzmj_env import Game, available_rules, encode
from fzmj_env.actions import A_PASS
from fzmj_env.core import state

C = encode.NUM_CHANNELS
_HIDDEN_SCALARS = (state.SEED_LO, state.SEED_HI, state.N_ASK, state.ASK_POS, state.N_DECISIONS)


def seat_view(game, seat):
    """What ``seat`` knows of the table (its observation and the public record), as bytes."""
    v = game.view
    m = v.m.copy()
    m[list(_HIDDEN_SCALARS)] = 0
    obs = np.zeros((C, 27), np.int8)
    encode.encode_table(game.buf, 0, seat, obs)
    meld = v.meld.copy()
    for s in range(4):
        for j in range(int(v.n_melds[s])):
            if s != seat and meld[s, j, 0] == state.MELD_CONCEALED_KONG:
                meld[s, j, 1] = -9
    parts = [m, obs, v.hand[seat], v.flowers, meld, v.n_melds, v.disc, v.disc_claimed, v.n_disc, v.passed[seat]]
    parts += [v.gold_thrown, v.swim, v.points, v.scores, game.mask if game.seat == seat else np.zeros(0)]
    return b"".join(np.ascontiguousarray(p).tobytes() for p in parts)


def pass_other_claims(game, seat):
    """The other seats pass every claim (in both games, whatever their hidden hands offer)."""
    while not game.done and game.phase == "claim" and game.seat != seat:
        game.step(A_PASS)


def hidden_state_differs(a, b):
    va, vb = a.view, b.view
    fields = (va.opts, vb.opts), (va.ask, vb.ask), (va.choice, vb.choice)
    return any(not np.array_equal(x, y) for x, y in fields) or any(
        va.m[f] != vb.m[f] for f in (state.N_ASK, state.ASK_POS, state.N_DECISIONS)
    )


def twin_games(rules, seed):
    """Yield (game_a, game_b, seat) at the seat's decisions in two games it cannot tell apart."""
    g = Game(rules)
    g.reset(seed=seed)
    wall, dealer = g.view.wall.copy(), g.dealer
    rng = random.Random(seed)
    seat = rng.randrange(4)
    block = {(dealer + i) % 4: range(16 * i, 16 * i + 16) for i in range(4)}
    o1, o2 = rng.sample([s for s in range(4) if s != seat], 2)
    held = np.bincount(wall[list(block[o1])], minlength=42)
    pairs = [(i, j) for i in block[o1] for j in block[o2] if wall[i] < 27 and wall[j] < 27 and wall[i] != wall[j]]
    # prefer a swap that gives o1 a pair it did not have: then o1 has peng options in one game only
    pairs = [(i, j) for i, j in pairs if held[wall[j]] == 1] or pairs
    i, j = rng.choice(pairs)
    wall_b = wall.copy()
    wall_b[i], wall_b[j] = wall[j], wall[i]
    a, b = Game(rules), Game(rules)
    a.reset(seed=seed, wall=wall, dealer=dealer)
    b.reset(seed=seed, wall=wall_b, dealer=dealer)
    act = random.Random(seed + 1)
    while True:
        pass_other_claims(a, seat)
        pass_other_claims(b, seat)
        if a.done or b.done or a.seat != b.seat or seat_view(a, seat) != seat_view(b, seat):
            return  # the games end, or the swap became visible: the twins part here
        if a.seat == seat:
            yield a, b, seat
            action = claimy_action(a, act)
        else:  # another seat's turn: the same discard kind in both games
            discards = [x for x in a.legal_actions if x < 27 and b.mask[x]]
            if not discards:
                return
            action = act.choice(discards)
        a.step(action)
        b.step(action)


def check_claim_state(world, seat):
    """The world's claim fields follow from the world's own hands (no stale option)."""
    v = world.view
    m = v.m
    if m[state.PHASE] != state.PH_CLAIM:
        assert not v.opts.any() and not v.ask.any() and m[state.N_ASK] == 0 and m[state.ASK_POS] == 0
        assert (v.choice == A_PASS).all()
        return
    n, kind, d = int(m[state.N_ASK]), int(m[state.CLAIM_TILE]), int(m[state.CLAIM_FROM])
    asked = [int(x) for x in v.ask[:n]]
    assert asked[0] == seat and m[state.ASK_POS] == 0 and not v.ask[n:].any()
    for s in range(4):
        o = int(v.opts[s])
        if s != seat:
            assert (o != 0) == (s in asked)
        if o & state.OPT_PENG:
            assert v.hand[s, kind] >= 2, f"seat {s} offered a peng on {kind} holding {v.hand[s, kind]}"
        if o & state.OPT_KONG:
            assert v.hand[s, kind] >= 3
        low = {state.OPT_CHI_LOW: kind, state.OPT_CHI_MID: kind - 1, state.OPT_CHI_HIGH: kind - 2}
        for bit, lo in low.items():
            if o & bit:
                assert s == (d + 1) % 4
                assert all(v.hand[s, k] >= 1 for k in range(lo, lo + 3) if k != kind)


@pytest.mark.parametrize("rules", available_rules())
def test_indistinguishable_games_give_identical_worlds(rules):
    in_claim = out_of_claim = differing = 0
    for seed in range(6):
        for a, b, seat in twin_games(rules, 100 + seed):
            claim = a.phase == "claim"
            in_claim += claim
            out_of_claim += not claim
            differing += hidden_state_differs(a, b)
            for k in range(3):
                world_seed = (seed * 7919 + k * 2**61 + in_claim + out_of_claim) % 2**64
                wa, wb = a.resample(seat, world_seed), b.resample(seat, world_seed)
                assert wa.buf.tobytes() == wb.buf.tobytes()
                check_claim_state(wa, seat)
    assert in_claim > 0 and out_of_claim > 0
    assert differing > 0  # the true games did differ in the claim fields and the decision count


@pytest.mark.parametrize("rules", ["fuzhou-lianzhong", "fuzhou-home"])
def test_world_claim_state_follows_world_hands_and_plays_on(rules):
    rng = random.Random(5)
    n = 0
    for seed in range(4):
        g = Game(rules)
        g.reset(seed=seed)
        while not g.done:
            world = g.resample(g.seat, seed=n)
            check_claim_state(world, g.seat)
            assert world.view.m[state.N_DECISIONS] == 0
            for _ in range(6):  # the world plays on: the engine accepts every action its mask allows
                if world.done:
                    break
                world.step(claimy_action(world, rng))
            g.step(claimy_action(g, rng))
            n += 1
    assert n > 100
