"""Worlds from one seat's view (``Game.resample``, ``VectorEnv.load_worlds``): the contract.

Consistency (the seat's observation, mask and every public record unchanged; the 144 tiles
conserved; the world plays to the end), invariance (hidden tiles moved around in the real game:
the same world for the same seed), uniformity (chi-square against exact distributions) and
not copying the truth.
"""

from __future__ import annotations

import math
import random
from math import comb

import numpy as np
import pytest
from test_encode import claimy_action

from fzmj_env import Game, VectorEnv, available_rules, encode
from fzmj_env.actions import A_PASS, A_SELF_KONG
from fzmj_env.core import state
from fzmj_env.resample import unseen_counts
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_index

C = encode.NUM_CHANNELS
FULL = np.array([4] * 34 + [1] * 8)


def obs_of(buf, seat):
    out = np.zeros((C, 27), np.int8)
    encode.encode_table(buf, 0, seat, out)
    return out


def decision_points(n_games, seed, rules="fuzhou-lianzhong", every=3):
    """(game, seat) at every ``every``-th decision of random, claim-happy games."""
    rng = random.Random(seed)
    for g in range(n_games):
        game = Game(rules)
        game.reset(seed=seed * 1000 + g)
        i = 0
        while not game.done:
            if i % every == 0 and len(game.legal_actions) >= 1:
                yield game, game.seat
            game.step(claimy_action(game, rng))
            i += 1


def public_fields(v, seat):
    """Everything ``seat`` may know of a table, as a tuple of arrays (others' concealed kong
    kinds blanked)."""
    meld = v.meld.copy()
    for s in range(4):
        for j in range(int(v.n_melds[s])):
            if s != seat and meld[s, j, 0] == state.MELD_CONCEALED_KONG:
                meld[s, j, 1] = -9
    m = v.m.copy()
    for f in (state.SEED_LO, state.SEED_HI, state.N_ASK, state.ASK_POS, state.N_DECISIONS):
        m[f] = 0
    return (m, v.hand[seat], v.flowers, meld, v.n_melds, v.disc, v.disc_claimed, v.n_disc, v.disc_counts,
            v.claimed_kinds, v.meld_counts, v.passed[seat], v.waits[seat], v.gold_thrown, v.swim, claim_opts(v, seat),
            v.points, v.scores)  # fmt: skip


def claim_opts(v, seat):
    """The seat's options in an open claim window (a world clears the last window's leftovers)."""
    return v.opts[seat] if v.m[state.PHASE] == state.PH_CLAIM else 0


def tiles_in_play(v):
    """Every tile of the table by kind: hands, melds, unclaimed discards, flowers, the gold
    indicator and the live wall."""
    c = np.zeros(42, np.int64)
    for s in range(4):
        c[:27] += v.hand[s]
        c[27:] += v.flowers[s]
        for i in range(int(v.n_disc[s])):
            c[v.disc[s, i]] += v.disc_claimed[s, i] == 0
        for j in range(int(v.n_melds[s])):
            t, k = int(v.meld[s, j, 0]), int(v.meld[s, j, 1])
            if t == state.MELD_CHI:
                c[k : k + 3] += 1
            else:
                c[k] += 3 if t == state.MELD_PENG else 4
    c[v.m[state.GOLD]] += 1
    for i in range(v.m[state.HEAD], v.m[state.TAIL] + 1):
        c[v.wall[i]] += 1
    return c


@pytest.mark.parametrize("rules", available_rules())
def test_world_is_consistent_with_the_seat_view_and_plays_on(rules):
    rng = random.Random(1)
    n = 0
    for game, seat in decision_points(3, seed=7, rules=rules, every=5):
        world = game.resample(seat, seed=n)
        assert world.seat == seat
        assert np.array_equal(world.mask, game.mask)
        assert np.array_equal(obs_of(world.buf, seat), obs_of(game.buf, seat))
        for a, b in zip(public_fields(world.view, seat), public_fields(game.view, seat), strict=True):
            assert np.array_equal(a, b)
        assert (world.tiles_left, world.reserve, world.scores) == (game.tiles_left, game.reserve, game.scores)
        assert np.array_equal(tiles_in_play(world.view), FULL)  # 144 tiles conserved
        assert np.array_equal(np.sort(world.view.wall), np.repeat(np.arange(42), FULL))
        for s in range(4):
            assert world.view.hand[s].sum() == game.view.hand[s].sum()
        if n % 4 == 0:  # the world plays to the end under the normal engine
            while not world.done:
                world.step(claimy_action(world, rng))
        n += 1
    assert n > 20


def scramble_hidden(game, seat, rng):
    """A copy of ``game`` that ``seat`` cannot tell apart: the other seats' concealed tiles and
    the live wall reshuffled together (flowers stay in the wall), another seat's concealed kong
    kind exchanged with a kind whose four copies are hidden, the drawn part of the wall and the
    other seats' 过水 marks changed."""
    g = Game(game.rules)
    g.buf[:] = game.buf
    v = g.view
    head, tail = int(v.m[state.HEAD]), int(v.m[state.TAIL])
    hidden = np.zeros(42, np.int64)
    for s in range(4):
        if s != seat:
            hidden[:27] += v.hand[s]
    for i in range(head, tail + 1):
        hidden[v.wall[i]] += 1
    for s in range(4):  # a concealed kong of kind a <-> a kind b with all four copies hidden
        for j in range(int(v.n_melds[s])):
            if s != seat and v.meld[s, j, 0] == state.MELD_CONCEALED_KONG:
                four = [k for k in range(27) if hidden[k] == 4 and k != v.m[state.GOLD]]
                if four:
                    a, b = int(v.meld[s, j, 1]), rng.choice(four)
                    v.meld[s, j, 1] = b
                    hidden[b] -= 4
                    hidden[a] += 4
    suits = np.repeat(np.arange(27), hidden[:27])
    rng_np = np.random.default_rng(rng.randrange(1 << 30))
    suits = rng_np.permutation(suits)
    p = 0
    for s in range(4):
        if s != seat:
            n = int(v.hand[s].sum())
            v.hand[s] = np.bincount(suits[p : p + n], minlength=27)
            v.passed[s] = rng_np.integers(0, 2, 27)
            p += n
    rest = np.concatenate([suits[p:], np.repeat(np.arange(27, 42), hidden[27:])])
    v.wall[head : tail + 1] = rng_np.permutation(rest)
    v.wall[:head] = rng_np.integers(0, 42, head)
    v.wall[tail + 1 :] = rng_np.integers(0, 42, 143 - tail)
    v.m[state.SEED_LO] ^= 0x1234
    g._refresh()
    return g


@pytest.mark.parametrize("rules", ["fuzhou-lianzhong", "fuzhou-lianzhong-classic", "fuzhou-home"])
def test_same_world_for_games_the_seat_cannot_tell_apart(rules):
    rng = random.Random(3)
    n = 0
    for game, seat in decision_points(3, seed=11, rules=rules, every=4):
        other = scramble_hidden(game, seat, rng)
        assert np.array_equal(obs_of(other.buf, seat), obs_of(game.buf, seat))
        for seed in (n, 2**64 - 1 - n):
            a = game.resample(seat, seed)
            b = other.resample(seat, seed)
            assert np.array_equal(state.flat_state(a.buf), state.flat_state(b.buf))
        n += 1
    assert n > 20


def test_worlds_do_not_copy_the_truth():
    for game, seat in decision_points(2, seed=5, every=7):
        same_hand = same_wall = 0
        for seed in range(8):
            w = game.resample(seat, seed)
            o = (seat + 1) % 4
            same_hand += np.array_equal(w.view.hand[o], game.view.hand[o])
            h, t = int(game.view.m[state.HEAD]), int(game.view.m[state.TAIL])
            same_wall += np.array_equal(w.view.wall[h : t + 1], game.view.wall[h : t + 1])
        assert same_wall == 0 and same_hand <= 1
        for seed in range(3):  # different seeds, different worlds
            assert not np.array_equal(game.resample(seat, seed).view.hand, game.resample(seat, seed + 3).view.hand)


def chi2_critical(df, z=3.719):
    """Wilson-Hilferty upper quantile of chi-square (z = 3.719: p = 1e-4, no false alarms)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def chi2_ok(observed, expected):
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    stat = float(((obs - exp) ** 2 / exp).sum())
    return stat, chi2_critical(len(exp) - 1)


def test_uniform_opponent_hand_and_wall_head():
    """Dealer's first decision: another seat's count of a kind is hypergeometric; the first
    live wall tile is a flower with probability (unseen flowers)/(live wall), else a suit kind
    in proportion to its unseen copies."""
    game = Game()
    game.reset(seed=4, dealer=0)
    seat, o, kind = 0, 2, None
    unseen = np.zeros(42, np.int64)
    unseen_counts(game.buf[0], seat, unseen)
    kind = int(np.argmax(unseen[:27]))
    ns, nf = int(unseen[:27].sum()), int(unseen[27:].sum())
    hand_n = int(game.view.hand[o].sum())
    live = game.tiles_left
    N = 4000
    counts = np.zeros(5, np.int64)
    head = np.zeros(43, np.int64)
    env = VectorEnv(N, rules=game.rules, auto_reset=False)
    env.reset()
    env.load_worlds(np.arange(N), game.buf, 0, seat, np.arange(N, dtype=np.uint64) + 77)
    h = int(game.view.m[state.HEAD])
    for t in range(N):
        counts[env.buf["hand"][t, o, kind]] += 1
        head[env.buf["wall"][t, h]] += 1
    c = int(unseen[kind])
    pmf = np.array([comb(c, x) * comb(ns - c, hand_n - x) / comb(ns, hand_n) for x in range(5)])
    stat, crit = chi2_ok(counts, N * pmf)
    assert stat < crit, (stat, crit, counts, N * pmf)
    p_head = np.zeros(42)
    p_head[:27] = (1 - nf / live) * unseen[:27] / ns
    p_head[27:] = unseen[27:] / live
    stat, crit = chi2_ok(head[:42], N * p_head)
    assert stat < crit, (stat, crit)


def test_uniform_concealed_kong_kind():
    """Another seat's concealed kong: its kind is uniform over the kinds whose four copies the
    searching seat has not seen (never the gold)."""
    wall = make_wall(dealer=0, hands={1: "5555p 123m 456m 789m 11s 2s"}, draws="9s 9s", tail="9p 1m")
    game = Game()
    game.reset(seed=0, wall=wall, dealer=0)
    game.step(game.legal_actions[0])
    while game.phase == "claim":
        game.step(A_PASS)
    game.step(A_SELF_KONG + kind_index("5p"))
    game.step(next(a for a in game.legal_actions if a < 27))
    while game.seat != 2:
        game.step(A_PASS)
    seat = 2
    unseen = np.zeros(42, np.int64)
    unseen_counts(game.buf[0], seat, unseen)
    kinds = [k for k in range(27) if unseen[k] == 4 and k != game.gold]
    assert kind_index("5p") in kinds and len(kinds) >= 5
    N = 3000
    got = np.zeros(27, np.int64)
    env = VectorEnv(N, auto_reset=False)
    env.reset()
    env.load_worlds(np.arange(N), game.buf, 0, seat, np.arange(N, dtype=np.uint64))
    for t in range(N):
        got[env.buf["meld"][t, 1, 0, 1]] += 1
    assert got[[k for k in range(27) if k not in kinds]].sum() == 0
    stat, crit = chi2_ok(got[kinds], np.full(len(kinds), N / len(kinds)))
    assert stat < crit


def test_load_worlds_matches_game_resample_and_observes():
    game = Game()
    game.reset(seed=9)
    rng = random.Random(0)
    for _ in range(30):
        game.step(claimy_action(game, rng))
    seat = game.seat
    env = VectorEnv(6, auto_reset=False)
    env.reset()
    seeds = np.array([3, 1, 4, 1 << 40, 5, 9], np.uint64)
    obs, mask, seats = env.load_worlds(np.array([5, 0, 2]), game.buf, 0, seat, seeds[:3])
    for t, seed in zip((5, 0, 2), seeds[:3], strict=True):
        w = game.resample(seat, int(seed))
        assert np.array_equal(state.flat_state(env.buf, t), state.flat_state(w.buf))
        assert seats[t] == seat and np.array_equal(mask[t], game.mask)
        assert np.array_equal(obs[t], obs_of(game.buf, seat))
    env.step_tables(np.array([5]), np.array([int(np.flatnonzero(mask[5])[0])]))


def test_bad_input_is_refused_with_one_line():
    game = Game()
    game.reset(seed=1)
    other = (game.seat + 1) % 4
    with pytest.raises(ValueError, match="not the seat to act"):
        game.resample(other, 0)
    for seat, seed in ((4, 0), (-1, 0), (True, 0), (0.5, 0)):
        with pytest.raises(ValueError, match="seat must be"):
            game.resample(seat, seed)
    for seed in (-1, 2**64, 1.5, "3"):
        with pytest.raises(ValueError, match="seed must be"):
            game.resample(game.seat, seed)
    env = VectorEnv(2, auto_reset=False)
    env.reset()
    with pytest.raises(ValueError, match="tables must be distinct"):
        env.load_worlds(np.array([0, 0]), game.buf, 0, game.seat, np.array([1, 2]))
    with pytest.raises(ValueError, match="shape of seeds"):
        env.load_worlds(np.array([0, 1]), game.buf, 0, game.seat, np.array([1]))
    with pytest.raises(ValueError, match="not the seat to act"):
        env.load_worlds(np.array([0]), game.buf, 0, other, np.array([1]))
    with pytest.raises(ValueError, match="table 3"):
        env.load_worlds(np.array([0]), game.buf, 3, game.seat, np.array([1]))


def test_aec_env_game_resamples():
    """The AEC env drives a Game: ``env.unwrapped.game.resample`` gives a world at its decision."""
    import fzmj_env

    env = fzmj_env.env()
    env.reset(seed=5)
    game = env.unwrapped.game
    world = game.resample(game.seat, 11)
    assert np.array_equal(world.mask, env.observe(env.agent_selection)["action_mask"].astype(np.int8))
    assert np.array_equal(obs_of(world.buf, game.seat), obs_of(game.buf, game.seat))
