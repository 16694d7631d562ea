"""``benchmarks/studies/play_ensemble.py``: a one-member ensemble plays exactly as that member (its paired
difference to it is zero on every hand), and a bad member fails with one line before any hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args, cwd=ROOT):
    cmd = [sys.executable, "benchmarks/studies/play_ensemble.py", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def test_an_ensemble_of_one_plays_as_its_member(tmp_path):
    out = tmp_path / "e.json"
    r = _run("pretrained:v2", "--control", "pretrained:v2", "--seeds", "11", "--hands", "48", "--json", str(out))
    assert r.returncode == 0, r.stderr
    rows = {(x["run"], x["ref"]): x for x in json.loads(out.read_text())}
    same = rows[("ensemble", "control")]
    assert same["mean"] == 0.0 and same["ci95"] == [0.0, 0.0] and same["hands"] == 48
    assert rows[("ensemble", "heuristic")]["mean"] == rows[("control", "heuristic")]["mean"]


def test_two_members_differ_from_one(tmp_path):
    out = tmp_path / "e.json"
    r = _run("pretrained:v2", "pretrained:v1", "--seeds", "11", "--hands", "48", "--json", str(out))
    assert r.returncode == 0, r.stderr
    rows = {(x["run"], x["ref"]): x for x in json.loads(out.read_text())}
    assert rows[("ensemble", "control")]["ci95"] != [0.0, 0.0]  # v1 changes some decisions


def test_a_missing_member_is_one_line(tmp_path):
    r = _run("pretrained:v2", str(tmp_path / "nope.pt"), "--hands", "4")
    assert r.returncode != 0
    assert "nope.pt" in r.stderr and "Traceback" not in r.stderr
