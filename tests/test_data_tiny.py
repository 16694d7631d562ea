"""The tiny dataset shipped for tests (tests/data/dataset-tiny: ``fzmj-data collect --agents
heuristic random --hands 16 --batch 16 --seed 55``): a dataset written by an earlier fzmj still
opens and replays, decision for decision, with this engine; its content still hashes to its digest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

from fzmj.data import open_dataset  # noqa: E402
from fzmj.data.cli import main  # noqa: E402

TINY = Path(__file__).parent / "data" / "dataset-tiny"


def test_the_shipped_dataset_replays(capsys):
    d = open_dataset(TINY)
    assert d.manifest["digest"] == "4ec53e884e199b36" and d.manifest["agents"] == [
        "heuristic",
        "random",
        "random",
        "random",
    ]
    assert main(["verify", str(TINY)]) == 0
    assert "602 decisions replayed" in capsys.readouterr().out
    batch = d.decisions(obs="v3", hand_features=True, privileged=True)
    assert len(batch["action"]) == 602 and batch["obs"].shape[1:] == (292 + 18, 27)


def test_verify_checks_the_digest(tmp_path, capsys):
    shutil.copytree(TINY, tmp_path / "d")
    m = json.loads((tmp_path / "d" / "manifest.json").read_text())
    m["digest"] = "0" * 16
    (tmp_path / "d" / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(SystemExit) as e:
        main(["verify", str(tmp_path / "d")])
    assert e.value.code == 2 and "is not its content's" in capsys.readouterr().err
