"""runs overwritten or written outside their folder.

A fresh run into a folder that holds a run is refused unless ``--overwrite`` is given (then the
old run's checkpoints and events are removed first); a run folder is locked while a run writes
to it; temporary checkpoint names are unique; run names are plain names; ``--resume`` writes in
the checkpoint's own run folder; a checkpoint's network spec is checked against its weights
before anything is built.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
import torch

from fzmj.agents.checkpoint import load_checkpoint, load_policy, save_checkpoint
from fzmj.train.config import ConfigError, load_config
from fzmj.train.model import ActorCritic
from fzmj.train.ppo_selfplay import Args, main, parse_args
from fzmj.train.run_dir import RunDirError, RunLock, check_run_name, open_run_dir, resume_run_dir

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--config", str(ROOT / "configs/ppo_smoke.yaml"),
    "--set", "num_tables=8", "--set", "num_steps=8", "--set", "total_timesteps=64",
    "--set", "hidden_sizes=[8]", "--set", "pool_prob=0", "--set", "eval_every=0",
]  # fmt: skip


# ---- run names ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["../../x", "/tmp/x", "a/b", "a\\b", ".", "..", "", ".hidden", "-rf", "a\x00b", "x" * 201]
)
def test_run_names_must_be_plain(name):
    with pytest.raises(RunDirError, match="not a plain name"):
        check_run_name(name)
    with pytest.raises(ConfigError, match="run_name"):
        load_config(Args, None, [f"run_name={name!r}"] if name else ["run_name=a/b"])


@pytest.mark.parametrize("name", ["quickstart", "ppo_default__1__1700000000", "cpu-2.x", "运行1"])
def test_plain_run_names_pass(name):
    assert check_run_name(name) == name


def test_exp_name_is_checked_too_it_makes_the_run_name():
    with pytest.raises(ConfigError, match="exp_name"):
        load_config(Args, None, ["exp_name=../up"])


# ---- fresh runs into an existing run folder -------------------------------------------------------
def _fake_run(run: Path) -> None:
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.pt").write_bytes(b"old")
    (run / "events.out.tfevents.1.host").write_bytes(b"old")
    (run / "notes.txt").write_text("mine")


def test_a_fresh_run_into_a_folder_holding_a_run_is_refused(tmp_path):
    run = tmp_path / "quickstart"
    _fake_run(run)
    with pytest.raises(RunDirError, match="already holds a run.*--overwrite"):
        open_run_dir(run, resume=False, overwrite=False)
    assert (run / "checkpoints" / "latest.pt").read_bytes() == b"old"


def test_overwrite_removes_the_old_runs_files_only(tmp_path):
    run = tmp_path / "quickstart"
    _fake_run(run)
    (run / "bc_dataset").mkdir()  # the old run's warm-start dataset (bc_save_dataset)
    (run / "bc_dataset" / "manifest.json").write_text("{}")
    lock = open_run_dir(run, resume=False, overwrite=True)
    lock.release()
    assert not (run / "checkpoints" / "latest.pt").exists() and not list(run.glob("events.out.tfevents*"))
    assert not (run / "bc_dataset").exists()
    assert (run / "notes.txt").read_text() == "mine"


def test_an_empty_or_new_folder_is_fine(tmp_path):
    (tmp_path / "empty").mkdir()
    open_run_dir(tmp_path / "empty", resume=False, overwrite=False).release()
    open_run_dir(tmp_path / "new" / "deeper", resume=False, overwrite=False).release()


def test_fzmj_train_twice_with_the_same_name_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """The issue's example: running the README quickstart twice mixed both runs' files."""
    import fzmj.train.run_setup as B

    _fake_run(tmp_path / "quickstart")

    def no_work(*a, **k):
        raise AssertionError("the refused run must not build its env")

    monkeypatch.setattr(B, "VectorEnv", no_work)
    rc = main(TINY + ["--set", f"runs_dir={tmp_path}", "--set", "run_name=quickstart"])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: run folder") and "--overwrite" in err[0]


# ---- one writer per folder -----------------------------------------------------------------------------
def test_a_run_folder_is_locked_while_a_run_writes(tmp_path):
    run = tmp_path / "r"
    first = open_run_dir(run, resume=False, overwrite=False)
    with pytest.raises(RunDirError, match=r"in use by another fzmj-train \(pid \d+\)"):
        open_run_dir(run, resume=True, overwrite=False)
    with pytest.raises(RunDirError, match="in use"):
        RunLock(run)
    first.release()
    open_run_dir(run, resume=True, overwrite=False).release()  # free again


def test_temporary_checkpoint_names_are_unique_and_cleaned_up(tmp_path, monkeypatch):
    policy = ActorCritic("mlp", [8])
    path = save_checkpoint(tmp_path / "latest.pt", policy, update=1)
    import fzmj.agents.checkpoint as C

    seen = []
    real_mkstemp = C.tempfile.mkstemp

    def spy(*a, **k):
        fd, name = real_mkstemp(*a, **k)
        seen.append(Path(name).name)
        return fd, name

    monkeypatch.setattr(C.tempfile, "mkstemp", spy)
    save_checkpoint(path, policy, update=2)
    save_checkpoint(path, policy, update=3)
    assert len(set(seen)) == 2 and all(n.startswith("latest.pt.") and n.endswith(".tmp") for n in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.pt"]


# ---- resume stays in the checkpoint's own folder ---------------------------------------------------------
def _checkpoint(path: Path, **config) -> Path:
    args = load_config(Args, ROOT / "configs/ppo_smoke.yaml", ["hidden_sizes=[8]"])
    cfg = dataclasses.asdict(args) | config
    return save_checkpoint(path, ActorCritic("mlp", [8]), config=cfg, update=1, global_step=512)


def test_resume_writes_beside_the_checkpoint_not_where_its_config_says(tmp_path):
    """The issue's example: runs_dir/run_name from a crafted checkpoint chose where the trainer wrote."""
    ckpt = _checkpoint(tmp_path / "mine" / "checkpoints" / "latest.pt", runs_dir="/somewhere/else", run_name="x")
    args, _ = parse_args(["--resume", str(ckpt)])
    assert Path(args.runs_dir) / args.run_name == (tmp_path / "mine").resolve()
    assert resume_run_dir(ckpt) == (tmp_path / "mine").resolve()


def test_resume_refuses_to_move_the_run_elsewhere(tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / "mine" / "checkpoints" / "latest.pt")
    with pytest.raises(SystemExit) as e:
        parse_args(["--resume", str(ckpt), "--set", "run_name=other"])
    assert e.value.code == 2
    assert "checkpoint's own run folder" in capsys.readouterr().err


def test_a_crafted_run_name_in_a_checkpoint_is_refused(tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / "mine" / "checkpoints" / "latest.pt", run_name="../../x")
    with pytest.raises(SystemExit) as e:
        parse_args(["--resume", str(ckpt)])
    assert e.value.code == 2 and "run_name" in capsys.readouterr().err


# ---- a checkpoint's spec against its weights ----------------------------------------------------------------
def test_a_huge_spec_with_small_weights_is_refused_before_anything_is_built(tmp_path):
    """The issue's example: hidden_sizes [100000, 100000] made fzmj-eval allocate 40 GB."""
    path = save_checkpoint(tmp_path / "p.pt", ActorCritic("mlp", [8]))
    data = torch.load(path, weights_only=True)
    data["policy_spec"]["hidden_sizes"] = [100000, 100000]
    torch.save(data, tmp_path / "huge.pt")
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="do not match policy_spec"):
        load_policy(tmp_path / "huge.pt")
    assert time.perf_counter() - t0 < 5  # shapes on the meta device: nothing allocated


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"network": "transformer"}, "does not describe a network"),
        ({"hidden_sizes": [-3]}, "does not describe a network"),
        ({"unknown_key": 1}, "does not describe a network"),
        ({"oracle_critic": True}, "missing"),
        ({"hidden_sizes": [16]}, "do not match"),
    ],
)
def test_specs_that_do_not_fit_the_weights(tmp_path, change, match):
    path = save_checkpoint(tmp_path / "p.pt", ActorCritic("mlp", [8]))
    data = torch.load(path, weights_only=True)
    data["policy_spec"].update(change)
    torch.save(data, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match=match):
        load_checkpoint(tmp_path / "bad.pt")


def test_missing_or_extra_weights_and_bad_counters(tmp_path):
    path = save_checkpoint(tmp_path / "p.pt", ActorCritic("mlp", [8]))
    data = torch.load(path, weights_only=True)
    data["model"].pop("actor.bias")
    torch.save(data, tmp_path / "missing.pt")
    with pytest.raises(ValueError, match="missing actor.bias"):
        load_checkpoint(tmp_path / "missing.pt")
    data = torch.load(path, weights_only=True)
    data["update"] = -5
    torch.save(data, tmp_path / "counter.pt")
    with pytest.raises(ValueError, match="update must be a non-negative integer"):
        load_checkpoint(tmp_path / "counter.pt")
