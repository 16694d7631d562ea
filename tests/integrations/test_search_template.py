"""The search template (``examples/search_template.py``, docs/search.md) runs end to end at a
tiny size and prints its paired score against its blueprint and its cost per decision."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_search_template_runs_and_reports_its_cost():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "search_template.py"),
            "--hands",
            "4",
            "--worlds",
            "2",
            "--rounds",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, (out.stdout[-2000:], out.stderr[-3000:])
    assert "points/hand over its blueprint" in out.stdout and "ms each" in out.stdout, out.stdout[-2000:]
