"""Observation v3 (``fzmj_env.encode``: v2's planes, then the public history): layout, each new
plane on a scripted hand (R3), agreement with the engine over random games, and R12 (no leaks)."""

from __future__ import annotations

import numpy as np
import pytest
from test_encode import random_states, scramble_hidden

from fzmj_env import Game, available_rules, encode
from fzmj_env.actions import A_CHI_LOW, A_PASS, A_PENG, A_SELF_KONG
from fzmj_env.core import state
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_index

C3 = encode.V3_CHANNELS
NAMES = [n for n, _ in encode.PLANES_V3]


def obs3(game: Game, seat: int, buf=None) -> np.ndarray:
    out = np.zeros((C3, 27), dtype=np.int8)
    encode.encode_table(game.buf if buf is None else buf, 0, seat, out)
    return out


def row(o: np.ndarray, name: str) -> np.ndarray:
    return o[NAMES.index(name)]


def cols(o: np.ndarray, name: str) -> list[int]:
    return np.flatnonzero(row(o, name)).tolist()


def k(name: str) -> int:
    return kind_index(name)


def test_layout():
    assert encode.OBS_VERSIONS == {"v2": 99, "v3": C3}
    assert C3 == encode.NUM_CHANNELS + 4 * encode.H_SEAT_PLANES + 5 == 292
    assert NAMES[: encode.NUM_CHANNELS] == [n for n, _ in encode.PLANES]  # v2 unchanged, in order
    assert len(set(NAMES)) == C3
    assert NAMES.index("r1_disc0") == encode.P_HIST + encode.H_SEAT_PLANES
    assert NAMES.index("r0_meld_type") == encode.P_HIST + encode.H_MELD_TYPE
    assert NAMES.index("r0_flowers_when_ge1") == encode.P_HIST + encode.H_FLOWER_WHEN
    assert NAMES.index("r0_score") == encode.P_SCORES and NAMES[-1] == "hand_no"
    from fzmj_env.checks import OBS_VERSION_NAMES

    assert tuple(encode.OBS_VERSIONS) == OBS_VERSION_NAMES


def test_docs_table_lists_every_v3_plane():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "observation.md").read_text()
    for i in range(encode.NUM_CHANNELS, C3):
        if NAMES[i].startswith(("r1_", "r2_", "r3_")) and "_score" not in NAMES[i]:
            continue  # documented as the same block as r0
        assert f"`{NAMES[i]}`" in text, NAMES[i]


def _scripted_game() -> Game:
    """Dealer 0 konds 4s (concealed) and discards 1m; seat 1 chis it and discards 9p; seat 2 pengs
    that and discards 1s; seat 3 (a 2f flower in the deal) and seat 0 discard; seat 1 throws a gold
    (5s); seat 2 draws the last 9p, adds it to its peng, lays out 1f from the tail."""
    wall = make_wall(
        dealer=0,
        hands={
            0: "4444s 1m 78m 34p 67p 89s 2p 6m 3s 7s",
            1: "23m 9p 5s 1p 1p 2s 6s 7s 4m 5m 8p 8m 9m 6p 1s",
            2: "99p 1s 2s 3s 4m 5m 6m 7p 8p 9s 9s 3p 4p 5p 6s",
        },
        draws=[None, None, None, "9p"],
        tail="5s 2m 1f 3m",
        flowers={3: "2f"},
    )
    game = Game()
    game.reset(seed=0, wall=wall, dealer=0)
    return game


def _play_to(game: Game, seat: int, action: int) -> None:
    """Pass every claim until ``seat`` may take ``action``, then take it."""
    while not (game.seat == seat and action in game.legal_actions):
        assert game.phase == "claim", (game.seat, game.phase, game.legal_actions)
        game.step(A_PASS)
    game.step(action)


def _pass_until_turn(game: Game, seat: int) -> None:
    while not (game.seat == seat and game.phase == "turn"):
        assert game.phase == "claim"
        game.step(A_PASS)


def test_scripted_history_planes():
    g = _scripted_game()
    assert g.view.m[state.GOLD] == k("5s")
    _play_to(g, 0, A_SELF_KONG + k("4s"))  # concealed kong at position 0
    _play_to(g, 0, k("1m"))  # table discard T 0
    _play_to(g, 1, A_CHI_LOW)  # chi 1m-2m-3m from 上家 (seat 0)
    _play_to(g, 1, k("9p"))  # T 1, right after the chi
    _play_to(g, 2, A_PENG)  # peng 9p from seat 1 (上家 of seat 2)
    _play_to(g, 2, k("1s"))  # T 2, right after the peng
    _pass_until_turn(g, 3)
    g.step(g.legal_actions[0])  # seat 3 discards: T 3
    _pass_until_turn(g, 0)
    g.step(k("9s"))  # T 4
    _pass_until_turn(g, 1)
    g.step(k("5s"))  # T 5: a gold thrown
    _pass_until_turn(g, 2)
    _play_to(g, 2, A_SELF_KONG + k("9p"))  # added kong at position 1; replacement 1f, then 3m
    assert g.seat == 2 and g.phase == "turn"

    o = obs3(g, 0)  # seen by seat 0: r = seat
    assert np.array_equal(o[: encode.NUM_CHANNELS], _v2(g, 0))
    # discards in order, with the table's time
    assert cols(o, "r0_disc0") == [k("1m")] and cols(o, "r0_disc1") == [k("9s")]
    assert cols(o, "r1_disc0") == [k("9p")] and cols(o, "r1_disc1") == [k("5s")]
    assert cols(o, "r2_disc0") == [k("1s")] and row(o, "r2_disc1").sum() == 0
    assert cols(o, "r0_disc_time0") == [0, 4]
    assert cols(o, "r1_disc_time0") == [1, 5]
    assert cols(o, "r2_disc_time0") == [2] and cols(o, "r3_disc_time0") == [3]
    assert row(o, "r0_disc_time1").sum() == row(o, "r0_disc_time2").sum() == 0
    assert cols(o, "r0_disc_claimed_at") == [0] and cols(o, "r1_disc_claimed_at") == [0]
    assert cols(o, "r2_disc_claimed_at") == []
    assert cols(o, "r1_disc_after_claim_at") == [0] and cols(o, "r2_disc_after_claim_at") == [0]
    assert cols(o, "r0_disc_after_claim_at") == [] and cols(o, "r3_disc_after_claim_at") == []
    assert cols(o, "r1_disc_gold_at") == [1] and cols(o, "r0_disc_gold_at") == []
    # melds: type, tiles, source, taken tile, when
    assert cols(o, "r0_meld_type") == [4] and cols(o, "r0_meld0") == [k("4s")]  # own concealed kong
    assert cols(o, "r0_meld_source") == [] and cols(o, "r0_meld0_when") == [0]
    assert cols(o, "r1_meld_type") == [0] and cols(o, "r1_meld0") == [k("1m"), k("2m"), k("3m")]
    assert cols(o, "r1_meld_source") == [2] and cols(o, "r1_meld_taken") == [0]  # from 上家, lowest tile
    assert cols(o, "r1_meld0_when") == [0]
    assert cols(o, "r2_meld_type") == [3] and cols(o, "r2_meld0") == [k("9p")]  # peng, now an added kong
    assert cols(o, "r2_meld_source") == [2] and cols(o, "r2_meld_taken") == []
    assert cols(o, "r2_meld0_when") == [0, 1]  # peng at position 0, the kong at position 1
    assert row(o, "r2_meld1").sum() == row(o, "r2_meld1_when").sum() == 0
    # flowers: seat 3's 2f in the deal (position 0), seat 2's 1f at position 1
    assert cols(o, "r3_flowers_when_ge1") == [0] and cols(o, "r3_flowers_when_ge2") == []
    assert cols(o, "r2_flowers_when_ge1") == [1]
    assert cols(o, "r0_flowers_when_ge1") == [] and cols(o, "r1_flowers_when_ge1") == []
    # a single-hand game: nothing in the match planes but "everyone leads at 0"
    for r in range(4):
        assert cols(o, f"r{r}_score") == [26]
    assert cols(o, "hand_no") == []
    # another seat sees seat 0's concealed kong as a type and a time, never its kind (R12)
    o1 = obs3(g, 1)
    assert cols(o1, "r3_meld_type") == [4] and row(o1, "r3_meld0").sum() == 0 and cols(o1, "r3_meld0_when") == [0]
    # the relative order: seat 1's block is r0 for seat 1, r3 for seat 2
    o2 = obs3(g, 2)
    assert np.array_equal(o1[encode.P_HIST : encode.P_HIST + 30], o[encode.P_HIST + 47 : encode.P_HIST + 77])
    assert np.array_equal(
        o2[encode.P_HIST + 3 * 47 : encode.P_HIST + 3 * 47 + 30], o1[encode.P_HIST : encode.P_HIST + 30]
    )


def _v2(game: Game, seat: int) -> np.ndarray:
    out = np.zeros((encode.NUM_CHANNELS, 27), dtype=np.int8)
    encode.encode_table(game.buf, 0, seat, out)
    return out


def test_match_score_and_hand_number_planes():
    rng = np.random.default_rng(3)
    game = Game(hands_per_game=3)
    game.reset(seed=11)
    seen = 0
    while not game.done:
        if game.view.m[state.HAND_NO] >= 1 and game.phase == "turn":
            scores = [int(x) for x in game.view.scores]
            for me in range(4):
                o = obs3(game, me)
                assert cols(o, "hand_no") == list(range(int(game.view.m[state.HAND_NO])))
                for r in range(4):
                    v = scores[(me + r) % 4]
                    want = [j for j in range(13) if v >= 2**j] + [13 + j for j in range(13) if v <= -(2**j)]
                    want += [26] if v == max(scores) else []
                    assert cols(o, f"r{r}_score") == want
            seen += 1
        legal = game.legal_actions
        game.step(int(rng.choice([a for a in legal if a != A_PASS] or legal)))
    assert seen > 0


def test_v3_agrees_with_the_engine_over_random_games():
    """v3 starts with v2; each seat's history planes say what the engine's record says; the table's
    times of all discards are 0..T-1, each once."""
    checked = 0
    for game, i in random_states(12, seed=5):
        if i % 3:
            continue
        v = game.view
        for me in range(4):
            o = obs3(game, me)
            assert np.array_equal(o[: encode.NUM_CHANNELS], _v2(game, me))
            times = []
            for r in range(4):
                s = (me + r) % 4
                b = encode.P_HIST + r * encode.H_SEAT_PLANES
                nd = int(v.n_disc[s])
                for j in range(encode.H_DISC_N):
                    want = [int(v.disc[s, j])] if j < nd else []
                    assert np.flatnonzero(o[b + j]).tolist() == want
                assert (
                    np.flatnonzero(o[b + encode.H_DISC_CLAIMED]).tolist()
                    == np.flatnonzero(v.disc_claimed[s, :nd]).tolist()
                )
                t = o[b + encode.H_DISC_TIME : b + encode.H_DISC_TIME + 3].reshape(-1)
                times += np.flatnonzero(t).tolist()
                assert t.sum() == nd
                assert o[b + encode.H_MELD_TYPE].sum() == v.n_melds[s]
            total = int(v.n_disc.sum())
            assert sorted(times) == list(range(total))
        checked += 1
    assert checked > 50


def test_every_byte_of_v3_is_written():
    for game, i in random_states(3, seed=9):
        if i % 7:
            continue
        a = np.zeros((C3, 27), np.int8)
        b = np.full((C3, 27), 7, np.int8)
        encode.encode_table(game.buf, 0, 1, a)
        encode.encode_table(game.buf, 0, 1, b)
        assert np.array_equal(a, b)


@pytest.mark.parametrize("rules", available_rules())
def test_no_leak_of_hidden_information_v3(rules):
    """R12 for v3: scrambling what a seat may not see never changes its v3 observation."""
    rng = np.random.default_rng(7)
    checked = 0
    for game, i in random_states(4, seed=21, hands_per_game=2, rules=rules):
        if i % 4:
            continue
        for me in range(4):
            before = obs3(game, me)
            for _ in range(2):
                assert np.array_equal(obs3(game, me, scramble_hidden(game, me, rng)), before)
                checked += 1
    assert checked > 100


def test_envs_emit_v3():
    import fzmj_env
    from fzmj_env.vector import VectorEnv

    e = fzmj_env.env(obs_version=3)
    e.reset(seed=4)
    assert e.observe(e.agent_selection)["observation"].shape == (C3, 27)
    assert e.unwrapped.metadata["obs_version"] == "v3" and e.unwrapped.obs_version == "v3"
    assert e.observation_space("player_0")["observation"].shape == (C3, 27)
    assert fzmj_env.env().unwrapped.obs_version == "v2"
    p = fzmj_env.parallel_env(obs_version="v3")
    obs, _ = p.reset(seed=4)
    assert obs["player_0"]["observation"].shape == (C3, 27) and p.metadata["obs_version"] == "v3"
    v = VectorEnv(3, obs_version=3)
    o, _, _ = v.reset()
    assert o.shape == (3, C3, 27) and v.obs_shape == (C3, 27)
    with pytest.raises(ValueError, match="obs_version must be 2 or 3"):
        VectorEnv(3, obs_version=4)
    with pytest.raises(ValueError, match="obs_version must be 2 or 3"):
        fzmj_env.env(obs_version="v1")
