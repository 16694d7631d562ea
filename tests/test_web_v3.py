"""The pages give observation v3 to whoever reads it: fzmj-play's agents and hint, and the review.

An agent, a user object or a belief model that says ``obs_version = "v3"`` gets the env's own v3
planes (the same as ``record_observations`` rebuilds them); everyone else still gets v2, and the
games do not change with the layout.
"""

from __future__ import annotations

import numpy as np

from fzmj.agents import make_agent
from fzmj.agents.evaluate.records import record_observations
from fzmj.web import play as P
from fzmj.web.review import observation_planes, review_record
from fzmj_env.encode import NUM_CHANNELS, V3_CHANNELS


class FirstLegal:
    """Plays the first legal action and keeps every observation it was given."""

    def __init__(self, obs_version: str | None = None):
        if obs_version is not None:
            self.obs_version = obs_version
        self.name = f"first_{obs_version or 'v2'}"
        self.seen: list[np.ndarray] = []

    def act(self, obs, mask):
        self.seen.append(np.array(obs[0]))
        return np.array([int(np.flatnonzero(mask[0])[0])])


def test_observation_planes_follow_the_readers():
    assert observation_planes() == NUM_CHANNELS
    assert observation_planes(None, FirstLegal()) == NUM_CHANNELS
    assert observation_planes(FirstLegal(), FirstLegal("v3")) == V3_CHANNELS
    assert observation_planes(make_agent(FirstLegal("v3"))) == V3_CHANNELS  # through make_agent's wrapper
    assert observation_planes(make_agent("heuristic")) == NUM_CHANNELS


def test_play_agents_gives_v3_to_a_v3_reader_and_the_game_is_the_same():
    v2, v3 = FirstLegal(), FirstLegal("v3")
    rec2 = P.play_agents(["heuristic", v2, "random:3", "heuristic"], hands=2, seed=11)
    rec3 = P.play_agents(["heuristic", v3, "random:3", "heuristic"], hands=2, seed=11)
    assert rec2["decisions"] == rec3["decisions"] and rec2["hands"] == rec3["hands"]
    assert {o.shape for o in v2.seen} == {(NUM_CHANNELS, 27)} and {o.shape for o in v3.seen} == {(V3_CHANNELS, 27)}
    seats, obs, _ = record_observations(rec3, 3)
    np.testing.assert_array_equal(np.stack(v3.seen), obs[seats == 1])  # the env's v3, decision by decision
    np.testing.assert_array_equal(np.stack(v2.seen), obs[seats == 1][:, :NUM_CHANNELS])


def test_review_gives_each_reviewer_its_layout():
    rec = P.play_agents(["heuristic", "random:5", "heuristic", "random:6"], hands=1, seed=4)
    seats, obs, _ = record_observations(rec, 3)
    for layout, planes in ((None, NUM_CHANNELS), ("v3", V3_CHANNELS)):
        reviewer = FirstLegal(layout)
        out = review_record(rec, reviewer, seat=2)
        assert out["decisions"] > 0
        np.testing.assert_array_equal(np.stack(reviewer.seen), obs[seats == 2][:, :planes])


def test_session_agents_read_v3_and_the_person_sees_the_same_game():
    v3 = FirstLegal("v3")
    s = P.Session([v3, make_agent("random:1"), make_agent("random:2")], seat=0, hands=1, seed=9)
    assert s._obs.shape == (V3_CHANNELS, 27)
    assert v3.seen and {o.shape for o in v3.seen} == {(V3_CHANNELS, 27)}
