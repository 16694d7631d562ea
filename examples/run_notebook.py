"""Run a notebook's code cells in order and save what each printed as its outputs (no Jupyter needed).

    python examples/run_notebook.py examples/data_tutorial.ipynb

The cells run in one namespace, in a fresh temporary folder (the tutorial's dataset is written
there, not into the checkout), at the size the notebook's own settings give (its ``FZMJ_TUTORIAL_*``
variables, if set). Each code cell's standard output becomes its saved ``stream`` output and its
execution count is set, so the docs site (docs/hooks/notebook_page.py) shows a real run's outputs and a
reader opening the file sees them too. ``tests/test_data_notebook.py`` runs the same cells at a
small size with :func:`run_code_cells` and compares the lines with the saved ones, numbers aside.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import tempfile
from pathlib import Path

from fzmj_env.atomic import write_atomic

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?")
DIGEST = re.compile(r"\b[0-9a-f]{16}\b")  # a dataset's digest (fzmj.data.format.dataset_digest)


def code_sources(notebook: dict) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def run_code_cells(path: Path) -> list[str]:
    """What each code cell of the notebook at ``path`` prints, run in order in one namespace in the
    current folder."""
    namespace: dict = {}
    printed = []
    for source in code_sources(json.loads(path.read_text(encoding="utf-8"))):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - our own notebook
        printed.append(out.getvalue())
    return printed


def saved_outputs(notebook: dict) -> list[str]:
    """The saved standard output of each code cell."""
    return [
        "".join("".join(o["text"]) for o in c.get("outputs", []) if o.get("name") == "stdout")
        for c in notebook["cells"]
        if c["cell_type"] == "code"
    ]


def line_shapes(text: str) -> list[str]:
    """The lines of ``text`` with digests and numbers replaced: what any run's output shares."""
    return [NUMBER.sub("N", DIGEST.sub("DIGEST", line)) for line in text.splitlines()]


def with_outputs(notebook: dict, printed: list[str]) -> dict:
    """``notebook`` with each code cell's outputs set to what it printed, counted from 1."""
    codes = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    for count, (cell, text) in enumerate(zip(codes, printed, strict=True), 1):
        cell["execution_count"] = count
        lines = text.splitlines(keepends=True)
        cell["outputs"] = [{"name": "stdout", "output_type": "stream", "text": lines}] if lines else []
    return notebook


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    path = parser.parse_args().notebook.resolve()
    notebook = json.loads(path.read_text(encoding="utf-8"))
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            printed = run_code_cells(path)
        finally:
            os.chdir(here)
    # whole or not at all: the notebook is the user's file (fzmj_env.atomic)
    write_atomic(path, json.dumps(with_outputs(notebook, printed), indent=1, ensure_ascii=False) + "\n")
    print("".join(printed), end="")


if __name__ == "__main__":
    main()
