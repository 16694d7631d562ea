"""``benchmarks/studies/tile_recipe_rule.sh``: the pre-registered rule of issue 56 applied to a run
in one command. It judges only a run that has ended (the last update's checkpoint is the only
candidate), plays the rule, the curve and the in-run pick, and prints the verdict."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fzmj.train.ppo_selfplay import main

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "studies" / "tile_recipe_rule.sh"


def _rule(run: Path, out: Path, more: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HANDS="8", CURVE_EVERY="2", WORKERS="1", OUT=str(out), **(more or {}))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # this venv's python
    return subprocess.run(["bash", str(SCRIPT), str(run)], env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def ended_run(tmp_path_factory) -> Path:
    """A 3-update smoke run with a paired point at every update (so a best.pt)."""
    runs = tmp_path_factory.mktemp("runs")
    sets = [
        f"runs_dir={runs}",
        "run_name=r",
        "total_timesteps=1536",
        "eval_every=0",
        "eval_paired_every=1",
        "eval_paired_hands=16",
        "eval_paired_seeds=2",
    ]
    assert main(["--config", "ppo_smoke", "--no-progress"] + [a for s in sets for a in ("--set", s)]) == 0
    return runs / "r"


def test_the_rule_plays_and_says_its_verdict(ended_run, tmp_path):
    res = _rule(ended_run, tmp_path / "out")
    assert res.returncode == 0, res.stderr[-2000:]
    verdict = (tmp_path / "out" / "verdict.txt").read_text().splitlines()
    assert verdict[0].startswith("final - heuristic: ") and verdict[1].startswith("final - v2: ")
    assert verdict[3].startswith("rule (addendum 4.2): ")
    assert verdict[4].startswith("best.pt (update ")
    curve = (tmp_path / "out" / "curve.txt").read_text()
    assert "| u2 | 1,024 | " in curve and "| u3 | 1,536 | " in curve  # every 2nd, and the last
    assert sorted(p.name for p in (tmp_path / "out" / "curve").iterdir()) == ["u2.json", "u3.json"]


def test_a_run_that_has_not_ended_is_refused(ended_run, tmp_path):
    run = tmp_path / "cut"
    shutil.copytree(ended_run, run)
    (run / "checkpoints" / "update_000003.pt").unlink()
    res = _rule(run, tmp_path / "out")
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [
        f"tile_recipe_rule: {run}/checkpoints/update_000002.pt is update 2 of 3: the run has not ended (resume it first)"
    ]
    assert not (tmp_path / "out" / "rule.json").exists()


def test_the_curve_so_far_while_the_run_goes_on(ended_run, tmp_path):
    """CURVE_ONLY=1 plays the points saved so far, each once, and not the newest checkpoint (not the
    final while the run goes on); it judges nothing."""
    run = tmp_path / "going"
    shutil.copytree(ended_run, run)
    (run / "checkpoints" / "update_000003.pt").unlink()
    (run / "checkpoints" / "update_000004.pt").write_bytes((run / "checkpoints" / "update_000002.pt").read_bytes())
    out = tmp_path / "out"
    env = {"CURVE_ONLY": "1"}
    assert _rule(run, out, env).returncode == 0
    assert sorted(p.name for p in (out / "curve").iterdir()) == ["u2.json", "u4.json"]
    assert not (out / "rule.json").exists()
    played = (out / "curve" / "u2.json").stat().st_mtime_ns
    res = _rule(run, out, env)  # again: nothing is played twice
    assert res.returncode == 0 and (out / "curve" / "u2.json").stat().st_mtime_ns == played
    assert "| u2 | heuristic |" not in res.stdout and "| u2 | 1,024 | " in (out / "curve.txt").read_text()


def test_a_run_without_best_pt_is_refused(ended_run, tmp_path):
    run = tmp_path / "nobest"
    shutil.copytree(ended_run, run)
    (run / "checkpoints" / "best.pt").unlink()
    res = _rule(run, tmp_path / "out")
    assert res.returncode == 2 and "no " in res.stderr and "best.pt" in res.stderr
