"""The examples' closing verdict (``examples/_verdict.py``): LEARNED only when the interval is above 0."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from _verdict import learning_verdict, shanten_potential  # noqa: E402

import fzmj_env  # noqa: E402
from fzmj.agents import make_agent  # noqa: E402
from fzmj_env.scenario import make_wall  # noqa: E402


def test_heuristic_is_learned_random_is_not(capsys):
    res = learning_verdict(make_agent("heuristic"), "random", hands=200)
    assert res["verdict"] == "LEARNED" and "paired" not in res  # vs random: the plain score
    out = capsys.readouterr().out
    assert "learning signal: +" in out and out.rstrip().endswith("-> LEARNED")
    res = learning_verdict(make_agent("random:5"), "random", hands=200)
    assert res["verdict"] == "NOT SHOWN"


def test_against_other_opponents_the_signal_is_paired_with_random():
    res = learning_verdict(make_agent("heuristic"), "heuristic", hands=40)
    assert res["paired"]["ref"] == "random" and res["verdict"] in ("LEARNED", "NOT SHOWN")


def test_shanten_potential_reads_the_own_hand():
    def potential(hand):
        env = fzmj_env.env()
        env.reset(options={"wall": make_wall(dealer=0, hands={0: hand}, tail="9s"), "dealer": 0})
        return shanten_potential(env.observe("player_0")["observation"][None]).tolist()

    assert potential("123m456m789m123p456p11s") == [1.0]  # complete (天胡): shanten -1
    assert potential("13579m2468p12346799s")[0] <= -2  # scattered: far from a win
