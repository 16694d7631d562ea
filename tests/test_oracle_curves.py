"""``benchmarks/studies/oracle_curves.py --ablation``: checkpoints of a run played on the ablation's
seeds become one curve, labelled with them, pooled over the seeds; other specs become levels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _row(run, seed, mean, half, step=None, ref="heuristic"):
    row = {"run": run, "ref": ref, "seed": seed, "mean": mean, "ci95": [mean - half, mean + half], "hands": 4000}
    return row if step is None else {**row, "global_step": step}


def test_ablation_rows_become_a_pooled_curve_and_levels(tmp_path):
    rows = [
        _row("pretrained", 1, 0.2, 0.6),
        _row("pretrained", 2, 0.4, 0.8),
        _row("guide@8", 1, 1.0, 0.6, step=8_000_000),
        _row("guide@8", 2, 0.0, 0.8, step=8_000_000),
        _row("guide@8", 1, 9.0, 0.6, step=8_000_000, ref="control"),  # not against heuristic: ignored
        _row("guide@4", 1, -1.0, 0.6, step=4_000_000),
        _row("guide@4", 2, 0.0, 0.8, step=4_000_000),
    ]
    src = tmp_path / "abl.json"
    src.write_text(json.dumps(rows))
    png = tmp_path / "c.png"
    cmd = [sys.executable, "benchmarks/studies/oracle_curves.py", "--ablation", str(src), "-o", str(png)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = [line for line in out.splitlines() if "hands)" in line]
    # pooled: the seeds' mean, half-widths in quadrature / 2 = sqrt(0.36 + 0.64) / 2 = 0.5
    assert (
        lines[0].split()[:3] == ["guide", "(seeds", "1/2)"]
        and "4,000,000 steps  -0.50 [-1.00, +0.00]  (8000 hands)" in lines[0]
    )
    assert "8,000,000 steps  +0.50 [+0.00, +1.00]" in lines[1]
    assert lines[2].startswith("pretrained") and "+0.30 [-0.20, +0.80]" in lines[2]
    assert png.stat().st_size > 1000


def test_no_input_is_one_line():
    r = subprocess.run(
        [sys.executable, "benchmarks/studies/oracle_curves.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 2 and "give run folders" in r.stderr
