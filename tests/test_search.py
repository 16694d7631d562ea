"""The search agent: spec grammar, the observation inverted to a state, decisions that depend on
the seat's information only, legal play everywhere an agent spec works."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from test_encode import claimy_action
from test_resample import scramble_hidden

from fzmj.agents import AgentSpecError, make_agent, reset_agent
from fzmj.agents.evaluate import evaluate
from fzmj.agents.search import SearchAgent, parse_search_spec, state_from_obs
from fzmj_env import Game, available_rules, encode
from fzmj_env.rules import DEFAULT_RULES


def told(agent, rules=DEFAULT_RULES):
    """``agent`` told the preset its games are played under, as the evaluator tells it (a search
    never guesses it from the observation: another shipped preset may show the same scheme)."""
    reset_agent(agent, None, rules)
    return agent


def obs_of(game, seat, buf=None):
    out = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
    encode.encode_table(game.buf if buf is None else buf, 0, seat, out)
    return out


def test_spec_grammar():
    assert parse_search_spec("search") == ("heuristic", parse_search_spec("search:heuristic")[1])
    bp, o = parse_search_spec("search:random:worlds=8,top=2,z=1.5,where=claims,late=10,seed=3")
    assert bp == "random" and o == {
        "worlds": 8,
        "top": 2,
        "z": 1.5,
        "where": "claims",
        "late": 10,
        "belief": 0,
        "sir": 0,
        "model": "belief",
        "margin": 0.0,
        "like": 0,
        "wins": 0,
        "seed": 3,
    }
    assert parse_search_spec("search:worlds=16")[1]["worlds"] == 16
    a = make_agent("search:heuristic:worlds=4")
    assert isinstance(a, SearchAgent) and a.name == "search:heuristic:worlds=4"


@pytest.mark.parametrize(
    "spec",
    [
        "search:heuristic:worlds=1",
        "search:heuristic:top=1",
        "search:heuristic:z=-1",
        "search:heuristic:where=discards",
        "search:heuristic:worlds=abc",
        "search:heuristic:depth=3",
        "search:heuristic:worlds",
        "search:heuristic:wins=2",
        "search:search",
        "search:a:b:c",
        "search:nosuchagent",
    ],
)
def test_bad_specs_are_one_line_errors(spec):
    with pytest.raises(AgentSpecError) as e:
        make_agent(spec)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("rules", available_rules())
def test_state_from_obs_inverts_the_observation(rules):
    rng = random.Random(2)
    n = 0
    for g in range(3):
        game = Game(rules)
        game.reset(seed=50 + g)
        while not game.done:
            o = obs_of(game, game.seat)
            buf = state_from_obs(o, game.mask, rules=rules)
            assert buf is not None  # round trip checked inside: encodes to o, same mask
            if n % 10 == 0:
                w = Game(rules)
                from fzmj_env.core.hand import get_win_table
                from fzmj_env.resample import resample_buffer

                resample_buffer(buf, 0, 0, np.array([n]), w.buf, np.array([0]), get_win_table())
                w._refresh()
                assert np.array_equal(w.mask, game.mask)
                assert np.array_equal(
                    obs_of(w, 0), np.where(np.arange(len(o))[:, None] == encode.P_HANDS_LEFT, obs_of(w, 0), o)
                )
            n += 1
            game.step(claimy_action(game, rng))
    assert n > 100


def test_decision_ignores_hidden_tiles_and_plays_legally():
    """Hidden tiles changed in the real game: same observation, same searched decision."""
    rng = random.Random(4)
    agent = SearchAgent(worlds=8, top=3, z=0.0, rules=DEFAULT_RULES)
    game = Game()
    game.reset(seed=21)
    checked = 0
    while not game.done:
        seat = game.seat
        if len(game.legal_actions) >= 2 and checked < 6:
            other = scramble_hidden(game, seat, rng)
            before = agent.stats["searched"]
            agent.reset(7)
            a = int(agent.act(obs_of(game, seat)[None], game.mask[None])[0])
            agent.reset(7)
            b = int(agent.act(obs_of(other, seat)[None], other.mask[None])[0])
            assert a == b and game.mask[a] == 1
            assert agent.stats["searched"] == before + 2
            checked += 1
        game.step(claimy_action(game, rng))
    assert checked == 6


def test_search_deviates_when_z_is_zero_and_never_with_a_huge_threshold():
    game = Game()
    game.reset(seed=8)
    rng = random.Random(0)
    loose, strict = (
        SearchAgent(worlds=16, z=0.0, rules=DEFAULT_RULES),
        SearchAgent(worlds=16, z=1e9, rules=DEFAULT_RULES),
    )
    base = make_agent("heuristic")
    while not game.done:
        o, mk = obs_of(game, game.seat)[None], game.mask[None]
        a = int(strict.act(o, mk)[0])
        assert a == int(base.act(o, mk)[0])
        loose.act(o, mk)
        game.step(claimy_action(game, rng))
    assert strict.stats["searched"] > 5 and strict.stats["deviated"] == 0
    assert loose.stats["deviated"] > 0 and loose.stats["fallback"] == 0


def test_search_works_in_evaluate_and_pickles():
    agent = make_agent("search:heuristic:worlds=4,top=2,where=claims")
    clone = pickle.loads(pickle.dumps(agent))
    assert clone.opts == agent.opts
    res = evaluate(["search:heuristic:worlds=4,top=2,where=claims", "heuristic"], hands=4, seed=3, progress=False)
    assert res is not None


def _truth_and_worlds(agent, score, check=None):
    """Four positions where every seat was played by ``agent`` and seat 0 is to act with every
    other seat two discards in: ``score`` summed over the real tables and over the mean of 32
    worlds drawn from seat 0's view (``check`` sees each position's world scores)."""
    from fzmj_env import VectorEnv

    truth_total = world_total = 0.0
    found = 0
    for seed in range(40):
        if found == 4:
            break
        game = Game()
        game.reset(seed=seed)
        while not game.done and not (game.seat == 0 and game.view.n_disc[1:].min() >= 2):
            game.step(int(agent.act(obs_of(game, game.seat)[None], game.mask[None])[0]))
        if game.done:
            continue
        found += 1
        env = VectorEnv(32, auto_reset=False)
        env.reset()
        env.load_worlds(np.arange(32), game.buf, 0, 0, np.arange(32))
        worlds = score(env.buf, 32, agent, game.win_table)
        if check is not None:
            check(worlds)
        truth_total += score(game.buf, 1, agent, game.win_table)[0]
        world_total += worlds.mean()
    assert found == 4
    return truth_total, world_total


def test_belief_filter_scores_the_truth_above_random_worlds():
    """With every seat played by the heuristic, the real table explains the other seats' last
    discards (under the heuristic) at least as well as worlds drawn uniformly, and better overall."""
    from fzmj.agents.search import explained_discards

    truth_total, world_total = _truth_and_worlds(make_agent("heuristic"), explained_discards)
    assert truth_total > world_total


def test_belief_option_plays_legally():
    agent = told(make_agent("search:heuristic:worlds=4,top=2,belief=2"))
    game = Game()
    game.reset(seed=2)
    while not game.done:
        a = int(agent.act(obs_of(game, game.seat)[None], game.mask[None])[0])
        game.step(a)
    assert agent.stats["searched"] > 0


def test_search_agent_checks_its_options():
    with pytest.raises(AgentSpecError, match="worlds must be >= 2"):
        SearchAgent(worlds=1)
    with pytest.raises(ValueError, match="unknown search options"):
        SearchAgent(depth=3)


def _decision_batch(seeds=(3, 11, 19), per_game=12):
    """Observations and masks of several games' decisions with two or more legal actions."""
    rng = random.Random(5)
    obs, masks = [], []
    for s in seeds:
        game = Game()
        game.reset(seed=s)
        taken = 0
        while not game.done and taken < per_game:
            if len(game.legal_actions) >= 2:
                obs.append(obs_of(game, game.seat))
                masks.append(game.mask.copy())
                taken += 1
            game.step(claimy_action(game, rng))
    return np.stack(obs), np.stack(masks)


@pytest.mark.parametrize("opts", [{"worlds": 8, "z": 0.0}, {"worlds": 4, "z": 0.0, "like": 3}])
def test_a_batch_is_searched_as_its_rows_one_by_one(opts):
    """The searched decisions of one act() are rolled out together: same choices, same counters
    as when each row is searched alone."""
    obs, masks = _decision_batch()
    together, alone = SearchAgent(rules=DEFAULT_RULES, **opts), SearchAgent(rules=DEFAULT_RULES, **opts)
    together.reset(9)
    alone.reset(9)
    a = together.act(obs, masks)
    b = np.array([int(alone.act(obs[i : i + 1], masks[i : i + 1])[0]) for i in range(len(obs))])
    assert (a == b).all() and (masks[np.arange(len(a)), a] == 1).all()
    keys = ("decisions", "searched", "deviated", "fallback", "rollouts")
    assert {k: together.stats[k] for k in keys} == {k: alone.stats[k] for k in keys}
    assert together.stats["searched"] > 10 and together.stats["deviated"] > 0


def test_margin_searches_only_the_policys_close_decisions():
    obs, masks = _decision_batch()
    policy = make_agent("pretrained")
    probs, _ = policy.action_probs(obs, masks)
    own = probs[np.arange(len(obs)), policy.act(obs, masks)]
    agent = told(make_agent("search:pretrained:worlds=4,margin=0.9"))
    agent.act(obs, masks)
    every = told(make_agent("search:pretrained:worlds=4"))
    every.act(obs, masks)
    close = int((own < 0.9).sum())
    assert 0 < close < len(obs)
    assert (
        agent.stats["searched"] + agent.stats["fallback"] <= close < every.stats["searched"] + every.stats["fallback"]
    )
    with pytest.raises(AgentSpecError, match="margin needs a policy blueprint"):
        make_agent("search:heuristic:margin=0.5")
    with pytest.raises(AgentSpecError, match="margin must be in 0..1"):
        make_agent("search:pretrained:margin=1.5")
    with pytest.raises(AgentSpecError, match="three world filters"):
        make_agent("search:pretrained:like=4,sir=4")


def test_discard_likelihood_ranks_the_true_hands_above_random_worlds():
    """Every seat played by the policy: the real table makes the other seats' last discards more
    likely under the policy than the worlds drawn uniformly from seat 0's view do."""
    from fzmj.agents.search import discard_log_likelihood

    def finite_logs(worlds):
        assert np.isfinite(worlds).all() and (worlds <= 0).all()

    truth_total, world_total = _truth_and_worlds(make_agent("pretrained"), discard_log_likelihood, finite_logs)
    assert truth_total > world_total


def test_policy_search_ignores_hidden_tiles():
    """Hidden tiles changed in the real game: the same decisions from search:pretrained with
    world weighting and the margin gate (the worlds it draws depend on the seat's view only)."""
    rng = random.Random(8)
    agent = told(make_agent("search:pretrained:worlds=4,like=2,margin=0.99,z=0"))
    game = Game()
    game.reset(seed=33)
    checked = 0
    while not game.done and checked < 5:
        seat = game.seat
        if len(game.legal_actions) >= 2:
            other = scramble_hidden(game, seat, rng)
            agent.reset(7)
            a = int(agent.act(obs_of(game, seat)[None], game.mask[None])[0])
            agent.reset(7)
            b = int(agent.act(obs_of(other, seat)[None], other.mask[None])[0])
            assert a == b and game.mask[a] == 1
            checked += 1
        game.step(claimy_action(game, rng))
    assert checked == 5
