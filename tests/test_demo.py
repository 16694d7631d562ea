"""``fzmj-demo`` shows a match worth watching: heuristic players by default, with wins and scores."""

from __future__ import annotations

import pytest

from fzmj.agents.demo import main


def test_the_default_demo_is_heuristic_players_who_win(capsys):
    assert main(["--hands", "4"]) == 0
    out = capsys.readouterr().out
    assert "seats 0-3: heuristic, heuristic, heuristic, heuristic" in out
    assert out.count(" wins by ") >= 2  # four random players would mostly draw
    assert "final scores: [" in out and "final scores: [0, 0, 0, 0]" not in out


def test_agents_one_spec_or_four(capsys):
    assert main(["--hands", "1", "--agents", "random:1", "heuristic", "random:2", "heuristic"]) == 0
    assert "seats 0-3: random:1, heuristic, random:2, heuristic" in capsys.readouterr().out
    for argv in (["--agents", "heuristic", "random"], ["--agents", "nosuchagent"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("fzmj-demo: error: "), err
