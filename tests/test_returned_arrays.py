"""Writing into what an env returns never reaches the game.

For each env, one copy is played while the caller scribbles over every array (and every dict)
it was handed, and a twin copy is played with the same actions untouched: states, rewards and
what each env accepts stay identical. ``VectorEnv`` hands out read-only views of its own buffers
(no copy on the hot path): writing into them raises, and even a writable alias of the returned
mask (memory written behind numpy's back) never gets an illegal action applied.
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

import fzmj_env
from fzmj_env import VectorEnv
from fzmj_env.core import state


def scribble(x):
    """Overwrite every writable array inside ``x`` (dicts, lists, arrays) with junk."""
    if isinstance(x, np.ndarray):
        if x.flags.writeable and x.size:
            x[...] = 1 if x.dtype.kind in "iub" else np.nan
    elif isinstance(x, dict):
        for k, v in list(x.items()):
            if isinstance(v, (np.ndarray, dict, list)):
                scribble(v)
            else:
                x[k] = "junk"
    elif isinstance(x, list):
        for i, v in enumerate(x):
            if isinstance(v, (np.ndarray, dict, list)):
                scribble(v)
            else:
                x[i] = -7


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"info": "numeric"}, {"record": True, "oracle": True, "hands_per_game": 2}, {"obs_dtype": "float32"}],
)
def test_aec_env_returned_arrays_are_the_callers(kwargs):
    env, twin = fzmj_env.raw_env(**kwargs), fzmj_env.raw_env(**kwargs)
    rng = random.Random(2)
    for seed in range(3):
        env.reset(seed=seed)
        twin.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            t_obs, t_rew, t_term, t_trunc, _ = twin.last()
            assert (rew, term, trunc) == (t_rew, t_term, t_trunc)
            if term or trunc:
                scribble(info)
                env.step(None)
                twin.step(None)
                continue
            assert np.array_equal(obs["action_mask"], t_obs["action_mask"])
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
            illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
            scribble(obs)  # a mask of all ones, planes of ones
            scribble(info)
            for a in env.agents:
                scribble(env.observe(a))
                scribble(env.infos[a])
            with pytest.raises(fzmj_env.IllegalActionError):
                env.step(illegal)  # the scribbled mask allows it; the env does not
            env.step(action)
            twin.step(action)
            assert np.array_equal(env.state(), twin.state())
            assert env.game.results == twin.game.results
    assert np.array_equal(env.state(), twin.state())


def test_wrapped_aec_env_checks_actions_against_its_own_mask():
    """env()'s TerminateIllegalWrapper: a zeroed legal action is still legal, an illegal one the
    caller marked legal still ends the game as illegal (never the engine blaming itself)."""
    env, twin = fzmj_env.env(), fzmj_env.env()
    env.reset(seed=8)
    twin.reset(seed=8)
    steps = 0
    while not any(twin.terminations.values()):
        obs, *_ = env.last()
        twin.last()
        action = int(np.flatnonzero(obs["action_mask"])[0])
        obs["action_mask"][:] = 0  # the caller's copy: the env does not read it
        env.step(action)
        twin.step(action)
        steps += 1
        assert env.terminations == twin.terminations and env.rewards == twin.rewards
        assert np.array_equal(env.unwrapped.state(), twin.unwrapped.state())
    assert steps > 20
    env.reset(seed=9)
    obs, *_ = env.last()
    mover = env.agent_selection
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs["action_mask"][:] = 1
    env.step(illegal)  # PettingZoo's rule for an illegal move: the game ends, -1 for the mover
    assert all(env.terminations.values()) and env.rewards[mover] == -1


def _play_recorded(scribbling: bool):
    """Records each agent got at the end of a 2-hand game (as JSON text) and the game's results."""
    env = fzmj_env.raw_env(record=True, hands_per_game=2)
    env.reset(seed=4)
    records = {}
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            records[agent] = json.dumps(info["record"], sort_keys=True)
            if scribbling:
                scribble(info["record"])
            env.step(None)
            continue
        if scribbling and "result" in info:
            scribble(info["result"])
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    return records, env.game.results


def test_aec_env_record_and_results_survive_scribbles():
    records, results = _play_recorded(scribbling=True)
    t_records, t_results = _play_recorded(scribbling=False)
    assert len(records) == 4 and records == t_records
    assert results == t_results


def test_parallel_env_returned_arrays_are_the_callers():
    env, twin = fzmj_env.parallel_env(), fzmj_env.parallel_env()
    rng = random.Random(3)
    for seed in range(3):
        obs, infos = env.reset(seed=seed)
        t_obs, _ = twin.reset(seed=seed)
        while env.agents:
            acting = next(a for a in env.agents if infos[a]["to_act"])
            legal = np.flatnonzero(obs[acting]["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
            illegal = int(np.flatnonzero(obs[acting]["action_mask"] == 0)[0])
            scribble(obs)
            scribble(infos)
            with pytest.raises(fzmj_env.IllegalActionError):
                env.step({acting: illegal})
            obs, rew, term, trunc, infos = env.step({acting: action})
            t_obs, t_rew, *_ = twin.step({acting: action})
            assert rew == t_rew
            assert np.array_equal(env.state(), twin.state())
            for a in obs:
                assert np.array_equal(obs[a]["action_mask"], t_obs[a]["action_mask"])
                assert np.array_equal(obs[a]["observation"], t_obs[a]["observation"])


def test_single_seat_env_returned_arrays_are_the_callers():
    from fzmj.integrations import SingleSeatEnv

    env, twin = SingleSeatEnv(opponents="random"), SingleSeatEnv(opponents="random")
    obs, info = env.reset(seed=5)
    t_obs, _ = twin.reset(seed=5)
    rng = random.Random(5)
    for _ in range(60):
        mask = env.action_masks()
        legal = np.flatnonzero(mask)
        action = int(legal[rng.randrange(len(legal))])
        scribble(obs)
        scribble(info)
        scribble(mask)
        obs, rew, term, trunc, info = env.step(action)
        t_obs, t_rew, t_term, *_ = twin.step(action)
        assert (rew, term) == (t_rew, t_term)
        assert np.array_equal(obs, t_obs) and np.array_equal(info["action_mask"], env.action_masks())
        if term:
            obs, info = env.reset(seed=6)
            t_obs, _ = twin.reset(seed=6)


def test_vector_env_buffers_it_does_not_read_back():
    env, twin = VectorEnv(num_tables=4, seed=1), VectorEnv(num_tables=4, seed=1)
    obs, mask, seat = env.reset()
    twin.reset()
    rng = np.random.default_rng(0)
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        scribble(obs)  # the observations, rewards, flags and info arrays are never read back
        obs, mask, seat, rew, done, info = env.step(actions)
        t_obs, t_mask, t_seat, t_rew, t_done, t_info = twin.step(actions)
        assert np.array_equal(env.buf.view(np.uint8), twin.buf.view(np.uint8))
        assert np.array_equal(rew, t_rew) and np.array_equal(done, t_done)
        assert np.array_equal(obs, t_obs) and np.array_equal(mask, t_mask) and np.array_equal(seat, t_seat)
        scribble(rew)
        scribble(done)
        scribble({k: v for k, v in info.items() if k != "acted_seat"})
        assert np.array_equal(state.flat_state(env.buf, 0), state.flat_state(twin.buf, 0))


def _writable_alias(a: np.ndarray) -> np.ndarray:
    """A writable array on ``a``'s memory, made behind numpy's back (the path a read-only flag cannot close)."""

    class Alias:
        pass

    alias = Alias()
    face = dict(a.__array_interface__)
    face["data"] = (face["data"][0], False)
    alias.__array_interface__ = face
    out = np.asarray(alias)
    assert out.flags.writeable
    return out


def _handed_out(env: VectorEnv, actions: np.ndarray):
    """Every array ``env`` hands out, from each of its methods."""
    obs, mask, seat = env.reset()
    yield from (obs, mask, seat)
    obs, mask, seat, rew, done, info = env.step(actions(mask))
    yield from (obs, mask, seat, rew, done)
    yield from (v for k, v in info.items() if k != "acted_seat")
    yield env.oracle_planes
    tables = np.array([0, 2])
    out = env.step_tables(tables, actions(mask)[tables])
    yield from out[:5]
    yield from (v for k, v in out[5].items() if k != "acted_seat")
    obs, mask, seat = env.reset_tables(tables, [5, 6])
    yield from (obs, mask, seat)
    yield from env.load_worlds(np.array([1]), env.buf, 0, int(seat[0]), [7])


def test_vector_env_hands_out_read_only_views():
    env = VectorEnv(num_tables=4, seed=1, oracle=True)
    n = 0
    for a in _handed_out(env, lambda mask: mask.argmax(axis=1)):
        n += 1
        assert not a.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            a.reshape(-1)[0] = 1
        with pytest.raises(ValueError, match="WRITEABLE"):
            a.flags.writeable = True
        with pytest.raises(ValueError, match="WRITEABLE"):
            a.view().flags.writeable = True
    assert n == 30
    assert env.step(env.reset()[1].argmax(axis=1))[5]["acted_seat"].flags.writeable  # a fresh copy: the caller's


@pytest.mark.parametrize("method", ["step", "step_tables"])
def test_vector_env_edited_mask_never_gets_an_illegal_action_applied(method):
    """Each step, the caller marks every action legal through a writable alias of the returned
    mask (and of the seats) and plays an action the rules refuse: the env refuses it with one
    line naming the table, the seat and the truly legal actions, and the game goes on exactly as
    its untouched twin's."""
    env, twin = VectorEnv(num_tables=4, seed=3), VectorEnv(num_tables=4, seed=3)
    obs, mask, seat = env.reset()
    twin.reset()
    rng = np.random.default_rng(1)
    tables = np.arange(4)
    for _ in range(120):
        legal = [np.flatnonzero(m) for m in mask]
        actions = np.array([rng.choice(x) for x in legal])
        t = int(rng.integers(4))
        bad = actions.copy()
        bad[t] = int(np.flatnonzero(mask[t] == 0)[0])
        truth, true_seat = mask.copy(), seat.copy()
        _writable_alias(mask)[...] = 1
        _writable_alias(seat)[t] = 3 - seat[t]
        with pytest.raises(
            ValueError,
            match=rf"illegal action at table {t}: seat {int(true_seat[t])} cannot take action {bad[t]} .*legal: "
            + re.escape(str(np.flatnonzero(truth[t]).tolist())),
        ):
            env.step(bad) if method == "step" else env.step_tables(tables, bad)
        assert np.array_equal(env.buf.view(np.uint8), twin.buf.view(np.uint8))
        obs, mask, seat, *_ = env.step(actions) if method == "step" else env.step_tables(tables, actions)
        t_obs, t_mask, t_seat, *_ = twin.step(actions)
        assert np.array_equal(env.buf.view(np.uint8), twin.buf.view(np.uint8))
        assert np.array_equal(mask, t_mask) and np.array_equal(seat, t_seat) and np.array_equal(obs, t_obs)
