"""The belief model: its labels, its trainer (run folder, resume, metrics), its loader's checks,
and worlds weighted by a belief (``Game.resample(belief=)``, ``VectorEnv.load_worlds(belief=)``,
``search:...:sir=F``)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from test_encode import claimy_action

from fzmj.agents import AgentSpecError, make_agent
from fzmj.agents.belief import BELIEF_PATH, FORMAT, OBS_LAYOUTS, load_belief
from fzmj.train import belief as B
from fzmj.train.belief_data import generate, hidden_labels, unpack
from fzmj_env import Game, VectorEnv
from fzmj_env.core import state
from fzmj_env.core.hand import get_win_table, wait_mask_counts
from fzmj_env.encode import O_HANDS, O_PASSED, P_GOLD_KIND
from fzmj_env.resample import belief_log_weights, prior_count_dist

SMALL = dict(train_decisions=1_000, val_decisions=1_000, epochs=1, hidden=[16], tables=64, log_every=5)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny trained run: (run folder, its metrics)."""
    root = tmp_path_factory.mktemp("belief")
    m = B.train(B.BeliefArgs(run_name="t", runs_dir=str(root), **SMALL))
    return root / "t", m


def test_labels_are_the_hidden_hands_and_the_engine_discard_win_test():
    env = VectorEnv(32, seed=3, oracle=True)
    obs, mask, seat = env.reset()
    h = make_agent("heuristic")
    wt = get_win_table()
    seen_win = 0
    for _ in range(60):
        t = np.arange(32)
        counts = np.zeros((32, 3, 27), np.int8)
        ready = np.zeros((32, 3), np.int8)
        win = np.zeros((32, 3, 27), np.int8)
        hidden_labels(env.buf, wt, t, seat.astype(np.int64), counts, ready, win)
        oracle = env.oracle_planes
        for i in range(32):
            gold = int(np.argmax(obs[i, P_GOLD_KIND]))
            for r in range(3):
                c = oracle[i, O_HANDS + 4 * r : O_HANDS + 4 * r + 4].sum(0)
                assert np.array_equal(c, counts[i, r])
                s = (seat[i] + 1 + r) % 4
                assert np.array_equal(env.buf["hand"][i, s], counts[i, r])
                w = np.zeros(27, np.int8)
                n_win = wait_mask_counts(wt, c.astype(np.int64), gold, w) if c.sum() % 3 == 1 else 0
                assert ready[i, r] == (n_win > 0)
                w[oracle[i, O_PASSED + r] > 0] = 0
                w[gold] = 0
                if env.buf["gold_thrown"][i, s]:
                    w[:] = 0
                assert np.array_equal(win[i, r], w)
                seen_win += int(w.sum())
        obs, mask, seat, *_ = env.step(h.act(obs, mask))
    assert seen_win > 0


def test_generated_data_is_deterministic_and_unpacks():
    a = generate(500, ["heuristic"] * 4, "fuzhou-lianzhong", 5, tables=16)
    b = generate(500, ["heuristic"] * 4, "fuzhou-lianzhong", 5, tables=16)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    env = VectorEnv(16, seed=5)
    obs, *_ = env.reset()
    assert np.array_equal(unpack(a["obs"][:16]), obs)


def test_auc_and_calibration():
    assert B.auc([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]) == 1.0
    assert B.auc([0.4, 0.3, 0.2, 0.1], [0, 0, 1, 1]) == 0.0
    assert B.auc([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1]) == 0.5
    assert np.isnan(B.auc([0.1, 0.2], [1, 1]))
    rows = B.calibration(np.array([0.001, 0.3, 0.35, 0.9]), np.array([0, 1, 0, 1]))
    assert sum(r["n"] for r in rows) == 4
    assert [r for r in rows if r["bin"] == "0.3-0.5"][0]["observed"] == 0.5


def test_a_run_writes_its_folder_reports_and_resumes(run):
    folder, m = run
    for f in ("checkpoints/last.pt", "checkpoints/model.pt", "metrics.json", "calibration.json", "data/train.npz"):
        assert (folder / f).is_file(), f
    assert list(folder.glob("events.out.tfevents.*"))
    for key in ("danger_auc", "danger_logloss", "danger_logloss_const", "win_on_logloss", "concealed_logloss"):
        assert key in m and np.isfinite(m[key])
    assert json.loads((folder / "metrics.json").read_text())["epoch"] == 1
    with pytest.raises(Exception, match="already holds a run"):
        B.train(B.BeliefArgs(run_name="t", runs_dir=str(folder.parent), **SMALL))
    m2 = B.train(B.BeliefArgs(), resume=str(folder / "checkpoints" / "last.pt"), epochs=2)
    assert m2["epoch"] == 2
    ck = torch.load(folder / "checkpoints" / "last.pt", weights_only=True)
    assert ck["epoch"] == 2 and ck["format"] == FORMAT
    model = load_belief(f"belief:{folder / 'checkpoints' / 'model.pt'}")
    env = VectorEnv(4, seed=1)
    obs, *_ = env.reset()
    out = model.predict(obs)
    assert out["concealed_dist"].shape == (4, 3, 27, 5) and out["danger"].shape == (4, 27)
    assert np.allclose(out["concealed_dist"].sum(-1), 1, atol=1e-5)
    assert ((out["danger"] >= 0) & (out["danger"] <= 1)).all()
    assert out["concealed"].shape == (4, 3, 27) and out["ready"].shape == (4, 3)


def test_cli_settings_are_checked_in_one_line(capsys, tmp_path):
    for argv, msg in (
        (["--agents", "heuristic", "random"], "give 1 or 4 agent specs"),
        (["--agents", "nosuch"], "unknown agent spec"),
        (["--obs-version", "v9"], "obs_version"),
        (["--train-decisions", "5"], "train_decisions"),
        (["--run-name", "../x"], "not a plain name"),
        (["--rules", "nosuch"], "rules"),
        (["--resume", str(tmp_path / "none.pt")], "no such checkpoint"),
    ):
        with pytest.raises(SystemExit) as e:
            B.main([*argv, "--runs-dir", str(tmp_path)])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err


def _ckpt(run):
    return torch.load(run[0] / "checkpoints" / "model.pt", weights_only=True)


@pytest.mark.parametrize(
    "edit, msg",
    [
        (lambda d: d.update(format="fzmj-ppo"), "use ppo:PATH"),
        (lambda d: d.update(obs_version="v1"), "observation layout 'v1' is unknown"),
        (lambda d: d.update(num_channels=98), "do not match observation"),
        (lambda d: d.update(rules="nosuch"), "preset 'nosuch' is unknown"),
        (lambda d: d.update(epohc=3), "unknown field"),
        (lambda d: d.update(step="3"), "field 'step' must be int"),
        (lambda d: d.pop("belief_spec"), "missing field"),
        (lambda d: d["belief_spec"].update(hiden=[3]), "unknown keys"),
        (lambda d: d["belief_spec"].update(hidden=[17]), "do not match"),
        (lambda d: d["model"].__setitem__("ready.bias", torch.full((3,), float("nan"))), "non-finite"),
        (lambda d: d.update(version=9), "version 9"),
    ],
)
def test_a_bad_checkpoint_is_refused_in_one_line(run, tmp_path, edit, msg):
    d = _ckpt(run)
    edit(d)
    p = tmp_path / "bad.pt"
    torch.save(d, p)
    with pytest.raises(AgentSpecError, match=msg) as e:
        load_belief(f"belief:{p}")
    assert "\n" not in str(e.value)


def test_bad_specs_and_presets_are_refused_before_anything_plays(run, tmp_path):
    for spec, msg in (
        (f"belief:{tmp_path / 'missing.pt'}", "no such file"),
        (f"belief:{tmp_path}", "is a directory"),
        ("belief:", "expected belief:PATH"),
        ("beleif", "unknown belief spec"),
    ):
        with pytest.raises(AgentSpecError, match=msg):
            load_belief(spec)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(AgentSpecError, match="not a readable fzmj checkpoint"):
        load_belief(f"belief:{tmp_path / 'junk.pt'}")
    path = run[0] / "checkpoints" / "model.pt"
    with pytest.raises(AgentSpecError, match="trained on preset fuzhou-lianzhong, not fuzhou-home"):
        load_belief(f"belief:{path}", rules="fuzhou-home")
    model = load_belief(f"belief:{path}")
    env = VectorEnv(2, rules="fuzhou-home")
    obs, *_ = env.reset()
    with pytest.raises(ValueError, match="another preset"):
        model.predict(obs)
    with pytest.raises(ValueError, match=r"\(N, C, 27\)"):
        model.predict(np.zeros((2, 99, 26), np.int8))
    with pytest.raises(AgentSpecError, match="no such file"):
        make_agent(f"search:heuristic:sir=2,model={tmp_path / 'missing.pt'}")
    with pytest.raises(AgentSpecError, match="use one"):
        make_agent("search:heuristic:sir=2,belief=2")
    assert set(OBS_LAYOUTS) >= {"v2", "v3"}


def _midgame(seed=9, steps=30):
    game = Game()
    game.reset(seed=seed)
    rng = random.Random(0)
    for _ in range(steps):
        game.step(claimy_action(game, rng))
    return game


def test_belief_weights_of_loaded_worlds_are_the_product_of_factors():
    game = _midgame()
    seat = game.seat
    env = VectorEnv(8, auto_reset=False)
    env.reset()
    rng = np.random.default_rng(0)
    f = rng.uniform(0.5, 2.0, (3, 27, 5))
    tables = np.array([7, 1, 3])
    env.load_worlds(tables, game.buf, 0, seat, np.array([1, 2, 3], np.uint64), belief=f)
    for i, t in enumerate(tables):
        want = sum(np.log(f[r, k, env.buf["hand"][t, (seat + 1 + r) % 4, k]]) for r in range(3) for k in range(27))
        assert env.world_log_weights[i] == pytest.approx(want)
    env.load_worlds(tables, game.buf, 0, seat, np.array([1, 2, 3], np.uint64))
    assert not env.world_log_weights.any()
    with pytest.raises(ValueError, match="shape"):
        env.load_worlds(tables, game.buf, 0, seat, np.array([1, 2, 3], np.uint64), belief=np.ones((3, 27)))
    with pytest.raises(ValueError, match="non-negative"):
        env.load_worlds(tables, game.buf, 0, seat, np.array([1, 2, 3], np.uint64), belief=-np.ones((3, 27, 5)))


def test_game_resample_with_a_belief_follows_it():
    game = _midgame()
    seat = game.seat
    prior = prior_count_dist(game.buf, 0, seat)
    assert np.allclose(prior.sum(-1), 1)
    # a belief that relative seat 1 holds no tile of kinds 0..8 (manzu): the worlds follow it
    f = np.ones((3, 27, 5))
    f[0, :9, 1:] = 1e-6
    n_uniform = n_belief = 0
    s = (seat + 1) % 4
    for seed in range(40):
        n_uniform += int(game.resample(seat, seed).buf["hand"][0, s, :9].sum())
        w = game.resample(seat, seed, belief=f, candidates=64)
        n_belief += int(w.buf["hand"][0, s, :9].sum())
        assert np.array_equal(
            state.flat_state(w.buf), state.flat_state(game.resample(seat, seed, belief=f, candidates=64).buf)
        )
        assert np.array_equal(w.mask, game.mask)
    assert n_belief < n_uniform / 3
    ones = game.resample(seat, 5, belief=np.ones((3, 27, 5)), candidates=1)
    assert ones.buf["hand"][0, seat].tolist() == game.buf["hand"][0, seat].tolist()
    with pytest.raises(ValueError, match="candidates"):
        game.resample(seat, 5, belief=f, candidates=0)
    lw = belief_log_weights(w.buf, [0], seat, f)
    assert np.isfinite(lw).all()


def test_search_with_belief_worlds_plays_legally(run):
    path = run[0] / "checkpoints" / "model.pt"
    agent = make_agent(f"search:heuristic:worlds=4,top=2,sir=2,model={path}")
    env = VectorEnv(2, seed=2)
    agent.reset(rules=env.rules)  # the preset played (a search never guesses it)
    obs, mask, seat = env.reset()
    for _ in range(6):
        a = agent.act(obs, mask)
        assert all(mask[i, a[i]] for i in range(2))
        obs, mask, seat, *_ = env.step(a)
    assert agent.stats["searched"] > 0


def test_the_shipped_model_loads_and_reads_v2_and_v3(tmp_path):
    from fzmj.train.belief import export_belief

    model = load_belief("belief")
    assert model.obs_version == "v2" and model.rules == "fuzhou-lianzhong"
    assert model.metrics["danger_auc"] > 0.8  # the figures of its run travel with it
    e2, e3 = VectorEnv(3, seed=4), VectorEnv(3, seed=4, obs_version=3)
    o2, *_ = e2.reset()
    o3, *_ = e3.reset()
    assert np.array_equal(model.predict(o2)["danger"], model.predict(o3)["danger"])
    # a re-export of the shipped file is the same network
    export_belief(str(BELIEF_PATH), str(tmp_path / "again.pt"))
    again = load_belief(f"belief:{tmp_path / 'again.pt'}")
    assert np.array_equal(again.predict(o2)["danger"], model.predict(o2)["danger"])
    assert BELIEF_PATH.stat().st_size < 3_000_000


def test_sir_search_counts_repeated_worlds_once_in_its_z_test(monkeypatch):
    """Resampling keeps duplicates: 32 copies of 2 worlds are 2 samples, not 32. A gain that
    clears z = 2 only when the copies are counted as independent must not be taken."""
    from fzmj.agents import search as S

    agent = make_agent("search:heuristic:worlds=32,top=2,sir=2")
    env = VectorEnv(1, seed=0)
    agent.reset(rules=env.rules)
    obs, mask, _ = env.reset()
    two = np.array([11] * 16 + [12] * 16, np.uint64)
    monkeypatch.setattr(agent, "_sir", lambda o, buf, seeds, M: two)

    def fake_rollout_many(env, blueprint, jobs):
        ((cands, buf, seeds),) = jobs
        gain = np.where(seeds == 11, 1.0, -0.3)  # mean +0.35: z = 3.0 over 32, 0.75 over 2 samples
        return [np.stack([np.zeros(len(seeds)), gain])]

    monkeypatch.setattr(S, "rollout_many", fake_rollout_many)
    base = int(agent.blueprint.act(obs, mask)[0])
    assert agent._search(obs[0], mask[0], base) == base
    assert agent.stats["searched"] == 1 and agent.stats["deviated"] == 0
