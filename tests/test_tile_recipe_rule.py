"""``benchmarks/studies/tile_recipe_rule.sh``: the pre-registered rule of issue 56 applied to a run
in one command. It judges only a run that has ended (the last update's checkpoint is the only
candidate), plays the rule, the curve and the in-run pick, and prints the verdict."""

from __future__ import annotations

import json
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
    assert verdict[0] == "on 51515 / 52525 / 53535:"
    assert verdict[1].startswith("  final - heuristic: ") and verdict[2].startswith("  final - v2: ")
    assert verdict[4].startswith("rule (addendum 4.2): ")
    assert verdict[5].startswith("best.pt (update ")
    assert not (tmp_path / "out" / "rule2.json").exists()  # addendum 4.2: one set of walls
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


def test_addendum_5_plays_a_second_set_of_walls_and_seed_1s_final(ended_run, tmp_path):
    """The second seed's rule: the same rule again on 71717 / 72727 / 73737, shipping only on both,
    and the final paired against seed 1's final (here the run's own update 2 stands in for it)."""
    seed1 = ended_run / "checkpoints" / "update_000002.pt"
    res = _rule(ended_run, tmp_path / "out", {"ADDENDUM": "5", "SEED1_FINAL": str(seed1)})
    assert res.returncode == 0, res.stderr[-2000:]
    verdict = (tmp_path / "out" / "verdict.txt").read_text().splitlines()
    assert "on 71717 / 72727 / 73737:" in verdict
    assert any(v.startswith("final - seed 1's final, on 51515 / 52525 / 53535: ") for v in verdict)
    assert any(v.startswith("rule (addendum 5): ") for v in verdict)
    seeds = {r["seed"] for r in json.loads((tmp_path / "out" / "rule2.json").read_text())}
    assert seeds == {71717, 72727, 73737}


@pytest.mark.parametrize(
    ("more", "why"),
    [
        ({"ADDENDUM": "6"}, "tile_recipe_rule: ADDENDUM is 4.2 or 5, not '6'"),
        ({"ADDENDUM": "5", "SEED1_FINAL": "/nope/final.pt"}, "needs seed 1's final: no /nope/final.pt"),
    ],
)
def test_a_wrong_addendum_is_refused_in_one_line(ended_run, tmp_path, more, why):
    res = _rule(ended_run, tmp_path / "out", more)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and why in res.stderr
    assert not (tmp_path / "out" / "rule.json").exists()
