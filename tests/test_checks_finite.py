"""non-finite numbers.

Config values and constructor arguments are finite and in range; the trainer stops with a clear
error the moment a loss or a weight becomes non-finite and keeps its last good checkpoint; a
checkpoint with non-finite weights is refused by the loader (and never written).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

import fzmj_env as F
from fzmj.agents.checkpoint import load_checkpoint, load_policy, save_checkpoint
from fzmj.train.config import ConfigError, load_config
from fzmj.train.model import ActorCritic
from fzmj.train.ppo_selfplay import Args, main
from fzmj_env.checks import check_float, check_reward_scale

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--config", str(ROOT / "configs/ppo_smoke.yaml"),
    "--set", "num_tables=8", "--set", "num_steps=8", "--set", "total_timesteps=128",
    "--set", "hidden_sizes=[8]", "--set", "pool_prob=0", "--set", "eval_every=0", "--set", "save_every=1",
]  # fmt: skip


# ---- config ---------------------------------------------------------------------------------------
BAD_FLOATS = [
    ("reward_scale", ".nan"), ("reward_scale", ".inf"), ("reward_scale", "0"), ("reward_scale", "-1"),
    ("learning_rate", ".inf"), ("learning_rate", ".nan"), ("learning_rate", "-.inf"), ("learning_rate", "2"),
    ("clip_coef", ".nan"), ("clip_coef", "0"), ("clip_coef", "-0.2"), ("clip_coef", ".inf"),
    ("ent_coef", ".nan"), ("ent_coef", "-0.01"), ("ent_coef", ".inf"),
    ("vf_coef", ".nan"), ("vf_coef", "-1"), ("vf_coef", ".inf"),
    ("max_grad_norm", ".nan"), ("max_grad_norm", "0"), ("max_grad_norm", ".inf"),
    ("target_kl", ".nan"), ("target_kl", ".inf"),
    ("gamma", ".nan"), ("gae_lambda", ".nan"), ("pool_prob", ".nan"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "value"), BAD_FLOATS)
def test_config_refuses_non_finite_and_out_of_range_floats(key, value):
    with pytest.raises(ConfigError, match=f"^{key}: expected"):
        load_config(Args, None, [f"{key}={value}"])


def test_config_accepts_the_edges_that_make_sense():
    args = load_config(Args, None, ["ent_coef=0", "vf_coef=0", "gamma=1", "target_kl=null", "learning_rate=1e-6"])
    assert args.ent_coef == 0 and args.target_kl is None


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_fzmj_train_nan_reward_scale_is_a_usage_error(value, capsys):
    """The issue's example: --set reward_scale=.nan trained to the end on NaN weights, exit 0."""
    with pytest.raises(SystemExit) as e:
        main(TINY + ["--set", f"reward_scale={value}"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("fzmj-train: error: reward_scale: expected a finite number")


# ---- constructors ------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf, 0.0, -1.0, "1", None, True])
def test_envs_refuse_bad_reward_scales(scale):
    with pytest.raises(ValueError, match="reward_scale"):
        F.env(reward_scale=scale)
    with pytest.raises(ValueError, match="reward_scale"):
        F.VectorEnv(2, reward_scale=scale)


def test_check_float():
    assert check_float("x", 3, lo=0.0) == 3.0
    assert check_reward_scale(0.02) == 0.02
    for bad in (math.nan, math.inf, "3", None, True):
        with pytest.raises(ValueError, match="^x must be"):
            check_float("x", bad)
    with pytest.raises(ValueError, match=r"x must be in \(0.0, 1.0\]"):
        check_float("x", 0.0, lo=0.0, hi=1.0, lo_open=True)


# ---- checkpoints ------------------------------------------------------------------------------
def _poison(path: Path, out: Path, key: str = "model") -> Path:
    data = torch.load(path, weights_only=True)
    sd = data[key] if key == "model" else data[key][0]
    name = next(k for k, v in sd.items() if v.is_floating_point())
    sd[name][0] = float("nan")
    torch.save(data, out)
    return out


def test_loader_refuses_non_finite_weights(tmp_path):
    good = save_checkpoint(tmp_path / "good.pt", ActorCritic("mlp", [8]))
    assert load_policy(good) is not None
    bad = _poison(good, tmp_path / "nan.pt")
    for load in (load_checkpoint, load_policy):
        with pytest.raises(ValueError, match="non-finite weights"):
            load(bad)


def test_fzmj_eval_refuses_a_nan_checkpoint(tmp_path, capsys):
    from fzmj.agents.evaluate import main as fzmj_eval

    good = save_checkpoint(tmp_path / "good.pt", ActorCritic("mlp", [8]))
    bad = _poison(good, tmp_path / "nan.pt")
    with pytest.raises(SystemExit) as e:
        fzmj_eval(["--agents", f"ppo:{bad}", "random", "--hands", "4", "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "non-finite weights" in err[0]


def test_pool_snapshots_are_checked_too(tmp_path):
    policy = ActorCritic("mlp", [8])
    snapshot = {k: v.clone() for k, v in policy.state_dict().items()}
    path = save_checkpoint(tmp_path / "p.pt", policy, pool=[snapshot])
    load_checkpoint(path)
    with pytest.raises(ValueError, match="pool snapshot 0: non-finite"):
        load_checkpoint(_poison(path, tmp_path / "bad_pool.pt", key="pool"))


def test_save_checkpoint_never_replaces_a_good_file_by_a_poisoned_one(tmp_path):
    policy = ActorCritic("mlp", [8])
    path = save_checkpoint(tmp_path / "latest.pt", policy, update=1)
    with torch.no_grad():
        policy.actor.weight[0, 0] = float("inf")
    with pytest.raises(ValueError, match="non-finite"):
        save_checkpoint(path, policy, update=2)
    assert load_checkpoint(path)["update"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["latest.pt"]  # no temporary left behind


# ---- the trainer stops at the first non-finite loss / weight ---------------------------------------
def test_trainer_stops_on_non_finite_weights_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch, capsys):
    import fzmj.train.run_setup as T

    real = T.make_optimizer

    def poisoning_optimizer(agent, lr):
        opt = real(agent, lr)
        step = opt.step
        calls = {"n": 0}

        def poisoned_step(*a, **k):  # from the second update on, the step writes NaN
            calls["n"] += 1
            out = step(*a, **k)
            if calls["n"] > 4:  # update 1 = 2 epochs x 2 minibatches
                with torch.no_grad():
                    next(agent.parameters()).fill_(float("nan"))
            return out

        opt.step = poisoned_step
        return opt

    monkeypatch.setattr(T, "make_optimizer", poisoning_optimizer)
    rc = main(TINY + ["--set", f"runs_dir={tmp_path}", "--set", "run_name=nan", "--set", "total_timesteps=256"])
    assert rc == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: update 2: ")
    assert "non-finite" in err[0] and "last good checkpoint" in err[0]
    latest = tmp_path / "nan/checkpoints/latest.pt"
    data = load_checkpoint(latest)  # finite, or the loader would refuse it
    assert data["update"] == 1
    assert not (tmp_path / "nan/checkpoints/update_000002.pt").exists()


def test_non_finite_loss_is_named(monkeypatch):
    from fzmj.train.run_checks import NonFiniteError, check_finite_loss, check_finite_weights

    nan = torch.tensor(float("nan"))
    with pytest.raises(NonFiniteError, match="update 3: the loss became non-finite \\(value_loss\\)"):
        check_finite_loss(nan, 3, {"policy_loss": torch.tensor(1.0), "value_loss": nan})
    check_finite_loss(torch.tensor(1.0), 3, {})
    net = torch.nn.Linear(2, 2)
    check_finite_weights(net, 1)
    with torch.no_grad():
        net.bias[0] = float("inf")
    with pytest.raises(NonFiniteError, match="non-finite weights in bias"):
        check_finite_weights(net, 1)
