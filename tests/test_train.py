"""PPO self-play trainer: config validation, per-seat GAE bookkeeping, model, smoke run, resume."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from fzmj.agents.checkpoint import load_checkpoint, load_policy
from fzmj.train.config import ConfigError, load_config
from fzmj.train.model import ActorCritic, BinaryLinear
from fzmj.train.ppo_selfplay import Args, main
from fzmj.train.selfplay_buffer import SelfPlayBuffer
from fzmj_env.encode import NUM_CHANNELS as X_NUM_CHANNELS
from fzmj_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("ppo_*.yaml"))

CLEANRL_TAGS = [
    "charts/SPS",
    "charts/learning_rate",
    "losses/value_loss",
    "losses/policy_loss",
    "losses/entropy",
    "losses/approx_kl",
    "losses/old_approx_kl",
    "losses/clipfrac",
    "losses/explained_variance",
]
OUR_TAGS = [
    "charts/mean_hand_score",
    "charts/win_rate",
    "charts/deal_in_rate",
    "charts/SPS_window",
    "eval/score_vs_random",
    "eval/score_vs_heuristic",
]


# ---- config ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_load(path):
    args = load_config(Args, path)
    assert args.total_timesteps >= args.batch_size


def test_config_unknown_key_is_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_tables: 8\nlerning_rate: 0.001\n")
    with pytest.raises(ConfigError, match=r"lerning_rate.*did you mean 'learning_rate'"):
        load_config(Args, bad)
    with pytest.raises(ConfigError, match="num_tabels"):
        load_config(Args, None, ["num_tabels=8"])


@pytest.mark.parametrize(
    "override, key",
    [
        ("num_tables=many", "num_tables"),
        ("num_tables=2.5", "num_tables"),
        ("anneal_lr=1", "anneal_lr"),
        ("learning_rate=fast", "learning_rate"),
        ("hidden_sizes=[64, x]", r"hidden_sizes\[1\]"),
        ("hidden_sizes=64", "hidden_sizes"),
        ("gamma=1.5", "gamma"),
        ("network=transformer", "network"),
        ("device=tpu", "device"),
        ("num_steps=0", "num_steps"),
        ("target_kl=-1", "target_kl"),
        ("rules=no-such-rules", "rules"),
        ("pool_paths=[/no/such.pt]", r"pool_paths\[0\]"),
    ],
)
def test_config_bad_value_names_the_key(override, key):
    with pytest.raises(ConfigError, match=key):
        load_config(Args, None, [override])


def test_config_overrides_are_typed():
    args = load_config(
        Args, None, ["learning_rate=1e-3", "hidden_sizes=[64, 32]", "target_kl=null", "total_timesteps=1e6"]
    )
    assert args.learning_rate == 1e-3 and args.hidden_sizes == [64, 32] and args.target_kl is None
    assert args.total_timesteps == 1_000_000 and isinstance(args.total_timesteps, int)
    assert isinstance(load_config(Args, None, ["reward_scale=1"]).reward_scale, float)


def test_cli_reports_a_bad_key(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--set", "nope=1"])
    assert e.value.code == 2
    assert "unknown config key 'nope'" in capsys.readouterr().err


# ---- buffer and GAE along each seat's decisions ---------------------------------------------------
def _add(buf, table, seat, value):
    obs = torch.zeros((1, X_NUM_CHANNELS, 27), dtype=torch.int8)
    mask = torch.ones((1, 62), dtype=torch.int8)
    return int(
        buf.add([table], [seat], obs, mask, torch.zeros(1, dtype=torch.long), torch.zeros(1), torch.tensor([value]))[0]
    )


def _credit(buf, next_seat=0, pending=0.0, done=False, final=(0, 0, 0, 0)):
    buf.credit(np.array([next_seat]), np.array([pending], np.float32), np.array([done]), np.array([final], np.float32))


def test_gae_follows_each_seats_own_decisions():
    """A hand-made table: rewards go to the seat's previous decision, game ends are terminal."""
    g, lam = 0.9, 0.8
    buf = SelfPlayBuffer(1, 32, (X_NUM_CHANNELS, 27), 62)
    V = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    d0 = _add(buf, 0, 0, V[0])
    _credit(buf, next_seat=1)  # noqa: E702
    d1 = _add(buf, 0, 1, V[1])
    _credit(buf, next_seat=0)  # noqa: E702
    d2 = _add(buf, 0, 0, V[2])
    _credit(buf, next_seat=1, pending=0.5)  # noqa: E702  seat 1 got 0.5 since d1
    d3 = _add(buf, 0, 1, V[3])
    _credit(buf, next_seat=2, pending=-0.7)  # noqa: E702  seat 2 never acted: dropped
    d4 = _add(buf, 0, 2, V[4])
    _credit(buf, done=True, final=(1.0, -2.0, 3.0, -2.0))  # noqa: E702  seat 3: dropped
    d5 = _add(buf, 0, 3, V[5])
    _credit(buf, next_seat=0)  # noqa: E702  a new game: new chains
    d6 = _add(buf, 0, 0, V[6])
    _credit(buf, next_seat=3, pending=0.25)  # noqa: E702

    assert list(buf.next_idx[:7]) == [d2, d3, -1, -1, -1, -1, -1]
    np.testing.assert_allclose(buf.rewards[:7], [0, 0.5, 1.0, -2.0, 3.0, 0.25, 0])
    assert list(buf.terminal[:7]) == [False, False, True, True, True, False, False]
    assert list(buf.open_rows()) == [d5, d6]

    adv, ret, train = buf.compute_gae(g, lam)
    A = {d4: 3.0 - V[4], d3: -2.0 - V[3], d2: 1.0 - V[2]}
    A[d1] = 0.5 + g * V[3] - V[1] + g * lam * A[d3]
    A[d0] = 0.0 + g * V[2] - V[0] + g * lam * A[d2]
    assert list(train) == [d0, d1, d2, d3, d4]
    np.testing.assert_allclose(adv[train].numpy(), [A[d] for d in train], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ret[train].numpy(), [A[d] + V[d] for d in train], rtol=1e-6, atol=1e-6)

    # rollout boundary: the open decisions move to the front and keep their rewards and chains
    assert buf.carry_over() == 2
    np.testing.assert_allclose(buf.rewards[:2], [0.25, 0.0])
    assert buf.last_idx[0, 3] == 0 and buf.last_idx[0, 0] == 1 and buf.last_idx[0, 1] == -1
    buf.values[:2] = torch.tensor([0.6, 0.7])
    e = _add(buf, 0, 3, 0.8)
    _credit(buf, done=True, final=(0.5, 0.0, 0.0, -0.5))
    adv, _, train = buf.compute_gae(g, lam)
    assert list(train) == [0, 1, e]
    a_e = -0.5 - 0.8
    np.testing.assert_allclose(adv.numpy(), [0.25 + g * 0.8 - 0.6 + g * lam * a_e, 0.5 - 0.7, a_e], rtol=1e-6)


def _reference_gae(buf, gamma, lam):
    """GAE computed chain by chain in plain Python (the chains rebuilt from next_idx)."""
    n = buf.n
    vals = buf.values[:n].numpy()
    adv = {}
    heads = set(range(n)) - {int(x) for x in buf.next_idx[:n] if x >= 0}
    for h in heads:
        chain = [h]
        while buf.next_idx[chain[-1]] >= 0:
            chain.append(int(buf.next_idx[chain[-1]]))
        nxt_adv = None  # None: the successor is open (truncation)
        for i in reversed(range(len(chain))):
            d = chain[i]
            if buf.terminal[d]:
                adv[d] = buf.rewards[d] - vals[d]
            elif i + 1 < len(chain):
                nv = vals[chain[i + 1]]
                adv[d] = buf.rewards[d] + gamma * nv - vals[d] + gamma * lam * (nxt_adv or 0.0)
            else:
                adv[d] = None
            nxt_adv = adv[d]
    return adv


def test_buffer_credits_every_reward_of_random_play():
    """Random play on a VectorEnv (matches of 2 hands): every reward a seat receives after its
    first decision of a game is credited to one of its decisions, across rollout boundaries,
    and GAE matches a chain-by-chain reference."""
    B, T, gamma, lam = 16, 13, 0.97, 0.9
    env = VectorEnv(B, seed=5, hands_per_game=2)
    obs, mask, seat = env.reset()
    buf = SelfPlayBuffer(B, (T + 4) * B, (X_NUM_CHANNELS, 27), 62)
    rng = np.random.default_rng(0)
    acted = np.zeros((B, 4), dtype=bool)
    expected, credited = np.zeros((B, 4)), np.zeros((B, 4))
    terminals = games = 0
    for _rollout in range(12):
        for _ in range(T):
            values = torch.from_numpy(rng.normal(size=B).astype(np.float32))
            actions = (rng.random(mask.shape) * mask).argmax(1)
            actions[mask[:, 59] == 1] = 59  # always win when allowed: more hands with a score
            buf.add(
                np.arange(B),
                seat,
                torch.tensor(obs),  # a copy: the env's buffers are read-only
                torch.tensor(mask),
                torch.from_numpy(actions),
                torch.zeros(B),
                values,
            )
            acted[np.arange(B), seat] = True
            obs, mask, seat, rewards, done, info = env.step(actions)
            expected += rewards * acted
            games += int(done.sum())
            terminals += int(acted[done].sum())
            acted[done] = False
            buf.credit(seat, info["pending_reward"], done, info["final_reward"])
        n = buf.n
        # chains link decisions of the same (table, seat), forwards
        nx = buf.next_idx[:n]
        linked = np.flatnonzero(nx >= 0)
        assert (nx[linked] > linked).all()
        assert (buf.table[nx[linked]] == buf.table[linked]).all() and (buf.seat[nx[linked]] == buf.seat[linked]).all()
        adv, _, train = buf.compute_gae(gamma, lam)
        ref = _reference_gae(buf, gamma, lam)
        assert sorted(d for d, a in ref.items() if a is not None) == list(train)
        np.testing.assert_allclose(adv[train].numpy(), [ref[d] for d in train], rtol=1e-4, atol=1e-5)
        np.add.at(credited, (buf.table[train], buf.seat[train]), buf.rewards[train])
        terminals -= int(buf.terminal[:n].sum())
        buf.carry_over()
    n = buf.n  # still open at the end
    np.add.at(credited, (buf.table[:n], buf.seat[:n]), buf.rewards[:n])
    assert games > 10 and terminals == 0
    np.testing.assert_allclose(credited, expected, atol=1e-3)
    assert np.count_nonzero(expected) >= 8


# ---- model ------------------------------------------------------------------------------------
def test_binary_linear_sparse_equals_dense():
    torch.manual_seed(0)
    x = (torch.rand(33, 2619) < 0.07).to(torch.int8)
    x[5] = 0  # a row with no ones at all
    sparse, dense = BinaryLinear(2619, 24, "sparse"), BinaryLinear(2619, 24, "dense")
    dense.load_state_dict(sparse.state_dict())
    g = torch.randn(33, 24)
    ys, yd = sparse(x), dense(x)
    torch.testing.assert_close(ys, yd, rtol=1e-5, atol=1e-5)
    (ys * g).sum().backward()
    (yd * g).sum().backward()
    torch.testing.assert_close(sparse.weight.grad, dense.weight.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sparse.bias.grad, dense.bias.grad)


@pytest.mark.parametrize(
    "spec",
    [
        dict(network="mlp", hidden_sizes=[32]),
        dict(network="resnet", res_channels=8, res_blocks=1, hidden_sizes=[16]),
        dict(network="mlp", hidden_sizes=[16, 16], oracle_critic=True),
    ],
)
def test_policy_acts_legally(spec):
    env = VectorEnv(16, seed=3, oracle=spec.get("oracle_critic", False))
    obs, mask, _ = env.reset()
    policy = ActorCritic(**spec)
    for _ in range(20):
        for det in (True, False):
            a = policy.act(torch.tensor(obs), torch.tensor(mask), deterministic=det)
            assert a.dtype == torch.long and a.shape == (16,)
            assert (mask[np.arange(16), a.numpy()] == 1).all()
        oracle = torch.from_numpy(env._oracle) if spec.get("oracle_critic") else None
        _, logp, ent, value = policy.get_action_and_value(torch.tensor(obs), torch.tensor(mask), oracle=oracle)
        assert torch.isfinite(logp).all() and torch.isfinite(ent).all() and value.shape == (16,)
        obs, mask, *_ = env.step(a.numpy())


def test_the_env_threads_reach_the_host_work():
    # the rollout's hand features and the pool's heuristic run on the env's threads (a GPU host's
    # cores; docs/gpu.md), with the same result as one thread
    import numba

    from fzmj.train.opponents import OpponentPool

    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    pool = OpponentPool(8, 1.0, 1.0, 0, 1, np.random.default_rng(0), "cpu", threads=threads)
    assert pool.heuristic.threads == threads
    obs, _, _ = VectorEnv(256, seed=4).reset()
    policy = ActorCritic(hidden_sizes=[16], hand_features=True)
    np.testing.assert_array_equal(policy.prepare_host(obs, threads), policy.prepare_host(obs))


def test_pool_games_give_the_learner_its_seats_and_the_opponent_the_rest():
    from fzmj.train.opponents import HEURISTIC, LEARNER, OpponentPool

    B = 64
    pool = OpponentPool(
        B, prob=1.0, heuristic_frac=0.5, size=2, learner_seats=2, rng=np.random.default_rng(0), device="cpu"
    )
    learner = ActorCritic(hidden_sizes=[16])
    pool.assign(np.arange(B))
    assert (pool.controller == HEURISTIC).sum(1).tolist() == [2] * B  # no snapshot yet: heuristic only
    pool.add_snapshot(learner)
    pool.assign(np.arange(B))
    assert ((pool.controller == LEARNER).sum(1) == 2).all()
    kinds = {int(c) for c in pool.controller[pool.controller != LEARNER]}
    assert kinds == {HEURISTIC, 1}
    env = VectorEnv(B, seed=2)
    obs, mask, seat = env.reset()
    for _ in range(30):
        ctrl = pool.controller[np.arange(B), seat]
        actions = np.full(B, -1)
        pool.act(ctrl, obs, mask, actions)
        theirs = ctrl != LEARNER
        assert (actions[~theirs] == -1).all() and (mask[np.flatnonzero(theirs), actions[theirs]] == 1).all()
        actions[~theirs] = mask[~theirs].argmax(1)
        obs, mask, seat, _, done, _ = env.step(actions)
        pool.assign(np.flatnonzero(done))
    # a snapshot is frozen: training the learner does not change it
    with torch.no_grad():
        learner.actor.bias.add_(1.0)
    assert not torch.equal(pool.snapshots[0].actor.bias, learner.actor.bias)


# ---- end to end -------------------------------------------------------------------------------
def _scalar_tags(run_dir: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(run_dir), size_guidance={"scalars": 0, "tensors": 0})
    ea.Reload()
    return ea


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    assert (
        main(["--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={runs}", "--set", "run_name=smoke"])
        == 0
    )
    return runs / "smoke"


def test_smoke_run_logs_the_tags_and_saves_a_playable_checkpoint(smoke_run, tmp_path):
    ea = _scalar_tags(smoke_run)
    tags = ea.Tags()
    missing = [t for t in CLEANRL_TAGS + OUR_TAGS if t not in tags["scalars"]]
    assert not missing, f"missing TensorBoard tags: {missing}"
    assert any(t.startswith("config") for t in tags["tensors"])  # the config as text
    assert ea.Scalars("charts/SPS")[-1].step == 2048

    ckpt = smoke_run / "checkpoints" / "latest.pt"
    data = load_checkpoint(ckpt)
    assert data["update"] == 4 and data["global_step"] == 2048 and data["config"]["num_tables"] == 32
    assert data["optimizer"] is not None and "torch" in data["rng"] and len(data["pool"]) == 2
    policy = load_policy(ckpt)
    env = VectorEnv(8, seed=1)
    obs, mask, _ = env.reset()
    a = policy.act(torch.tensor(obs), torch.tensor(mask), deterministic=True)
    assert (mask[np.arange(8), a.numpy()] == 1).all()

    from fzmj.agents.evaluate import main as fzmj_eval

    out = tmp_path / "results.json"
    rc = fzmj_eval(["--agents", f"ppo:{ckpt}", "random", "--hands", "8", "--no-progress", "--out", str(out)])
    assert rc in (0, None)
    import json

    res = json.loads(out.read_text())
    assert res["agents"][f"ppo:{ckpt}"]["hands"] == 8


def test_resume_continues_where_it_stopped(smoke_run, tmp_path, capsys):
    import shutil

    run = tmp_path / "resumed"
    shutil.copytree(smoke_run / "checkpoints", run / "checkpoints")
    capsys.readouterr()
    assert (
        main(
            [
                "--resume",
                str(run / "checkpoints/update_000002.pt"),
                "--set",
                f"runs_dir={tmp_path}",
                "--set",
                "run_name=resumed",
                "--set",
                "eval_every=0",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "update 3/4 | step 1,536" in out and "update 1/" not in out
    data = load_checkpoint(run / "checkpoints/latest.pt")
    assert data["update"] == 4 and data["global_step"] == 2048
    # the resumed run's events continue at the saved step
    steps = [e.step for e in _scalar_tags(run).Scalars("charts/SPS")]
    assert steps == [1536, 2048]


def test_oracle_critic_and_resnet_train(tmp_path):
    assert (
        main(
            [
                "--config",
                str(ROOT / "configs/ppo_smoke.yaml"),
                "--set",
                f"runs_dir={tmp_path}",
                "--set",
                "run_name=oracle",
                "--set",
                "oracle_critic=true",
                "--set",
                "network=resnet",
                "--set",
                "res_channels=8",
                "--set",
                "res_blocks=1",
                "--set",
                "total_timesteps=1024",
                "--set",
                "eval_every=0",
                "--set",
                "pool_prob=0",
            ]
        )
        == 0
    )
    policy = load_policy(tmp_path / "oracle/checkpoints/latest.pt")
    assert policy.oracle_critic and policy.spec["network"] == "resnet"
