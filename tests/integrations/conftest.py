"""Shared by the library integration tests: ``run_example`` runs an example script at a small size,
``learns`` runs it at its CI learning size and wants the verdict ``LEARNED``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "benchmarks" / "readme_figures.py")
_FIGURES = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_FIGURES)


def _run_example(script: str, *args: str, env: dict | None = None, timeout: int = 600) -> str:
    """Run ``examples/<script>`` with this interpreter and the checkout first on the path; return its stdout.

    Fails the test (with the tail of both streams) when the script exits non-zero, and checks the
    closing lines every example prints: the score line and the learning verdict.
    """
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=timeout,
    )
    assert out.returncode == 0, (out.stdout[-2000:], out.stderr[-3000:])
    assert "points/hand" in out.stdout, out.stdout[-2000:]
    verdicts = [line for line in out.stdout.splitlines() if line.startswith("learning signal: ")]
    assert len(verdicts) == 1 and verdicts[0].endswith(("-> LEARNED", "-> NOT SHOWN")), out.stdout[-2000:]
    # the lines benchmarks/readme_figures.py --only libraries reads for its table
    assert _FIGURES.TRAINED.search(out.stdout) and _FIGURES.VERDICT.search(out.stdout), out.stdout[-2000:]
    return out.stdout


def _learns(script: str, *args: str, env: dict | None = None, timeout: int = 900) -> str:
    """Run ``examples/<script>`` (with its fixed ``--seed``) and fail unless its verdict is ``LEARNED``."""
    out = _run_example(script, *args, env=env, timeout=timeout)
    verdict = next(line for line in out.splitlines() if line.startswith("learning signal: "))
    assert verdict.endswith("-> LEARNED"), out[-2000:]
    return out


@pytest.fixture
def learns():
    """``learns(script, *args, env=None, timeout=900)``: the example's learning check at its CI size
    (docs/integrations.md, "Learning checks in CI"); slow (about a minute or more each)."""
    return _learns


@pytest.fixture
def run_example():
    """``run_example(script, *args, env=None, timeout=600)`` -> the example's stdout (see ``_run_example``)."""
    return _run_example
