"""The batched env: same engine and encoder as the AEC env / Game, bit for bit."""

import numpy as np
import pytest

from fzmj_env import Game
from fzmj_env.encode import NUM_CHANNELS, encode_table
from fzmj_env.seeding import game_seed
from fzmj_env.vector import VectorEnv, results_of


def random_actions(rng, mask):
    return (rng.random(mask.shape) * mask).argmax(1)


def test_vector_matches_game_decision_for_decision():
    """Same seed, same actions -> same observation, mask, seat and rewards as the driver."""
    B = 12
    env = VectorEnv(B, seed=7)
    seeds = np.arange(1000, 1000 + B)
    obs, mask, seat = env.reset(seeds=seeds)
    games = [Game() for _ in range(B)]
    for t, g in enumerate(games):
        g.reset(seed=int(seeds[t]))
    rng = np.random.default_rng(3)
    alive = np.ones(B, dtype=bool)
    single = np.zeros((NUM_CHANNELS, 27), dtype=np.int8)
    steps = 0
    while alive.any():
        for t in np.flatnonzero(alive):
            g = games[t]
            assert g.seat == seat[t]
            np.testing.assert_array_equal(g.mask, mask[t])
            encode_table(g.buf, 0, g.seat, single)
            np.testing.assert_array_equal(single, obs[t])
        actions = random_actions(rng, mask)
        for t in np.flatnonzero(alive):
            games[t].step(int(actions[t]))
        obs, mask, seat, rewards, done, info = env.step(actions)
        steps += 1
        for t in np.flatnonzero(alive):
            if done[t]:
                assert games[t].done
                assert rewards[t].tolist() == games[t].result["points"]
                alive[t] = False
            else:
                assert not games[t].done and not rewards[t].any()
    assert steps > 20


def test_vector_auto_reset_uses_the_table_seed_sequence():
    env = VectorEnv(2, seed=11)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(0)
    finished = 0
    while finished < 3:
        obs, mask, seat, rewards, done, info = env.step(random_actions(rng, mask))
        if done[0]:
            finished += 1
            # table 0 is now playing its game number `finished`: its wall is that seed's wall
            g = Game()
            g.reset(seed=int(game_seed(np.uint64(11), 0, finished)))
            np.testing.assert_array_equal(g.view.wall, env.buf["wall"][0])
            assert seat[0] == g.seat


def test_vector_rewards_zero_sum_and_results():
    env = VectorEnv(64, seed=1, reward_scale=0.5)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(1)
    n_results = 0
    for _ in range(300):
        obs, mask, seat, rewards, done, info = env.step(random_actions(rng, mask))
        assert abs(float(rewards.sum())) < 1e-4
        for r in results_of(info):
            n_results += 1
            assert sum(r["points"]) == 0
            np.testing.assert_allclose(rewards[r["table"]], np.array(r["points"]) * 0.5)
    assert n_results > 50


def test_vector_pending_rewards_add_up_to_the_hand_points():
    """Each seat's rewards reach it exactly once: via pending_reward or final_reward."""
    B = 32
    env = VectorEnv(B, seed=5)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(2)
    credited = np.zeros((B, 4))
    paid = np.zeros((B, 4))
    for _ in range(400):
        obs, mask, seat, rewards, done, info = env.step(random_actions(rng, mask))
        paid += rewards
        credited[np.arange(B), seat] += info["pending_reward"]
        credited += info["final_reward"]
    # what is still pending was paid but not yet credited
    np.testing.assert_allclose(paid - credited, env._pending, atol=1e-4)


def test_vector_threads_give_identical_results():
    runs = []
    for threads in (1, 2):
        env = VectorEnv(16, seed=3, num_threads=threads)
        obs, mask, seat = env.reset()
        rng = np.random.default_rng(9)
        trace = []
        for _ in range(150):
            obs, mask, seat, rewards, done, info = env.step(random_actions(rng, mask))
            trace.append((obs.copy(), mask.copy(), seat.copy(), rewards.copy()))
        runs.append(trace)
    for a, b in zip(*runs, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_vector_illegal_action_names_table_seat_action():
    env = VectorEnv(4, seed=0)
    obs, mask, seat = env.reset()
    actions = mask.argmax(1)
    bad = int(np.flatnonzero(mask[2] == 0)[0])
    actions[2] = bad
    before = env.buf.copy()
    with pytest.raises(ValueError, match=rf"table 2: seat {int(seat[2])} cannot take action {bad}"):
        env.step(actions)
    np.testing.assert_array_equal(before, env.buf)  # nothing was stepped
    with pytest.raises(ValueError, match="shape"):
        env.step(actions[:3])
    with pytest.raises(ValueError, match="out of range"):
        env.step(np.full(4, 99))


def test_vector_rejects_bad_construction():
    with pytest.raises(ValueError, match="num_tables"):
        VectorEnv(0)
    with pytest.raises(ValueError, match="seed"):
        VectorEnv(2, seed=-1)
    with pytest.raises(ValueError, match="rule preset"):
        VectorEnv(2, rules="nope")
    env = VectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=int))


def test_vector_without_auto_reset_tables_stay_finished():
    env = VectorEnv(8, seed=2, auto_reset=False)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(4)
    finished = np.zeros(8, dtype=bool)
    for _ in range(2000):
        actions = random_actions(rng, mask)
        obs, mask, seat, rewards, done, info = env.step(actions)
        assert not (finished & done).any()  # a game ends once
        finished |= done
        assert (seat[finished] == -1).all() and not mask[finished].any() and not obs[finished].any()
        if finished.all():
            break
    assert finished.all()


def test_vector_oracle_planes_are_the_acting_seats():
    from fzmj_env.encode import ORACLE_CHANNELS, oracle_table

    env = VectorEnv(6, seed=2, oracle=True)
    obs, mask, seat = env.reset()
    rng = np.random.default_rng(1)
    ref = np.zeros((ORACLE_CHANNELS, 27), dtype=np.int8)
    for _ in range(60):
        for t in range(env.num_tables):
            oracle_table(env.buf, t, int(seat[t]), ref)
            np.testing.assert_array_equal(env.oracle_planes[t], ref)
        obs, mask, seat, rewards, done, info = env.step(random_actions(rng, mask))
        assert info["oracle"] is env.oracle_planes
