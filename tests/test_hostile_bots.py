"""Bots that attack the benchmark: they try to recover the walls from their seed, answer lines
that break parsers, outlive their stdin, and die halfway through a paired run. Every attack
must fail: the run goes on, the fault is counted, no process is left, no seed gives walls away."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from fzmj.agents import make_agent
from fzmj.agents.evaluate import evaluate
from fzmj.agents.evaluate import main as eval_main
from fzmj.agents.exec_bot import ExecAgent

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from seed_cheat import SeedCheat  # noqa: E402

PY = sys.executable
HOSTILE = DATA / "hostile_bot.py"
STUBBORN = DATA / "stubborn_bot.py"
CHEAT_BOT = DATA / "seed_cheat_bot.py"


def batch(n: int = 4, seed: int = 0):
    from fzmj_env.vector import VectorEnv

    env = VectorEnv(n, seed=seed, hands_per_game=1)
    obs, mask, _ = env.reset()
    return obs, mask


def legal(actions, mask) -> bool:
    return bool((mask[np.arange(len(actions)), actions] == 1).all())


_PAYLOADS = Path(tempfile.mkdtemp(prefix="fzmj-hostile-"))
atexit.register(shutil.rmtree, _PAYLOADS, True)  # the long lines are 100+ MiB


def _payload(x: str | bytes) -> str:
    """A mode as it is, raw bytes through a file (a long line does not fit in an argument)."""
    if isinstance(x, str):
        return x
    path = _PAYLOADS / hashlib.sha256(x).hexdigest()[:16]
    path.write_bytes(x)
    return f"@{path}"


def hostile(hello: str | bytes = "ok", act: str | bytes = "ok", opts: str = "timeout=2:start=5:restarts=0") -> str:
    return f"exec:{opts}:{PY} {HOSTILE} {_payload(hello)} {_payload(act)}"


def run_bad(spec: str, n: int = 3):
    """One act call against the bot: the actions (must be legal) and the faults counted."""
    agent = make_agent(spec)
    obs, mask = batch(n)
    try:
        a = agent.act(obs, mask)
        assert legal(a, mask)
        return agent.pop_faults(), agent.fallback_rows
    finally:
        agent.close()


# ---- 1. bad answer lines: each one a counted fault, the fallback plays ---------------------------------
BIG = str(2**63).encode()
ACT = b'{"type": "act", "id": @ID@, "actions": '
ILLEGAL_VALUES = [
    BIG, b"18446744073709551615", b"-9223372036854775809", b"-" + BIG, b"1" + b"0" * 400, b"-1" + b"0" * 400,
    b"1.0", b"0.5", b"NaN", b"Infinity", b"-Infinity", b"1e400", b"true", b"false", b"null", b'"0"', b"[0]",
    b"{}", b"-1", b"62", b"1e2",
]  # fmt: skip
GARBAGE_LINES = [
    ACT + b"[" + b"1" + b"0" * 5000 + b"]}",  # beyond Python's 4300-digit limit
    b"[" * 200_000 + b"]" * 200_000,
    ACT + b"[" * 200_000 + b"]" * 200_000 + b"}",
    b'{"a":' * 200_000 + b"1" + b"}" * 200_000,
    b"\xff\xfe\xfd not utf-8",
    b'{"type": "act", "id": @ID@, "actions": @FIRST@, "x": "\xc3\x28"}',
    b"\x00" * 100,
    b"hello",
    b"[1, 2]",
    b"42",
    b'"act"',
    b"null",
    b'{"type": "act", "id": @ID@, "actions": @FIRST@} trailing',
    b'{"type": "act", "id": @ID@, "actions": @FIRST@}{"type": "act"}',
    b'{"type": "act", "id": true, "actions": @FIRST@}',
    b'{"type": "act", "id": "@ID@", "actions": @FIRST@}',
    b'{"type": "act", "id": @ID@.0, "actions": @FIRST@}',
    b'{"type": "act", "id": ' + BIG + b', "actions": @FIRST@}',
    b'{"type": "act", "id": 0, "actions": @FIRST@}',
    b'{"type": "act", "actions": @FIRST@}',
    b'{"id": @ID@, "actions": @FIRST@}',
    b'{"type": ["act"], "id": @ID@, "actions": @FIRST@}',
    b'{"type": "hello", "id": @ID@, "actions": @FIRST@}',
    b'{"type": "act", "id": @ID@}',
    b'{"type": "act", "id": @ID@, "actions": null}',
    b'{"type": "act", "id": @ID@, "actions": "0,0,0"}',
    b'{"type": "act", "id": @ID@, "actions": {"0": 0}}',
    b'{"type": "act", "id": @ID@, "actions": []}',
    b'{"type": "act", "id": @ID@, "actions": [0, 0, 0, 0, 0]}',
    b'{"type": "act", "id": @ID@, "actions": 0}',
    b"\xef\xbb\xbf" + b'{"type": "act", "id": @ID@, "actions": @FIRST@',  # a BOM and a cut line
    b'{"type": "act", "id": @ID@, "actions": @FIRST@, "s": "\\ud800"}' + b"x",
]


@pytest.mark.parametrize("value", ILLEGAL_VALUES, ids=lambda v: v[:12].decode(errors="replace"))
def test_an_action_that_is_no_legal_action_is_counted_illegal(value):
    f, rows = run_bad(hostile(act=ACT + b"[" + value + b", " + value + b", " + value + b"]}"))
    assert f["illegal"] == 3 and f["fallback_decisions"] == 3 and f["garbage"] == f["crash"] == 0
    assert rows.tolist() == [0, 1, 2]


@pytest.mark.parametrize("line", GARBAGE_LINES, ids=lambda v: v[:16].decode(errors="replace"))
def test_a_malformed_answer_is_counted_garbage(line):
    f, _ = run_bad(hostile(act=line))
    assert f["garbage"] == 1 and f["fallback_decisions"] == 3, f


@pytest.mark.parametrize(
    "mode,kind", [("exit", "crash"), ("close", "crash"), ("partial-exit", "crash"), ("kill", "crash"),
                  ("partial-hang", "timeout"), ("blank", "timeout"), ("sleep", "timeout")],
)  # fmt: skip
def test_a_bot_that_dies_or_stalls_mid_answer_is_a_counted_fault(mode, kind):
    f, _ = run_bad(hostile(act=mode, opts="timeout=0.5:restarts=0"))
    assert f[kind] == 1 and f["fallback_decisions"] == 3, f


def _hello(**fields) -> bytes:
    return json.dumps({"type": "hello", "protocol": "fzmj-bot", "version": 1, **fields}).encode()


BAD_HELLOS = [
    _hello(obs=[["view"]]),  # unhashable
    _hello(obs=[{"a": 1}]),
    _hello(obs=5),
    _hello(obs=["view", "nope"]),
    _hello(obs=None),
    _hello(obs="view"),  # the doc says a list
    _hello(name={"x": 1}),  # the doc says a string
    _hello(name=7),
    _hello(version="1"),
    _hello(version=True),
    _hello(version=1.0),
    _hello(version=2**64),
    _hello(max_batch=-1),
    _hello(max_batch=1.5),
    _hello(max_batch=True),
    _hello(max_batch="5"),
    _hello(max_batch=[1]),
    _hello(protocol=["fzmj-bot"]),
    b'{"type": "hello", "protocol": "fzmj-bot", "version": NaN}',
    b'{"type": "hello", "protocol": "fzmj-bot", "version": ' + b"9" * 4000 + b"}",
    b'{"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    b"[" * 200_000,
    b'{"type": "act"}',
    b"\xff",
]


@pytest.mark.parametrize("hello", BAD_HELLOS, ids=lambda v: v[:40].decode(errors="replace"))
def test_a_bad_hello_is_a_counted_fault(hello):
    f, _ = run_bad(hostile(hello=hello))
    assert f["garbage"] == 1 and f["fallback_decisions"] == 3, f


def test_hello_oddities_that_are_fine():
    """A huge max_batch, a repeated field name, no name, no max_batch: taken, not faults."""
    for hello in (
        _hello(max_batch=10**30),
        _hello(obs=["view", "view"]),
        _hello(name=None),
        _hello(max_batch=None),
    ):
        f, _ = run_bad(hostile(hello=hello))
        assert sum(f.values()) == 0, (hello, f)


@pytest.mark.parametrize("mode", ["exit", "sleep", "close", "partial-hang"])
def test_a_hello_that_never_comes_is_a_counted_fault(mode):
    f, _ = run_bad(hostile(hello=mode, opts="start=0.5:restarts=0"))
    assert f["crash"] + f["timeout"] == 1 and f["fallback_decisions"] == 3, f


def test_a_long_version_is_cut_in_the_error_line(capfd):
    run_bad(hostile(hello=b'{"type": "hello", "protocol": "fzmj-bot", "version": ' + b"9" * 4000 + b"}"))
    err = capfd.readouterr().err
    assert "speaks version" in err and max(len(line) for line in err.splitlines()) < 400


def test_lines_longer_than_the_limit_are_garbage_and_long_ones_are_read():
    f, _ = run_bad(hostile(act=b" " * (65 << 20)))
    assert f["garbage"] == 1
    # 48 MiB of blanks inside one valid answer: read (in linear time) and taken
    f, _ = run_bad(hostile(act=ACT + b"@FIRST@" + b" " * (48 << 20) + b"}"))
    assert sum(f.values()) == 0, f


def test_a_bad_line_does_not_stop_fzmj_eval_or_the_league_or_a_game(tmp_path, capsys):
    from fzmj.agents.league import main as league_main
    from fzmj.web.play import play_agents

    big = hostile(act=ACT + b"@EACH(" + BIG + b")@}", opts="restarts=1")
    deep = hostile(hello=b"[" * 200_000, opts="restarts=1")
    out = tmp_path / "r.json"
    assert (
        eval_main(["--agents", big, "random", "--hands", "16", "--batch", "8", "--no-progress", "--out", str(out)]) == 0
    )
    res = json.loads(out.read_text())
    assert res["bot_faults"][big]["illegal"] > 0 and res["hands_with_fallback"] > 0
    assert "faults" in capsys.readouterr().out
    d = str(tmp_path / "lg")
    assert league_main(["--agents", deep, "random", "--hands-per-pairing", "8", "--dir", d, "--no-progress"]) == 0
    rec = play_agents([big, deep, "heuristic", "random"], seed=secrets.randbits(64))
    assert rec["hands"]


# ---- 2. no bot process outlives the run ----------------------------------------------------------------
def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _left(pid_dir: Path, wait: float = 5.0) -> list[str]:
    end = time.monotonic() + wait
    while True:
        left = [p.name for p in pid_dir.iterdir() if _alive(int(p.read_text()))]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def _kill_left(pid_dir: Path) -> None:
    for p in pid_dir.iterdir():
        try:
            os.kill(int(p.read_text()), 9)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("extra", ["", "setsid", "daemon"])
def test_closing_a_bot_kills_what_it_started(tmp_path, extra):
    pids = tmp_path / "pids"
    pids.mkdir()
    agent = ExecAgent(f"exec:{PY} {STUBBORN} {pids} {extra}".strip())
    obs, mask = batch(2)
    agent.act(obs, mask)
    time.sleep(0.3)  # the child has written its pid
    try:
        assert len(list(pids.iterdir())) == (2 if extra else 1)
        agent.close()
        assert _left(pids) == []
    finally:
        _kill_left(pids)


@pytest.mark.parametrize("extra", ["", "daemon"])
def test_no_bot_is_left_after_workers(tmp_path, extra):
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = f"exec:{PY} {STUBBORN} {pids} {extra}".strip()
    try:
        evaluate([bot, "random"], hands=64, batch=8, workers=2, seed=1, progress=False)
        # each worker that got a batch started its bot; under load one worker may take every
        # batch before the other is up (seen in CI), so at least one, usually two
        assert len(list(pids.iterdir())) >= 1
        assert _left(pids) == []
    finally:
        _kill_left(pids)


def test_no_bot_is_left_when_a_worker_fails(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "boom_mod.py").write_text(
        "import numpy as np\n"
        "class Boom:\n"
        "    n = 0\n"
        "    def act(self, obs, mask):\n"
        "        Boom.n += 1\n"
        "        if Boom.n > 40:\n"
        "            raise ZeroDivisionError('boom')\n"
        "        return np.asarray(mask).argmax(axis=-1)\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ZeroDivisionError):
            evaluate(
                [f"exec:{PY} {STUBBORN} {pids}", "python:boom_mod:Boom"], hands=64, batch=8, workers=2, seed=1,
                progress=False, start_method="fork",
            )  # fmt: skip
        assert len(list(pids.iterdir())) >= 1
        assert _left(pids) == []
    finally:
        sys.path.remove(str(tmp_path))
        _kill_left(pids)


def test_no_bot_is_left_after_a_league_with_workers(tmp_path):
    from fzmj.agents.league import main as league_main

    pids = tmp_path / "pids"
    pids.mkdir()
    bot = f"exec:{PY} {STUBBORN} {pids}"
    d = str(tmp_path / "lg")
    try:
        args = ["--agents", bot, "random", "heuristic", "--hands-per-pairing", "8", "--dir", d, "--workers", "2"]
        assert league_main([*args, "--no-progress"]) == 0
        assert len(list(pids.iterdir())) >= 2
        assert _left(pids) == []
    finally:
        _kill_left(pids)


# ---- 3. --paired: faults in the results, a broken pairing said so ----------------------------------------
def test_a_bot_dying_in_a_paired_run_is_never_a_clean_number():
    """The issue's case: REF = the first agent, an opponent that exits at its 60th request. The
    two runs play the same games, so every wall both runs played without a fallback gives 0."""
    bot = hostile(act="after:59:exit", opts="restarts=2")
    res = evaluate(["heuristic", bot], hands=256, batch=64, seed=3, paired="heuristic", progress=False)
    p = res["paired"]
    assert p["clean"] is False and p["walls_excluded"] > 0 and "warning" in p
    assert p["mean"] == 0 and p["ci95"] == [0, 0] and 0 < p["hands"] < 256
    assert res["bot_faults"][bot]["crash"] > 0 and p["bot_faults"][bot]["crash"] > 0
    from fzmj.agents.evaluate import markdown

    assert "paired: not clean" in markdown(res) and "in the paired run" in markdown(res)


def test_a_clean_paired_run_says_so():
    res = evaluate(["heuristic", hostile()], hands=32, batch=16, seed=3, paired="heuristic", progress=False)
    assert res["paired"]["clean"] is True and res["paired"]["mean"] == 0 and res["paired"]["hands"] == 32


# ---- 4. seeds that give nothing away -------------------------------------------------------------------
def test_a_cheater_cannot_recover_the_walls_of_a_default_run():
    cheat = SeedCheat()
    res = evaluate([cheat, "heuristic"], hands=32, batch=32, progress=False)
    assert res["seed_source"] == "drawn" and cheat.seeds and cheat.recovered is None
    control = SeedCheat()  # a small seed is found by dealing every small seed: the attack is real
    evaluate([control, "heuristic"], hands=32, batch=32, seed=7, progress=False)
    assert control.recovered == 7


def test_an_exec_cheater_cannot_recover_the_walls_of_a_default_fzmj_eval(tmp_path, capsys):
    found = tmp_path / "found.json"
    bot = f"exec:start=120:timeout=120:{PY} {CHEAT_BOT} {found}"
    assert eval_main(["--agents", bot, "heuristic", "--hands", "32", "--batch", "32", "--no-progress"]) == 0
    assert json.loads(found.read_text())["recovered"] is None
    out = capsys.readouterr().out
    assert "secret while it played" in out
    assert (
        eval_main(["--agents", bot, "heuristic", "--hands", "32", "--batch", "32", "--no-progress", "--seed", "5"]) == 0
    )
    assert json.loads(found.read_text())["recovered"] == 5  # a seed the bot can guess gives the walls away


def test_a_cheater_does_no_better_than_a_fair_bot_on_a_secret_run():
    """On the same secret walls, the cheater's results are the fair first-legal bot's, exactly."""

    class FirstLegal:
        def act(self, obs, mask):
            return np.asarray(mask).reshape(-1, 62).argmax(axis=1)

    seed, key = secrets.randbits(64), secrets.randbits(64)
    cheat = SeedCheat()
    a = evaluate([cheat, "heuristic"], hands=64, batch=32, seed=seed, agent_seed=key, progress=False)
    b = evaluate([FirstLegal(), "heuristic"], hands=64, batch=32, seed=seed, agent_seed=key, progress=False)
    assert cheat.recovered is None
    assert a["per_slot"] == [{**s, "agent": a["per_slot"][i]["agent"]} for i, s in enumerate(b["per_slot"])]


def test_the_printed_seeds_replay_a_run_exactly(tmp_path):
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    args = ["--agents", "random", "random:3", "--hands", "32", "--batch", "16", "--no-progress"]
    assert eval_main([*args, "--out", str(out1)]) == 0
    first = json.loads(out1.read_text())
    assert eval_main([*args, *first["reproduce"].split(), "--out", str(out2)]) == 0
    again = json.loads(out2.read_text())
    assert first["seed_source"] == "drawn" and again["seed_source"] == "given"
    assert first["agents"] == again["agents"] and first["seed"] == again["seed"]


def test_fzmj_play_review_and_single_seat_seeds_give_nothing_away():
    from fzmj.integrations.gymnasium import SingleSeatEnv
    from fzmj.web.play import Session, play_agents
    from fzmj.web.review import review_record

    cheat = SeedCheat()
    while cheat.recovered == "not tried":  # about 1 hand in 70 ends before seat 0 decides (rob gold)
        cheat = SeedCheat()
        rec = play_agents([cheat, "heuristic", "heuristic", "heuristic"], seed=secrets.randbits(64))
    assert cheat.recovered is None
    old = (rec["seed"] * 4) % 2**64  # the old derivation: seed * 4 + seat
    assert cheat.seeds[0] != old
    reviewer = SeedCheat()
    review_record(rec, reviewer, 0)
    assert reviewer.recovered is None
    other = SeedCheat()  # the three seats beside the person in fzmj-play (one acts before the person)
    while other.recovered == "not tried":
        Session([other] * 3, seat=3, seed=secrets.randbits(64), agent_seed=secrets.randbits(64))
    assert other.recovered is None
    opp = SeedCheat()
    env = SingleSeatEnv(opponents=[opp, "heuristic", "heuristic"])
    _, info = env.reset(seed=secrets.randbits(64))
    for _ in range(200):
        if opp.recovered != "not tried":
            break
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            _, info = env.reset()
    assert opp.seeds and opp.recovered is None
