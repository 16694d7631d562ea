"""The search plays a decision out under the rules it is told (the evaluator's, the caller's),
never under a preset guessed from the observation: a custom preset that shares the default's
scheme (the default with another base score) shows the same planes (issue 59)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import yaml

import fzmj_env.rules as rules_mod
from fzmj.agents import reset_agent
from fzmj.agents.evaluate import evaluate
from fzmj.agents.search import SearchAgent, state_from_obs
from fzmj_env import Game, encode, load_rules
from fzmj_env.core import state

BASE = state.R_BASE - state.R_RESERVE_BASE


def _base10(folder, name="fuzhou-base10"):
    """The default preset with scoring base 10, as ``folder/NAME.yaml``."""
    data = yaml.safe_load((rules_mod.PRESET_DIR / "fuzhou-lianzhong.yaml").read_text(encoding="utf-8"))
    data["name"] = name
    data["scoring"]["base"] = 10
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _a_decision(rules):
    """The observation and mask of the first decision with more than one legal action."""
    game = Game(rules)
    game.reset(seed=5)
    obs = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
    while game.mask.sum() < 2:
        game.step(int(np.flatnonzero(game.mask)[0]))
    encode.encode_table(game.buf, 0, game.seat, obs)
    return obs, game.mask.copy()


def test_the_custom_preset_is_searched_under_its_own_numbers(tmp_path):
    path = _base10(tmp_path)
    custom = load_rules(path)
    assert custom.params[BASE] == 10 != load_rules().params[BASE]
    obs, mask = _a_decision(path)
    buf = state_from_obs(obs, mask, rules=path)
    assert buf is not None and buf[0]["m"][state.R_BASE] == 10
    agent = SearchAgent(rules=custom)
    assert agent.rules_for(obs).params[BASE] == 10


def test_the_evaluator_tells_the_search_its_rules(tmp_path):
    path = _base10(tmp_path)
    agent = SearchAgent(worlds=4, top=2, where="claims")
    evaluate([agent, "heuristic"], hands=4, seed=3, progress=False, rules=str(path))
    assert agent.rules.params[BASE] == 10
    assert agent._envs and all(name == "fuzhou-base10" for name, _, _ in agent._envs)


def test_two_shipped_presets_on_one_scheme_are_an_error_not_a_guess(tmp_path, monkeypatch):
    for p in rules_mod.PRESET_DIR.glob("*.yaml"):
        shutil.copy(p, tmp_path)
    _base10(tmp_path)
    monkeypatch.setattr(rules_mod, "PRESET_DIR", tmp_path)
    obs, mask = _a_decision("fuzhou-lianzhong")
    with pytest.raises(ValueError) as e:
        state_from_obs(obs, mask)
    msg = str(e.value)
    assert "\n" not in msg and "fuzhou-base10 and fuzhou-lianzhong" in msg and "rules" in msg
    assert state_from_obs(obs, mask, rules="fuzhou-lianzhong") is not None  # told: no ambiguity


def test_rules_that_disagree_with_the_observation_are_one_line():
    obs, mask = _a_decision("fuzhou-lianzhong")
    with pytest.raises(ValueError) as e:
        SearchAgent(rules="fuzhou-home").rules_for(obs)
    assert "\n" not in str(e.value) and "fuzhou-home" in str(e.value) and "lianzhong" in str(e.value)


def test_reset_agent_passes_the_rules_only_to_a_reset_that_names_them():
    seen = []

    class Plain:
        def reset(self, seed=None):
            seen.append(("plain", seed))

    class Told:
        def reset(self, seed=None, rules=None):
            seen.append(("told", seed, rules))

    reset_agent(Plain(), 3, "fuzhou-home")
    reset_agent(Told(), 4, "fuzhou-home")
    reset_agent(Told(), 5)
    assert seen == [("plain", 3), ("told", 4, "fuzhou-home"), ("told", 5, None)]
    agent = SearchAgent(blueprint=None)
    agent.reset(1, rules="fuzhou-home")
    assert agent.rules.name == "fuzhou-home"
