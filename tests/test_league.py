"""``fzmj-league``: schedule through the evaluator, cache by identity, ratings, resume, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fzmj.agents.league as L

ROOT = Path(__file__).resolve().parents[1]
HANDS = 128  # per pairing: 16 walls per match in 1v3 (seconds for a whole league)

BOT = """
import time
import numpy as np
from fzmj.agents import Agent

class FirstLegal(Agent):
    name = "first-legal"
    def act(self, obs, mask):
        return np.argmax(mask, axis=1)

class Slow(Agent):
    '''first legal action, after a pause: gives a test time to kill the league mid-match'''
    name = "slow"
    def act(self, obs, mask):
        time.sleep(0.004)
        return np.argmax(mask, axis=1)
"""


@pytest.fixture
def bot(tmp_path, monkeypatch):
    """A ``python:`` bot module in a temporary folder, importable in this process and in subprocesses."""
    (tmp_path / "league_bot.py").write_text(BOT)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("league_bot", None)
    return "python:league_bot:FirstLegal"


def _league(argv, capsys=None) -> dict:
    if "--seed" not in argv:  # a new folder draws a secret seed: these tests compare folders on seed 0
        argv = [*argv, "--seed", "0"]
    rc = L.main(argv + ["--no-progress"])
    assert rc == 0
    d = Path(argv[argv.index("--dir") + 1])
    return json.loads((d / "league.json").read_text())


def _no_played(res: dict) -> dict:
    return {k: v for k, v in res.items() if k != "played"}


def _rating(res, name):
    return next(a for a in res["agents"] if a["name"] == name)


# ---- ranking, statistics, outputs ------------------------------------------------------------------------
def test_heuristic_ranks_first_with_separated_intervals(tmp_path, bot, capsys):
    d = tmp_path / "lg"
    specs = ["random", "random:1", "heuristic", bot]
    res = _league(["--agents", *specs, "--hands-per-pairing", str(HANDS), "--dir", str(d)])
    out = capsys.readouterr().out
    assert res["agents"][0]["name"] == "heuristic"
    h = res["agents"][0]
    for name in ("random", "random:1"):
        r = _rating(res, name)
        assert h["rating_ci95"][0] > r["rating_ci95"][1], (h, r)  # intervals do not overlap
    assert [a["rank"] for a in res["agents"]] == [1, 2, 3, 4]
    assert len(res["pairs"]) == 6 and res["played"]["matches"] == 12 and res["played"]["hands"] == 12 * 64
    assert res["walls_per_match"] == 16 and res["hands_per_match"] == 64
    # in a full round robin the least-squares rating is the mean difference against the league (self = 0)
    for a in res["agents"]:
        diffs = [
            p["mean_diff"] if p["a"] == a["name"] else -p["mean_diff"]
            for p in res["pairs"]
            if a["name"] in (p["a"], p["b"])
        ]
        assert a["rating"] == pytest.approx(sum(diffs) / 4, abs=1e-9)
        assert a["rating_ci95"][0] <= a["rating"] <= a["rating_ci95"][1]
        assert 0 <= a["deal_in_rate"] <= 1 and 0 <= a["self_draw_rate"] <= a["win_rate"] <= 1
        assert set(a["specials"]) >= {"rob_gold", "golden_pair", "three_golds"}
        # each agent plays 3 pairings x (its 4 hands-seats per wall in one match + 12 in the other) x 16 walls
        assert a["hands"] == 3 * (64 + 192)
    assert sum(a["rating"] for a in res["agents"]) == pytest.approx(0, abs=1e-9)
    # pairs are "better vs worse" and carry a Student-t interval over the walls
    assert all(p["mean_diff"] >= 0 and p["ci95"][0] <= p["mean_diff"] <= p["ci95"][1] for p in res["pairs"])
    # outputs: Markdown leaderboard on stdout, league.json, a self-contained HTML page
    assert "| 1 | heuristic |" in out and "| pair (a vs b)" in out and "rob_gold" in out
    page = (d / "league.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and page.count("<circle") == 4
    for needle in ("<script", "<link", "src=", "url(", "@import"):
        assert needle not in page  # nothing fetched from a network


def test_2v2_format_alternates_seats(tmp_path):
    res = _league(
        ["--agents", "random", "heuristic", "--format", "2v2", "--hands-per-pairing", "64", "--dir", str(tmp_path)]
    )
    assert res["matches_per_pairing"] == 1 and res["walls_per_match"] == 16
    assert res["agents"][0]["name"] == "heuristic" and res["pairs"][0]["ci95"][0] > 0
    entry = json.loads(next((tmp_path / "matches").glob("*.json")).read_text())
    assert len(entry["specs"]) == 4 and entry["specs"][0] == entry["specs"][2] != entry["specs"][1] == entry["specs"][3]
    assert all(a["hands"] == 2 * 64 for a in entry["agents"].values())  # two seats each, 64 hands


# ---- incremental, workers, resume -----------------------------------------------------------------------
def test_adding_an_agent_plays_only_its_new_pairings(tmp_path, bot, monkeypatch):
    calls = []
    real = L.cache.evaluate

    def counting(agents, hands, **kw):
        calls.append((tuple(agents), hands))
        return real(agents, hands, **kw)

    monkeypatch.setattr(L.cache, "evaluate", counting)
    d = tmp_path / "lg"
    first = _league(["--agents", "random", "heuristic", bot, "--hands-per-pairing", str(HANDS), "--dir", str(d)])
    assert first["played"]["matches"] == 6 and len(calls) == 6
    calls.clear()
    grown = _league(["--agents", "random:7", "--dir", str(d)])  # settings come from the folder
    # 3 new pairings x 2 matches, every one of them with the new agent; nothing else replayed
    assert len(calls) == 6 and all("random:7" in agents for agents, _ in calls)
    assert sum(h for _, h in calls) == grown["played"]["hands"] == 6 * 64
    assert grown["played"]["cached"] == 6 and len(grown["agents"]) == 4
    calls.clear()
    again = _league(["--dir", str(d)])
    assert calls == [] and again["played"]["matches"] == 0
    # the grown league equals a league played from scratch with the same roster
    fresh = _league(
        [
            "--agents",
            "random",
            "heuristic",
            bot,
            "random:7",
            "--hands-per-pairing",
            str(HANDS),
            "--dir",
            str(tmp_path / "f"),
        ]
    )
    assert json.dumps(_no_played(fresh), sort_keys=True) == json.dumps(_no_played(again), sort_keys=True)
    # an agent removed from the roster leaves the table; its cached matches stay for later
    calls.clear()
    less = _league(["--remove", "random:7", "--dir", str(d)])
    assert [a["name"] for a in less["agents"]] == [a["name"] for a in first["agents"]] and len(calls) == 0
    assert len(list((d / "matches").glob("*.json"))) == 12


def test_results_do_not_depend_on_workers(tmp_path, bot):
    argv = ["--agents", "random", "heuristic", bot, "--hands-per-pairing", "96"]
    one = _league(argv + ["--dir", str(tmp_path / "w1"), "--workers", "1"])
    two = _league(argv + ["--dir", str(tmp_path / "w2"), "--workers", "2"])
    assert json.dumps(_no_played(one), sort_keys=True) == json.dumps(_no_played(two), sort_keys=True)
    for f in (tmp_path / "w1" / "matches").glob("*.json"):
        a, b = json.loads(f.read_text()), json.loads((tmp_path / "w2" / "matches" / f.name).read_text())
        assert a["agents"] == b["agents"]
    # spawned workers (what a league with a ppo: agent gets once torch is loaded): the same results
    d = tmp_path / "w3"
    cfg = L.open_league(d, hands_per_pairing=96, seed=0)
    ents = L.entrants(L.add_agents(d, ["random", "heuristic", bot]))
    assert L.play(d, cfg, ents, workers=2, progress=False, start_method="spawn")["matches"] == 6
    assert json.dumps(_no_played(L.standings(d, cfg, ents)), sort_keys=True) == json.dumps(
        _no_played(one), sort_keys=True
    )


def test_resume_after_a_kill(tmp_path, bot):
    d = tmp_path / "lg"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    argv = ["--agents", "heuristic", "python:league_bot:Slow", "random", "--hands-per-pairing", "64", "--seed", "0"]
    argv += ["--dir", str(d)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fzmj.agents.league", *argv, "--no-progress"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    try:
        while len(list((d / "matches").glob("*.json"))) < 1 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    saved = len(list((d / "matches").glob("*.json")))
    assert 1 <= saved < 6, "the league was not stopped part-way"
    resumed = _league(argv)
    assert resumed["played"]["cached"] == saved and resumed["played"]["matches"] == 6 - saved
    whole = _league([*argv[:-1], str(tmp_path / "whole")])
    assert json.dumps(_no_played(whole), sort_keys=True) == json.dumps(_no_played(resumed), sort_keys=True)


# ---- identities ------------------------------------------------------------------------------------------
def test_a_changed_checkpoint_is_a_new_agent(tmp_path):
    torch = pytest.importorskip("torch")
    from fzmj.agents.checkpoint import save_checkpoint
    from fzmj.train.model import ActorCritic

    torch.manual_seed(0)
    ckpt = save_checkpoint(tmp_path / "p.pt", ActorCritic(hidden_sizes=(16,)))
    d = str(tmp_path / "lg")
    first = _league(["--agents", f"ppo:{ckpt}", "random", "--hands-per-pairing", "16", "--dir", d])
    ident = (
        first["agents"][0]["identity"]
        if first["agents"][0]["spec"].startswith("ppo:")
        else first["agents"][1]["identity"]
    )
    assert ident.startswith("ppo:sha256=") and first["played"]["matches"] == 2
    assert _league(["--dir", d])["played"]["matches"] == 0
    torch.manual_seed(1)
    save_checkpoint(ckpt, ActorCritic(hidden_sizes=(16,)))  # same path, new weights
    second = _league(["--dir", d])
    assert second["played"]["matches"] == 2  # not a stale cache hit
    assert next(a for a in second["agents"] if a["spec"].startswith("ppo:"))["identity"] != ident
    # a file that changes between identification and play is never cached under the old identity
    ents = L.entrants(L.folder._roster(Path(d)))
    torch.manual_seed(2)
    save_checkpoint(ckpt, ActorCritic(hidden_sizes=(16,)))
    cfg = L.open_league(d)
    with pytest.raises(RuntimeError, match="changed while the league was running"):
        L.play(d, cfg, [*ents, L.Entrant("heuristic", "heuristic", "heuristic")], progress=False)
    assert len(list((Path(d) / "matches").glob("*.json"))) == 4
    # the same content under another path is the same agent: refused as a duplicate
    (tmp_path / "copy.pt").write_bytes(Path(ckpt).read_bytes())
    with pytest.raises(L.LeagueError, match="same agent"):
        L.entrants(L.add_agents(d, [f"ppo:{tmp_path / 'copy.pt'}"], write=False))


def test_python_identity_is_the_module_file(tmp_path, bot):
    from fzmj.agents import make_agent

    first = L.agent_identity(bot, make_agent(bot))
    assert first.startswith(bot + "@sha256=")
    (tmp_path / "league_bot.py").write_text(BOT + "\n# changed\n")
    assert L.agent_identity(bot) != first
    assert L.agent_identity("heuristic") == "heuristic" and L.agent_identity("random:1") == "random:1"


def test_rules_identity_hashes_a_rules_file(tmp_path):
    from fzmj_env.rules import PRESET_DIR

    custom = tmp_path / "fuzhou-lianzhong.yaml"  # a copy, under the preset's own name
    custom.write_text((PRESET_DIR / "fuzhou-lianzhong.yaml").read_text())
    by_name, by_file = L.rules_identity("fuzhou-lianzhong"), L.rules_identity(str(custom))
    assert by_name["file_sha256"] is None and by_file["name"] == by_name["name"] and by_file["file_sha256"]


# ---- bad input: one line, exit 2 -------------------------------------------------------------------------
def _cli_error(argv, capsys) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        L.main(argv + ["--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("fzmj-league: error:"), err
    return err


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    d = str(tmp_path / "lg")
    assert "duplicate agent spec 'random'" in _cli_error(
        ["--agents", "random", "heuristic", "random", "--dir", d], capsys
    )
    assert "at least 2 agents" in _cli_error(["--agents", "heuristic", "--dir", d], capsys)
    assert "unknown agent spec" in _cli_error(["--agents", "heuristic", "nope", "--dir", d], capsys)
    assert not (Path(d) / "roster.json").exists()  # nothing was added by the failed runs
    f = tmp_path / "a.pt"
    f.write_bytes(b"x")
    msg = _cli_error(["--agents", f"ppo:{f}", f"ppo:{tmp_path}/./a.pt", "--dir", d], capsys)
    assert "duplicate agent spec" in msg
    assert "--workers" in _cli_error(["--agents", "random", "heuristic", "--workers", "0", "--dir", d], capsys)

    _league(["--agents", "random", "heuristic", "--hands-per-pairing", "16", "--dir", d, "--seed", "0"])
    assert "seed 0, not 3" in _cli_error(["--dir", d, "--seed", "3"], capsys)
    assert "hands per pairing 16, not 32" in _cli_error(["--dir", d, "--hands-per-pairing", "32"], capsys)
    assert "format 1v3, not 2v2" in _cli_error(["--dir", d, "--format", "2v2"], capsys)
    assert "unknown rules" in _cli_error(["--dir", d, "--rules", "nope"], capsys)
    from fzmj_env.rules import PRESET_DIR

    custom = tmp_path / "mine.yaml"
    custom.write_text(
        (PRESET_DIR / "fuzhou-lianzhong.yaml").read_text().replace("name: fuzhou-lianzhong", "name: mine")
    )
    assert "other rules" in _cli_error(["--dir", d, "--rules", str(custom)], capsys)
    assert "no such agent" in _cli_error(["--dir", d, "--remove", "bogus"], capsys)
    assert "at least 2 agents" in _cli_error(["--dir", d, "--remove", "random"], capsys)
    # a damaged cache entry is never read as a result
    entry = next((Path(d) / "matches").glob("*.json"))
    entry.write_text('{"inputs": ')
    assert "unreadable" in _cli_error(["--dir", d], capsys)
    entry.write_text("{}")
    assert "checksum" in _cli_error(["--dir", d], capsys)


def test_league_with_rules_file_and_its_changes(tmp_path, capsys):
    from fzmj_env.rules import PRESET_DIR

    custom = tmp_path / "custom.yaml"
    custom.write_text(
        (PRESET_DIR / "fuzhou-lianzhong.yaml").read_text().replace("name: fuzhou-lianzhong", "name: custom")
    )
    d = str(tmp_path / "lg")
    res = _league(["--agents", "random", "heuristic", "--hands-per-pairing", "16", "--rules", str(custom), "--dir", d])
    assert res["config"]["rules_id"]["file_sha256"]
    assert _league(["--dir", d])["played"]["matches"] == 0  # the folder remembers its rules file
    custom.write_text(custom.read_text() + "\n# edited\n")
    assert "rules file changed" in _cli_error(["--dir", d], capsys)


# ---- the trainer hook ------------------------------------------------------------------------------------
def test_training_adds_its_evaluation_checkpoints_to_a_league(tmp_path, capsys):
    pytest.importorskip("torch")
    from fzmj.train.ppo_selfplay import main as train

    league = tmp_path / "lg"
    argv = ["--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", "run_name=r"]
    argv += ["--set", "pool_prob=0", "--set", "total_timesteps=1024", "--set", "eval_every=1", "--set", "eval_hands=8"]
    argv += ["--set", f"league_dir={league}"]
    assert train(argv) == 0
    roster = json.loads((league / "roster.json").read_text())
    assert [e["name"] for e in roster] == ["r/update_000001", "r/update_000002"]  # 2 updates, each evaluated
    assert all(Path(e["spec"].removeprefix("ppo:")).is_file() for e in roster)
    res = _league(["--agents", "random", "--hands-per-pairing", "16", "--dir", str(league)])
    assert len(res["agents"]) == 3 and res["played"]["matches"] == 6
    # a league folder played under other rules is refused when the config is read, before any training
    other = ["--agents", "random", "heuristic", "--hands-per-pairing", "8", "--rules", str(_copy_rules(tmp_path))]
    _league(other + ["--dir", str(tmp_path / "other")])
    with pytest.raises(SystemExit) as e:
        train(argv[:-1] + [f"league_dir={tmp_path / 'other'}"])
    assert e.value.code == 2 and "league_dir" in capsys.readouterr().err


def _copy_rules(tmp_path: Path) -> Path:
    from fzmj_env.rules import PRESET_DIR

    p = tmp_path / "other.yaml"
    p.write_text((PRESET_DIR / "fuzhou-lianzhong.yaml").read_text().replace("name: fuzhou-lianzhong", "name: other"))
    return p


def test_bootstrap_interval_is_deterministic(tmp_path):
    argv = ["--agents", "random", "heuristic", "--hands-per-pairing", "32"]
    a = _league(argv + ["--dir", str(tmp_path / "a")])
    b = _league(argv + ["--dir", str(tmp_path / "b")])
    assert a["agents"] == b["agents"] and np.isfinite(a["agents"][0]["rating_ci95"]).all()


def test_pair_differences_are_the_evaluators(tmp_path):
    """The league only re-aggregates the evaluator's results: its pair difference is the evaluator's."""
    from fzmj.agents.evaluate import evaluate

    res = _league(["--agents", "heuristic", "random", "--hands-per-pairing", "64", "--dir", str(tmp_path / "a")])
    ab = evaluate(["heuristic", "random"], hands=32, seed=0, progress=False)["pairwise"][0]
    ba = evaluate(["random", "heuristic"], hands=32, seed=0, progress=False)["pairwise"][0]
    assert (ab["a"], ba["a"]) == ("heuristic", "random")
    assert res["pairs"][0]["mean_diff"] == pytest.approx((ab["mean_diff"] - ba["mean_diff"]) / 2, abs=1e-9)
    two = _league(
        [
            "--agents",
            "heuristic",
            "random",
            "--format",
            "2v2",
            "--hands-per-pairing",
            "32",
            "--dir",
            str(tmp_path / "b"),
        ]
    )
    p = evaluate(["heuristic", "random", "heuristic", "random"], hands=32, seed=0, progress=False)["pairwise"][0]
    assert two["pairs"][0]["mean_diff"] == pytest.approx(p["mean_diff"], abs=1e-9)
    assert two["pairs"][0]["ci95"] == pytest.approx(p["ci95"], abs=1e-9)


# ---- a checked cache -------------------------------------------------------------------------------------
def test_cache_entries_edited_or_malformed_are_refused(tmp_path, capsys):
    d = str(tmp_path / "lg")
    _league(["--agents", "random", "heuristic", "--hands-per-pairing", "16", "--dir", d])
    entry = sorted((Path(d) / "matches").glob("*.json"))[0]
    good = entry.read_text()
    ident = next(iter(json.loads(good)["agents"]))

    def write(edit, checksum=False):
        data = json.loads(good)
        edit(data["agents"][ident])
        if checksum:  # a forged entry with a matching checksum: the fields are still checked
            data["checksum"] = L.cache._checksum(data)
        entry.write_text(json.dumps(data))

    write(lambda a: a.update(mean_score=a["mean_score"] + 1))  # one agent's result edited by hand
    err = _cli_error(["--dir", d], capsys)
    assert "checksum" in err and str(entry) in err
    write(lambda a: a["per_wall"].__setitem__(0, float("nan")))
    assert "NaN" in _cli_error(["--dir", d], capsys)
    assert "NaN" in entry.read_text()  # refused, not rewritten
    for edit, msg in [
        (lambda a: a.update(hands=-1), "hands must be an integer in"),
        (lambda a: a.update(hands="16"), "hands must be an integer"),
        (lambda a: a.update(wins=1.5), "wins must be an integer"),
        (lambda a: a.update(per_wall="x"), "per_wall"),
        (lambda a: a["per_wall"].__setitem__(0, "1"), "not a finite number"),
        (lambda a: a.update(specials=[]), "specials"),
    ]:
        write(edit, checksum=True)
        assert msg in _cli_error(["--dir", d], capsys), msg
    entry.write_text(good)
    assert _league(["--dir", d])["played"]["matches"] == 0
    assert "NaN" not in (Path(d) / "league.json").read_text()


def test_league_files_with_wrong_types_are_refused(tmp_path, capsys):
    d = tmp_path / "lg"
    _league(["--agents", "random", "heuristic", "--hands-per-pairing", "16", "--dir", str(d), "--seed", "0"])
    cfg, roster = (d / "config.json").read_text(), (d / "roster.json").read_text()
    for field, value in [("seed", "7"), ("seed", -1), ("hands_per_pairing", -1), ("batch", 2.0), ("format", 3)]:
        (d / "config.json").write_text(json.dumps({**json.loads(cfg), field: value}))
        assert "league config" in _cli_error(["--dir", str(d)], capsys), (field, value)
    (d / "config.json").write_text(cfg.replace('"seed": 0', '"seed": NaN'))
    assert "NaN" in _cli_error(["--dir", str(d)], capsys)
    (d / "config.json").write_text(cfg)
    (d / "roster.json").write_text(json.dumps([{"name": 1, "spec": "random"}, {"name": "h", "spec": "heuristic"}]))
    assert "league roster" in _cli_error(["--dir", str(d)], capsys)
    (d / "roster.json").write_text(roster)
    assert _league(["--dir", str(d)])["played"]["matches"] == 0


@pytest.mark.parametrize(
    ("entries", "why"),
    [
        ([{"name": "same", "spec": "random"}, {"name": "same", "spec": "heuristic"}], "name 'same' is already"),
        ([{"name": "a", "spec": "random"}, {"name": "b", "spec": "random"}], "spec 'random' is already"),
        ([{"name": "", "spec": "random"}, {"name": "h", "spec": "heuristic"}], "an empty agent name"),
        ([{"name": "  ", "spec": "random"}, {"name": "h", "spec": "heuristic"}], "an empty agent name"),
        ([{"name": "r\nx", "spec": "random"}, {"name": "h", "spec": "heuristic"}], "must be printable"),
        ([{"name": "r\tx", "spec": "random"}, {"name": "h", "spec": "heuristic"}], "must be printable"),
        ([{"name": " r", "spec": "random"}, {"name": "h", "spec": "heuristic"}], "leading or trailing"),
        ([{"name": "r", "spec": " "}, {"name": "h", "spec": "heuristic"}], "an empty agent spec"),
    ],
)
def test_roster_names_are_checked_as_strictly_as_the_command_line(tmp_path, capsys, entries, why):
    """A hand-edited roster.json: two entries of one name (two rows, a 'same vs same' pair, --remove
    removing both), an empty name (a blank row), a newline (a broken table) are refused in one line,
    before anything is played or written."""
    d = tmp_path / "lg"
    d.mkdir()
    (d / "roster.json").write_text(json.dumps(entries))
    msg = _cli_error(["--dir", str(d), "--hands-per-pairing", "16"], capsys)
    assert "league roster" in msg and why in msg
    assert not (d / "matches").exists() or not any((d / "matches").iterdir())
    from fzmj.agents.league.folder import LeagueError, add_to_league

    with pytest.raises(LeagueError, match="must be printable"):  # the trainer's hook names its checkpoints
        add_to_league(tmp_path / "l2", "random", name="ckpt\n3")


def test_a_huge_roster_is_refused_up_front_with_its_estimate(tmp_path, capsys):
    """10,000 roster entries held GBs of pairs before a match was played: now one line with the
    estimate (agents, pairs, matches, memory), before any agent is loaded; a small league says its
    estimate on stderr before it plays."""
    import tracemalloc

    from fzmj.agents.league.folder import MAX_AGENTS

    d = tmp_path / "lg"
    d.mkdir()
    (d / "roster.json").write_text(json.dumps([{"name": f"r{k}", "spec": f"random:{k}"} for k in range(10_000)]))
    tracemalloc.start()
    msg = _cli_error(["--dir", str(d), "--hands-per-pairing", "16"], capsys)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert f"at most {MAX_AGENTS:,} agents" in msg and "10000 agents, 49,995,000 pairs" in msg and "MiB" in msg
    assert peak < 200 << 20, peak  # the roster read and checked, no pair made
    capsys.readouterr()
    assert L.main(["--agents", "random", "heuristic", "--hands-per-pairing", "16", "--dir", str(tmp_path / "s")]) == 0
    assert "2 agents, 1 pairs, 2 matches (16 hands), about" in capsys.readouterr().err


def test_unwritable_tables_are_refused_before_any_match(tmp_path, capsys):
    d = tmp_path / "lg"
    d.mkdir()
    (d / "league.html").mkdir()  # a folder where the page goes
    err = _cli_error(["--agents", "random", "heuristic", "--hands-per-pairing", "16", "--dir", str(d)], capsys)
    assert "league.html" in err and "directory" in err
    assert not list((d / "matches").glob("*.json"))
