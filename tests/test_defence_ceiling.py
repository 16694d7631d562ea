"""``benchmarks/defence_ceiling.py``: the clairvoyant defender never deals in while a
safe discard exists, and it sees only what the oracle planes give (the opponents' hands)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from fzmj_env.core.hand import get_win_table
from fzmj_env.tiles import parse_tiles

_spec = importlib.util.spec_from_file_location(
    "defence_ceiling", Path(__file__).resolve().parents[1] / "benchmarks" / "defence_ceiling.py"
)
defence = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(defence)


def test_waits_come_from_the_opponents_hands_and_skip_their_passed_kinds():
    from fzmj_env.encode import NUM_CHANNELS, O_HANDS, O_PASSED, ORACLE_CHANNELS, P_GOLD_KIND

    obs = np.zeros((NUM_CHANNELS, 27), np.int8)
    obs[P_GOLD_KIND, 26] = 1  # gold 9s
    oracle = np.zeros((ORACLE_CHANNELS, 27), np.int8)
    hand = parse_tiles("123m456m789m111p234p7s").astype(np.int64)[:27]  # 16 tiles, waits on 7s alone
    for i in range(4):
        oracle[O_HANDS + 4 * 1 + i] = hand >= i + 1  # relative seat 2
    danger = defence.opponents_waits(obs, oracle, get_win_table())
    assert np.flatnonzero(danger).tolist() == [24]  # 7s; never the gold kind (R5: a discarded gold is never claimed)
    oracle[O_PASSED + 1, 24] = 1  # 过水 on 7s: it may not win on it now
    assert not defence.opponents_waits(obs, oracle, get_win_table()).any()


def test_defender_deals_in_only_when_no_safe_discard_was_left():
    res = defence.run(walls=16, seed=3, slack=True)
    assert res["hands"] == 64
    assert res["deal_in_rate"] * res["hands"] <= res["no_safe_discard"]
