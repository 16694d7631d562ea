"""Agents: specs, the random and heuristic baselines, the PPO loader's errors."""

import textwrap

import numpy as np
import pytest

from fzmj.agents import Agent, AgentSpecError, make_agent
from fzmj.agents.heuristic import HeuristicAgent
from fzmj.agents.random_agent import RandomAgent
from fzmj_env import features
from fzmj_env.core import state
from fzmj_env.core.hand import get_shanten_table, shanten_counts
from fzmj_env.encode import NUM_CHANNELS, P_CLAIM_TILE, P_GOLD_KIND, P_HAND, P_PHASE, PC_CLAIM, PC_TURN
from fzmj_env.tiles import parse_tiles
from fzmj_env.vector import VectorEnv

A_HU, A_ROB, A_PASS, A_PENG = state.A_HU, state.A_ROB, state.A_PASS, state.A_PENG


def counts(text):
    return parse_tiles(text)[:27].astype(np.int64)


def make_obs(hand, gold, claim=None):
    """A minimal observation: own hand planes, gold kind, phase (turn, or claim on ``claim``)."""
    o = np.zeros((NUM_CHANNELS, 27), np.int8)
    c = counts(hand)
    for k in range(27):
        for i in range(min(c[k], 4)):
            o[P_HAND + i, k] = 1
    o[P_GOLD_KIND, gold] = 1
    if claim is None:
        o[P_PHASE, PC_TURN] = 1
    else:
        o[P_PHASE, PC_CLAIM] = 1
        o[P_CLAIM_TILE, claim] = 1
    return o, c


def turn_mask(c, hu=False):
    m = np.zeros(62, np.int8)
    m[:27] = c > 0
    m[A_HU] = hu
    return m


# ---- specs --------------------------------------------------------------------------------------
def test_specs_build_the_baselines():
    assert isinstance(make_agent("random"), RandomAgent)
    assert make_agent("random:7").seed == 7
    h = make_agent("heuristic")
    assert isinstance(h, HeuristicAgent) and h.name == "heuristic"
    a = RandomAgent()
    assert make_agent(a) is a


@pytest.mark.parametrize("spec", ["randm", "heuristic:3", "random:x", "ppo:", "python:nomodule", "", "python::X"])
def test_bad_specs_raise_one_clear_error(spec):
    with pytest.raises(AgentSpecError) as e:
        make_agent(spec)
    assert "\n" not in str(e.value) and str(e.value)


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(AgentSpecError, match="no such checkpoint"):
        make_agent(f"ppo:{tmp_path / 'nope.pt'}")


def test_bad_checkpoint_file_is_a_clear_error(tmp_path):
    p = tmp_path / "junk.pt"
    p.write_bytes(b"not a checkpoint")
    with pytest.raises(AgentSpecError, match="cannot load PPO checkpoint"):
        make_agent(f"ppo:{p}")


def test_python_module_class_spec(tmp_path, monkeypatch):
    (tmp_path / "my_fzmj_bot.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from fzmj.agents import Agent

            class LastLegal(Agent):
                name = "last-legal"
                def act(self, obs, mask):
                    return (mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)).astype(np.int64)

            class Duck:  # not an Agent subclass: wrapped
                def act(self, obs, mask):
                    return np.argmax(mask, axis=1)

            class NoAct:
                pass
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    a = make_agent("python:my_fzmj_bot:LastLegal")
    assert isinstance(a, Agent) and a.name == "last-legal"
    mask = np.zeros((2, 62), np.int8)
    mask[0, [3, 61]] = 1
    mask[1, [5]] = 1
    assert a.act(np.zeros((2, NUM_CHANNELS, 27), np.int8), mask).tolist() == [61, 5]
    d = make_agent("python:my_fzmj_bot:Duck")
    assert isinstance(d, Agent) and d.name == "python:my_fzmj_bot:Duck"
    d.reset(seed=3)  # no reset on the object: a no-op
    with pytest.raises(AgentSpecError, match="no act"):
        make_agent("python:my_fzmj_bot:NoAct")
    with pytest.raises(AgentSpecError, match="no attribute"):
        make_agent("python:my_fzmj_bot:Missing")


# ---- random ---------------------------------------------------------------------------------------
def test_random_agent_is_uniform_legal_and_reseeds():
    mask = np.zeros((4000, 62), np.int8)
    mask[:, [2, 30, 61]] = 1
    obs = np.zeros((4000, NUM_CHANNELS, 27), np.int8)
    a = RandomAgent(seed=5)
    x = a.act(obs, mask)
    assert set(np.unique(x)) == {2, 30, 61}
    assert np.abs(np.bincount(x, minlength=62)[[2, 30, 61]] / 4000 - 1 / 3).max() < 0.04
    a.reset()
    np.testing.assert_array_equal(a.act(obs, mask), x)
    a.reset(seed=6)
    assert not np.array_equal(a.act(obs, mask), x)
    one = a.act(obs[0], mask[0])  # a single observation is a batch of one
    assert one.shape == (1,)


# ---- heuristic ------------------------------------------------------------------------------------
def test_heuristic_always_wins_and_robs():
    o, c = make_obs("123456789m123p55s7p", gold=20)
    h = HeuristicAgent()
    assert h.act(o, turn_mask(c, hu=True))[0] == A_HU
    m = np.zeros(62, np.int8)
    m[[A_HU, A_ROB, A_PENG, A_PASS]] = 1
    o2, _ = make_obs("123456789m123p5s7p", gold=20, claim=16)
    assert h.act(o2, m)[0] == A_ROB
    m[A_ROB] = 0
    assert h.act(o2, m)[0] == A_HU


def test_heuristic_keeps_golds():
    gold = parse_tiles("5s")[:27].argmax()
    # two golds and a poor hand: a gold would be the "least connected" tile, it is kept anyway
    o, c = make_obs("19m19p1s55s2468m2468p", gold=gold)
    a = HeuristicAgent().act(o, turn_mask(c))[0]
    assert a != gold and c[a] > 0
    # nothing but golds may be discarded: then a gold
    m = np.zeros(62, np.int8)
    m[gold] = 1
    assert HeuristicAgent().act(o, m)[0] == gold


def test_heuristic_discards_the_isolated_tile():
    o, c = make_obs("123m456m789m123p46p11s9s", gold=22)
    assert HeuristicAgent().act(o, turn_mask(c))[0] == parse_tiles("9s")[:27].argmax()


def test_heuristic_claims_only_when_it_helps():
    h = HeuristicAgent()
    gold = 17  # 9p, not in the hands
    m = np.zeros(62, np.int8)
    m[[A_PENG, A_PASS]] = 1
    # peng of 1m lowers the shanten (2 -> 1)
    o, c = make_obs("11m234p567p13s57s99s2m8m", gold=gold, claim=0)
    assert shanten_counts(get_shanten_table(), c, gold) == 2
    assert h.act(o, m)[0] == A_PENG
    # a ready hand (waits 6s 9s): peng of 5p would not lower the shanten and shrinks the waits
    o, c = make_obs("123m456m789m123p55p78s", gold=gold, claim=13)
    assert shanten_counts(get_shanten_table(), c, gold) == 0
    assert h.act(o, m)[0] == A_PASS


def _ref_acceptance(c, gold, unseen, s):
    st = get_shanten_table()
    acc = 0
    for j in range(27):
        if unseen[j] > 0 and c[j] < 4:
            c[j] += 1
            if shanten_counts(st, c, gold) < s:
                acc += unseen[j]
            c[j] -= 1
    return acc


def test_fast_shanten_and_acceptance_match_the_engine():
    """The per-suit-row kernels agree with ``shanten_counts`` on random hands (golds included)."""
    st = get_shanten_table()
    rng = np.random.default_rng(0)
    w = np.zeros(features._WS_SIZE, np.int64)
    mk = np.ones(62, np.int8)
    checked = 0
    for it in range(150):
        n = (17, 14, 11, 8)[it % 4]
        gold = int(rng.integers(27))
        wall = rng.permutation(np.repeat(np.arange(27), 4))
        c = np.bincount(wall[:n], minlength=27).astype(np.int64)
        unseen = np.maximum(0, 4 - c - rng.integers(0, 2, 27))
        w[features._C : features._C + 27] = c
        w[features._UNSEEN : features._UNSEEN + 27] = unseen
        w[features._VIS : features._VIS + 27] = 4 - unseen
        k_best = features.best_discard(st, w, gold, mk, True)
        mm = min((n - 1) // 3, 5)
        for k in range(27):
            if c[k] == 0 or k == gold:
                continue
            c[k] -= 1
            s_ref = shanten_counts(st, c, gold)
            assert w[features._SH + k] == s_ref
            w[features._C + k] -= 1
            assert features._discard_acceptance(st, w, gold, s_ref, k, mm) == _ref_acceptance(c, gold, unseen, s_ref)
            w[features._C + k] += 1
            c[k] += 1
            checked += 1
        assert c[k_best] > 0 and k_best != gold
        # the general acceptance (claims, kongs) too
        c[k_best] -= 1
        w[features._C + k_best] -= 1
        s = shanten_counts(st, c, gold)
        assert features.shanten(st, w, gold) == s
        assert features.acceptance(st, w, gold, s) == _ref_acceptance(c, gold, unseen, s)
    assert checked > 1000


def test_heuristic_decodes_unseen_tiles_from_the_observation():
    """unseen = 4 - visible equals the tiles really hidden from the acting seat (other hands,
    others' concealed kongs, the wall)."""
    env = VectorEnv(32, seed=3)
    obs, mask, seat = env.reset()
    h = HeuristicAgent()
    w = np.zeros(features._WS_SIZE, np.int64)
    exact = total = 0
    for _ in range(60):
        for t in range(0, 32, 3):
            gold = features.decode(obs[t], w)
            tb = state.numpy_view(env.buf, t)
            assert gold == tb.m[state.GOLD]
            me = int(seat[t])
            hidden = np.zeros(27, np.int64)
            for s in range(4):
                if s != me:
                    hidden += tb.hand[s]
                    for j in range(tb.n_melds[s]):
                        if tb.meld[s, j, 0] == state.MELD_CONCEALED_KONG:
                            hidden[tb.meld[s, j, 1]] += 4
            for i in range(tb.m[state.HEAD], tb.m[state.TAIL] + 1):
                if tb.wall[i] < 27:
                    hidden[tb.wall[i]] += 1
            np.testing.assert_array_equal(w[features._C : features._C + 27], tb.hand[me])
            unseen = w[features._UNSEEN : features._UNSEEN + 27]
            # one seat with two claimed discards of a kind is counted once too often (rare)
            assert ((hidden - unseen >= 0) & (hidden - unseen <= 1)).all()
            exact += int((hidden == unseen).all())
            total += 1
        obs, mask, seat, _, _, _ = env.step(h.act(obs, mask))
    assert exact >= 0.95 * total


def test_heuristic_plays_legal_games_and_beats_random():
    """Whole games (VectorEnv raises on an illegal action): the heuristic at seat 0 vs random."""
    env = VectorEnv(64, seed=11)
    obs, mask, seat = env.reset()
    h, r = HeuristicAgent(), RandomAgent(seed=1)
    score = 0.0
    hands = 0
    for _ in range(400):
        a = r.act(obs, mask)
        mine = seat == 0
        if mine.any():
            a[mine] = h.act(obs[mine], mask[mine])
        obs, mask, seat, rewards, done, info = env.step(a)
        score += float(rewards[:, 0].sum())
        hands += int(info["hand_over"].sum())
    assert hands > 100
    assert score / hands > 5
