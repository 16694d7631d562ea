"""League folders under concurrent runs (locks), and the fault share in the league table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fzmj.agents.league import main
from fzmj.agents.league.folder import add_agents, folder_lock
from fzmj.agents.league.ratings import FAULT_FLAG, fallback_use
from fzmj.agents.league.report import fault_note, html_page, markdown

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "FZMJ_COMPILE_NOTICE": "0"}


def _holder(folder: Path, seconds: float, spec: str) -> subprocess.Popen:
    """A process that holds the roster lock for ``seconds`` while it adds ``spec`` slowly (as a
    run does: read, load the agents, write)."""
    code = textwrap.dedent(
        f"""
        import time
        from fzmj.agents.league.folder import _with_agents, folder_lock, write_roster
        with folder_lock({str(folder)!r}, "roster"):
            print("held", flush=True)
            roster = _with_agents(__import__("pathlib").Path({str(folder)!r}), [{spec!r}], None)
            time.sleep({seconds})
            write_roster({str(folder)!r}, roster)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=ENV)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_writer_waits_for_the_lock_and_keeps_both_agents(tmp_path, capfd):
    folder = tmp_path / "lg"
    add_agents(folder, ["random:1"])
    p = _holder(folder, 1.5, "random:2")
    t0 = time.perf_counter()
    add_agents(folder, ["random:3"])  # waits for the holder, then reads the roster it wrote
    waited = time.perf_counter() - t0
    assert p.wait(timeout=60) == 0
    roster = json.loads((folder / "roster.json").read_text())
    assert [e["spec"] for e in roster] == ["random:1", "random:2", "random:3"]
    assert waited > 0.5
    err = capfd.readouterr().err
    assert err.count("waiting for it to finish") == 1 and "updating the roster of" in err


def test_the_trainers_hook_waits_for_the_roster_lock_too(tmp_path, capfd):
    from fzmj.agents.league import add_to_league

    folder = tmp_path / "lg"
    add_agents(folder, ["random:1"])
    p = _holder(folder, 1.0, "random:2")
    add_to_league(folder, "random:3", name="ckpt-3")
    assert p.wait(timeout=60) == 0
    roster = json.loads((folder / "roster.json").read_text())
    assert [e["spec"] for e in roster] == ["random:1", "random:2", "random:3"] and roster[2]["name"] == "ckpt-3"
    assert "waiting for it to finish" in capfd.readouterr().err


def test_the_lock_is_reentrant_in_one_process_and_a_refused_run_leaves_no_folder(tmp_path, capsys):
    folder = tmp_path / "lg"
    with folder_lock(folder, "run"), folder_lock(folder, "roster"), folder_lock(folder, "roster"):
        add_agents(folder, ["random:1"])  # takes the roster lock again: no self-deadlock
    assert (folder / "roster.json").exists()
    fresh = tmp_path / "fresh"
    with pytest.raises(SystemExit):
        main(["--dir", str(fresh), "--agents", "random", "--no-progress"])  # one agent: refused
    capsys.readouterr()
    assert not fresh.exists()


def test_two_concurrent_league_runs_keep_every_agent(tmp_path):
    folder = tmp_path / "lg"
    args = ["--dir", str(folder), "--hands-per-pairing", "4", "--no-progress"]
    assert main(["--agents", "random:1", "random:2", *args]) == 0
    cmd = [sys.executable, "-m", "fzmj.agents.league"]
    procs = [
        subprocess.Popen([*cmd, "--agents", spec, *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for spec in ("random:3", "random:4")
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    roster = json.loads((folder / "roster.json").read_text())
    assert sorted(e["spec"] for e in roster) == ["random:1", "random:2", "random:3", "random:4"]
    table = json.loads((folder / "league.json").read_text())
    assert len(table["agents"]) in (3, 4)  # the later run's table has all four
    assert main(args) == 0
    assert len(json.loads((folder / "league.json").read_text())["agents"]) == 4


def _entry(fallback=None, decisions=100, slots=("a", "b"), specs=("exec:x", "random")):
    e = {"inputs": {"slots": list(slots)}, "specs": list(specs), "decisions": decisions}
    if fallback is not None:
        e["bot_faults"] = {"exec:x": {"crash": 1, "fallback_decisions": fallback}}
    return e


def test_fallback_use_per_match():
    assert fallback_use(_entry(30), "a") == (30, 25.0, False)  # one seat of four: a quarter of the decisions
    assert fallback_use(_entry(30), "b") == (0, 75.0, False)  # B fills the other three seats
    e = _entry(30)
    e["bot_faults"]["exec:x"]["decisions"] = 40  # the evaluator's own count wins when it has one
    assert fallback_use(e, "a") == (30, 40.0, True)
    two = _entry(None, 80, slots=("a", "b", "a", "b"), specs=("exec:x", "random", "exec:x", "random"))
    assert fallback_use(two, "a") == (0, 40.0, False)
    e["agents"] = {"a": {"decisions": 23}, "b": {"decisions": 77}}  # the evaluator's count of each agent
    assert fallback_use(e, "a") == (30, 23.0, True) and fallback_use(e, "b") == (0, 77.0, True)


def test_fault_share_divides_by_the_evaluators_count_of_each_agent(tmp_path):
    """Each match's cache entry carries every agent's own decisions (the evaluator counts the
    rows it hands each agent); the league's denominators are their sums, exact."""
    folder = tmp_path / "lg"
    assert (
        main(["--dir", str(folder), "--agents", "heuristic", "random:1", "--hands-per-pairing", "8", "--no-progress"])
        == 0
    )
    entries = [json.loads(p.read_text()) for p in sorted((folder / "matches").glob("*.json"))]
    assert len(entries) == 2
    own: dict = {}
    for e in entries:
        counts = {ident: a["decisions"] for ident, a in e["agents"].items()}
        assert sum(counts.values()) == e["decisions"] and all(c > 0 for c in counts.values())
        for ident, c in counts.items():
            own[ident] = own.get(ident, 0) + c
    table = json.loads((folder / "league.json").read_text())
    assert sorted(a["decisions"] for a in table["agents"]) == sorted(own.values())
    assert all(a["decisions_exact"] for a in table["agents"])


def test_league_table_shows_and_flags_the_fallback_share(tmp_path, capsys):
    crashing = tmp_path / "crash.py"
    crashing.write_text("import sys\nsys.exit(1)\n")
    spec = f"exec:restarts=0:{sys.executable} {crashing}"
    folder = tmp_path / "lg"
    assert main(["--dir", str(folder), "--agents", spec, "random:1", "--hands-per-pairing", "8", "--no-progress"]) == 0
    out = capsys.readouterr().out
    res = json.loads((folder / "league.json").read_text())
    bad = next(a for a in res["agents"] if a["spec"].startswith("exec:"))
    fine = next(a for a in res["agents"] if not a["spec"].startswith("exec:"))
    assert bad["fault_share"] > FAULT_FLAG and bad["fault_flag"] and bad["fallback_decisions"] > 0
    assert fine["fault_share"] == 0 and not fine["fault_flag"] and fine["fallback_decisions"] == 0
    assert bad["decisions"] > 0 and res["fault_flag_share"] == FAULT_FLAG
    assert "fallback %" in out and "⚠" in out and "the fallback played more than" in out
    page = (folder / "league.html").read_text()
    assert "fallback %" in page and "⚠" in page and 'class="warn"' in page
    assert fault_note({"agents": [fine]}) is None
    calm = markdown({**res, "agents": [{**a, "fault_flag": False} for a in res["agents"]]})
    assert "⚠" not in calm and "the fallback played" not in calm
    assert html_page(res) == page
