"""The tutorial notebook (examples/data_tutorial.ipynb: collect, load, clone, evaluate) runs as
written, at a small size: its code cells in order, in a fresh folder (no Jupyter needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "data_tutorial.ipynb"


def test_the_tutorial_notebook_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FZMJ_TUTORIAL_HANDS", "200")
    monkeypatch.setenv("FZMJ_TUTORIAL_EVAL_HANDS", "100")
    monkeypatch.setenv("FZMJ_TUTORIAL_EPOCHS", "1")
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert len(code) == 5 and all(not c.get("outputs") for c in cells if c["cell_type"] == "code")
    namespace: dict = {}
    for source in code:
        exec(compile(source, str(NOTEBOOK), "exec"), namespace)  # noqa: S102 - our own notebook
    out = capsys.readouterr().out
    assert "digest" in out and "accuracy" in out and "clone vs 3x random" in out and "clone vs 3x heuristic" in out
