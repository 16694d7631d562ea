"""Observation encoder v1 (``fzmj_env.encode``): layout, contents, batching and R12 (no leaks)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fzmj_env import Game, available_rules, encode
from fzmj_env.actions import A_CHI_HIGH, A_CHI_LOW, A_HU, A_KONG, A_PASS, A_PENG, A_ROB, A_SELF_KONG
from fzmj_env.core import state
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_index

C = encode.NUM_CHANNELS


def obs_of(game: Game, seat: int, buf=None) -> np.ndarray:
    out = np.zeros((C, 27), dtype=np.int8)
    encode.encode_table(game.buf if buf is None else buf, 0, seat, out)
    return out


def plane(name: str) -> int:
    return [n for n, _ in encode.PLANES].index(name)


def seat_plane(r: int, name: str) -> int:
    return plane(f"r{r}_{name}")


def claimy_action(game: Game, rng: random.Random) -> int:
    """A random legal action that prefers melds and kongs (reaches rich states quickly), rarely wins."""
    legal = game.legal_actions
    for group in (
        [a for a in legal if A_SELF_KONG <= a < A_SELF_KONG + 27],
        [A_KONG],
        [A_PENG],
        [A_CHI_LOW, A_CHI_LOW + 1, A_CHI_HIGH],
    ):
        opts = [a for a in group if a in legal]
        if opts and rng.random() < 0.8:
            return rng.choice(opts)
    if A_HU in legal and rng.random() < 0.5:
        return A_HU
    non_win = [a for a in legal if a not in (A_HU, A_ROB)]
    return rng.choice(non_win or legal)


def random_states(n_games: int, seed: int, hands_per_game: int = 1, rules: str = "fuzhou-lianzhong"):
    """Yield (game, step index) at every decision of ``n_games`` random games."""
    rng = random.Random(seed)
    for g in range(n_games):
        game = Game(rules, hands_per_game=hands_per_game)
        game.reset(seed=seed * 1000 + g)
        i = 0
        while not game.done:
            yield game, i
            game.step(claimy_action(game, rng))
            i += 1


# ---- layout ------------------------------------------------------------------------------------
def test_layout_constants():
    assert encode.OBS_VERSION == "v2"
    assert len(encode.PLANES) == C == 99
    assert encode.V1_CHANNELS == 97 and encode.P_PRESET == 97 and encode.P_SWIM == 98
    names = [n for n, _ in encode.PLANES]
    assert len(set(names)) == C
    assert all(isinstance(d, str) and d for _, d in encode.PLANES)
    assert len(encode.ORACLE_PLANES) == encode.ORACLE_CHANNELS
    assert len({n for n, _ in encode.ORACLE_PLANES}) == encode.ORACLE_CHANNELS
    # blocks per relative seat are laid out uniformly
    for r in range(4):
        assert seat_plane(r, "meld_ge1") == encode.P_SEAT + r * encode.SEAT_PLANES
        assert seat_plane(r, "flags") == encode.P_SEAT + r * encode.SEAT_PLANES + encode.S_FLAGS


def test_docs_table_lists_every_plane():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "observation.md").read_text(encoding="utf-8")
    for n, _ in encode.PLANES:
        if n.startswith(("r1_", "r2_", "r3_")):
            continue  # documented as the same block as r0
        assert f"`{n}`" in text, n
    for n, _ in encode.ORACLE_PLANES:
        assert f"`{n}`" in text, n


# ---- contents -----------------------------------------------------------------------------------
def test_start_of_hand_contents():
    game = Game()
    game.reset(seed=7)
    dealer = game.dealer
    for seat in range(4):
        o = obs_of(game, seat)
        assert o.dtype == np.int8 and set(np.unique(o)) <= {0, 1}
        hand = game.hand(seat)
        for i in range(4):
            assert np.array_equal(o[i], (hand >= i + 1).astype(np.int8))
        assert o[plane("gold_kind")].sum() == 1 and o[plane("gold_kind"), game.gold] == 1
        assert o[plane("own_golds")].sum() == hand[game.gold]
        r_dealer = (dealer - seat) % 4
        for r in range(4):
            f = o[seat_plane(r, "flags")]
            assert f[encode.F_DEALER] == (r == r_dealer)
            assert f[encode.F_CURRENT] == (r == r_dealer)
            # flowers: count thermometer and kinds match the public flowers
            s = (seat + r) % 4
            fl = game.view.flowers[s]
            assert o[seat_plane(r, "flower_count")].sum() == min(int(fl.sum()), 27)
            assert np.array_equal(o[seat_plane(r, "flowers"), :15], (fl >= 1).astype(np.int8))
        ph = o[plane("phase")]
        assert ph[encode.PC_TURN] == 1 and ph[encode.PC_HEAVENLY] == 1 and ph[encode.PC_ME_ACTING] == (seat == dealer)
        assert o[plane("drawable")].sum() == min(game.drawable, 27)
        assert o[plane("drawable_coarse")].sum() == max(0, min(27, (game.drawable - 27 + 1) // 2))
        assert o[plane("claim_tile")].sum() == 0
        assert o[plane("last_draw")].sum() == 0  # the dealer's first turn has no draw


def _check_public(game: Game, seat: int, o: np.ndarray) -> None:
    """Per-seat public planes against the Game's public accessors."""
    v = game.view
    for r in range(4):
        s = (seat + r) % 4
        nd = int(v.n_disc[s])
        disc = np.bincount(v.disc[s, :nd], minlength=27)
        for i in range(4):
            assert np.array_equal(o[seat_plane(r, f"disc_ge{i + 1}")], (disc >= i + 1).astype(np.int8))
        for i in range(4):
            row = o[seat_plane(r, f"recent{i}")]
            if i < nd:
                assert row.sum() == 1 and row[v.disc[s, nd - 1 - i]] == 1
            else:
                assert row.sum() == 0
        meld = np.zeros(27, dtype=np.int64)
        n_conc = 0
        for j in range(int(v.n_melds[s])):
            t, k = int(v.meld[s, j, 0]), int(v.meld[s, j, 1])
            if t == state.MELD_CONCEALED_KONG:
                n_conc += 1
            elif t == state.MELD_CHI:
                meld[k : k + 3] += 1
            else:
                meld[k] += 3 if t == state.MELD_PENG else 4
        for i in range(4):
            assert np.array_equal(o[seat_plane(r, f"meld_ge{i + 1}")], (meld >= i + 1).astype(np.int8))
        f = o[seat_plane(r, "flags")]
        assert f[encode.F_CONC_KONGS : encode.F_CONC_KONGS + 4].sum() == n_conc
        assert f[encode.F_MELDS : encode.F_MELDS + 5].sum() == int(v.n_melds[s])
        assert f[encode.F_GOLD_THROWN] == v.gold_thrown[s]
    own_conc = np.zeros(27, dtype=np.int8)
    for j in range(int(v.n_melds[seat])):
        if v.meld[seat, j, 0] == state.MELD_CONCEALED_KONG:
            own_conc[v.meld[seat, j, 1]] = 1
    assert np.array_equal(o[plane("own_concealed_kongs")], own_conc)
    assert np.array_equal(o[plane("own_passed")], v.passed[seat].astype(np.int8))
    ph = int(v.m[state.PHASE])
    assert o[plane("phase"), ph] == 1
    if ph == state.PH_CLAIM:
        assert o[plane("claim_tile"), int(v.m[state.CLAIM_TILE])] == 1
        assert o[seat_plane((int(v.m[state.CLAIM_FROM]) - seat) % 4, "flags"), encode.F_CLAIM_FROM] == 1


def test_public_planes_match_game_over_random_games():
    seen_claim = seen_meld = seen_conc = 0
    for game, _ in random_states(6, seed=3):
        for seat in range(4):
            o = obs_of(game, seat)
            for i in range(4):
                assert np.array_equal(o[i], (game.view.hand[seat] >= i + 1).astype(np.int8))
            _check_public(game, seat, o)
        seen_claim += game.phase == "claim"
        seen_meld += int(game.view.n_melds.sum() > 0)
        seen_conc += int((game.view.meld[:, :, 0] == state.MELD_CONCEALED_KONG).any())
    assert seen_claim and seen_meld


def test_last_draw_only_for_the_drawer():
    for game, _ in random_states(2, seed=11):
        ld = int(game.view.m[state.LAST_DRAW])
        cur = int(game.view.m[state.CUR])
        for seat in range(4):
            row = obs_of(game, seat)[plane("last_draw")]
            if game.phase == "turn" and seat == cur and ld >= 0:
                assert row.sum() == 1 and row[ld] == 1
            else:
                assert row.sum() == 0


# ---- R12: nothing hidden leaks ---------------------------------------------------------------------
def scramble_hidden(game: Game, me: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of the state with everything ``me`` may not see changed at random."""
    buf = game.buf.copy()
    v = state.numpy_view(buf, 0)
    m = v.m
    for s in range(4):
        if s == me:
            continue
        n = int(v.hand[s].sum())
        v.hand[s] = np.bincount(rng.integers(0, 27, n), minlength=27)  # concealed tiles
        v.passed[s] = rng.integers(0, 2, 27)  # 过水 (tells it could have won)
        v.opts[s] = rng.integers(0, 128)
        v.choice[s] = rng.integers(0, 62)
        for j in range(int(v.n_melds[s])):
            if v.meld[s, j, 0] == state.MELD_CONCEALED_KONG:
                v.meld[s, j, 1] = rng.integers(0, 27)
    head, tail = int(m[state.HEAD]), int(m[state.TAIL])
    v.wall[:head] = rng.integers(0, 42, head)  # drawn part: irrelevant
    v.wall[head : tail + 1] = rng.permutation(v.wall[head : tail + 1])  # unseen order
    v.wall[tail + 1 :] = rng.integers(0, 42, 143 - tail)
    if int(m[state.CUR]) != me:
        m[state.LAST_DRAW] = rng.integers(-1, 27)
    if int(m[state.PHASE]) == state.PH_CLAIM:
        pos = int(m[state.ASK_POS])
        # who else was asked, how many, and what they answered
        for q in range(4):
            if q != pos:
                v.ask[q] = rng.integers(0, 4)
        m[state.N_ASK] = rng.integers(pos + 1, 5)
    return buf


@pytest.mark.parametrize("rules", available_rules())
def test_no_leak_of_hidden_information(rules):
    """R12 for every preset: swim levels and the preset are public, nothing else is added."""
    rng = np.random.default_rng(0)
    checked = answered = 0
    for game, i in random_states(8, seed=5, rules=rules):
        if game.phase == "claim" and game.view.m[state.ASK_POS] > 0:
            answered += 1  # a window where someone has already answered (tb.choice is set)
        elif i % 3:
            continue
        for me in range(4):
            before = obs_of(game, me)
            for _ in range(2):
                buf = scramble_hidden(game, me, rng)
                assert np.array_equal(obs_of(game, me, buf), before), f"observation of seat {me} changed"
                checked += 1
    assert checked > 200 and answered > 0


def test_scramble_changes_the_oracle():
    """The scramble does touch hidden state (so the no-leak test has teeth)."""
    rng = np.random.default_rng(1)
    game = Game()
    game.reset(seed=2)
    a = np.zeros((encode.ORACLE_CHANNELS, 27), np.int8)
    b = np.zeros_like(a)
    encode.oracle_table(game.buf, 0, 0, a)
    encode.oracle_table(scramble_hidden(game, 0, rng), 0, 0, b)
    assert not np.array_equal(a, b)


def test_other_seats_concealed_kong_is_a_count_only():
    # seat 1 holds four 5p and will kong them at its first turn; seat 0 (dealer) discards first
    wall = make_wall(dealer=0, hands={1: "5555p 123m 456m 789m 11s 2s"}, draws="9s", tail="9p")
    game = Game()
    game.reset(seed=0, wall=wall, dealer=0)
    game.step(game.legal_actions[0])  # dealer discards
    while game.phase == "claim":
        game.step(A_PASS)
    assert game.seat == 1
    game.step(A_SELF_KONG + kind_index("5p"))
    assert game.seat == 1 and game.phase == "turn"
    own = obs_of(game, 1)
    assert own[plane("own_concealed_kongs"), kind_index("5p")] == 1
    for me in (0, 2, 3):
        o = obs_of(game, me)
        r = (1 - me) % 4
        assert o[plane("own_concealed_kongs")].sum() == 0
        assert o[seat_plane(r, "flags"), encode.F_CONC_KONGS] == 1
        assert o[seat_plane(r, "meld_ge1")].sum() == 0
    assert obs_of(game, 0)[plane("reserve")].sum() == 2  # R6: +2 per concealed kong


# ---- batching and the oracle -----------------------------------------------------------------------
def test_encode_batch_matches_encode_table():
    games = []
    for g in range(5):
        game = Game()
        game.reset(seed=100 + g)
        for _ in range(g * 7):
            if game.done:
                break
            game.step(game.legal_actions[-1] if A_HU not in game.legal_actions else A_HU)
        games.append(game)
    buf = np.concatenate([g.buf for g in games])
    seats = np.array([g.seat for g in games] + [], dtype=np.int64)
    seats[2] = -1
    out = np.full((len(games), C, 27), 7, dtype=np.int8)
    encode.encode_batch(buf, seats, out)
    for t, g in enumerate(games):
        if seats[t] < 0:
            assert not out[t].any()
        else:
            assert np.array_equal(out[t], obs_of(g, int(seats[t])))
    oo = np.full((len(games), encode.ORACLE_CHANNELS, 27), 7, dtype=np.int8)
    encode.oracle_batch(buf, seats, oo)
    for t in range(len(games)):
        ref = np.zeros((encode.ORACLE_CHANNELS, 27), np.int8)
        if seats[t] >= 0:
            encode.oracle_table(buf, t, int(seats[t]), ref)
        assert np.array_equal(oo[t], ref)


def test_oracle_contents():
    for game, i in random_states(2, seed=9):
        if i % 5:
            continue
        out4 = np.zeros((4, encode.ORACLE_CHANNELS, 27), np.int8)
        encode.oracle_all(game.buf, 0, out4)
        v = game.view
        head, tail = int(v.m[state.HEAD]), int(v.m[state.TAIL])
        left = np.bincount([k for k in v.wall[head : tail + 1] if k < 27], minlength=27)
        for me in range(4):
            o = out4[me]
            for r in range(1, 4):
                s = (me + r) % 4
                for t in range(4):
                    assert np.array_equal(o[encode.O_HANDS + 4 * (r - 1) + t], (v.hand[s] >= t + 1).astype(np.int8))
            for t in range(4):
                assert np.array_equal(o[encode.O_WALL + t], (left >= t + 1).astype(np.int8))
            k = int(v.wall[head])
            assert o[encode.O_HEAD].sum() == (k < 27) and (k >= 27 or o[encode.O_HEAD, k] == 1)


def test_step_observe_matches_separate_calls():
    from fzmj_env.core import engine

    game = Game()
    game.reset(seed=21)
    buf2 = game.buf.copy()
    rng = random.Random(0)
    mask = np.zeros(62, np.int8)
    obs = np.zeros((C, 27), np.int8)
    while not game.done:
        a = claimy_action(game, rng)
        code = game.step(a)
        r = encode.step_observe(buf2, 0, game.win_table, a, mask, obs)
        assert (r >> 3) - 1 == code and (r & 7) - 1 == game.seat
        assert np.array_equal(buf2, game.buf)
        if not game.done:
            assert np.array_equal(mask, game.mask)
            assert np.array_equal(obs, obs_of(game, game.seat))
    # an illegal action changes nothing
    game2 = Game()
    game2.reset(seed=22)
    before = game2.buf.copy()
    illegal = int(np.flatnonzero(game2.mask == 0)[0])
    r = encode.step_observe(game2.buf, 0, game2.win_table, illegal, mask, obs)
    assert (r >> 3) - 1 == engine.STEP_ILLEGAL and np.array_equal(before, game2.buf)


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_relative_order(seat):
    """Relative seat r of observer ``seat`` is absolute seat (seat + r) % 4: the dealer flag moves."""
    game = Game()
    game.reset(seed=4, dealer=2)
    o = obs_of(game, seat)
    dealer_r = [r for r in range(4) if o[seat_plane(r, "flags"), encode.F_DEALER]]
    assert dealer_r == [(2 - seat) % 4]


def test_every_byte_of_the_observation_is_written():
    """The encoder clears only the rows it does not write in full: a buffer full of
    garbage must come out exactly like a zeroed one, for every seat of many states."""
    rng = np.random.default_rng(5)
    for game, _ in random_states(3, seed=11):
        for seat in range(4):
            dirty = rng.integers(-128, 128, size=(C, 27), dtype=np.int8)
            encode.encode_table(game.buf, 0, seat, dirty)
            assert np.array_equal(dirty, obs_of(game, seat))


# ---- v2 planes ------------------------------------------------------------------------
def test_v2_preset_and_swim_planes_default():
    """Plane 97 names the scheme (default: column 0 only); plane 98 (swim levels, P5) is all zero
    outside fuzhou-home; the v1 planes 0..96 come first, unchanged."""
    game = Game()
    game.reset(seed=3)
    obs = np.zeros((C, 27), dtype=np.int8)
    encode.encode_table(game.buf, 0, game.seat, obs)
    assert obs[encode.P_PRESET].tolist() == [1] + [0] * 26
    assert not obs[encode.P_SWIM].any()
    assert [n for n, _ in encode.PLANES[encode.V1_CHANNELS :]] == ["preset", "swim"]
