"""``SingleSeatEnv`` / ``SingleSeatVectorEnv``: episodes, rewards and skipped games
checked game by game against plain ``VectorEnv`` self-play with the same seeds; Gymnasium's
checker; options; errors."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import fzmj_env
from fzmj.agents import make_agent
from fzmj.integrations.gymnasium import SingleSeatEnv, SingleSeatVectorEnv
from fzmj_env.actions import A_PASS
from fzmj_env.encode import NUM_CHANNELS
from fzmj_env.vector import VectorEnv


def reference_games(base_seed, B, hands_per_game, seat_of, games_per_table):
    """Four heuristics on a plain VectorEnv: per table, per game, (learner points, learner decided?)."""
    h = make_agent("heuristic")
    env = VectorEnv(B, seed=base_seed, hands_per_game=hands_per_game)
    obs, mask, seat = env.reset()
    out = [[] for _ in range(B)]
    pts = np.zeros(B)
    acted = np.zeros(B, dtype=bool)
    while min(len(o) for o in out) < games_per_table:
        ls = np.array([seat_of(t, len(out[t])) for t in range(B)])
        acted |= seat == ls
        obs, mask, seat, rew, done, info = env.step(h.act(obs, mask))
        pts += rew[np.arange(B), ls]
        for t in np.flatnonzero(done):
            out[t].append((pts[t], bool(acted[t])))
            pts[t] = 0.0
            acted[t] = False
    return out


@pytest.mark.parametrize("seat,hands_per_game", [(2, 1), ("rotate", 1), ("rotate", 2)])
def test_episodes_match_plain_vector_env(seat, hands_per_game):
    """A heuristic learner sees exactly the games of four heuristics: each game the learner
    decided in is one episode whose rewards sum to its points; the others are skipped."""
    B, G = 8, 12
    env = SingleSeatVectorEnv(B, opponents="heuristic", seat=seat, hands_per_game=hands_per_game, reward_scale=0.5)
    obs, info = env.reset(seed=123)
    base = env._driver.venv.seed
    seat_of = (lambda t, k: (t + k) % 4) if seat == "rotate" else (lambda t, k: seat)
    h = make_agent("heuristic")
    got = [[] for _ in range(B)]
    ret = np.zeros(B)
    steps = np.zeros(B, dtype=int)
    skipped = info["skipped_games"].copy()
    skipped_score = info["skipped_score"].copy()
    for t in range(B):
        got[t] += [("skipped", None, None)] * int(skipped[t])
    while min(len(g) for g in got) < G:
        np.testing.assert_array_equal(info["seat"], [seat_of(t, len(got[t])) for t in range(B)])
        a = h.act(obs, info["action_mask"])
        obs, r, term, trunc, info = env.step(a)
        assert not trunc.any()
        ret += r
        steps += 1
        for t in range(B):
            if term[t]:
                assert steps[t] >= 1  # no zero-length episode
                got[t].append(("episode", ret[t] / 0.5, info["final_info"]["final_score"][t]))
                assert info["final_info"]["seat"][t] == seat_of(t, len(got[t]) - 1)
                ret[t] = 0.0
                steps[t] = 0
        for t in np.flatnonzero(info["skipped_games"]):
            for _ in range(info["skipped_games"][t]):
                got[t].append(("skipped", None, None))
        skipped += info["skipped_games"]
        skipped_score += info["skipped_score"]
    ref = reference_games(base, B, hands_per_game, seat_of, max(len(g) for g in got))
    # per table and step: the episode that ended (if any), then the games skipped after it
    for t in range(B):
        n = len(got[t])
        assert [k == "episode" for k, _, _ in got[t]] == [d for _, d in ref[t][:n]]
        for (kind, total, final), (points, _) in zip(got[t], ref[t][:n], strict=True):
            if kind == "episode":
                assert total == pytest.approx(points) and final == pytest.approx(points)
    ref_skipped = [p for t in range(B) for p, d in ref[t][: len(got[t])] if not d]
    assert skipped.sum() == len(ref_skipped)
    assert skipped_score.sum() == pytest.approx(sum(ref_skipped))


def test_gymnasium_checker_and_registration():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in [{}, {"obs_dtype": "float32", "flatten": True}, {"mask_in_obs": True, "seat": "rotate"}]:
            check_env(SingleSeatEnv(opponents="random", **kw), skip_render_check=True)
        env = gym.make("fzmj/SingleSeat-v0", opponents=["heuristic", "random", "random:3"], seat=1)
        obs, info = env.reset(seed=0)
        assert obs.shape == (NUM_CHANNELS, 27) and info["seat"] == 1
        venv = gym.make_vec("fzmj/SingleSeat-v0", num_envs=4, opponents="random")
        obs, info = venv.reset(seed=0)
        assert obs.shape == (4, NUM_CHANNELS, 27) and venv.metadata["autoreset_mode"].value == "SameStep"


def test_single_env_reward_sums_to_final_score_and_is_deterministic():
    def run(seed):
        env = SingleSeatEnv(opponents="heuristic", seat="rotate", obs_dtype="float32", flatten=True)
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=seed)
        out = []
        ret = 0.0
        while len(out) < 20:
            assert obs.shape == (NUM_CHANNELS * 27,) and obs.dtype == np.float32
            m = env.action_masks()
            seat = info["seat"]
            assert m.dtype == bool and (m == (info["action_mask"] != 0)).all() and m.any()
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(m))))
            ret += r
            if term:
                assert ret == pytest.approx(info["final_score"])
                assert info["seat"] == seat  # the ended game's seat
                assert not obs.any() and np.flatnonzero(env.action_masks()).tolist() == [A_PASS]
                assert np.flatnonzero(info["action_mask"]).tolist() == [A_PASS]  # a valid mask at the end
                out.append(ret)
                ret = 0.0
                obs, info = env.reset()
        return out

    a = run(7)
    assert a == run(7) and a != run(8)


def test_dict_observation_and_learner_planes():
    env = SingleSeatVectorEnv(3, opponents="random", seat=3, mask_in_obs=True)
    obs, info = env.reset(seed=1)
    assert set(obs) == {"observation", "action_mask"}
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    assert (info["seat"] == 3).all()
    obs2, *_ = env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
    assert obs2["observation"].shape == (3, NUM_CHANNELS, 27)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seat": 4},
        {"seat": "random"},
        {"obs_dtype": "float64"},
        {"flatten": "yes"},
        {"opponents": "nobody"},
        {"opponents": ["random", "random"]},
        {"hands_per_game": 0},
    ],
)
def test_bad_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        SingleSeatEnv(**kwargs)


def test_illegal_learner_action_and_step_before_reset():
    env = SingleSeatEnv(opponents="random", illegal_action="raise")
    with pytest.raises(RuntimeError):
        env.step(0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    env = SingleSeatEnv(opponents="random", illegal_reward=-5.0)  # default: terminate, like fzmj_env.env()
    obs, info = env.reset(seed=0)
    assert info["illegal_action"] == 0
    obs, r, term, trunc, info = env.step(illegal)
    assert term and r == -5.0 and info["illegal_action"] == 1
    assert np.flatnonzero(env.action_masks()).tolist() == [A_PASS]
    obs, info = env.reset()
    assert env.action_masks().any()
    venv = SingleSeatVectorEnv(2, opponents="random")
    venv.reset(seed=0)
    acts = np.array([np.flatnonzero(~m)[0] for m in venv.action_masks()])
    with pytest.raises(ValueError, match="illegal action at table 0"):
        venv.step(acts)


def test_env_import_stays_light():
    """``import fzmj_env`` loads nothing of the layers above it (the SingleSeat env is fzmj.integrations')."""
    import subprocess
    import sys

    code = (
        "import sys, fzmj_env\n"
        "assert not [m for m in sys.modules if m.startswith('fzmj.')], 'env imported a layer above it'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=fzmj_env.__path__[0] + "/..")


def test_ppo_checkpoint_and_mixed_opponents(tmp_path):
    """``ppo:PATH`` specs go through agents.make_agent like any other; three different opponents."""
    from fzmj.agents.checkpoint import save_checkpoint
    from fzmj.train.model import ActorCritic

    ckpt = save_checkpoint(tmp_path / "p.pt", ActorCritic(hidden_sizes=[16]))
    env = SingleSeatVectorEnv(4, opponents=[f"ppo:{ckpt}", "heuristic", "random:1"], seat="rotate")
    assert env._driver.opponents.names == [f"ppo:{ckpt}", "heuristic", "random:1"]
    obs, info = env.reset(seed=5)
    episodes = 0
    for _ in range(60):
        obs, r, term, trunc, info = env.step(np.array([np.flatnonzero(m)[-1] for m in env.action_masks()]))
        episodes += int(term.sum())
    assert episodes > 0


def test_make_vec_with_wrappers_sync_and_vector_wrappers():
    """Gymnasium refuses ``wrappers=`` with a native vector env; the two documented routes work."""
    from gymnasium.wrappers import RecordEpisodeStatistics
    from gymnasium.wrappers.vector import RecordEpisodeStatistics as VectorRecordEpisodeStatistics

    envs = gym.make_vec(
        "fzmj/SingleSeat-v0",
        num_envs=2,
        vectorization_mode="sync",
        opponents="random",
        wrappers=[RecordEpisodeStatistics],
    )
    venv = VectorRecordEpisodeStatistics(gym.make_vec("fzmj/SingleSeat-v0", num_envs=2, opponents="random"))
    for env, masks in ((envs, lambda info: info["action_mask"]), (venv, lambda info: venv.unwrapped.action_masks())):
        obs, info = env.reset(seed=0)
        episodes = 0
        for _ in range(300):
            acts = np.array([np.flatnonzero(m)[0] for m in masks(info)])
            obs, r, term, trunc, info = env.step(acts)
            if "episode" in info:
                episodes += int(info["_episode"].sum())
        assert episodes > 0
