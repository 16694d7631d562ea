"""The docs build's notebook hook (docs/hooks/notebook_page.py): a notebook's cells as Markdown, each
code cell's saved text outputs in a block titled "output" under it, the marker replaced."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "hooks"))
import notebook_page as hook  # noqa: E402  (the docs build's hook, a plain module)


def _cell(kind: str, source: str, outputs=None) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=outputs or [])
    return cell


def test_cells_and_their_outputs_become_markdown(tmp_path):
    cells = [
        _cell("markdown", "# Title\n\nSome text."),
        _cell("code", 'x = "```"\nprint(x)', [{"output_type": "stream", "name": "stdout", "text": ["```\n"]}]),
        _cell("code", "1 + 1", [{"output_type": "execute_result", "data": {"text/plain": ["2"]}, "metadata": {}}]),
        _cell("code", "1 / 0", [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero"}]),
        _cell("code", "y = 2"),  # prints nothing: no output block
    ]
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    md = hook.notebook_markdown(path)
    assert md.startswith('# Title\n\nSome text.\n\n````python\nx = "```"\nprint(x)\n````\n')
    assert '````text title="output"\n```\n````' in md  # a fence inside a cell cannot close its block
    assert '````text title="output"\n2\n````' in md
    assert "ZeroDivisionError: division by zero" in md
    assert md.count('title="output"') == 3 and md.count("````python") == 4
    page = hook.on_page_markdown(f"<!-- notebook: {path} -->\n\n## After\n", None, None, None)
    assert page.startswith("# Title") and page.endswith("## After\n")
