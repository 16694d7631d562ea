"""The layers only point down and close no circle (docs/layers.md): a static walk over the import
statements of every module of ours (tests/import_graph.py) fails on an import of a higher layer
or on a circle, and a user's ``agents.py`` or ``train.py`` in the working directory breaks
nothing of ours."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from import_graph import ROOT, cycles, graph, imports_of, module_files

# Lowest first; a module may import its own layer and those listed before it.
LAYERS = [
    # notation, input checks, the CLI toolkit, the version: the floor
    ("fzmj_env.tiles", "fzmj_env.checks", "fzmj_env.cli", "fzmj_env._version"),
    ("fzmj_env.core",),  # the Numba rules engine
    ("fzmj_env",),  # features, encoder, envs, records, rules files
    ("fzmj", "fzmj.agents"),  # the namespace package itself, then agents and evaluation
    ("fzmj.data",),  # datasets of recorded play: collected through the evaluator, read by the trainer
    ("fzmj.train",),
    ("fzmj.integrations", "fzmj.web"),  # adapters and pages take agent specs
]


def _layer_of(module: str) -> int | None:
    """The layer of the longest matching prefix; None for third-party and standard modules."""
    best, best_len = None, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def test_every_import_points_down_or_sideways():
    files = module_files()
    known = set(files)
    assert {"fzmj_env.core.engine", "fzmj.agents.heuristic", "fzmj.train.ppo_selfplay", "fzmj.web.play"} <= set(files)
    upward = []
    for name, path in sorted(files.items()):
        own = _layer_of(name)
        for line, target in imports_of(name, path, known):
            other = _layer_of(target)
            if other is not None and other > own:
                upward.append(f"{path}:{line}: {name} (layer {own}) imports {target} (layer {other})")
    assert not upward, "\n".join(upward)


def test_the_walk_sees_an_upward_import(tmp_path):
    """The checker itself: a relative import two levels up from the core resolves to fzmj_env."""
    f = tmp_path / "mod.py"
    f.write_text("from ..encode import encode_table\nfrom fzmj.agents import make_agent\n")
    got = imports_of("fzmj_env.core.mod", f, {"fzmj_env.encode", "fzmj.agents"})
    assert got == [(1, "fzmj_env.encode"), (2, "fzmj.agents")]
    assert _layer_of("fzmj_env.encode") > _layer_of("fzmj_env.core.mod")


@pytest.mark.parametrize("shadow", ["agents", "train", "integrations", "web"])
def test_local_files_with_our_old_names_break_nothing(tmp_path, shadow):
    """A user's ``agents.py`` (or a package of that name) in the working directory is not ours."""
    (tmp_path / f"{shadow}.py").write_text("raise RuntimeError('the user file was imported')\n")
    code = (
        "import gymnasium as gym, fzmj_env\n"
        "from fzmj.agents import make_agent\n"
        "import fzmj.train.config\n"
        "env = gym.make('fzmj/SingleSeat-v0', opponents='random')\n"
        "env.reset(seed=0)\n"
        "assert make_agent('heuristic').name == 'heuristic'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, timeout=600)


def test_no_import_circles():
    """No set of our modules imports itself round, not even through an import inside a function."""
    assert cycles(graph()) == []


def test_the_circle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_a_static_reading_names_modules_as_python_imports_them():
    """Each file's path is its installed name (no package-dir mapping): the import picture of the
    repository is the real structure, with arrows into fzmj.agents and fzmj.train."""
    files = module_files()
    for name in ("fzmj.agents.evaluate.run", "fzmj.train.ppo_selfplay", "fzmj_env.core.engine", "fzmj.web.play"):
        assert Path(importlib.util.find_spec(name).origin).resolve() == files[name].resolve()
    g = graph()
    assert "fzmj.agents.checkpoint" in g["fzmj.train.checkpoint"]  # an arrow from train/ into agents/
    assert any(t.startswith("fzmj.agents") for t in g["fzmj.web.play"])


@pytest.mark.parametrize("link", ["agents", "train"])
def test_the_top_level_links_are_not_a_second_name(link):
    """``agents/`` and ``train/`` at the top are links to fzmj/agents and fzmj/train, for browsing:
    importing them under the short name is refused, so no module is ever loaded twice."""
    assert (ROOT / link).resolve() == (ROOT / "fzmj" / link).resolve()
    code = f"import {link}"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and f"import fzmj.{link}, not {link}" in out.stderr
    assert importlib.util.find_spec("fzmj.fzmj_env") is None  # no alias of the env package either
