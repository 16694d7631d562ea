"""The tutorial notebook (examples/data_tutorial.ipynb: collect, load, clone, evaluate) runs as
written, at a small size: its code cells in order, in a fresh folder (no Jupyter needed). Its saved
outputs (what the docs site shows, docs/hooks/notebook_page.py) are a real run's: the same lines as the
small run prints, numbers aside (``examples/run_notebook.py`` saves them)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "data_tutorial.ipynb"
_spec = importlib.util.spec_from_file_location("run_notebook", ROOT / "examples" / "run_notebook.py")
run_notebook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_notebook)


def test_the_tutorial_notebook_runs_and_prints_what_its_saved_outputs_show(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FZMJ_TUTORIAL_HANDS", "200")
    monkeypatch.setenv("FZMJ_TUTORIAL_EVAL_HANDS", "100")
    monkeypatch.setenv("FZMJ_TUTORIAL_EPOCHS", "1")
    printed = run_notebook.run_code_cells(NOTEBOOK)
    out = "".join(printed)
    assert "digest" in out and "accuracy" in out and "clone vs 3x random" in out and "clone vs 3x heuristic" in out
    saved = run_notebook.saved_outputs(json.loads(NOTEBOOK.read_text(encoding="utf-8")))
    assert len(saved) == len(printed) == 5
    assert "".join(saved), "the notebook carries no saved outputs: python examples/run_notebook.py " + str(NOTEBOOK)
    # the saved run had more epochs: compare the epoch lines by their shape, the others line for line
    for cell, (old, new) in enumerate(zip(saved, printed, strict=True)):
        old_shapes, new_shapes = run_notebook.line_shapes(old), run_notebook.line_shapes(new)
        assert set(old_shapes) == set(new_shapes), (cell, old, new)
        assert (len(old_shapes) == len(new_shapes)) or old_shapes[0].startswith("epoch"), (cell, old, new)


def test_the_notebook_text_quotes_its_saved_outputs():
    """The figures its introduction quotes are those of the saved run (not of an older one)."""
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    intro = "".join(notebook["cells"][0]["source"])
    saved = "".join(run_notebook.saved_outputs(notebook))
    quoted = re.findall(r"([+-]\d+\.\d) points per hand \[95% CI ([+-]\d+\.\d), ([+-]\d+\.\d)\]", intro)
    assert len(quoted) == 2, intro
    for (mean, lo, hi), opponent in zip(quoted, ("random", "heuristic"), strict=True):
        line = re.search(
            rf"clone vs 3x {opponent}: ([+-][\d.]+) points per hand, 95% CI \[([+-][\d.]+), ([+-][\d.]+)\]", saved
        )
        assert line, saved
        assert [float(x) for x in (mean, lo, hi)] == [round(float(x), 1) for x in line.groups()], (opponent, line[0])
