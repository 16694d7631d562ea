"""The known-hands search ceiling (a diagnostic in benchmarks/studies/, never an agent) runs end to end
and keeps the true hands in its worlds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "studies"))
import search_ceiling  # noqa: E402


def test_ceiling_runs_paired_and_searches():
    res = search_ceiling.main(["--agent", "search:heuristic:worlds=4,top=2,late=30", "--walls", "2", "--seed", "3"])
    assert res["hands"] == 8 and res["searched"] > 0
    assert np.isfinite(res["paired_mean"])


def test_ceiling_worlds_keep_the_true_hands(monkeypatch):
    from fzmj.agents import make_agent
    from fzmj_env import Game, encode

    agent = search_ceiling.known_hands(make_agent("search:heuristic:worlds=3,top=2"))
    agent.reset(rules="fuzhou-lianzhong")  # the preset of the games below (a search never guesses it)
    seen = []
    real = agent._env

    def spy(rules, n):
        env = real(rules, n)
        orig = env.step_tables

        def step_tables(tables, actions):
            if not seen:
                seen.append(env.buf["hand"][: len(tables)].copy())
            return orig(tables, actions)

        env.step_tables = step_tables
        return env

    agent._env = spy
    game = Game()
    game.reset(seed=11)
    obs = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
    while not seen and not game.done:
        encode.encode_table(game.buf, 0, game.seat, obs)
        agent.truth = game
        hands = game.buf["hand"][0].copy()
        game.step(int(agent.act(obs[None], game.mask[None])[0]))
    assert seen and all(np.array_equal(h, hands) for h in seen[0])
