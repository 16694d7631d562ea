"""The PettingZoo AEC env (``fzmj_env.env`` / ``raw_env``): API, seeding, rendering, pickling,
scripted hands with exact points, records, and agreement with the engine's ``Game``."""

from __future__ import annotations

import pickle
import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import fzmj_env
from fzmj_env import Game, IllegalActionError, encode
from fzmj_env.actions import A_HU, A_PASS, A_ROB
from fzmj_env.record import replay
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_index

AGENTS = ["player_0", "player_1", "player_2", "player_3"]


def random_policy(rng: random.Random):
    def act(obs):
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[rng.randrange(len(legal))])

    return act


def play_out(e, policy, max_steps=100_000):
    """Play ``e`` (already reset) to the end; returns (decisions, summed rewards per agent, last infos)."""
    decisions = []
    total = dict.fromkeys(AGENTS, 0.0)
    infos = {}
    for agent in e.agent_iter(max_steps):
        obs, rew, term, trunc, info = e.last()
        total[agent] += rew
        infos[agent] = info
        if term or trunc:
            e.step(None)
            continue
        a = policy(obs)
        decisions.append((AGENTS.index(agent), a))
        e.step(a)
    return decisions, total, infos


# ---- PettingZoo's own tests -------------------------------------------------------------------
def test_api_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(fzmj_env.env(), num_cycles=300)


def test_api_test_match_with_oracle_and_record():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(fzmj_env.env(hands_per_game=3, oracle=True, record=True, reward_scale=0.1), num_cycles=300)


def test_seed_test():
    seed_test(fzmj_env.env, num_cycles=300)


def test_render_test(capsys):
    render_test(fzmj_env.env)


# ---- API details --------------------------------------------------------------------------------
def test_spaces_and_metadata():
    e = fzmj_env.env()
    u = e.unwrapped
    assert u.metadata["name"] == "fzmj_v0"
    assert u.metadata["render_modes"] == ["ansi", "human"]
    assert u.metadata["is_parallelizable"] is False
    assert u.possible_agents == AGENTS
    for a in AGENTS:
        assert e.action_space(a) is e.action_space(a) and e.action_space(a).n == 62
        assert e.observation_space(a) is e.observation_space(a)
        box = e.observation_space(a)["observation"]
        assert box.shape == (encode.NUM_CHANNELS, 27) and box.dtype == np.int8
        assert e.observation_space(a)["action_mask"].shape == (62,)
    with pytest.raises(AttributeError):
        _ = e.agent_selection  # order enforcing: before reset
    e.reset(seed=0)
    assert e.agent_selection in AGENTS


def test_observation_is_the_engine_encoding():
    e = fzmj_env.raw_env()
    e.reset(seed=5)
    rng = random.Random(1)
    pol = random_policy(rng)
    for _ in range(60):
        agent = e.agent_selection
        seat = AGENTS.index(agent)
        obs = e.observe(agent)
        ref = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
        encode.encode_table(e.game.buf, 0, seat, ref)
        assert np.array_equal(obs["observation"], ref)
        over = e.terminations[agent]
        want = e.game.mask if not over else (np.arange(62) == A_PASS).astype(np.int8)  # pass-only at the end
        assert np.array_equal(obs["action_mask"], want)
        for other in AGENTS:
            if other != agent:
                o = e.observe(other)
                assert o["action_mask"].any() == over
                encode.encode_table(e.game.buf, 0, AGENTS.index(other), ref)
                assert np.array_equal(o["observation"], ref)
        if e.terminations[agent]:
            break
        e.step(pol(obs))


def test_observations_are_not_overwritten_by_later_steps():
    e = fzmj_env.env()
    e.reset(seed=3)
    obs, *_ = e.last()
    keep = obs["observation"].copy(), obs["action_mask"].copy()
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert np.array_equal(obs["observation"], keep[0]) and np.array_equal(obs["action_mask"], keep[1])


def test_pickle_round_trip():
    e = fzmj_env.env(hands_per_game=2, reward_scale=0.5, record=True)
    e2 = pickle.loads(pickle.dumps(e))
    u2 = e2.unwrapped
    assert (u2.game.hands_per_game, u2.reward_scale, u2.record) == (2, 0.5, True)
    for x in (e, e2):
        x.reset(seed=11)
    d1, r1, _ = play_out(e, random_policy(random.Random(4)))
    d2, r2, _ = play_out(e2, random_policy(random.Random(4)))
    assert d1 == d2 and r1 == r2
    # a raw env mid-game pickles too (it is rebuilt from its constructor arguments)
    assert isinstance(pickle.loads(pickle.dumps(fzmj_env.raw_env(oracle=True))), fzmj_env.raw_env)


def test_illegal_action_raw_raises():
    e = fzmj_env.raw_env()
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="cannot take action"):
        e.step(bad)
    with pytest.raises(IllegalActionError):
        e.step(62)
    with pytest.raises(IllegalActionError):
        e.step("3")
    with pytest.raises(IllegalActionError):
        e.step(True)
    e.step(int(np.flatnonzero(mask)[0]))  # still usable


def test_illegal_action_wrapped_terminates_with_penalty():
    e = fzmj_env.env()
    e.reset(seed=1)
    agent = e.agent_selection
    obs, *_ = e.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1 and all(e.rewards[a] == 0 for a in AGENTS if a != agent)
    for a in AGENTS:  # each agent still observes its own seat (the acting agent's cache is not reused)
        ref = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
        encode.encode_table(e.unwrapped.game.buf, 0, AGENTS.index(a), ref)
        assert np.array_equal(e.observe(a)["observation"], ref)
    _, total, _ = play_out(e, None)  # only dead steps are left
    assert total[agent] == -1
    with pytest.raises(AssertionError):
        e2 = fzmj_env.env()
        e2.reset(seed=1)
        e2.step(62)


def test_reset_options_validation():
    e = fzmj_env.env()
    with pytest.warns(UserWarning, match="unknown reset option"):
        e.reset(options={"walls": []})
    with pytest.raises(ValueError):
        e.reset(options={"wall": [0] * 144})
    with pytest.raises(ValueError):
        e.reset(options={"dealer": 4})
    with pytest.raises(ValueError):
        fzmj_env.env(rules="no-such-preset")
    with pytest.raises(ValueError):
        fzmj_env.env(hands_per_game=0)


def test_seeding_matches_game_and_continues_the_stream():
    e = fzmj_env.raw_env()
    e.reset(seed=123)
    g = Game()
    g.reset(seed=123)
    assert np.array_equal(e.game.buf, g.buf)  # env.reset(seed=s) deals Game.reset(seed=s)
    e.reset()
    first = e.game.buf.copy()
    e.reset(seed=123)
    e.reset()
    assert np.array_equal(e.game.buf, first)  # reset() after reset(seed) is deterministic


# ---- the env and the engine agree ------------------------------------------------------------------
@pytest.mark.parametrize("hands", [1, 3])
def test_env_and_game_agree_action_for_action(hands):
    e = fzmj_env.env(hands_per_game=hands, reward_scale=2.0)
    n_games = 60 if hands == 1 else 12
    for gi in range(n_games):
        seed = 1000 + gi
        e.reset(seed=seed)
        g = Game(hands_per_game=hands)
        g.reset(seed=seed)
        rng = random.Random(gi)
        total = dict.fromkeys(AGENTS, 0.0)
        results = []
        for agent in e.agent_iter():
            obs, rew, term, trunc, info = e.last()
            total[agent] += rew
            if term or trunc:
                e.step(None)
                continue
            seat = AGENTS.index(agent)
            assert seat == g.seat
            assert np.array_equal(obs["action_mask"], g.mask)
            if g.phase == "claim":  # only seats with an option are asked (R8)
                assert obs["action_mask"][:A_PASS].any()
            legal = np.flatnonzero(obs["action_mask"])
            a = int(legal[rng.randrange(len(legal))])
            code = g.step(a)
            e.step(a)
            if code >= 1:
                res = e.unwrapped.infos[agent]["result"]
                assert res == g.last_result
                results.append(res)
        assert g.done
        assert results == g.results and len(results) == hands
        assert total == {a: 2.0 * s for a, s in zip(AGENTS, g.scores, strict=True)}
        assert sum(total.values()) == 0


def test_rewards_only_at_hand_ends_and_results_until_next_action():
    e = fzmj_env.raw_env(hands_per_game=2)
    e.reset(seed=8)
    rng = random.Random(2)
    hand_ends = 0
    while not e.terminations[e.agent_selection]:
        agent = e.agent_selection
        e.step(random_policy(rng)(e.observe(agent)))
        if "result" in e.infos[agent]:  # popped when it acted: so this step ended a hand
            hand_ends += 1
            res = e.infos[agent]["result"]
            assert all(e.infos[a]["result"] == res for a in AGENTS)  # equal copies: each agent its own
            assert [e.rewards[a] for a in AGENTS] == res["points"]
        else:
            assert all(r == 0 for r in e.rewards.values())
    assert hand_ends == 2


# ---- scripted hands (R3) with exact points --------------------------------------------------------
def scripted_env(wall, dealer=0, **kw):
    e = fzmj_env.env(**kw)
    e.reset(seed=0, options={"wall": wall, "dealer": dealer})
    return e


def answer_window(e, wanted: dict[int, int]):
    """Answer the open claim window: ``wanted[seat]`` for listed seats, pass for the others."""
    while e.unwrapped.game.phase == "claim":
        seat = AGENTS.index(e.agent_selection)
        e.step(wanted.get(seat, A_PASS))


def test_heavenly_win_exact_points():
    # dealer 0: 123m 456m 789m 123p 456p 11s (a win, R9.1), gold 9s, no flower, no kong
    wall = make_wall(dealer=0, hands={0: "123m456m789m123p456p11s"}, tail="9s")
    e = scripted_env(wall, reward_scale=0.5)
    obs, *_ = e.last()
    assert e.agent_selection == "player_0" and obs["action_mask"][A_HU]
    e.step(A_HU)
    res = e.infos["player_0"]["result"]
    assert res["winner"] == 0 and res["win_type"] == "heavenly"
    # V = (0 flower + 0 gold + 0 streak + 5) * 2 + 30 (天胡; 平胡 no flower no kong is also 30)
    assert res["value"] == 40 and "heavenly" in res["specials"]
    assert res["points"] == [120, -40, -40, -40]
    assert [e.rewards[a] for a in AGENTS] == [60.0, -20.0, -20.0, -20.0]
    assert all(e.terminations.values())


def test_rob_the_gold_exact_points():
    # seat 1: 123p 456p 789p 123s 456s 1m: plus a gold (9m) it is a win (pair 1m + gold)
    wall = make_wall(dealer=0, hands={1: "123p456p789p123s456s1m"}, tail="9m")
    e = scripted_env(wall)
    obs, *_ = e.last()
    discard = next(a for a in np.flatnonzero(obs["action_mask"]) if a < 27 and a != kind_index("1m"))
    e.step(int(discard))  # the dealer's first discard opens the 抢金 window (R10)
    assert e.agent_selection == "player_1"
    obs, *_ = e.last()
    assert obs["action_mask"][A_ROB] and obs["observation"][encode.P_PHASE, encode.PC_ROB_WINDOW] == 1
    answer_window(e, {1: A_ROB})
    res = e.infos["player_1"]["result"]
    assert res["winner"] == 1 and res["win_type"] == "rob_gold" and "rob_gold" in res["specials"]
    # V = (0 flower + 1 gold (the robbed one) + 0 streak + 5) * 2 + 30 = 42, paid by each other seat
    assert res["value"] == 42 and res["gold_points"] == 1
    assert res["points"] == [-42, 126, -42, -42]


def test_discard_win_exact_points():
    # seat 2: one flower (1z, replaced by 7s from the tail), one gold (9m, the next tail tile is the
    # indicator): 123p 456p 789p 23s+gold 55s 77s, waiting on 1s 4s 5s 7s (not 闲金, R9.5)
    wall = make_wall(
        dealer=0,
        hands={1: "5s 147m 258m 369m 147p 1p 2p 3p", 2: "123p456p789p 23s 55s 7s 9m 1z"},
        tail="7s 9m",
    )
    e = scripted_env(wall)
    g = e.unwrapped.game
    assert g.gold == kind_index("9m") and g.flowers(2) == ["1z"]
    obs, *_ = e.last()
    waits = {kind_index(k) for k in ("1s", "4s", "5s", "7s")}
    discard = next(a for a in np.flatnonzero(obs["action_mask"]) if a < 27 and a not in waits)
    e.step(int(discard))
    answer_window(e, {})  # everyone passes (seat 2 may rob: declining is not 过水)
    assert e.agent_selection == "player_1" and g.phase == "turn"
    e.step(kind_index("5s"))
    assert e.agent_selection == "player_2"
    obs, *_ = e.last()
    assert obs["action_mask"][A_HU] and obs["observation"][encode.P_CLAIM_TILE, kind_index("5s")] == 1
    answer_window(e, {2: A_HU})
    res = e.infos["player_2"]["result"]
    assert res["winner"] == 2 and res["win_type"] == "discard" and res["discarder"] == 1
    # V = (1 flower + 1 gold + 0 streak + 5) * 2 + 15 (平胡 with one flower) = 29, paid by the discarder alone
    assert (res["flower_points"], res["gold_points"], res["value"]) == (1, 1, 29)
    assert res["points"] == [0, -29, 29, 0]
    assert [e.rewards[a] for a in AGENTS] == [0, -29, 29, 0]


# ---- records, oracle, rendering ----------------------------------------------------------------------
@pytest.mark.parametrize("hands", [1, 3])
def test_record_replays_through_the_engine(hands):
    e = fzmj_env.env(record=True, hands_per_game=hands)
    for seed in range(3):
        e.reset(seed=seed)
        decisions, _, infos = play_out(e, random_policy(random.Random(seed)))
        rec = infos["player_0"]["record"]
        assert all(infos[a]["record"] == rec for a in AGENTS)  # equal copies: each agent its own
        assert [tuple(d) for d in rec["decisions"]] == decisions
        assert len(rec["hands"]) == hands
        g = replay(rec)
        assert g.done and g.scores == rec["scores"]


def test_scripted_record_replays():
    wall = make_wall(dealer=0, hands={1: "123p456p789p123s456s1m"}, tail="9m")
    e = scripted_env(wall, record=True)
    decisions, _, infos = play_out(e, random_policy(random.Random(0)))
    rec = infos["player_1"]["record"]
    assert rec["hands"][0]["dealer"] == 0
    replay(rec)


def test_oracle_infos():
    e = fzmj_env.env(oracle=True)
    e.reset(seed=4)
    rng = random.Random(0)
    for _ in range(40):
        obs, rew, term, trunc, info = e.last()
        if term:
            break
        ref = np.zeros((4, encode.ORACLE_CHANNELS, 27), np.int8)
        encode.oracle_all(e.unwrapped.game.buf, 0, ref)
        for i, a in enumerate(AGENTS):
            assert np.array_equal(e.infos[a]["oracle"], ref[i])
        assert "oracle" not in obs  # never part of the observation
        e.step(random_policy(rng)(obs))
    st = e.unwrapped.state()
    assert st.dtype == np.int32 and st.ndim == 1


def test_render_ansi_and_human(capsys):
    e = fzmj_env.env(render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    g = e.unwrapped.game
    seat = g.seat
    assert isinstance(text, str) and "gold" in text and f"hand of player_{seat}" in text
    for s in range(4):
        assert f"player_{s}" in text
    assert any(0x1F000 <= ord(ch) <= 0x1F02B for ch in text)  # Unicode tiles
    # another seat's concealed tiles are not shown: only the acting seat's hand line
    assert text.count("hand of player_") == 1
    h = fzmj_env.env(render_mode="human")
    h.reset(seed=2)
    assert h.render() is None
    assert "hand of player_" in capsys.readouterr().out
