"""MkDocs hook (mkdocs.yml ``hooks``): the table of agent specs on a page that holds the marker
``<!-- agent-specs -->`` (docs/baselines.md) is written from ``AGENT_SPECS`` in
``fzmj/agents/specs.py``, the one table of the built-in agents, read statically (the docs build
imports nothing: no Numba, no torch). ``tests/test_agent_specs.py`` checks that this table is
``fzmj.agents.specs.spec_table_markdown()``."""

from __future__ import annotations

import ast
from pathlib import Path

MARKER = "<!-- agent-specs -->"
SPECS = Path(__file__).resolve().parents[2] / "fzmj" / "agents" / "specs.py"
FIELDS = ("name", "syntax", "help", "build")


def agent_rows(source: Path = SPECS) -> list[dict]:
    """The rows of ``AGENT_SPECS`` as dicts of their literal fields."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["AGENT_SPECS"]:
            rows = []
            for call in node.value.elts:
                row = {f: ast.literal_eval(a) for f, a in zip(FIELDS, call.args, strict=False)}
                row.update({k.arg: ast.literal_eval(k.value) for k in call.keywords})
                rows.append(row)
            return rows
    raise ValueError(f"{source}: no AGENT_SPECS table")


def agent_table(source: Path = SPECS) -> str:
    rows = ["| `{}` | {} |".format(r["syntax"].replace("|", "\\|"), r["help"]) for r in agent_rows(source)]
    return "\n".join(["| spec | agent |", "| --- | --- |", *rows])


def on_page_markdown(markdown, page, config, files):
    return markdown.replace(MARKER, agent_table()) if MARKER in markdown else markdown
