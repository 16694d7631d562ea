"""fzmj-train --resume trusts only what --set could set: a crafted or damaged checkpoint is
refused in one line (exit 2) before anything is imported, read elsewhere or written; keys that
are checked before the start (agent specs, the warm start's checkpoint, sizes) likewise."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from fzmj.agents.checkpoint import load_checkpoint, save_checkpoint
from fzmj.train.config import load_config
from fzmj.train.model import ActorCritic
from fzmj.train.ppo_selfplay import Args, parse_args

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs/ppo_smoke.yaml")
TINY = [
    "--config", SMOKE,
    "--set", "num_tables=8", "--set", "num_steps=8", "--set", "total_timesteps=64",
    "--set", "hidden_sizes=[8]", "--set", "pool_prob=0", "--set", "eval_every=0",
]  # fmt: skip
EVIL = "import pathlib\npathlib.Path('IMPORTED').write_text('code ran')\nclass Evil:\n    def act(self, obs, mask):\n        return 0\n"


@pytest.fixture
def fzmj_train(monkeypatch):
    """fzmj-train whose env must never be built (every error here comes before the work)."""
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as B

    def no_work(*a, **k):
        raise AssertionError("the run started before its input was checked")

    monkeypatch.setattr(B, "VectorEnv", no_work)
    return T.main


def _usage_error(capsys, fn, argv) -> str:
    with pytest.raises(SystemExit) as e:
        fn(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: "), err
    return err[0]


def _checkpoint(tmp_path: Path, settings: dict | None = None, **fields) -> Path:
    """A resumable checkpoint of a tiny smoke run, its stored config updated with ``settings``."""
    args = load_config(Args, SMOKE, ["hidden_sizes=[8]", "pool_prob=0"])
    policy = ActorCritic("mlp", [8])
    from fzmj.train.torch_setup import make_optimizer

    stored = {**dataclasses.asdict(args), **(settings or {})}
    state = dict(optimizer=make_optimizer(policy, 1e-3), config=stored, update=1, global_step=512)
    state.update(rng={"torch": torch.get_rng_state(), "numpy": np.random.default_rng(1).bit_generator.state})
    state.update(fields)
    return save_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt", policy, **state)


def test_a_sound_checkpoint_resumes_in_its_own_folder(tmp_path):
    ckpt = _checkpoint(tmp_path, {"runs_dir": "/elsewhere", "run_name": "other"})
    args, data = parse_args(["--resume", str(ckpt)])
    assert Path(args.runs_dir) / args.run_name == (tmp_path / "run").resolve()
    assert data["update"] == 1


# ---- keys naming code or places are taken from the command line only ------------------------------------
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("pool_target", "python:evilmod:Evil"),
        ("bc_teacher", "python:evilmod:Evil"),
        ("pool_target", "ppo:/tmp/somewhere.pt"),
        ("league_dir", "LEAGUE"),
        ("pool_paths", ["/tmp/a.pt"]),
        ("bc_checkpoint", "/tmp/bc.pt"),
        ("bc_dataset", "/tmp/some-dataset"),
        ("rules", "/tmp/rules.yaml"),
    ],
)
def test_a_checkpoint_cannot_import_code_or_redirect_files(fzmj_train, capsys, tmp_path, monkeypatch, key, value):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evilmod.py").write_text(EVIL)
    stored = {key: value, "pool_prob": 0.5} if key == "pool_target" else {key: value}
    if key == "bc_teacher":
        stored.update(teacher_coef=0.1, teacher_mode="ce")
    ckpt = _checkpoint(tmp_path, stored)
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])
    assert f"sets {key}=" in line and "command line only" in line and f"--set {key}=" in line
    assert not (tmp_path / "IMPORTED").exists() and "evilmod" not in sys.modules
    assert not (tmp_path / "LEAGUE").exists()
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["checkpoints"]  # nothing written


def test_a_stored_preset_name_is_kept(tmp_path):
    ckpt = _checkpoint(tmp_path, {"rules": "fuzhou-home"})
    args, _ = parse_args(["--resume", str(ckpt)])
    assert args.rules == "fuzhou-home"


def test_a_value_a_shipped_config_sets_is_kept(tmp_path):
    # ppo_oracle's teacher, ppo_oracle_phase2's start: package code and data, so the documented
    # recipes resume with --resume PATH alone; anything else is still refused (above)
    ckpt = _checkpoint(tmp_path, {"bc_teacher": "oracle:defend", "teacher_coef": 0.1, "bc_decisions": 2000})
    args, _ = parse_args(["--resume", str(ckpt)])
    assert args.bc_teacher == "oracle:defend"
    from fzmj.train.config_checks import shipped_values

    assert shipped_values()["bc_checkpoint"] == ["pretrained:v2"] and shipped_values()["pool_paths"] == []


def test_the_command_line_may_give_those_keys_again(tmp_path):
    ckpt = _checkpoint(tmp_path, {"pool_target": "python:evilmod:Evil", "pool_prob": 0.5})
    args, _ = parse_args(["--resume", str(ckpt), "--set", "pool_target=heuristic"])
    assert args.pool_target == "heuristic" and args.pool_prob == 0.5


@pytest.mark.parametrize(
    ("stored", "match"),
    [
        ({"num_tables": "abc"}, "num_tables: expected an integer"),
        ({"seed": -1}, "seed: expected a non-negative integer"),
        ({"gamma": float("nan")}, "gamma"),
        ({"eval_records": -1}, "eval_records"),
        ({"hidden_sizes": "big"}, "hidden_sizes"),
        ({"no_such_key": 1}, "unknown config key"),
        ({"num_tables": 10**30}, "num_tables: expected at most"),
        ({"exp_name": "../x"}, "exp_name"),
    ],
)
def test_the_stored_config_is_checked_like_a_config_file(fzmj_train, capsys, tmp_path, stored, match):
    ckpt = _checkpoint(tmp_path, stored)
    assert match in _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])


# ---- mistyped fields: one line, never a TypeError ----------------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"config": ["not", "a", "dict"]}, "holds no training config"),
        ({"update": "3"}, "update"),
        ({"update": -1}, "update"),
        ({"global_step": 1.5}, "global_step"),
        ({"world_size": 0}, "world_size"),
        ({"world_size": "2"}, "world_size"),
        ({"rng": "seeded"}, "rng is a str"),
        ({"rng": {"torch": torch.zeros(3)}}, "rng:"),
        ({"rng": {"numpy": {"bit_generator": "nope"}}}, "rng:"),
        ({"pool": {"a": 1}}, "pool"),
        ({"pool": [{"weight": torch.zeros(2)}]}, "pool"),
        ({"optimizer": {"state": 5, "param_groups": "x"}}, "optimizer"),
        ({"optimizer": {"state": {}, "param_groups": [{"params": [0]}]}}, "optimizer"),
    ],
)
def test_mistyped_checkpoint_fields_are_one_line(fzmj_train, capsys, tmp_path, fields, match):
    ckpt = _rewrite(_checkpoint(tmp_path), **fields)
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])
    assert match in line and str(ckpt) in line


def _rewrite(path: Path, **changes) -> Path:
    data = torch.load(path, weights_only=True)
    data.update(changes)
    torch.save(data, path)
    return path


@pytest.mark.parametrize(
    "changes",
    [
        {"version": "x"},
        {"policy_spec": 5},
        {"policy_spec": {"network": "mlp", "hidden_sizes": "a"}},
        {"model": [1, 2]},
        {"version": None},
        {"policy_spec": {"network": "mlp", "hidden_sizes": [8], "obs_planes": "many"}},
    ],
)
def test_load_checkpoint_never_raises_type_errors(fzmj_train, capsys, tmp_path, changes):
    ckpt = _rewrite(_checkpoint(tmp_path), **changes)
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])
    assert str(ckpt) in line
    # the same file as a fixed opponent of a fresh run
    line = _usage_error(capsys, fzmj_train, TINY + ["--set", "pool_prob=0.5", "--set", f"pool_paths=['{ckpt}']"])
    assert "pool_paths[0]" in line


def test_load_checkpoint_mistyped_version_is_a_value_error(tmp_path):
    ckpt = _rewrite(_checkpoint(tmp_path), version=[1])
    with pytest.raises(ValueError, match=r"latest.pt: version must be an integer, got \[1\]"):
        load_checkpoint(ckpt)


# ---- checked before the run folder is made -------------------------------------------------------------------
def test_a_bad_bc_checkpoint_is_refused_before_the_run_folder_exists(fzmj_train, capsys, tmp_path):
    junk = tmp_path / "bc.pt"
    junk.write_text("not a checkpoint")
    runs = tmp_path / "runs"
    argv = TINY + ["--set", f"runs_dir={runs}", "--set", "run_name=r", "--set", f"bc_checkpoint={junk}"]
    assert "bc_checkpoint" in _usage_error(capsys, fzmj_train, argv)
    assert not runs.exists()
    other = save_checkpoint(tmp_path / "wide.pt", ActorCritic("mlp", [16]))
    argv[-1] = f"bc_checkpoint={other}"
    line = _usage_error(capsys, fzmj_train, argv)
    assert "bc_checkpoint" in line and "hidden_sizes" in line
    assert not runs.exists()


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (["pool_prob=0.5", "pool_target=nope"], "pool_target: unknown agent spec 'nope'"),
        (["pool_prob=0.5", "pool_target=python:no_such_module_here:X"], "pool_target: bad agent spec"),
        (["bc_decisions=100", "bc_teacher=nope"], "bc_teacher: unknown agent spec"),
        (["teacher_coef=0.1", "teacher_mode=ce", "bc_teacher=ppo:/no/such.pt"], "bc_teacher"),
        (["bc_decisions=1000000000000"], "bc_decisions"),
        (["eval_records=-1"], "eval_records: expected a non-negative integer"),
        (["eval_records=10000000000"], "eval_records: expected at most"),
        (["teacher_coef=.inf", "teacher_mode=ce"], "teacher_coef: expected a finite number"),
        (["bc_learning_rate=.nan"], "bc_learning_rate"),
        (["dist_timeout=.inf"], "dist_timeout"),
        (["bc_batch_size=0"], "bc_batch_size: expected a positive integer"),
    ],
)
def test_bad_keys_are_refused_up_front(fzmj_train, capsys, tmp_path, overrides, match):
    runs = tmp_path / "runs"
    argv = TINY + ["--set", f"runs_dir={runs}"]
    for o in overrides:
        argv += ["--set", o]
    assert match in _usage_error(capsys, fzmj_train, argv)
    assert not runs.exists()


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_passes_every_check(path):
    from fzmj.train.config_checks import check_before_start

    args = load_config(Args, path, ["device=cpu"])  # the checks of the device itself need its machine
    check_before_start(args)


def test_update_disagreeing_with_global_step_is_refused(fzmj_train, capsys, tmp_path):
    """10**6 updates at 2,048 env steps: every update plays at least one step, so it is refused."""
    ckpt = _checkpoint(tmp_path, update=10**6, global_step=2048)
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])
    assert "update 1,000,000 disagrees with global_step 2,048" in line and str(ckpt) in line


def test_resuming_a_finished_run_copied_elsewhere_says_so_and_writes_nothing(fzmj_train, capsys, tmp_path):
    """A finished run's checkpoint copied out of its checkpoints/ folder: it printed 'done ...
    checkpoint DIR/checkpoints/latest.pt', a file it never wrote. Now one line says the run is
    finished, nothing is written (no checkpoints/ folder, no lock), and how to train on."""
    done = _checkpoint(tmp_path, {"total_timesteps": 512, "num_tables": 8, "num_steps": 8}, update=8, global_step=512)
    copy = tmp_path / "elsewhere" / "final.pt"
    copy.parent.mkdir()
    copy.write_bytes(done.read_bytes())
    assert fzmj_train(["--resume", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "finished run (8 of 8 updates, 512 steps): nothing to train, nothing written" in out
    assert f"run folder {copy.parent.resolve()}" in out and "checkpoints/latest.pt" not in out
    assert sorted(p.name for p in copy.parent.iterdir()) == ["final.pt"]


def test_a_missing_latest_names_the_checkpoints_the_folder_holds(fzmj_train, capsys, tmp_path):
    """A run killed during its very first latest.pt write leaves update_000001.pt only (issue 58)."""
    ckpt = _checkpoint(tmp_path)
    ckpt.rename(ckpt.with_name("update_000001.pt"))
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])
    assert line.endswith(
        f"checkpoint not found: {ckpt}; its folder holds update_000001.pt (resume from the newest, update_000001.pt)"
    )
    line = _usage_error(capsys, fzmj_train, ["--resume", str(tmp_path / "nowhere" / "latest.pt")])
    assert line.endswith(f"checkpoint not found: {tmp_path / 'nowhere' / 'latest.pt'}")


def test_a_non_finite_optimizer_state_is_named_as_such(fzmj_train, capsys, tmp_path):
    from fzmj.train.torch_setup import make_optimizer

    policy = ActorCritic("mlp", [8])
    opt = make_optimizer(policy, 1e-3)
    sum((p * p).sum() for p in policy.parameters()).backward()
    opt.step()  # Adam's moments exist
    ckpt = _checkpoint(tmp_path, optimizer=opt)
    data = torch.load(ckpt, weights_only=True)
    state = next(iter(data["optimizer"]["state"].values()))
    state["exp_avg_sq"][0] = float("nan")
    torch.save(data, ckpt)
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt)])
    assert "the checkpoint's optimizer state is not finite ('exp_avg_sq' holds NaN or inf)" in line
    assert "learning_rate" not in line and str(ckpt) in line
