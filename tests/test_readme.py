"""The README's front door stays true: its Python blocks run as written (in order, in a fresh
folder), every command it shows is one we install, and it stays short."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```(python|bash)\n(.*?)```", re.S)


def test_the_readme_is_a_front_door():
    assert len(README.splitlines()) <= 120


def test_every_command_shown_is_installed():
    scripts = set(re.findall(r"^(fzmj-[a-z]+) = ", (ROOT / "pyproject.toml").read_text(), re.M))
    shown = set()
    for kind, body in BLOCK.findall(README):
        if kind == "bash":
            shown |= set(re.findall(r"\.venv/bin/(fzmj-[a-z]+)", body))
    assert shown and shown <= scripts, shown - scripts
    assert "fzmj-train --config ppo_default" in README  # a shipped config's name: works outside the checkout


def test_the_python_blocks_run_as_written(tmp_path):
    code = "\n".join(body for kind, body in BLOCK.findall(README) if kind == "python")
    assert "F.Game" in code and "VectorEnv" in code and "evaluate(" in code
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "game.json").is_file()
