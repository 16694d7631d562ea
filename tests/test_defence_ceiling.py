"""``benchmarks/studies/defence_ceiling.py``: the clairvoyant defender never deals in while a
safe discard exists. Its danger is the oracle planes' ``r*_wins_on`` (checked against the
engine's win test, 过水 and the gold in ``tests/test_oracle.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "defence_ceiling", Path(__file__).resolve().parents[1] / "benchmarks" / "studies" / "defence_ceiling.py"
)
defence = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(defence)


def test_defender_deals_in_only_when_no_safe_discard_was_left():
    res = defence.run(walls=16, seed=3, slack=True)
    assert res["hands"] == 64
    assert res["deal_in_rate"] * res["hands"] <= res["no_safe_discard"]
