"""The warm start from a dataset (``bc_dataset``, train/bc_dataset.py): a recorded dataset is
cloned like the teacher's own games, with the same returns; one of another preset is refused before
the run starts."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from fzmj.data import collect  # noqa: E402
from fzmj.train.bc_dataset import dataset_demonstrations  # noqa: E402
from fzmj.train.ppo_selfplay import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bc") / "heuristic"
    collect(folder, ["heuristic"], 64, seed=9, batch=32, progress=False, log=lambda *_: 0)
    return folder


def test_returns_follow_each_seats_chain(dataset):
    args = SimpleNamespace(rules="fuzhou-lianzhong", obs_version=2, reward_scale=0.02, gamma=0.5)
    d = dataset_demonstrations(str(dataset), 200, args, oracle=False)
    n = len(d["action"])
    assert 0 < n <= 200 and (d["mask"].sum(1) > 1).all()
    assert d["mask"][np.arange(n), d["action"]].all()
    games, seats, ret = d["table"], d["seat"], d["ret"].numpy()
    for g, s in {(int(a), int(b)) for a, b in zip(games, seats, strict=True)}:
        chain = ret[(games == g) & (seats == s)]  # in order of play
        assert np.allclose(chain[:-1], chain[1:] * 0.5)  # one gamma per later decision of the seat
    one = dataset_demonstrations(str(dataset), 200, SimpleNamespace(**{**vars(args), "gamma": 1.0}), oracle=False)
    points = one["ret"].numpy() / 0.02
    assert np.allclose(points, np.round(points), atol=1e-3) and (points != 0).any()


def _argv(tmp_path, dataset, *extra):
    return [
        "--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", "run_name=t",
        "--set", "eval_every=0", "--set", f"bc_dataset={dataset}", *extra,
    ]  # fmt: skip


def test_a_smoke_run_warm_starts_from_a_dataset(tmp_path, dataset, capsys):
    argv = _argv(tmp_path, dataset, "--set", "bc_decisions=500", "--set", "bc_eval_hands=8", "--set", "bc_epochs=1")
    assert main([*argv, "--set", "hand_features=true", "--set", "teacher_coef=0.1"]) == 0
    assert (tmp_path / "t" / "checkpoints" / "bc.pt").is_file()
    assert f"of the dataset {dataset}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--set", "bc_decisions=500", "--set", "rules=fuzhou-home"], "bc_dataset: .*collected on preset"),
        ([], "bc_dataset: .*needs bc_decisions > 0"),
    ],
)
def test_a_dataset_the_run_cannot_clone_is_refused(tmp_path, dataset, capsys, extra, match):
    with pytest.raises(SystemExit) as e:
        main(_argv(tmp_path, dataset, *extra))
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1
    import re

    assert re.search(match, err[0]), err
    assert not (tmp_path / "t").exists()


def test_the_all_seeing_teacher_labels_a_dataset(dataset):
    """``bc_teacher: oracle:defend`` with a dataset: its states, the teacher's labels (from each
    decision's hidden state, rebuilt by the replay), the dataset's actions kept as ``played``."""
    args = SimpleNamespace(rules="fuzhou-lianzhong", obs_version=2, reward_scale=0.02, gamma=1.0)
    plain = dataset_demonstrations(str(dataset), 2000, SimpleNamespace(**vars(args), bc_teacher="heuristic"), False)
    taught = dataset_demonstrations(
        str(dataset), 2000, SimpleNamespace(**vars(args), bc_teacher="oracle:defend"), False
    )
    n = len(taught["action"])
    assert np.array_equal(taught["played"], plain["action"]) and taught["oracle"] is None
    assert taught["mask"][np.arange(n), taught["action"]].all()
    assert (taught["action"] != taught["played"]).any()  # it steers away from what it sees is dangerous
