"""One action coercion and strict argument checks for every env (AEC, parallel, VectorEnv,
SingleSeatEnv, SingleSeatVectorEnv): a legal action in any integer form is that action; floats,
bools, strings, other shapes, out-of-range values, mistyped flags and counts are ``ValueError``
in one line (never a silent wrong training signal, never TypeError/OverflowError)."""

from __future__ import annotations

import numpy as np
import pytest

import fzmj_env
from fzmj.integrations.gymnasium import SingleSeatEnv, SingleSeatVectorEnv
from fzmj_env.actions import A_PASS, substitute_action
from fzmj_env.checks import check_action, check_bool
from fzmj_env.vector import VectorEnv

BAD_ACTIONS = [
    3.0,
    np.float32(3),
    True,
    np.bool_(True),
    "3",
    b"3",
    None,
    [3],
    np.array([3]),
    np.array(3.0),
    -1,
    62,
    2**70,
]
INT_FORMS = [int, np.int8, np.int32, np.int64, np.uint16, np.array, lambda a: np.array(a, dtype=np.uint8)]


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_check_action_refuses(bad):
    with pytest.raises(ValueError, match=r"action must be an integer in 0\.\.61") as e:
        check_action(bad, 62)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("conv", INT_FORMS)
def test_check_action_accepts_integer_forms(conv):
    assert check_action(conv(5), 62) == 5


def test_check_bool():
    assert check_bool("x", True) is True and check_bool("x", np.bool_(False)) is False
    for bad in ("false", "no", 0, 1, None, 1.0):
        with pytest.raises(ValueError, match="x must be True or False"):
            check_bool("x", bad)


@pytest.mark.parametrize("conv", INT_FORMS)
def test_single_seat_step_takes_any_integer_form(conv):
    env = SingleSeatEnv(opponents="random")
    obs, info = env.reset(seed=0)
    a = int(np.flatnonzero(info["action_mask"])[0])
    obs, r, term, trunc, info = env.step(conv(a))
    assert info["illegal_action"] == 0  # a legal action, whatever its type (a 0-d array included)


@pytest.mark.parametrize("mode", ["terminate", "raise", "substitute"])
@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_single_seat_step_refuses_non_actions(mode, bad):
    env = SingleSeatEnv(opponents="random", illegal_action=mode)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be an integer"):
        env.step(bad)


def test_aec_takes_a_zero_d_array():
    env = fzmj_env.env()
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    before = env.agent_selection
    env.step(np.array(int(np.flatnonzero(mask)[0])))
    assert not env.terminations[before]  # the legal action was played, not an illegal one


def test_reset_options_refused_not_ignored():
    env = SingleSeatEnv(opponents="random")
    env.reset(seed=0, options=None)
    env.reset(seed=0, options={})
    with pytest.raises(ValueError, match="no options"):
        env.reset(seed=0, options={"wall": "x"})
    venv = SingleSeatVectorEnv(2, opponents="random")
    with pytest.raises(ValueError, match="no options"):
        venv.reset(seed=0, options={"dealer": 1})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "1", None, True])
def test_illegal_reward_must_be_finite_number(value):
    with pytest.raises(ValueError, match="illegal_reward"):
        SingleSeatEnv(illegal_reward=value)
    with pytest.raises(ValueError, match="illegal_reward"):
        SingleSeatVectorEnv(2, illegal_reward=value)


@pytest.mark.parametrize("name", ["oracle", "auto_reset"])
@pytest.mark.parametrize("value", ["no", "false", 0, 1, None])
def test_vector_env_flags_must_be_bools(name, value):
    with pytest.raises(ValueError, match=f"{name} must be True or False"):
        VectorEnv(2, **{name: value})


@pytest.mark.parametrize("value", ["8", 2.0, True, None, 2**80, -(2**80), 0, [8], np.float64(2)])
def test_table_counts_are_checked(value):
    with pytest.raises(ValueError, match="num_tables"):
        VectorEnv(value)
    with pytest.raises(ValueError, match="num_envs"):
        SingleSeatVectorEnv(value)


def test_terminal_masks_are_pass_only_everywhere():
    env = SingleSeatEnv(opponents="random", mask_in_obs=True)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(0)
    term = False
    while not term:
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert np.flatnonzero(obs["action_mask"]).tolist() == [A_PASS] and not obs["observation"].any()
    assert np.flatnonzero(info["action_mask"]).tolist() == [A_PASS]
    assert np.flatnonzero(env.action_masks()).tolist() == [A_PASS]

    venv = SingleSeatVectorEnv(4, opponents="random", mask_in_obs=True)
    obs, info = venv.reset(seed=0)
    ended = 0
    while ended < 4:
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        obs, r, term, trunc, info = venv.step(acts)
        assert venv.action_masks().any(axis=1).all()  # same-step autoreset: the next game's masks
        for t in np.flatnonzero(term):
            fo = info["final_obs"][t]
            assert np.flatnonzero(fo["action_mask"]).tolist() == [A_PASS]
            ended += 1

    aec = fzmj_env.env()
    aec.reset(seed=0)
    for _agent in aec.agent_iter():
        o, r, te, tr, _ = aec.last()
        if te or tr:
            assert np.flatnonzero(o["action_mask"]).tolist() == [A_PASS]
            aec.step(None)
        else:
            aec.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))


def test_substitute_mode_single_seat():
    sub = SingleSeatEnv(opponents="heuristic", illegal_action="substitute", illegal_reward=-0.25)
    ref = SingleSeatEnv(opponents="heuristic")
    obs, info = sub.reset(seed=5)
    ref.reset(seed=5)
    rng = np.random.default_rng(0)
    n_illegal = 0
    while True:
        mask = info["action_mask"]
        a = int(rng.integers(0, 62))  # what a mask-free policy does
        legal = a if mask[a] else substitute_action(mask)
        n_illegal += not mask[a]
        obs, r, term, trunc, info = sub.step(a)
        obs_ref, r_ref, term_ref, _, info_ref = ref.step(legal)
        assert info["illegal_action"] == int(legal != a)
        assert r == pytest.approx(r_ref - (0.25 if legal != a else 0.0)) and term == term_ref
        np.testing.assert_array_equal(obs, obs_ref)
        if term:
            break
    assert n_illegal > 0

    venv = SingleSeatVectorEnv(3, opponents="random", illegal_action="substitute", illegal_reward=0.0)
    venv.reset(seed=0)
    acts = np.array([np.flatnonzero(~m)[0] for m in venv.action_masks()])
    obs, r, term, trunc, info = venv.step(acts)
    assert info["illegal_action"].tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="illegal_action"):
        SingleSeatVectorEnv(2, illegal_action="terminate")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"opponents": None},
        {"opponents": 5},
        {"obs_dtype": ["int8"]},
        {"obs_dtype": None},
        {"seat": None},
        {"seat": [0]},
        {"hands_per_game": None},
        {"hands_per_game": 2**80},
        {"reward_scale": None},
        {"reward_scale": float("nan")},
        {"illegal_action": ["raise"]},
        {"illegal_action": None},
        {"flatten": "false"},
        {"mask_in_obs": 1},
    ],
)
def test_single_seat_constructor_value_errors(kwargs):
    with pytest.raises(ValueError):
        SingleSeatEnv(**kwargs)
    if "illegal_action" not in kwargs:
        with pytest.raises(ValueError):
            SingleSeatVectorEnv(2, **kwargs)


@pytest.mark.parametrize("seed", ["1", 1.5, -1, 2**64, True, [1]])
def test_reset_seed_value_errors(seed):
    with pytest.raises(ValueError, match="seed"):
        SingleSeatEnv(opponents="random").reset(seed=seed)
    with pytest.raises(ValueError, match="seed"):
        fzmj_env.parallel_env().reset(seed=seed)


@pytest.mark.parametrize("kwargs", [{"obs_dtype": ["int8"]}, {"flatten": 1}, {"info": None}, {"reward_scale": "1"}])
def test_aec_and_parallel_constructor_value_errors(kwargs):
    with pytest.raises(ValueError):
        fzmj_env.env(**kwargs)
    with pytest.raises(ValueError):
        fzmj_env.parallel_env(**kwargs)
