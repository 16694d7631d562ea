"""MkDocs hook (mkdocs.yml ``hooks``): a page holding the marker ``<!-- notebook: PATH -->`` (PATH
from the repository's root, e.g. ``examples/data_tutorial.ipynb``; docs/tutorial.md) shows that
notebook in its place: its Markdown cells as Markdown, its code cells as Python blocks, and each
code cell's saved outputs (text) as a block titled "output" under it.

Why a hook of ours, not the mkdocs-jupyter plugin: the notebook's outputs are text (``print``), so
the page is plain Markdown that Material renders, searches and link-checks (strict mode) like
every other page, with nothing more to install; the plugin would bring nbconvert, jupytext and a
Jupyter kernel into the ``docs`` extra and its pages are HTML that the build does not validate.
The build executes nothing (as the other hooks, it imports neither Numba nor torch): the outputs
shown are the ones saved in the notebook by ``examples/run_notebook.py``, a real run, and
``tests/test_data_notebook.py`` checks that a fresh run at a small size prints the same lines
(numbers aside)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!-- notebook: (\S+) -->")
FENCE = "````"  # four backticks: a cell's own ``` (in a docstring or a string) cannot close the block


def _text(value) -> str:
    """A notebook field (a string or a list of lines) as one string."""
    return "".join(value) if isinstance(value, list) else str(value)


def output_text(output: dict) -> str:
    """The text of one saved output: a stream's, a result's ``text/plain``, an error's traceback."""
    if output.get("output_type") == "stream":
        return _text(output.get("text", ""))
    if output.get("output_type") == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    return _text(output.get("data", {}).get("text/plain", ""))


def notebook_markdown(path: Path) -> str:
    """The notebook at ``path`` as Markdown (see the module docstring)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    parts = []
    for cell in cells:
        source = _text(cell.get("source", "")).rstrip()
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code":
            parts.append(f"{FENCE}python\n{source}\n{FENCE}")
            shown = "".join(output_text(o) for o in cell.get("outputs", [])).rstrip()
            if shown:
                parts.append(f'{FENCE}text title="output"\n{shown}\n{FENCE}')
    return "\n\n".join(parts) + "\n"


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda m: notebook_markdown(ROOT / m.group(1)), markdown)
