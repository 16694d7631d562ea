"""The warm start's games as a dataset (``bc_save_dataset``, train/bc_record.py): the games the
teacher played become a dataset of fzmj.data's format whose replay gives the in-memory
demonstrations bit for bit (and the ends of the hands running at the cut), and turning the key on
changes nothing the run trains."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

pytest.importorskip("pyarrow")

from fzmj.agents.checkpoint import load_checkpoint  # noqa: E402
from fzmj.data import open_dataset  # noqa: E402
from fzmj.train.bc import collect_demonstrations  # noqa: E402
from fzmj.train.bc_dataset import dataset_demonstrations  # noqa: E402
from fzmj.train.bc_record import HandRecorder, write_warm_start_dataset  # noqa: E402
from fzmj.train.ppo_selfplay import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLES, DECISIONS, SEED = 8, 400, 5


def _rows(obs, mask, action, ret) -> list[bytes]:
    """Each decision as bytes (planes, mask, action, return), to compare two sets of decisions."""
    obs, mask = np.asarray(obs), np.asarray(mask)
    action, ret = np.asarray(action, np.int64), np.asarray(ret, np.float32)
    return [obs[i].tobytes() + mask[i].tobytes() + action[i].tobytes() + ret[i].tobytes() for i in range(len(action))]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    kw = dict(num_tables=TABLES, seed=SEED, gamma=1.0, progress=False)
    plain = collect_demonstrations("heuristic", DECISIONS, **kw)
    record = HandRecorder()
    demos = collect_demonstrations("heuristic", DECISIONS, record=record, **kw)
    run = tmp_path_factory.mktemp("run")
    manifest = write_warm_start_dataset(run, record, "heuristic")
    return plain, demos, run / "bc_dataset", manifest


def test_recording_leaves_the_demonstrations_as_they_are(recorded):
    plain, demos, _, _ = recorded
    for name in ("obs", "mask", "action", "ret", "played"):
        assert torch.equal(getattr(plain, name), getattr(demos, name)), name
    assert np.array_equal(plain.table, demos.table) and np.array_equal(plain.seat, demos.seat)


def test_the_dataset_replays_into_the_in_memory_decisions(recorded):
    _, demos, folder, manifest = recorded
    data = open_dataset(folder)  # every shard checked; the replay checks every decision and the points
    assert manifest["complete"] and manifest["digest"] and data.agents == ("heuristic",) * 4
    args = SimpleNamespace(rules="fuzhou-lianzhong", obs_version=2, reward_scale=0.02, gamma=1.0)
    d = dataset_demonstrations(str(folder), 10**9, args, oracle=False)  # every decision with a choice
    memory = _rows(demos.obs, demos.mask, demos.action, demos.ret)
    stored = _rows(d["obs"], d["mask"], d["action"], d["ret"])
    left = list(stored)
    for row in memory:  # each in-memory decision is in the dataset, as many times
        left.remove(row)
    # the rest: the ends of the hands running at the cut, at most one hand per table
    longest = int(np.max(np.bincount(d["table"])))
    assert 0 <= len(left) <= TABLES * longest
    assert len(stored) == len(memory) + len(left)
    assert len(np.unique(d["table"])) == manifest["counts"]["hands"]  # each hand its own game, none empty


def _train(tmp_path, name, *extra) -> Path:
    argv = [
        "--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", f"run_name={name}",
        "--set", "eval_every=0", "--set", "bc_decisions=300", "--set", "bc_epochs=1", "--set", "bc_eval_hands=0",
        "--set", "total_timesteps=512", "--deterministic", *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    return tmp_path / name


def test_the_key_changes_no_weight_and_its_dataset_clones_again(tmp_path):
    off = _train(tmp_path, "plain")
    on = _train(tmp_path, "saved", "--set", "bc_save_dataset=true")
    assert not (off / "bc_dataset").exists() and (on / "bc_dataset" / "manifest.json").is_file()
    for ckpt in ("bc.pt", "latest.pt"):
        a, b = (load_checkpoint(run / "checkpoints" / ckpt)["model"] for run in (off, on))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), ckpt
    again = _train(tmp_path, "again", "--set", f"bc_dataset={on / 'bc_dataset'}")
    assert (again / "checkpoints" / "bc.pt").is_file()


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--set", "bc_decisions=0"], "needs bc_decisions > 0"),
        (["--set", "hands_per_game=2"], "needs hands_per_game 1"),
    ],
)
def test_a_config_the_key_cannot_serve_is_refused_in_one_line(tmp_path, capsys, extra, says):
    argv = ["--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", "run_name=t",
            "--set", "bc_decisions=300", "--set", "bc_save_dataset=true", *extra]  # fmt: skip
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "bc_save_dataset" in err[0] and says in err[0], err
