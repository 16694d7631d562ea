"""The docs name only what exists (issue 58): every repository file (``train/run_setup.py``,
``core/state.py``, ``docs/engine.md``) and every module or name of ours (``fzmj.train.args.Args``)
that README.md, docs/*.md and the module docstrings of fzmj/ and fzmj_env/ put in code quotes is
found in the tree. The strict docs build checks links only; docs/training.md's module table named
``build.py``, ``duplicate.py`` and ``guards.py`` long after they were renamed.

A file name with a folder is looked up from the repository root, from the naming file's folder,
and from ``fzmj/`` and ``fzmj_env/`` (docs write ``train/x.py`` and ``core/x.py`` for short); a bare
name must be some file's name in the tree. A dotted name is followed through packages and modules;
its first part that is not a module must be a word of that module's source."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPAN = re.compile(r"`{1,2}([^`\s]+)`{1,2}")
FILE = re.compile(r"^[\w./-]+\.(py|md|yaml|yml|sh|toml|cfg|txt)$")
DOTTED = re.compile(r"^(fzmj|fzmj_env)(\.\w+)+")
# names that are not ours on purpose, each with its reason
NOT_OURS = {
    "agents.py": "a user's file, which our installed names must not collide with (docs/layers.md)",
    "train.py": "a user's file, as agents.py",
    "ppo.py": "CleanRL's single-file PPO, the trainer's model",
    "fzmj.warmup": "the entry-point group in pyproject.toml, not a module",
    "trainer_console.txt": "a file benchmarks/gpu_recipe.py writes into the device's $OUT",
}
# a name that stands for the reader's own file (docs/contributing.md's recipes, a user's preset)
PLACEHOLDER = re.compile(r"(^|/)(\w*NAME\w*|my-[\w-]+)\.\w+$")
RUN_OUTPUTS = ("runs/",)  # files a run writes, named as examples
OLD_NAMES = "## Renamed modules"  # docs/layers.md names the removed modules there, on purpose


def _texts():
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = p.read_text(encoding="utf-8")
        if OLD_NAMES in text:
            head, _, rest = text.partition(OLD_NAMES)
            text = head + rest[rest.find("\n## ") :] if "\n## " in rest else head
        yield p, text
    for pkg in ("fzmj", "fzmj_env"):
        for f in sorted((ROOT / pkg).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(f.read_text(encoding="utf-8")))
            if doc:
                yield f, doc


NOT_TREE = {"node_modules", "site", "build", "dist"}


def _tree_names() -> set[str]:
    """The names of the repository's own files and folders: hidden folders but .ci (.git, .venv, CI's
    .venv-rllib and the like, whose installed packages hold a build.py), builds and the site are
    not ours."""
    names = set()
    for _folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d == ".ci" or not (d.startswith(".") or d in NOT_TREE)]
        names.update(dirs, files)
    return names


def _file_exists(name: str, where: Path, names: set[str]) -> bool:
    if "/" not in name:
        return name in names
    return any((base / name).exists() for base in (ROOT, where.parent, ROOT / "fzmj", ROOT / "fzmj_env"))


def _dotted_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    path, i = ROOT / parts[0], 1
    while i < len(parts) and ((path / parts[i]).is_dir() or (path / f"{parts[i]}.py").is_file()):
        path, i = path / parts[i], i + 1
    if i == len(parts):
        return True
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return bool(re.search(rf"\b{re.escape(parts[i])}\b", source.read_text(encoding="utf-8")))


def missing_names() -> list[str]:
    names, missing = _tree_names(), []
    for where, text in _texts():
        for m in SPAN.finditer(text):
            token = m.group(1).strip("()[],:;")
            if token in NOT_OURS or token.startswith(RUN_OUTPUTS) or PLACEHOLDER.search(token):
                continue
            dotted = DOTTED.match(token)
            if dotted and dotted.group(0) not in NOT_OURS and not _dotted_exists(dotted.group(0)):
                missing.append(f"{where.relative_to(ROOT)}: {dotted.group(0)}")
            elif FILE.match(token) and not token.startswith("/") and not _file_exists(token, where, names):
                missing.append(f"{where.relative_to(ROOT)}: {token}")
    return missing


def test_every_file_and_module_the_docs_name_exists():
    assert missing_names() == []


def test_the_check_finds_a_name_that_does_not_exist(tmp_path):
    assert not _file_exists("build.py", ROOT / "docs" / "training.md", _tree_names())
    assert not _dotted_exists("fzmj.train.guards") and not _dotted_exists("fzmj.train.Args")
    assert _dotted_exists("fzmj.train.args.Args") and _dotted_exists("fzmj_env.atomic.write_atomic")
    assert _file_exists("core/state.py", ROOT / "docs" / "engine.md", set())
    assert PLACEHOLDER.search("tests/test_NAME.py") and PLACEHOLDER.search("my-rules.yaml")
    assert not PLACEHOLDER.search("fzmj/agents/names.py")
