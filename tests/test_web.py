"""The replay frames, fzmj-replay, fzmj-play's session and server, fzmj-eval --save-records
without a browser (tests/test_web_browser.py drives the pages in Chromium).

Expected values come from the record or from an independent replay through ``Game``; the
scripted scenarios are the R9.4 / R9.5 rule tests' walls.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from fzmj.agents import make_agent
from fzmj.agents.evaluate import evaluate
from rules_helpers import A_HU, A_PASS, K, discard, kong, new_game, pass_all, resolve, tsumogiri

import fzmj_env as F
from fzmj.web import play as P
from fzmj.web import replay as R
from fzmj.web.frames import record_frames

JUNK_DEALER = "5m 11223m 3m 789m 99p 11s 33s 5s"
SEAT2_TWO_SIDED = "34m 789m 234p 567p 678s 11s"  # waits 2m / 5m


def _finish(g) -> None:
    """Play on to the end: pass every window, discard the drawn tile."""
    tsumogiri(g)


def _random_match(hands: int, seed: int) -> dict:
    g = F.Game(hands_per_game=hands)
    g.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not g.done:
        g.step(int(rng.choice(g.legal_actions)))
    return F.make_record(g)


@pytest.fixture(scope="module")
def match():
    return _random_match(3, seed=11)


def _frames(data):
    return [f for h in data["hands"] for f in h["frames"]]


# ---- frames: the state the pages draw ---------------------------------------------------------
def test_frames_follow_the_record_decision_by_decision(match):
    data = record_frames(match)
    frames = _frames(data)
    assert len(frames) == len(match["decisions"]) + len(match["hands"])  # one per decision + one per hand end
    # an independent replay: the concealed tiles, discards and scores of every frame
    g = F.Game(hands_per_game=len(match["hands"]))
    g.reset(seed=match["seed"], wall=match["hands"][0]["wall"], dealer=match["hands"][0]["dealer"])
    played = 0
    for f in frames:
        if f["step"] is None:  # a hand's end: the result and the scores after it
            r = match["hands"][f["hand"]]["result"]
            assert f["phase"] == "end"
            assert f["scores"] == [
                sum(h["result"]["points"][s] for h in match["hands"][: f["hand"] + 1]) for s in range(4)
            ]
            assert data["hands"][f["hand"]]["result"]["value"] == r["value"]
            continue
        assert f["step"] == played
        seat, action = match["decisions"][played]
        assert (f["actor"], f["action"]["seat"], f["action"]["action"]) == (g.seat, seat, action)
        assert f["legal"] == g.legal_actions and action in f["legal"]
        for s in range(4):
            assert f["seats"][s]["hand"] == [k for k in range(27) for _ in range(int(g.hand(s)[k]))]
            assert [F.kind_name(k) for k, _ in f["seats"][s]["disc"]] == g.discards(s)
        assert f["scores"] == g.scores
        assert f["wall"]["left"] == g.tiles_left and f["wall"]["reserve"] == g.reserve
        g.step(action)
        played += 1
    assert played == len(match["decisions"])
    assert frames[-1]["scores"] == match["scores"]


def test_frames_show_a_claim_window_and_r9_4_passed_win():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: SEAT2_TWO_SIDED}, draws="9p 9p 5m 2m 5m 1p 5m", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=2)
    discard(g, 3, "5m")
    window_step = len(g.decisions)
    resolve(g, {2: A_PASS})  # 过水 on 5m (R9.4)
    after = len(g.decisions)
    _finish(g)
    data = record_frames(F.make_record(g))
    frames = data["hands"][0]["frames"]
    claim = frames[window_step]["claim"]
    assert claim["tile"] == K("5m") and claim["from"] == 3
    asked = {a["seat"]: a for a in claim["asked"]}
    assert A_HU in asked[2]["offered"] and A_PASS in asked[2]["offered"]
    assert any("resolved" in e for e in frames[window_step + len(claim["asked"]) - 1]["events"])
    assert frames[after]["seats"][2]["passed"] == [K("5m")]
    # seat 2's own view shows its 过水; seat 0's view does not (R12)
    assert record_frames(F.make_record(g), view=2)["hands"][0]["frames"][after]["seats"][2]["passed"] == [K("5m")]
    assert record_frames(F.make_record(g), view=0)["hands"][0]["frames"][after]["seats"][2]["passed"] is None


def test_frames_show_r9_5_idle_gold():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: "123m 456m 789m 123p 456p 9s"}, draws="5p 2s", tail="9s")
    _finish(g)
    frames = record_frames(F.make_record(g))["hands"][0]["frames"]
    assert frames[0]["seats"][2]["idle_gold"] is True  # 5 melds + 1 gold: wins on every kind
    assert frames[0]["seats"][1]["idle_gold"] is False
    assert frames[0]["seats"][0]["idle_gold"] is None  # the dealer holds 17: not a 3n+1 hand


def test_seat_view_hides_what_the_seat_cannot_see(match):
    data = record_frames(match, view=1)
    for f in _frames(data):
        for s in (0, 2, 3):
            st = f["seats"][s]
            if f["step"] is not None:
                assert st["hand"] is None and st["passed"] is None and st["idle_gold"] is None
            assert all(m[1] >= 0 or m[0] == "concealed_kong" for m in st["melds"])
        assert f["seats"][1]["hand"] is not None
        if f["step"] is not None and f["actor"] != 1:
            assert f["legal"] is None
        if f["claim"] and f["step"] is not None:  # only its own answers: who else was asked is private
            assert f["actor"] == 1 and [a["seat"] for a in f["claim"]["asked"]] == [1]
    steps = [f["step"] for f in _frames(data) if f["step"] is not None]
    phase = {f["step"]: f["phase"] for f in _frames(record_frames(match))}
    own_or_public = [i for i, (s, _) in enumerate(match["decisions"]) if s == 1 or phase[i] != "claim"]
    assert steps == own_or_public
    page = R.replay_html(match, view=1)
    assert '"view":1' in page


def test_seat_view_hides_the_kind_of_another_seats_concealed_kong():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 1: "7777p 123m 456m 123s 45s 9m"}, draws="1p", tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    step = len(g.decisions)
    kong(g, 1, "7p")
    _finish(g)
    rec = F.make_record(g)
    frames = record_frames(rec, view=0)["hands"][0]["frames"]
    assert frames[step]["action"] == {"seat": 1, "action": None, "name": "concealed kong (kind hidden)"}
    assert frames[step + 1]["seats"][1]["melds"] == [["concealed_kong", -1, -1, -1]]
    assert "7p" not in " ".join(frames[step]["events"])
    assert frames[-1]["seats"][1]["melds"] == [["concealed_kong", K("7p"), -1, -1]]  # shown once the hand is over
    own = record_frames(rec, view=1)["hands"][0]["frames"]
    assert own[step]["action"]["name"] == "kong 7p" and own[step + 1]["seats"][1]["melds"][0][1] == K("7p")


def test_frames_refuse_a_bad_view(match):
    with pytest.raises(ValueError, match="seat to view"):
        record_frames(match, view=4)


# ---- fzmj-replay ------------------------------------------------------------------------------
def test_replay_cli_writes_one_self_contained_page(match, tmp_path, capsys):
    src = tmp_path / "m.json"
    F.save_record(match, src)
    assert R.main([str(src), "-o", str(tmp_path / "m.html")]) == 0
    page = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert "<script src" not in page and "<link" not in page and "http://" not in page and "https://" not in page
    data = json.loads(page.split('id="fzmj-data">', 1)[1].split("</script>", 1)[0])
    assert data["decisions"] == len(match["decisions"]) and data["preset"] == "fuzhou-lianzhong"
    assert "wrote" in capsys.readouterr().out


def _cli_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        R.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fzmj-replay: error:")
    return err


def test_replay_cli_refuses_bad_records_with_one_line(match, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert "not valid JSON" in _cli_error([str(bad)], capsys)
    bad.write_text(json.dumps({"hello": 1}), encoding="utf-8")  # foreign JSON
    assert "unsupported record format None" in _cli_error([str(bad)], capsys)
    rec = json.loads(json.dumps(match))
    rec["decisions"][5][1] = 58 if rec["decisions"][5][1] != 58 else 57  # an action the engine refuses
    F.save_record(rec, bad)
    assert "decision 5" in _cli_error([str(bad)], capsys)
    rec = json.loads(json.dumps(match))
    rec["rules"] = "fuzhou-home"  # a preset this engine cannot replay
    F.save_record(rec, bad)
    assert "fuzhou-home" in _cli_error([str(bad)], capsys)
    rec["rules"] = "no-such-preset"
    F.save_record(rec, bad)
    assert "no-such-preset" in _cli_error([str(bad)], capsys)
    assert "no such file" in _cli_error([str(tmp_path / "missing.json")], capsys)
    assert "--seat" in _cli_error([str(bad), "--seat", "5"], capsys)


# ---- fzmj-play: the session (the server's state machine) --------------------------------------
def _session(tmp_path, hands=1, seed=3, agents=("random:1", "random:2", "random:3")):
    return P.Session(
        [make_agent(a) for a in agents], seat=0, hands=hands, seed=seed, record_path=tmp_path / "game.json"
    )


def test_play_session_refuses_illegal_and_stale_requests_without_change(tmp_path):
    s = _session(tmp_path)
    st = s.state()
    assert st["your_turn"]
    legal = [a for a, _ in st["legal"]]
    illegal = next(a for a in range(62) if a not in legal)
    buf = s.game.buf.copy()
    for action, version, status in (
        (illegal, st["version"], 400),
        (99, st["version"], 400),
        ("5m", st["version"], 400),
        (legal[0], st["version"] - 1, 409),  # stale
        (legal[0], None, 409),
    ):
        with pytest.raises(P.PlayError) as e:
            s.act(action, version)
        assert e.value.status == status
        assert np.array_equal(s.game.buf, buf) and s.version == st["version"]
    with pytest.raises(P.PlayError, match="no finished hand"):
        s.next_hand(st["version"])
    assert np.array_equal(s.game.buf, buf)


def test_play_session_plays_a_match_and_saves_a_record_that_replays(tmp_path):
    s = _session(tmp_path, hands=2)
    rng = np.random.default_rng(0)
    seen_results = 0
    while True:
        st = s.state()
        if st["hand_over"]:
            seen_results += 1
            assert st["result"]["points"] == s.game.results[seen_results - 1]["points"]
            assert st["frame"]["phase"] == "end"
            with pytest.raises(P.PlayError, match="hand is over"):
                s.act(61, st["version"])
            s.next_hand(st["version"])
            continue
        if st["done"]:
            break
        assert st["your_turn"] and st["frame"]["actor"] == 0
        assert st["frame"]["seats"][1]["hand"] is None  # the person sees only its own tiles (R12)
        s.act(int(rng.choice([a for a, _ in st["legal"]])), st["version"])
    assert seen_results == 2
    rec = F.load_record(tmp_path / "game.json")
    assert F.replay(rec).scores == s.game.scores == rec["scores"]
    assert rec["meta"]["seats"][0] == "you"
    assert R.replay_html(rec)  # the viewer reads it


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_play_server_answers_on_localhost_only_and_rejects_bad_requests(tmp_path):
    s = _session(tmp_path)
    server = P.make_server(s, 0)
    assert server.server_address[0] == "127.0.0.1"
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(base + "/", timeout=10) as r:
            assert "fzmj-play" in r.read().decode()
        with urllib.request.urlopen(base + "/state", timeout=10) as r:
            st = json.loads(r.read())
        legal = [a for a, _ in st["legal"]]
        code, body = _post(
            base + "/act", {"action": next(a for a in range(62) if a not in legal), "version": st["version"]}
        )
        assert code == 400 and "cannot take" in body["error"] and body["state"]["version"] == st["version"]
        code, body = _post(base + "/act", {"action": legal[0], "version": st["version"] + 7})
        assert code == 409 and "stale" in body["error"]
        code, body = _post(base + "/act", {"action": legal[0], "version": st["version"]})
        assert code == 200 and body["version"] == st["version"] + 1
        code, body = _post(base + "/nothing", {})
        assert code == 404
        with pytest.raises(urllib.error.HTTPError) as e:  # the record holds the walls: not before the end
            urllib.request.urlopen(base + "/record", timeout=10)
        assert e.value.code == 409
    finally:
        server.shutdown()
        server.server_close()


def _play_cli_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        P.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fzmj-play: error:")
    return err


def test_play_cli_errors(tmp_path, capsys):
    assert "unknown agent spec" in _play_cli_error(["--agents", "nobody"], capsys)
    assert "1 or 3 specs" in _play_cli_error(["--agents", "random", "random"], capsys)
    assert "--seat" in _play_cli_error(["--agents", "random", "--seat", "4"], capsys)
    assert "--rules" in _play_cli_error(["--agents", "random", "--rules", "no-such-preset"], capsys)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = str(tmp_path / "g.json")
        assert "already in use" in _play_cli_error(["--agents", "random", "--port", str(port), "--out", out], capsys)
        assert not (tmp_path / "g.json").exists()  # refused before any game started


# ---- fzmj-eval --save-records -----------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_eval_saves_worst_and_best_hands_as_records(tmp_path, workers):
    out = tmp_path / "records"
    res = evaluate(["random:1", "random:2"], hands=16, batch=8, workers=workers, progress=False, save_records=str(out))
    paths = res["records"]
    assert 1 <= len(paths) <= 4  # 2 per agent, a hand kept for two reasons is written once
    whys = []
    for p in paths:
        rec = F.load_record(p)
        F.replay(rec)
        meta = rec["meta"]
        assert meta["source"] == "fzmj-eval" and len(meta["seats"]) == 4
        whys.append(meta["why"])
        # the first reason's score is the named seat's points in the hand
        first = meta["why"].split(";")[0]
        score = int(first.split("(")[1].split(" at seat")[0])
        seat = int(first.split("at seat ")[1].rstrip(")"))
        assert rec["hands"][0]["result"]["points"][seat] == score
    text = " ".join(whys)
    for name in ("random:1", "random:2"):
        assert f"worst hand #1 of {name}" in text and f"best hand #1 of {name}" in text
    if workers == 2:  # the same records whatever the number of workers
        again = evaluate(["random:1", "random:2"], hands=16, batch=8, progress=False, save_records=str(tmp_path / "r1"))
        assert [F.load_record(p)["decisions"] for p in again["records"]] == [
            F.load_record(p)["decisions"] for p in paths
        ]


def test_the_env_core_and_the_replay_page_do_not_import_agents():
    """Floors (ARCHITECTURE.md): fzmj_env and the replay writer stand without agents/; only
    the play server (above agents/) imports it."""
    import subprocess
    import sys

    code = "import sys, fzmj_env, fzmj.web.replay; assert 'agents' not in sys.modules, 'agents imported'"
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)}
    )
    assert r.returncode == 0, r.stderr


def test_trainer_keeps_evaluation_records(tmp_path):
    """The trainer's hook (``eval_records``): each evaluation writes the learner's worst and best hands."""
    from fzmj.train.ppo_selfplay import main as train_main

    root = Path(__file__).resolve().parents[1]
    sets = [
        "runs_dir=" + str(tmp_path),
        "run_name=rec",
        "total_timesteps=512",
        "eval_every=1",
        "eval_hands=8",
        "eval_records=2",
    ]
    train_main(["--config", str(root / "configs/ppo_smoke.yaml")] + [x for s in sets for x in ("--set", s)])
    for opponent in ("random", "heuristic"):
        paths = sorted((tmp_path / "rec" / "records" / f"update_000001_vs_{opponent}").glob("*.json"))
        assert 1 <= len(paths) <= 2 and all(p.name.startswith(("00_ppo_latest", "01_ppo_latest")) for p in paths)
        for p in paths:
            rec = F.load_record(p)
            F.replay(rec)
            assert "of ppo:" in rec["meta"]["why"]
