"""The one table of agent specs (``fzmj.agents.specs.AGENT_SPECS``): ``SPEC_HELP``, the
``--help`` of every command that takes a spec and docs/baselines.md's table are made from it, a
duplicate name is refused in one line, and a new row is all ``make_agent`` needs (issue 59)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import fzmj.agents.specs as S
from fzmj.agents import AgentSpecError, make_agent
from fzmj.agents.random_agent import RandomAgent

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "hooks"))
import agent_specs as hook  # noqa: E402  (the docs build's hook, a plain module)


def test_a_duplicate_name_is_one_line():
    row = S.AgentKind("random", "random", "x", "fzmj.agents.random_agent:RandomAgent")
    with pytest.raises(ValueError) as e:
        S.check_spec_table((*S.AGENT_SPECS, row))
    assert "\n" not in str(e.value) and "duplicate agent name 'random'" in str(e.value)
    assert set(S.check_spec_table(S.AGENT_SPECS)) == {k.name for k in S.AGENT_SPECS}


def test_every_row_has_a_builder_and_is_in_the_help():
    for kind in S.AGENT_SPECS:
        module, _, attr = kind.build.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), kind.build
        assert (kind.usage or kind.syntax) in S.SPEC_HELP
        assert "\n" not in kind.help and kind.syntax.startswith(kind.name)


def test_the_docs_table_is_made_from_the_table():
    assert hook.agent_table() == S.spec_table_markdown()
    page = (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8")
    assert hook.MARKER in page
    assert S.spec_table_markdown() in hook.on_page_markdown(page, None, None, None)
    assert "| spec | agent |" not in page  # no second, hand-written copy


@pytest.mark.parametrize(
    "main, argv",
    [
        ("fzmj.agents.evaluate.cli", ["--help"]),
        ("fzmj.agents.league.cli", ["--help"]),
        ("fzmj.agents.demo", ["--help"]),
        ("fzmj.web.play", ["--help"]),
        ("fzmj.web.replay", ["--help"]),
        ("fzmj.train.belief", ["--help"]),
    ],
)
def test_every_command_that_takes_a_spec_lists_them(main, argv, capsys):
    with pytest.raises(SystemExit):
        importlib.import_module(main).main(argv)
    out = "".join(capsys.readouterr().out.split())  # argparse wraps (and splits long words)
    assert "".join(S.SPEC_HELP.split()) in out


class _Never(RandomAgent):
    """A stand-in for a newcomer's agent module."""


def test_a_new_row_is_all_make_agent_needs(monkeypatch):
    row = S.AgentKind("never", "never", "passes", f"{__name__}:_Never")
    monkeypatch.setattr(S, "_KINDS", S.check_spec_table((*S.AGENT_SPECS, row)))
    assert isinstance(make_agent("never"), _Never)
    with pytest.raises(AgentSpecError, match="expected never$"):
        make_agent("never:3")  # a kind without options takes none


@pytest.mark.parametrize(
    "spec, agent",
    [
        ("random:3", "RandomAgent"),
        ("heuristic", "HeuristicAgent"),
        ("heuristic:defend:risk=1", "DefendAgent"),
        ("heuristic:patient:goal=golds", "PatientAgent"),
        ("search:random:worlds=4", "SearchAgent"),
    ],
)
def test_rows_build_their_agents(spec, agent):
    assert type(make_agent(spec)).__name__ == agent


def test_a_variant_that_does_not_exist_lists_the_kind_s_forms():
    with pytest.raises(AgentSpecError, match="expected heuristic, heuristic:defend"):
        make_agent("heuristic:attack")
