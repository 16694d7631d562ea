"""Duplicate groups in the trainer (``train/same_walls.py``): K tables play each wall,
and a decision's advantage is its seat's score minus the mean of the group's other plays."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fzmj.train.config import ConfigError
from fzmj.train.opponents import IDLE, LEARNER, OpponentPool
from fzmj.train.ppo_selfplay import Args
from fzmj.train.same_walls import DuplicateGroups
from fzmj.train.selfplay_buffer import SelfPlayBuffer
from fzmj_env.vector import RESULT_POINTS, VectorEnv


def first_legal(mask):
    return mask.argmax(1).astype(np.int64)


def play_to_end(env, tables, obs, mask, seat, pick):
    """Step ``tables`` until each has finished one game (auto_reset=False); returns their result rows."""
    results = {}
    live = np.asarray(tables)
    while len(live):
        obs, mask, seat, _r, done, info = env.step_tables(live, pick(mask[live]))
        for t in live[done[live]]:
            results[int(t)] = info["results"][t].copy()
        live = live[~done[live]]
    return results


def test_reset_tables_deals_exactly_the_seeded_game_and_leaves_the_others():
    env = VectorEnv(4, seed=5, auto_reset=False)
    obs, mask, seat = env.reset()
    before = obs.copy(), mask.copy(), seat.copy()
    obs, mask, seat = env.reset_tables(np.array([1, 3]), np.array([77, 77], dtype=np.uint64))
    for t in (0, 2):  # untouched
        np.testing.assert_array_equal(obs[t], before[0][t])
        np.testing.assert_array_equal(mask[t], before[1][t])
    np.testing.assert_array_equal(obs[1], obs[3])  # the same wall, the same first observation
    # and it is the game Game.reset(seed=77) deals, played to the same result
    ref = VectorEnv(1, seed=0, auto_reset=False)
    ro, rm, rs = ref.reset(seeds=np.array([77], dtype=np.uint64))
    np.testing.assert_array_equal(obs[1], ro[0])
    res = play_to_end(env, np.array([1, 3]), obs, mask, seat, first_legal)
    ref_res = play_to_end(ref, np.array([0]), ro, rm, rs, first_legal)
    np.testing.assert_array_equal(res[1], ref_res[0])
    np.testing.assert_array_equal(res[3], ref_res[0])


def test_reset_tables_rejects_bad_input():
    env = VectorEnv(3, seed=0, auto_reset=False)
    with pytest.raises(RuntimeError, match="reset"):
        env.reset_tables(np.array([0]), np.array([1]))
    env.reset()
    with pytest.raises(ValueError, match="distinct"):
        env.reset_tables(np.array([1, 1]), np.array([1, 2]))
    with pytest.raises(ValueError, match="0..2"):
        env.reset_tables(np.array([3]), np.array([1]))
    with pytest.raises(ValueError, match="seeds"):
        env.reset_tables(np.array([0]), np.array([-1]))


def test_groups_share_walls_and_advantages_are_leave_one_out():
    K, B = 3, 6
    dup = DuplicateGroups(B, K, base_seed=11, reward_scale=0.5)
    seeds = dup.first_seeds()
    assert (seeds[:3] == seeds[0]).all() and (seeds[3:] == seeds[3]).all() and seeds[0] != seeds[3]
    results = np.zeros((B, RESULT_POINTS + 4), dtype=np.int32)
    scores = np.array([[10, -10, 0, 0], [4, 0, -4, 0], [-2, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [6, -6, 0, 0]])
    results[:, RESULT_POINTS:] = scores
    done = np.array([True, True, False, True, False, False])
    assert len(dup.finished(done, results)) == 0  # group 0 still has table 2 playing
    assert dup.active().tolist() == [2, 4, 5]
    done = np.array([False, False, True, False, False, False])
    groups = dup.finished(done, results)
    assert groups.tolist() == [0]
    tables, games, adv, ret = dup.settle(groups)
    assert tables.tolist() == [0, 1, 2] and games.tolist() == [0, 0, 0]
    s = scores[:3] * 0.5
    for i in range(3):
        others = np.delete(s, i, axis=0).mean(axis=0)
        np.testing.assert_allclose(adv[i], s[i] - others)
    np.testing.assert_allclose(adv.sum(axis=0), 0.0, atol=1e-12)  # the K advantages of a seat sum to 0
    np.testing.assert_allclose(ret, s)
    assert dup.game[:3].tolist() == [1, 1, 1] and not dup.waiting[:3].any()
    assert (dup.seeds(groups) != seeds[:3]).all()  # the next game is another wall
    assert (dup.seeds(np.array([1])) == seeds[3:]).all()  # group 1 still plays its first wall


def test_duplicate_groups_validate():
    with pytest.raises(ValueError, match="divide"):
        DuplicateGroups(10, 4, 0, 1.0)
    with pytest.raises(ConfigError, match="duplicate_group"):
        Args(num_tables=10, duplicate_group=4)
    with pytest.raises(ConfigError, match="hands_per_game"):
        Args(num_tables=8, duplicate_group=4, hands_per_game=2)


def test_buffer_settles_only_the_finished_games_and_carries_the_rest():
    buf = SelfPlayBuffer(2, 32, (2, 27), 62)
    z = torch.zeros(1)
    o, m = torch.zeros((1, 2, 27), dtype=torch.int8), torch.ones((1, 62), dtype=torch.int8)
    a = torch.zeros(1, dtype=torch.long)
    # table 0: two decisions of seat 1 in game 0, then one of seat 2 in game 1; table 1: seat 0, game 0
    for t, s, g in ((0, 1, 0), (1, 0, 0), (0, 1, 0), (0, 2, 1)):
        buf.add(np.array([t]), np.array([s]), o, m, a, z, z, games=np.array([g]))
    adv = np.array([[0.0, 1.5, 0.0, 0.0]])
    ret = np.array([[0.0, 2.0, 0.0, 0.0]])
    buf.settle(np.array([0]), np.array([0]), adv, ret)
    advs, rets, idx = buf.settled_batch()
    assert idx.tolist() == [0, 2]
    assert advs[idx].tolist() == [1.5, 1.5] and rets[idx].tolist() == [2.0, 2.0]
    kept = buf.carry_over(np.flatnonzero(~buf.settled[: buf.n]))
    assert kept == 2 and buf.table[:2].tolist() == [1, 0] and buf.game[:2].tolist() == [0, 1]
    assert not buf.settled[:2].any()
    assert buf.last_idx[1, 0] == 0 and buf.last_idx[0, 2] == 1 and buf.last_idx[0, 1] == -1


def test_pool_draws_once_per_group():
    pool = OpponentPool(8, 1.0, 1.0, 0, 1, np.random.default_rng(0), "cpu")
    pool.assign(np.arange(8), group=4)
    for g in range(2):
        rows = pool.controller[4 * g : 4 * g + 4]
        assert (rows == rows[0]).all()
        assert (rows[0] == LEARNER).sum() == 1
    ctrl = np.array([IDLE, LEARNER, 0, IDLE])
    actions = np.full(4, -7)
    obs = np.zeros((4, 99, 27), dtype=np.int8)
    mask = np.zeros((4, 62), dtype=np.int8)
    mask[:, 0] = 1
    pool.act(ctrl, obs, mask, actions)
    assert actions.tolist()[0] == -7 and actions.tolist()[3] == -7  # idle tables are not played


def test_duplicate_training_smoke(tmp_path):
    from fzmj.train.ppo_selfplay import main

    rc = main(
        [
            "--set",
            f"runs_dir={tmp_path}",
            "--set",
            "run_name=dup",
            "--set",
            "num_tables=16",
            "--set",
            "num_steps=32",
            "--set",
            "total_timesteps=2048",
            "--set",
            "duplicate_group=4",
            "--set",
            "pool_prob=0.9",
            "--set",
            "pool_heuristic_frac=1.0",
            "--set",
            "pool_size=0",
            "--set",
            "pool_learner_seats=1",
            "--set",
            "eval_every=0",
            "--set",
            "hidden_sizes=[16]",
            "--set",
            "torch_threads=1",
        ]
    )
    assert rc == 0
    assert (tmp_path / "dup" / "checkpoints" / "latest.pt").is_file()


def test_duplicate_groups_on_two_ranks_wait_for_every_ranks_first_settled_group(tmp_path):
    """Early rollouts settle no group; with two ranks (gloo) none may update before both have
    decisions (their collectives must stay paired), and both end with the same weights."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sets = [
        f"runs_dir={tmp_path}",
        "run_name=d2",
        "duplicate_group=4",
        "pool_prob=0.9",
        "pool_heuristic_frac=1.0",
        "pool_size=0",
        "pool_learner_seats=1",
        "total_timesteps=8192",
        "eval_every=0",
        "torch_threads=1",
        "env_threads=1",
    ]
    argv = [
        sys.executable,
        "-m",
        "fzmj.train.ppo_selfplay",
        "--nproc",
        "2",
        "--config",
        str(root / "configs/ppo_smoke.yaml"),
    ]
    argv += sum((["--set", s] for s in sets), [])
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=240)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "distributed: all 2 ranks finished with identical weights" in out
