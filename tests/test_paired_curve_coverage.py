"""``benchmarks/studies/paired_curve_coverage.py``: the figures docs/training.md quotes on the old
in-run paired curve come from the past runs' files in docs/results/ (no play, a few ms)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "paired_curve_coverage", ROOT / "benchmarks" / "studies" / "paired_curve_coverage.py"
)
cov = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cov)


def test_the_old_curves_cover_their_later_figures_as_docs_say():
    runs = cov.matched_points()
    points = [p for ps in runs.values() for p in ps]
    assert (len(runs), len(points), sum(p["covered"] for p in points)) == (14, 113, 104)
    assert np.mean([p["z"] for p in points]) > 0.6  # the old curves read high
    tops = [max(ps, key=lambda p: p["mean"]) for ps in runs.values()]
    assert sum(p["covered"] for p in tops) == 8  # the maximum of a curve: 8 of 14 cover


def test_fewer_points_on_more_hands_pick_more_honestly():
    runs = cov.matched_points()
    one, three = (cov.simulate(runs, 0.0, k, 500, np.random.default_rng(1)) for k in (1, 3))
    assert three["bias"] < one["bias"] and three["covered"] > one["covered"]
