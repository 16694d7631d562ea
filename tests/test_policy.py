"""agents/policy.py (issue 12): the network and checkpoint reader live below train/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_agents_never_import_train():
    """ARCHITECTURE floors: agents/ loads policies through agents/policy.py, never train/."""
    for path in sorted((ROOT / "agents").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            assert not any(n == "train" or n.startswith("train.") for n in names), f"{path.name} imports {names}"
