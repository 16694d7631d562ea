"""The layers only point down (docs/layers.md): a walk over the import statements of every module
of the installed packages fails on an import of a higher layer, and a user's ``agents.py`` or
``train.py`` in the working directory breaks nothing of ours."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

# Lowest first; a module may import its own layer and those listed before it.
LAYERS = [
    ("fzmj_env.tiles", "fzmj_env.checks", "fzmj_env.cli"),  # notation, input checks, the CLI toolkit: the floor
    ("fzmj_env.core",),  # the Numba rules engine
    ("fzmj_env",),  # features, encoder, envs, records, rules files
    ("fzmj", "fzmj.agents"),  # the namespace package itself, then agents and evaluation
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


def _package_files() -> dict[str, Path]:
    """Every module of our installed packages, by dotted name, found the way Python finds them."""
    out: dict[str, Path] = {}
    for pkg in ("fzmj_env", "fzmj", "fzmj.agents", "fzmj.train", "fzmj.integrations", "fzmj.web"):
        root = Path(importlib.util.find_spec(pkg).origin).parent
        for path in root.rglob("*.py"):
            rel = path.relative_to(root).with_suffix("").parts
            if rel and rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((pkg, *rel))
            if pkg == "fzmj" and rel:
                continue  # fzmj's sub-packages are walked under their own names
            out[name] = path
    return out


def _imports(name: str, path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = ".".join(base[: len(base) - node.level + 1])
                mod = f"{parent}.{node.module}" if node.module else parent
                names = [f"{mod}.{a.name}" for a in node.names] if not node.module else [mod]
            else:
                names = [node.module]
            found += [(node.lineno, m) for m in names]
    return found


def test_every_import_points_down_or_sideways():
    files = _package_files()
    assert {"fzmj_env.core.engine", "fzmj.agents.heuristic", "fzmj.train.ppo_selfplay", "fzmj.web.play"} <= set(files)
    upward = []
    for name, path in sorted(files.items()):
        own = _layer_of(name)
        for line, target in _imports(name, path):
            other = _layer_of(target)
            if other is not None and other > own:
                upward.append(f"{path}:{line}: {name} (layer {own}) imports {target} (layer {other})")
    assert not upward, "\n".join(upward)


def test_the_walk_sees_an_upward_import(tmp_path):
    """The checker itself: a relative import two levels up from the core resolves to fzmj_env."""
    f = tmp_path / "mod.py"
    f.write_text("from ..encode import encode_table\nfrom fzmj.agents import make_agent\n")
    got = _imports("fzmj_env.core.mod", f)
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


def test_old_module_names_fail_with_a_hint():
    for old, new in (("fzmj_env.integrations", "fzmj.integrations"), ("fzmj_env.web", "fzmj.web")):
        with pytest.raises(ImportError, match=new.replace(".", r"\.")):
            importlib.import_module(old)
