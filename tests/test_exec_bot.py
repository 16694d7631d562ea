"""``exec:COMMAND`` bots (fzmj.agents.exec_bot, docs/protocol.md): the spec, the protocol, what a bot
sees, every fault (crash, timeout, garbage, illegal) and that no process is left behind."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from fzmj.agents import AgentSpecError, make_agent
from fzmj.agents.exec_bot import ExecAgent, exec_identity, parse_exec_spec, public_view, request_message
from fzmj_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = f"exec:{sys.executable} {ROOT / 'examples/bots/random_bot.py'}"
PERL_BOT = f"exec:perl {ROOT / 'examples/bots/random_bot.pl'}"

HELLO = 'print(json.dumps({"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": ["view"]}), flush=True)'


def bot(tmp_path: Path, body: str, name: str = "bot.py", options: str = "") -> str:
    """An exec spec for a Python bot whose loop body is ``body`` (``msg`` is the message read)."""
    src = (
        "import json, os, sys, time\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'hello':\n"
        f"        {HELLO}\n"
        "        continue\n"
        "    if msg['type'] != 'act':\n"
        "        continue\n" + textwrap.indent(textwrap.dedent(body), "    ")
    )
    path = tmp_path / name
    path.write_text(src)
    return f"exec:{options}{sys.executable} {path}"


def batch(n: int = 16, seed: int = 0):
    env = VectorEnv(n, seed=seed, hands_per_game=1)
    obs, mask, _ = env.reset()
    return obs, mask


def group_alive(pgid: int) -> list[int]:
    """Pids in process group ``pgid`` that still run or are zombies waiting on us, read from /proc
    (a killed grandchild is reparented to init, which reaps it in its own time)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()  # state, ppid, pgrp, ...
            if int(fields[2]) == pgid and (fields[0] != "Z" or int(fields[1]) == os.getpid()):
                out.append(int(d))
    return out


def assert_gone(pid: int) -> None:
    """The bot was reaped by us (no zombie child) and nothing of its process group is left."""
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    for _ in range(100):  # grandchildren killed with the group are reaped by init
        if not group_alive(pid):
            return
        time.sleep(0.02)
    raise AssertionError(f"processes of group {pid} still there: {group_alive(pid)}")


def legal(actions, mask) -> bool:
    return bool((mask[np.arange(len(actions)), actions] == 1).all())


# ---- the spec --------------------------------------------------------------------------------
def test_spec_grammar(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text("")
    p = parse_exec_spec("exec:timeout=0.5:batch=64:fallback=heuristic:restarts=0:start=3:python3 bot.py --x 'a b'")
    assert p.argv == ("python3", "bot.py", "--x", "a b")
    assert (p.timeout, p.batch, p.fallback, p.restarts, p.start) == (0.5, 64, "heuristic", 0, 3.0)
    d = parse_exec_spec("exec:python3")
    assert (d.timeout, d.batch, d.fallback, d.restarts) == (5.0, 0, "random", 3)


@pytest.mark.parametrize(
    "spec, why",
    [
        ("exec:", "no command"),
        ("exec:timeout=0.5:", "no command"),
        ("exec:timeout=abc:python3", "timeout= needs a number"),
        ("exec:timeout=0:python3", "must be in (0, 3600]"),
        ("exec:batch=-1:python3", "batch= needs an integer"),
        ("exec:fallback=ppo:python3", "fallback= must be one of"),
        ("exec:speed=2:python3", "unknown option 'speed'"),
        ("exec:timeout=1:timeout=2:python3", "given twice"),
        ("exec:no_such_command_fzmj", "not found or not executable"),
        ("exec:python3 'unclosed", "cannot split"),
        ("exec:python3 missing_bot_fzmj.py", "file 'missing_bot_fzmj.py' not found"),
    ],
)
def test_bad_specs_are_one_line(spec, why):
    with pytest.raises(AgentSpecError, match="bad agent spec") as e:
        make_agent(spec)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_bad_spec_on_the_command_line_exits_2(capsys):
    from fzmj.agents.evaluate import main

    with pytest.raises(SystemExit) as e:
        main(["--agents", "exec:no_such_command_fzmj", "--hands", "4", "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not found" in err[0] and err[0].startswith("fzmj-eval: error:")


def test_league_identity_follows_the_script(tmp_path):
    from fzmj.agents.league import agent_identity

    script = tmp_path / "b.py"
    script.write_text("print(1)\n")
    spec = f"exec:{sys.executable} {script}"
    a = agent_identity(spec)
    assert a == exec_identity(spec) and a.startswith("exec:sha256=")
    assert agent_identity(f"exec:timeout=1:{sys.executable} {script}") != a  # options count
    script.write_text("print(2)\n")
    assert agent_identity(spec) != a  # an edited bot is a new agent


def test_a_shell_command_line_is_not_a_script_path(tmp_path):
    """docs/protocol.md advises ``exec:sh -c '...'``: the quoted command ends in ``.py`` but is a
    command line, not a missing file; the bot plays, and an edit of the script it runs is a new agent."""
    script = tmp_path / "b.py"
    script.write_text((ROOT / "examples/bots/random_bot.py").read_text())
    spec = f"exec:sh -c 'exec {sys.executable} {script}'"
    agent = make_agent(spec)
    try:
        obs, mask = batch(4)
        acts = agent.act(obs, mask)
        assert mask[np.arange(4), acts].all() and agent.pop_faults()["crash"] == 0
    finally:
        agent.close()
    a = exec_identity(spec)
    script.write_text(script.read_text() + "# edited\n")
    assert exec_identity(spec) != a


# ---- the public view, decoded the slow and obvious way -------------------------------------
def _ref_one_hot(row: np.ndarray) -> int | None:
    nz = np.flatnonzero(row)
    return int(nz[0]) if nz.size else None


def _ref_seat_view(o: np.ndarray, r: int) -> dict:
    b = 9 + 20 * r
    f = o[b + 19]
    return {
        "melds": np.repeat(np.arange(27), o[b : b + 4].sum(axis=0)).tolist(),
        "pengs": np.flatnonzero(o[b + 4]).tolist(),
        "kongs": np.flatnonzero(o[b + 5]).tolist(),
        "taken": np.flatnonzero(o[b + 6]).tolist(),
        "discards": np.repeat(np.arange(27), o[b + 7 : b + 11].sum(axis=0)).tolist(),
        "claimed": np.flatnonzero(o[b + 11]).tolist(),
        "recent": [k for k in (_ref_one_hot(o[b + 12 + j]) for j in range(4)) if k is not None],
        "flowers": int(o[b + 18].sum()),
        "dealer": bool(f[0]),
        "gold_discarded": bool(f[1]),
        "current": bool(f[2]),
        "discarder": bool(f[3]),
        "n_melds": int(f[4:9].sum()),
        "concealed_kongs": int(f[9:13].sum()),
        "swim": int(o[98, 3 * r : 3 * r + 3].sum()),
    }


def reference_view(o: np.ndarray) -> dict:
    """The public view of one observation, decoded field by field, row by row (the reference)."""
    drawable = int(o[89].sum())
    if drawable == 27:
        drawable = 27 + 2 * int(o[90].sum())  # coarse thermometer: within 1 above 27
    phase = o[95]
    return {
        "hand": np.repeat(np.arange(27), o[0:4].sum(axis=0)).tolist(),
        "gold": _ref_one_hot(o[4]),
        "golds": int(o[5].sum()),
        "drawn": _ref_one_hot(o[8]),
        "passed": np.flatnonzero(o[6]).tolist(),
        "own_concealed_kongs": np.flatnonzero(o[7]).tolist(),
        "phase": ("turn", "discard", "claim", "over")[int(np.argmax(phase[:4]))] if phase[:4].any() else "none",
        "to_act": bool(phase[6]),
        "rob_window": bool(phase[4]),
        "heaven_possible": bool(phase[5]),
        "claim_tile": _ref_one_hot(o[96]),
        "seats": [_ref_seat_view(o, r) for r in range(4)],
        "drawable": drawable,
        "tiles_left_div4": int(o[91].sum()),
        "reserve": int(o[92].sum()),
        "streak": int(o[93].sum()),
        "hands_left": int(o[94].sum()),
        "preset": _ref_one_hot(o[97, :5]),
        "loss_cap": bool(o[97, 5]),
    }


# ---- the protocol ----------------------------------------------------------------------------
def test_round_trip_with_the_example_bot():
    obs, mask = batch(32)
    agent = make_agent(RANDOM_BOT)
    assert isinstance(agent, ExecAgent)
    agent.reset(7)
    a1 = agent.act(obs, mask)
    agent.reset(7)  # the bot reseeds from the reset message: the same answers
    a2 = agent.act(obs, mask)
    assert a1.shape == (32,) and a1.dtype == np.int64 and legal(a1, mask)
    assert np.array_equal(a1, a2)
    assert agent.act(obs[0], mask[0]).shape == (1,)  # a single observation
    pid = agent._proc.proc.pid
    assert agent.pop_faults() == {"crash": 0, "timeout": 0, "garbage": 0, "illegal": 0, "fallback_decisions": 0}
    agent.close()
    assert_gone(pid)


def test_batch_option_splits_requests(tmp_path):
    log = tmp_path / "sizes.txt"
    spec = bot(
        tmp_path,
        f"""
        open({str(log)!r}, "a").write(str(len(msg["rows"])) + "\\n")
        print(json.dumps({{"type": "act", "id": msg["id"], "actions": [r["legal"][0] for r in msg["rows"]]}}), flush=True)
        """,
        options="batch=5:",
    )
    obs, mask = batch(12)
    agent = make_agent(spec)
    a = agent.act(obs, mask)
    assert legal(a, mask) and np.array_equal(a, [np.flatnonzero(m)[0] for m in mask])
    assert log.read_text().split() == ["5", "5", "2"]
    agent.close()


def test_view_and_planes_are_decoded_from_the_observation():
    obs, mask = batch(4)
    msg = json.loads(request_message(3, obs, mask, ("view", "planes")))
    assert msg["type"] == "act" and msg["id"] == 3 and len(msg["rows"]) == 4
    for row, o, m in zip(msg["rows"], obs, mask, strict=True):
        assert row["legal"] == np.flatnonzero(m).tolist()
        planes = np.frombuffer(row["planes"].encode(), np.uint8).reshape(o.shape) - 48
        assert np.array_equal(planes, o)
        v = row["view"]
        assert len(v["hand"]) in (16, 17) and v["hand"] == sorted(v["hand"])  # 16 tiles, 17 at the dealer's turn
        assert v["hand"] == np.repeat(np.arange(27), o[0:4].sum(axis=0)).tolist()
        assert v["gold"] == int(np.flatnonzero(o[4])[0]) and v["to_act"] is True
        assert len(v["seats"]) == 4 and sum(s["dealer"] for s in v["seats"]) == 1
    assert public_view(obs[:1])[0] == msg["rows"][0]["view"]


@pytest.mark.parametrize("rules", ["fuzhou-lianzhong", "fuzhou-home"])
def test_batched_view_matches_the_reference(rules):
    """The vectorised decoder equals a field-by-field decoding of each row, in every phase."""
    from fzmj.agents.random_agent import RandomAgent

    env = VectorEnv(64, seed=5, hands_per_game=2, rules=rules)
    obs, mask, _ = env.reset()
    rnd = RandomAgent(1)
    phases = set()
    for _ in range(120):
        views = public_view(obs)
        for o, v in zip(obs, views, strict=True):
            assert v == reference_view(o)
            phases.add(v["phase"])
        obs, mask, *_ = env.step(rnd.act(obs, mask))
    assert {"turn", "claim", "discard"} <= phases
    assert public_view(obs[:0]) == []


def test_the_request_shows_nothing_hidden():
    """Everything a seat may not see is scrambled: the request line does not change by one byte."""
    from test_encode import obs_of, random_states, scramble_hidden

    rng = np.random.default_rng(3)
    checked = 0
    for game, i in random_states(3, seed=11):
        if i % 4:
            continue
        me = game.seat
        mask = game.mask[None]
        line = request_message(1, obs_of(game, me)[None], mask, ("view", "planes"))
        for _ in range(2):
            scrambled = obs_of(game, me, scramble_hidden(game, me, rng))[None]
            assert request_message(1, scrambled, mask, ("view", "planes")) == line
            checked += 1
    assert checked > 50


# ---- faults ----------------------------------------------------------------------------------
def run_fault(spec: str, capsys, n: int = 8):
    obs, mask = batch(n)
    agent = make_agent(spec)
    a = agent.act(obs, mask)
    assert legal(a, mask)  # the fallback played
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("fzmj: exec bot")]
    return agent, agent.pop_faults(), err


def test_crash(tmp_path, capsys):
    agent, f, err = run_fault(bot(tmp_path, "sys.exit(3)"), capsys)
    assert f["crash"] == 1 and f["fallback_decisions"] == 8
    assert len(err) == 1 and "crash" in err[0] and "exit status 3" in err[0] and "restarted" in err[0]
    assert agent._proc is None


def test_timeout_kills_the_group_and_costs_the_limit(tmp_path, capsys):
    # the bot starts a grandchild in its group, then sleeps far past its limit
    spec = bot(tmp_path, "import subprocess; subprocess.Popen(['sleep', '30']); time.sleep(30)", options="timeout=0.3:")
    obs, mask = batch(8)
    agent = make_agent(spec)
    agent.act(obs, mask)  # starts it (hello) and times out once
    f = agent.pop_faults()
    assert f["timeout"] == 1
    assert_gone(agent._last_pid)
    t0 = time.perf_counter()
    agent.act(obs, mask)  # restarted: hello, then another timeout
    assert time.perf_counter() - t0 < 0.3 + 3.0  # a generous margin; the exact figure is benchmarked
    assert agent.pop_faults()["timeout"] == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("fzmj: exec bot")]
    assert len(err) == 2 and all("timeout" in ln for ln in err)


def test_garbage(tmp_path, capsys):
    agent, f, err = run_fault(bot(tmp_path, "print('thinking...', flush=True)"), capsys)
    assert f["garbage"] == 1 and len(err) == 1 and "not JSON" in err[0]
    agent, f, err = run_fault(
        bot(tmp_path, "print(json.dumps({'type': 'act', 'id': msg['id'], 'actions': [0]}), flush=True)", "b2.py"),
        capsys,
    )
    assert f["garbage"] == 1 and "8 action(s)" in err[0]


def test_illegal_answers_fall_back_per_table(tmp_path, capsys):
    spec = bot(
        tmp_path,
        """
        acts = [r["legal"][0] for r in msg["rows"]]
        acts[0] = 999
        acts[1] = "pass"
        print(json.dumps({"type": "act", "id": msg["id"], "actions": acts}), flush=True)
        """,
    )
    obs, mask = batch(8)
    agent = make_agent(spec)
    for _ in range(5):
        a = agent.act(obs, mask)
        assert legal(a, mask)
        assert np.array_equal(a[2:], [np.flatnonzero(m)[0] for m in mask[2:]])  # the bot's own answers kept
    f = agent.pop_faults()
    assert f["illegal"] == 10 and f["fallback_decisions"] == 10 and f["crash"] == f["garbage"] == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("fzmj: exec bot")]
    assert len(err) == 3 and "999" in err[0] and "counted, not printed" in err[2]
    pid = agent._proc.proc.pid  # still running
    agent.close()
    assert_gone(pid)


def test_wrong_version_is_not_restarted(tmp_path, capsys):
    path = tmp_path / "v2.py"
    path.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'type': 'hello', 'protocol': 'fzmj-bot', 'version': 2}), flush=True)\n"
    )
    agent = make_agent(f"exec:{sys.executable} {path}")
    obs, mask = batch(4)
    for _ in range(3):
        assert legal(agent.act(obs, mask), mask)
    f = agent.pop_faults()
    assert f["garbage"] == 1 and f["fallback_decisions"] == 12
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("fzmj: exec bot")]
    assert len(err) == 1 and "version 2" in err[0] and "no restarts left" in err[0]


def test_restarts_run_out(tmp_path, capsys):
    agent, f, err = run_fault(bot(tmp_path, "sys.exit(1)", options="restarts=1:"), capsys)
    obs, mask = batch(8)
    for _ in range(3):
        agent.act(obs, mask)
    f = agent.pop_faults()
    assert f["crash"] == 1 and f["fallback_decisions"] == 24  # one restart, then the fallback only
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("fzmj: exec bot")]
    assert len(err) == 1 and "no restarts left" in err[0]


def test_no_zombies_after_many_faults(tmp_path, capsys):
    spec = bot(tmp_path, "sys.exit(1)", options="restarts=5:")
    agent = make_agent(spec)
    obs, mask = batch(4)
    pids = []
    for _ in range(6):
        agent.act(obs, mask)
        pids.append(agent._last_pid)
    assert len(set(pids)) == 6
    for pid in pids:
        assert_gone(pid)


def test_closing_an_idle_bot_reaps_it():
    agent = make_agent(RANDOM_BOT)
    obs, mask = batch(2)
    agent.act(obs, mask)
    pid = agent._proc.proc.pid
    del agent  # garbage collection stops it too
    assert_gone(pid)


# ---- end to end ------------------------------------------------------------------------------
def test_eval_with_exec_bots_end_to_end():
    from fzmj.agents.evaluate import evaluate

    res = evaluate([RANDOM_BOT, "random"], hands=16, seed=1, batch=8, progress=False)
    zero = {"crash": 0, "timeout": 0, "garbage": 0, "illegal": 0, "fallback_decisions": 0}
    assert res["bot_faults"] == {RANDOM_BOT: zero}
    again = evaluate([RANDOM_BOT, "random"], hands=16, seed=1, batch=8, progress=False, workers=2)
    assert again["agents"] == res["agents"]  # reproducible: the bot reseeds from the reset messages
    assert "bot_faults" not in evaluate(["random"], hands=4, progress=False)


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
def test_eval_with_the_perl_bot():
    from fzmj.agents.evaluate import evaluate, markdown

    res = evaluate([PERL_BOT, "random"], hands=16, seed=2, batch=16, progress=False)
    assert sum(res["bot_faults"][PERL_BOT].values()) == 0
    assert "faults" not in markdown(res)


def test_a_crashing_bot_never_stops_an_evaluation(tmp_path, capsys):
    from fzmj.agents.evaluate import evaluate, markdown

    spec = bot(tmp_path, "sys.exit(1)", options="restarts=0:")
    res = evaluate([spec, "random"], hands=8, batch=8, progress=False)
    f = res["bot_faults"][spec]
    assert f["crash"] == 1 and f["fallback_decisions"] > 0
    assert "faults: crash 1" in markdown(res)


def test_play_agents_with_an_exec_bot():
    from fzmj.web.play import play_agents

    rec = play_agents([RANDOM_BOT, "random", PERL_BOT if shutil.which("perl") else "random", "random:1"], seed=3)
    assert rec["meta"]["seats"][0] == RANDOM_BOT


def test_league_spec_is_made_absolute(tmp_path, monkeypatch):
    from fzmj.agents.league import normalize_spec

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my bot.py").write_text("")
    norm = normalize_spec("exec:timeout=0.5:python3 'my bot.py' --level 2")
    assert norm == f"exec:timeout=0.5:python3 '{tmp_path / 'my bot.py'}' --level 2"
    assert parse_exec_spec(norm).timeout == 0.5


def test_league_with_exec_bots_records_faults_and_caches(tmp_path, capsys):
    from fzmj.agents.league import main

    crashing = bot(tmp_path, "sys.exit(1)", options="restarts=0:")
    league = str(tmp_path / "league")
    args = ["--dir", league, "--hands-per-pairing", "16", "--no-progress"]
    assert main(["--agents", RANDOM_BOT, crashing, "random", *args]) == 0
    out = capsys.readouterr()
    assert "crash" in out.err and RANDOM_BOT in out.out
    entries = [json.loads(p.read_text()) for p in (Path(league) / "matches").glob("*.json")]
    faults = [f for e in entries for f in e.get("bot_faults", {}).values()]
    assert any(f["crash"] for f in faults) and any(not any(f.values()) for f in faults)
    assert main(args) == 0  # everything cached: nothing runs again
    assert "crash" not in capsys.readouterr().err


def test_a_forked_child_starts_its_own_bot():
    """A forked worker never talks to (or kills) its parent's bot: it starts its own."""
    agent = make_agent(RANDOM_BOT)
    obs, mask = batch(4)
    agent.act(obs, mask)
    parent_bot = agent._proc.proc.pid
    r, w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            a = agent.act(obs, mask)
            ok = legal(a, mask) and agent._proc.proc.pid != parent_bot and agent.pop_faults()["crash"] == 0
            agent.close()
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    assert os.read(r, 1) == b"1"
    assert legal(agent.act(obs, mask), mask) and agent._proc.proc.pid == parent_bot  # ours still answers
    agent.close()
    assert_gone(parent_bot)
