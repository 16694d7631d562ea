"""docs/contributing.md's recipes name files that exist, and docs/training.md's table of the
trainer's modules names each module of ``fzmj/train`` and nothing else (issue 59)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"`((?:fzmj_env|fzmj|tests|examples|docs|\.ci)/[\w./*-]+|pyproject\.toml)`")


def test_every_file_a_recipe_names_exists():
    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    recipes = text[text.index("## Adding things") : text.index("## The documentation site")]
    for head in ("A rule preset", "A built-in agent", "A trainer config key", "An observation plane", "integration"):
        assert f"### {head}" in recipes or head in recipes, head
    named = CODE.findall(recipes)
    assert len(named) > 15
    for path in named:
        if "NAME" in path or "*" in path:
            assert (ROOT / path).parent.is_dir(), path  # a new file: its folder exists
        else:
            assert (ROOT / path).exists(), path


def test_the_training_module_table_names_every_module():
    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    table = text[text.index("## Where things are") : text.index("## Usage")]
    named = set(re.findall(r"`(\w+\.py)`", table))
    modules = {p.name for p in (ROOT / "fzmj" / "train").glob("*.py")} - {"__init__.py"}
    assert named == modules, f"missing: {sorted(modules - named)}; gone: {sorted(named - modules)}"
