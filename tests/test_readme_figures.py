"""``benchmarks/readme_figures.py --check``: the deterministic figures the README and the docs print
are found where the check looks, and a figure that differs is named with both values (exit 1)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "benchmarks" / "readme_figures.py")
figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(figures)


def test_every_checked_figure_is_printed_where_the_check_looks():
    assert figures.missing_places(list(figures.CHECKED)) == []
    quick = figures.documented(
        "README.md", *figures.CHECKED["quickstart"].places[0][1:], figures.CHECKED["quickstart"].shape
    )
    assert quick.startswith("vs random +") and " | vs heuristic " in quick


def _documented(section: str) -> dict[str, str]:
    """What the docs print for every checked figure of ``section`` (its first place)."""
    return {
        name: figures.documented(c.places[0][0], c.places[0][1], c.shape)
        for name, c in figures.CHECKED.items()
        if c.section == section
    }


@pytest.fixture
def no_machine(monkeypatch):
    monkeypatch.setattr(figures, "machine", lambda: None)


def test_check_passes_when_every_figure_is_as_documented(monkeypatch, capsys, no_machine):
    monkeypatch.setattr(figures, "strength", lambda: _documented("strength"))
    assert figures.main(["--check", "--only", "strength"]) == 0
    assert "all 4 documented figures match" in capsys.readouterr().out


def test_check_names_each_figure_that_differs_with_both_values(monkeypatch, capsys, no_machine):
    measured = _documented("strength")
    documented = measured["paired margin"]
    measured["paired margin"] = "+0.99 [+0.81, +1.17]"
    monkeypatch.setattr(figures, "strength", lambda: measured)
    assert figures.main(["--check", "--only", "strength"]) == 1
    out = capsys.readouterr().out
    for place in ("README.md", "docs/pretrained.md"):
        assert f"paired margin in {place}: documented {documented}, measured +0.99 [+0.81, +1.17]" in out
    assert "2 of 4 documented figures differ" in out and "pretrained vs random in" not in out


def test_the_typographic_minus_reads_as_a_minus(tmp_path):
    (tmp_path / "README.md").write_text("the follow-up evaluation prints **−1.50 [−2.00, −1.00]** per hand\n")
    assert figures.differences({"follow-up": "-1.50 [-2.00, -1.00]"}, tmp_path) == []
    assert figures.differences({"follow-up": "-1.50 [-2.00, -0.99]"}, tmp_path) == [
        "follow-up in README.md: documented −1.50 [−2.00, −1.00], measured -1.50 [-2.00, -0.99]"
    ]


def test_a_figure_the_docs_no_longer_print_stops_the_check_before_any_run(tmp_path, monkeypatch, capsys, no_machine):
    monkeypatch.setattr(figures, "ROOT", tmp_path)  # an empty checkout: no README
    monkeypatch.setattr(figures, "quickstart", lambda: pytest.fail("ran the quickstart"))
    assert figures.main(["--check", "--only", "quickstart"]) == 2
    err = capsys.readouterr().err
    assert "quickstart: not found in README.md after 'update 183/183'" in err and "follow-up: not found" in err


def test_check_of_a_section_without_checked_figures_is_a_usage_error(capsys, no_machine):
    assert figures.main(["--check", "--only", "speed"]) == 2
    assert "no checked figure in speed" in capsys.readouterr().err
