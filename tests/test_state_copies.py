"""Exact copies of every env (issue 57): ``copy.deepcopy``, pickles and saved states play on
exactly as the original would, never share anything with it, and bad states are refused."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fzmj_env
from fzmj_env import Game, VectorEnv
from fzmj_env.core import state
from fzmj_env.snapshot import HEADER_BYTES, STATE_BYTES, StateError

PRESETS = fzmj_env.available_rules()
_SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# ---- traces: everything an agent sees, step by step ---------------------------------------------
def _aec_trace(env, rng: np.random.Generator, limit: int = 10_000) -> list:
    """Play ``env`` (the AEC env, wrapped or raw) with random legal actions; what it showed at each step."""
    out = []
    for _ in range(limit):
        if all(env.terminations.values()):
            break
        agent = env.agent_selection
        obs, reward, term, trunc, info = env.last()
        mask = obs["action_mask"]
        out.append((agent, obs["observation"].tobytes(), mask.tobytes(), reward, term, trunc, repr(info)))
        out.append((repr(env.rewards), repr(env.terminations), repr(env.infos), env.state().tobytes()))
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return out


def _copy(env, how: str, tmp_path=None):
    if how == "deepcopy":
        return copy.deepcopy(env)
    if how == "pickle":
        return pickle.loads(pickle.dumps(env))
    path = tmp_path / "env.pkl"  # a file written before the original plays on
    path.write_bytes(pickle.dumps(env))
    return path


def _advance(env, seed: int, steps: int) -> None:
    env.reset(seed=seed)
    _aec_trace(env, np.random.default_rng(seed), limit=steps)


@pytest.mark.parametrize("rules", PRESETS)
@_SETTINGS
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 140), how=st.sampled_from(["deepcopy", "pickle", "file"]))
def test_aec_copy_plays_on_exactly(rules, seed, steps, how, tmp_path):
    env = fzmj_env.env(rules=rules, hands_per_game=2)
    _advance(env, seed, steps)
    twin = _copy(env, how, tmp_path)
    want = _aec_trace(env, np.random.default_rng(seed + 1))
    if how == "file":
        twin = pickle.loads(twin.read_bytes())
    assert _aec_trace(twin, np.random.default_rng(seed + 1)) == want


@pytest.mark.parametrize("rules", PRESETS)
@_SETTINGS
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 140))
def test_aec_restore_after_divergence(rules, seed, steps):
    env = fzmj_env.env(rules=rules, hands_per_game=2)
    _advance(env, seed, steps)
    saved = env.unwrapped.save_state()
    want = _aec_trace(env, np.random.default_rng(seed + 1))
    env.unwrapped.restore_state(saved)
    _aec_trace(env, np.random.default_rng(seed + 2))  # another line of play
    env.unwrapped.restore_state(saved)
    assert _aec_trace(env, np.random.default_rng(seed + 1)) == want


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_aec_copy_shares_nothing(how):
    env = fzmj_env.env(oracle=True)
    _advance(env, 3, 20)
    twin = _copy(env, how)
    before = twin.unwrapped.save_state()[0].copy()
    obs = twin.observe(twin.agent_selection)
    obs["observation"][:] = 1  # a write into what the copy handed out
    _aec_trace(env, np.random.default_rng(0))  # the original plays to the end
    assert np.array_equal(twin.unwrapped.save_state()[0], before)
    assert twin.unwrapped.game.buf is not env.unwrapped.game.buf
    assert twin.action_space("player_0") is not env.action_space("player_0")
    env.action_space("player_0").seed(1)  # the spaces' random streams are the envs' own
    assert twin.action_space("player_0")._np_random is None


def test_game_copy_deals_the_same_next_hand():
    """The issue's case: a copy taken in the first hand deals the same wall for the second."""
    g = Game(hands_per_game=2)
    g.reset(seed=5)
    for _ in range(5):
        g.step(g.legal_actions[0])
    for twin in (copy.deepcopy(g), pickle.loads(pickle.dumps(g)), g.clone()):
        twin_game = twin
        ref = copy.deepcopy(g)
        while not ref.done:
            a = ref.legal_actions[-1]
            ref.step(a)
            twin_game.step(a)
        assert twin_game.hand_starts == ref.hand_starts and len(ref.hand_starts) == 2
        assert twin_game.results == ref.results and twin_game.decisions == ref.decisions


def test_game_restore_state_cuts_logs_back():
    g = Game(hands_per_game=2)
    g.reset(seed=9)
    for _ in range(30):
        g.step(g.legal_actions[0])
    saved = g.save_state()
    n = len(g.decisions), len(g.results), len(g.hand_starts)
    while not g.done:
        g.step(g.legal_actions[-1])
    g.restore_state(saved)
    assert (len(g.decisions), len(g.results), len(g.hand_starts)) == n
    assert np.array_equal(g.save_state(), saved)
    other = Game(hands_per_game=2)
    other.restore_state(saved)  # a fresh game takes the table (its logs stay empty)
    assert other.seat == g.seat and np.array_equal(other.mask, g.mask) and other.seed == 9


# ---- the Parallel env and the single-seat Gymnasium env ------------------------------------------
def _parallel_trace(env, rng, limit=10_000) -> list:
    out = []
    for _ in range(limit):
        if not env.agents:
            break
        to_act = next(a for a in env.agents if env.aec.agent_selection == a)
        mask = env.aec.observe(to_act)["action_mask"]
        res = env.step({to_act: int(rng.choice(np.flatnonzero(mask)))})
        out.append(repr([{k: (v["observation"].tobytes(), v["action_mask"].tobytes()) for k, v in res[0].items()}]))
        out.append(repr(res[1:]))
    return out


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_parallel_copy_plays_on_exactly(how):
    env = fzmj_env.parallel_env(hands_per_game=2, info="numeric")
    env.reset(seed=0)
    _parallel_trace(env, np.random.default_rng(0), limit=25)
    twin = _copy(env, how)
    assert twin.agents == env.agents and twin.agents
    assert _parallel_trace(twin, np.random.default_rng(1)) == _parallel_trace(env, np.random.default_rng(1))


def _gym_trace(env, rng, steps=200) -> list:
    out = []
    for _ in range(steps):
        mask = env.unwrapped.action_masks()
        res = env.step(int(rng.choice(np.flatnonzero(mask))))
        out.append(repr(res))
        if res[2]:
            out.append(repr(env.reset()))
    return out


@pytest.mark.parametrize("opponents", ["random", ["random", "heuristic", "random"]])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_single_seat_copy_plays_on_exactly(opponents, how):
    """The opponents' random streams are copied too (a random opponent plays the same)."""
    env = gym.make("fzmj/SingleSeat-v0", opponents=opponents, hands_per_game=2)
    env.reset(seed=4)
    _gym_trace(env, np.random.default_rng(0), steps=5)
    twin = _copy(env, how)
    assert _gym_trace(twin, np.random.default_rng(1)) == _gym_trace(env, np.random.default_rng(1))


# ---- VectorEnv ---------------------------------------------------------------------------------
def _vector_trace(v: VectorEnv, rng, steps=150) -> list:
    out = []
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in v._mask_out])
        obs, mask, seat, rewards, done, info = v.step(actions)
        over = info["hand_over"]
        out.append(
            [x.tobytes() for x in (obs, mask, seat, rewards, done, info["pending_reward"], info["final_reward"])]
        )
        out.append((over.tobytes(), info["results"][over].tobytes(), info["acted_seat"].tobytes()))
    return out


@pytest.mark.parametrize("rules", PRESETS)
def test_vector_copies_and_saved_tables_play_on_exactly(rules):
    v = VectorEnv(6, rules=rules, seed=3, hands_per_game=2)
    v.reset()
    _vector_trace(v, np.random.default_rng(1), steps=40)
    saved = v.save_tables(np.arange(6))
    twins = [copy.deepcopy(v), pickle.loads(pickle.dumps(v))]
    want = _vector_trace(v, np.random.default_rng(2))
    for twin in twins:
        assert _vector_trace(twin, np.random.default_rng(2)) == want
    v.restore_tables(np.arange(6), saved)
    assert _vector_trace(v, np.random.default_rng(2)) == want


def _vector_with_pending_rewards(tables: int = 4) -> VectorEnv:
    """A VectorEnv (two hands a game) played until some table holds a reward of its first hand for
    a seat that has not acted since: a pending reward the saved state must carry."""
    v = VectorEnv(tables, seed=5, hands_per_game=2)
    v.reset()
    rng = np.random.default_rng(0)
    for _ in range(2000):
        v.step(np.array([rng.choice(np.flatnonzero(m)) for m in v._mask_out]))
        if np.any(v._pending != 0):
            return v
    raise AssertionError("no pending reward in 2,000 steps")


@pytest.mark.parametrize("one_by_one", [False, True])
def test_vector_restore_keeps_the_pending_rewards_of_seats_not_acting(one_by_one):
    """The first hand's reward of a seat that has not acted since is handed over when it next acts,
    after a restore too (restore once cleared it: the seat never got that hand's points)."""
    v = _vector_with_pending_rewards()
    saved = v.save_tables(np.arange(4))
    want = _vector_trace(copy.deepcopy(v), np.random.default_rng(2))
    v.step(np.array([np.flatnonzero(m)[0] for m in v._mask_out]))  # diverge, then restore
    if one_by_one:
        for t in range(4):
            v.restore_tables(t, saved[t])
    else:
        v.restore_tables(np.arange(4), saved)
    assert np.array_equal(v.save_tables(np.arange(4)), saved)
    assert _vector_trace(v, np.random.default_rng(2)) == want


def test_vector_table_moves_between_envs_and_games():
    """A table saved from one VectorEnv (or a Game) plays on the same in another table."""
    v = VectorEnv(4, seed=1)
    v.reset()
    _vector_trace(v, np.random.default_rng(0), steps=10)
    w = VectorEnv(4, seed=1)
    w.reset()
    w.restore_tables([2], v.save_tables([1]))
    assert np.array_equal(w.buf[2:3].view(np.uint8), v.buf[1:2].view(np.uint8))
    assert np.array_equal(w._mask_out[2], v._mask_out[1]) and w._seat_out[2] == v._seat_out[1]
    g = Game()
    g.reset(seed=11)
    for _ in range(7):
        g.step(g.legal_actions[0])
    w.restore_tables(np.array([0]), g.save_state())
    assert np.array_equal(w._mask_out[0], g.mask) and w._seat_out[0] == g.seat
    a = g.legal_actions[-1]
    g.step(a)
    w.step_tables(np.array([0]), np.array([a]))
    assert np.array_equal(w.buf[0:1].view(np.uint8), g.buf.view(np.uint8))
    assert np.array_equal(w.save_tables(0)[0, HEADER_BYTES:], g.save_state()[HEADER_BYTES:])


# ---- bad input: one clear line each, the table unchanged ----------------------------------------
def _game_at(rules="fuzhou-lianzhong", hands=1, steps=12) -> Game:
    g = Game(rules, hands_per_game=hands)
    g.reset(seed=2)
    for _ in range(steps):
        g.step(g.legal_actions[0])
    return g


def _edited(saved: np.ndarray, field: str, index, value) -> np.ndarray:
    out = saved.copy()
    rec = out[HEADER_BYTES:].view(state.STATE_DTYPE)
    rec[field][(0, *index)] = value
    return out


@pytest.mark.parametrize(
    "make_bad, match",
    [
        (lambda s: s.astype(np.int32), "uint8 array"),
        (lambda s: list(s), "uint8 array"),
        (lambda s: s[:-1], "shape"),
        (lambda s: np.concatenate([s, s]), "shape"),
        (lambda s: np.concatenate([[s[0] ^ 1], s[1:]]).astype(np.uint8), "another fzmj version"),
        (lambda s: _edited(s, "hand", (0, 5), 4), "tiles do not add up|out of range"),
        (lambda s: _edited(s, "wall", (3,), 41), "144-tile set"),
        (lambda s: _edited(s, "m", (state.CUR,), 7), "out of range"),
        (lambda s: _edited(s, "m", (state.R_BASE,), 99), "another rule preset"),
        (lambda s: _edited(s, "m", (state.HANDS_PER_GAME,), 3), "hands per game"),
    ],
)
def test_bad_states_are_refused(make_bad, match):
    g = _game_at()
    saved = g.save_state()
    before = g.save_state()
    with pytest.raises(StateError, match=match):
        g.restore_state(make_bad(saved))
    assert np.array_equal(g.save_state(), before)
    v = VectorEnv(2, seed=0)
    v.reset()
    kept = v.save_tables([0, 1])
    for table in ([1], 1):  # the general path and the one-table call (its own kernel)
        with pytest.raises(StateError, match=match):
            v.restore_tables(table, make_bad(saved))
        assert np.array_equal(v.save_tables([0, 1]), kept)


def test_a_strided_or_one_dimensional_state_restores_like_a_row():
    """Views a user may hold (a row of a Fortran-ordered stack, a 1-D state) restore as the row does."""
    v = VectorEnv(3, seed=0)
    v.reset()
    _vector_trace(v, np.random.default_rng(0), steps=12)
    rows = v.save_tables([0, 1, 2])
    fortran = np.asfortranarray(rows)
    for t, state_ in ((1, fortran[2:3]), (2, rows[0]), (0, fortran[1])):
        v.restore_tables(t, state_)
    assert np.array_equal(v.save_tables([0, 1, 2]), rows[[1, 2, 0]])


def test_states_of_other_presets_and_sizes_are_refused():
    g = _game_at()
    with pytest.raises(StateError, match="another rule preset"):
        Game("fuzhou-home").restore_state(g.save_state())
    with pytest.raises(StateError, match="hands per game"):
        Game(hands_per_game=2).restore_state(g.save_state())
    v = VectorEnv(3, seed=0)
    v.reset()
    with pytest.raises(StateError, match=r"shape \(2, "):
        v.restore_tables([0, 1], v.save_tables([0]))
    with pytest.raises(StateError, match="tables must be in 0..2"):
        v.restore_tables([3], v.save_tables([0]))
    with pytest.raises(StateError, match="distinct"):
        v.restore_tables([1, 1], v.save_tables([0, 2]))
    env = fzmj_env.env()
    env.reset(seed=0)
    with pytest.raises(StateError, match="save_state"):
        env.unwrapped.restore_state(g.save_state())
    assert STATE_BYTES == len(g.save_state())


@pytest.mark.parametrize(
    "make",
    [
        lambda: _game_at(),
        lambda: fzmj_env.env(),
        lambda: fzmj_env.parallel_env(),
        lambda: VectorEnv(2, seed=0),
    ],
)
def test_pickles_of_another_version_are_refused(make, monkeypatch):
    from fzmj_env import snapshot

    env = make()
    if not isinstance(env, Game):
        env.reset(seed=0) if not isinstance(env, VectorEnv) else env.reset()
    monkeypatch.setattr(snapshot, "FORMAT", np.uint64(12345))
    data = pickle.dumps(env)
    monkeypatch.undo()
    with pytest.raises(StateError, match="pickled by fzmj"):
        pickle.loads(data)


def test_unpickled_impossible_table_is_refused():
    g = _game_at()
    g.view.hand[1, 3] += 1  # an edit no game can reach
    with pytest.raises(StateError, match="tiles do not add up|out of range"):
        pickle.loads(pickle.dumps(g))


def test_a_refused_game_restore_keeps_the_mask_and_seat():
    """``Game.restore_state`` checks in a scratch table: a refused state leaves the mask untouched."""
    g = _game_at()
    mask, seat = g.mask.copy(), g.seat
    with pytest.raises(StateError, match="another rule preset"):
        g.restore_state(_edited(g.save_state(), "m", (state.R_BASE,), 99))
    assert np.array_equal(g.mask, mask) and g.seat == seat


def test_a_game_restore_brings_back_a_seed_above_2_63_and_the_log_lengths():
    g = Game()
    g.reset(seed=2**64 - 5)
    g.step(g.legal_actions[0])
    saved, n = g.save_state(), len(g.decisions)
    for _ in range(3):
        g.step(g.legal_actions[0])
    g.restore_state(saved)
    assert g.seed == 2**64 - 5 and type(g.seed) is int and len(g.decisions) == n


def _vector_outputs(v: VectorEnv) -> list[bytes]:
    arrays = (v.buf, v._games, v._pending, v._pending_out, v._obs, v._mask, v._seat, v._mask_out, v._seat_out)
    return [a.tobytes() for a in arrays]


def test_one_table_restore_by_int_matches_the_general_path():
    """``restore_tables(t, ...)`` (one Numba call) leaves the env as ``restore_tables([t], ...)``."""
    v = VectorEnv(4, seed=1)
    v.reset()
    _vector_trace(v, np.random.default_rng(0), steps=25)
    saved = [v.save_tables([t]) for t in range(4)]
    by_int, by_list = copy.deepcopy(v), copy.deepcopy(v)
    for t, s in zip((2, 0, 3), (saved[0], saved[1], saved[2]), strict=True):
        by_int.restore_tables(t, s)
        by_list.restore_tables([t], s)
        assert _vector_outputs(by_int) == _vector_outputs(by_list)


@pytest.mark.parametrize("field, index, value", [("wall", (3,), 41), ("m", (state.R_BASE,), 99), ("hand", (0, 5), 4)])
def test_a_refused_one_table_restore_leaves_the_env_unchanged(field, index, value):
    v = VectorEnv(2, seed=0)
    v.reset()
    before = _vector_outputs(v)
    with pytest.raises(StateError, match="VectorEnv: state 0 is refused"):
        v.restore_tables(1, _edited(_game_at().save_state(), field, index, value))
    assert _vector_outputs(v) == before
