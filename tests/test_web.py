"""The replay frames, fzmj-replay, fzmj-play's session and server, fzmj-eval --save-records
without a browser (tests/test_web_browser.py drives the pages in Chromium).

Expected values come from the record or from an independent replay through ``Game``; the
scripted scenarios are the R9.4 / R9.5 rule tests' walls.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from rules_helpers import A_HU, A_PASS, K, discard, kong, new_game, pass_all, resolve, tsumogiri

import fzmj_env as F
from fzmj.agents import make_agent
from fzmj.agents.evaluate import evaluate
from fzmj.web import play as P
from fzmj.web import replay as R
from fzmj.web.frames import end_frame, record_frames

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


def _laid_seq(lines: list[str]) -> list[tuple[int, list[str]]]:
    """The flower lines of event lines, in order: (seat, the flower names it lays out)."""
    out = []
    for line in lines:
        if "lays out flower(s)" in line:
            seat = int(line.split("seat ", 1)[1].split(" ", 1)[0])
            out.append((seat, line.split("flower(s) ", 1)[1].split(" and ", 1)[0].split()))
    return out


def _engine_laid(record: dict) -> list[list[tuple[int, list[str]]]]:
    """Per hand, the flowers the engine lays out at each decision, read off its own per-kind counts
    (``flowers[seat, kind - 27]``), in decision order and seat order: what the lines must say.
    Each hand is played on its own table (as the replay does), so a hand-ending step keeps its state."""
    rules = F.replay(record).rules
    out, i = [], 0
    for start in record["hands"]:
        g = F.Game(rules, hands_per_game=1)
        g.reset(seed=record["seed"], wall=start["wall"], dealer=start["dealer"], streak=start["streak"])
        seq = []
        while not g.done:
            before = g.view.flowers.copy()
            g.step(record["decisions"][i][1])
            i += 1
            for s in range(4):
                new = [F.kind_name(27 + j) for j in range(15) for _ in range(int(g.view.flowers[s, j] - before[s, j]))]
                if new:
                    seq.append((s, new))
        out.append(seq)
    return out


def test_flower_lines_name_the_flowers_the_engine_laid_out():
    """Each flower line names exactly the flowers the engine laid out at that step (per kind): the
    replay's events for every view and the play page's log over a whole 2-hand session."""
    laid = 0
    for seed in range(31):
        record = _random_match(2, seed=seed)
        expect = _engine_laid(record)
        laid += sum(len(names) for hand in expect for _, names in hand)
        for view in (None, seed % 4):
            data = record_frames(record, view)
            got = [_laid_seq([e for f in h["frames"] for e in f["events"]]) for h in data["hands"]]
            assert got == expect, (seed, view)
    assert laid > 100
    for seed in range(31):
        # the person's first state already follows the agents' first steps, which may lay out
        # flowers (their lines are in the log): the reference is the engine's own deal, not that state
        s = P.Session([make_agent("random:1")] * 3, seat=seed % 4, hands=2, seed=seed)
        rng = np.random.default_rng(seed)
        while not s.game.done or s.pending_end is not None:
            st = s.state()
            if st["hand_over"]:
                s.next_hand(st["version"])
            else:
                s.act(int(rng.choice([a for a, _ in st["legal"]])), st["version"])
        assert len(s.log) < P.MAX_LOG  # nothing dropped from the front
        expect = _engine_laid(s.record())
        got = [_laid_seq([ln.split(": ", 1)[1] for ln in s.log if ln.startswith(f"hand {h + 1}: ")]) for h in range(2)]
        assert got == expect, seed


def test_play_steps_keep_every_public_line_of_the_other_seats():
    """The steps the page paces through say what the log says for the other seats' moves: a claim
    answer of another seat already has no line of its own, so none of its public lines is dropped."""
    resolved = 0
    for seed in range(4):
        s = P.Session([make_agent("random:1")] * 3, seat=0, hands=1, seed=seed)
        rng = np.random.default_rng(seed)
        while not s.game.done and s.pending_end is None:
            st = s.state()
            n = len(s.log)
            s.act(int(rng.choice([a for a, _ in st["legal"]])), st["version"])
            shown = [f"hand 1: {ln}" for x in s.steps for ln in x["lines"]]
            new = s.log[n:]
            assert len(s.log) < P.MAX_LOG and shown == new[len(new) - len(shown) :]
            resolved += sum("claim window resolved" in ln for ln in shown)
    assert resolved > 5


def test_result_rows_explain_the_value_line_by_line():
    shown = 0
    for seed in range(3):
        data = record_frames(P.play_agents(["heuristic"] * 4, hands=2, seed=seed))
        for h in data["hands"]:
            r = h["result"]
            for row in r["rows"]:
                assert all("{}" not in str(x) and "[]" not in str(x) for x in row)
            if r["winner"] is None:
                continue
            rows = {row[0]: row[1] for row in r["rows"]}
            assert rows["= value V"] == r["value"]
            assert (
                rows["sum"]
                == rows["flowers + kongs 花/杠"] + rows["golds 金"] + rows["dealer streak 连庄"] + rows["base 底"]
            )
            assert rows["× 2"] + rows["+ special 特殊"] == r["value"]
            end = h["frames"][-1]
            assert end["win_tile"] in end["seats"][r["winner"]]["hand"] or r["win_type"] == "rob_gold"
            shown += 1
    assert shown >= 3


def _split_tiles(split: dict, gold: int) -> list[int]:
    """The hand's tiles as a split uses them: a gold position holds the gold kind."""
    return sorted(
        gold if p in x["golds"] else k for x in [*split["sets"], split["pair"]] for p, k in enumerate(x["tiles"])
    )


def test_win_screen_splits_the_winning_hand_into_sets_and_pair():
    """Every win's end frame carries the engine's split of the winner's concealed tiles: valid
    sets that use exactly those tiles, five sets with the exposed melds, plus the pair."""
    shown = 0
    for seed in range(2):
        data = record_frames(P.play_agents(["heuristic"] * 4, hands=2, seed=seed))
        for h in data["hands"]:
            end, r = h["frames"][-1], h["result"]
            if r["winner"] is None:
                assert "win_split" not in end
                continue
            split, seat = end["win_split"], end["seats"][r["winner"]]
            assert split["shape"] in ("standard", "golden_pair", "golden_dragon")
            assert _split_tiles(split, end["gold"]) == sorted(seat["hand"])
            assert len(split["sets"]) + len(seat["melds"]) == 5
            assert split["pair"]["type"] == "pair" and split["pair"]["tiles"][0] == split["pair"]["tiles"][1]
            for x in split["sets"]:
                t = x["tiles"]
                assert t == [t[0]] * 3 if x["type"] == "triplet" else t == [t[0], t[0] + 1, t[0] + 2]
            assert ("golden_pair" in r["specials"]) == (split["shape"] == "golden_pair") or (
                split["shape"] == "golden_dragon"
            )
            shown += 1
    assert shown >= 3


def _seat2_self_draw(hand2: str, draw: str) -> F.Game:
    """Dealer 0 discards 9p, seat 1 draws and discards 9p, seat 2 draws ``draw`` and wins (gold 9s)."""
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: hand2}, draws=["9p", draw], tail="9s")
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)
    pass_all(g)
    g.step(A_HU)
    return g


def test_win_screen_shows_golden_pair_and_labels_three_golds_without_a_fake_split():
    # 金雀 (R11.3): the two golds are the pair
    g = _seat2_self_draw("46m 789m 234p 567p 678s 9s9s", "5m")
    assert "golden_pair" in g.result["specials"]
    split = end_frame(g)["win_split"]
    assert split["shape"] == "golden_pair"
    assert split["pair"] == {"type": "pair", "tiles": [K("9s")] * 2, "golds": [0, 1]}
    assert {"type": "run", "tiles": [K("4m"), K("5m"), K("6m")], "golds": []} in split["sets"]
    # 三金倒 (R11.3) wins whatever the shape: no sets are invented, the shape says why
    g = _seat2_self_draw("9s9s 1m 4m 7m 2p 5p 8p 3s 6s 1p 4p 7p 2m 5m 8m", "9s")
    assert g.result["win_type"] == "three_golds"
    assert end_frame(g)["win_split"] == {"shape": "three_golds", "sets": None, "pair": None}
    # a seat's view sees the winner's split too: the winner's tiles are shown at the table
    assert end_frame(g, view=0)["win_split"]["shape"] == "three_golds"


def test_play_steps_show_the_other_seats_moves_in_the_persons_view(tmp_path):
    s = _session(tmp_path, agents=("heuristic", "heuristic", "heuristic"))
    calls = set()
    rng = np.random.default_rng(2)
    while not s.game.done:
        st = s.state()
        for step in st["steps"]:
            assert step["seat"] != 0
            if step["frame"] is not None:  # R12: only the person's tiles
                assert all(step["frame"]["seats"][o]["hand"] is None for o in (1, 2, 3))
            calls.add(step["call"])
        if st["hand_over"]:
            s.next_hand(st["version"])
        else:
            s.act(int(rng.choice([a for a, _ in st["legal"]])), st["version"])
    assert None in calls and len(calls) >= 2  # plain steps and at least one call were announced


# ---- fzmj-replay ------------------------------------------------------------------------------
def test_replay_cli_writes_one_self_contained_page(match, tmp_path, capsys):
    src = tmp_path / "m.json"
    F.save_record(match, src)
    assert R.main([str(src), "-o", str(tmp_path / "m.html")]) == 0
    page = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert "<script src" not in page and "http://" not in page and "https://" not in page
    assert page.count("<link") == 1 and '<link rel="icon" href="data:,">' in page  # no favicon request
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
        (10**4400, st["version"], 400),  # beyond Python's digit limit for repr: still one 400 line
        (-1, st["version"], 400),
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


def _post(url, body, token=None, headers=None):
    h = {"Content-Type": "application/json", **({"X-Fzmj-Token": token} if token else {}), **(headers or {})}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture()
def served(tmp_path):
    """A session behind a running server: (session, server, base url, token)."""
    s = _session(tmp_path)
    server = P.make_server(s, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield s, server, f"http://127.0.0.1:{server.server_address[1]}", server.token
    server.shutdown()
    server.server_close()


def test_play_server_answers_on_localhost_only_and_rejects_bad_requests(served):
    s, server, base, tok = served
    assert server.server_address[0] == "127.0.0.1" and server.url == f"{base}/?token={tok}"
    with urllib.request.urlopen(server.url, timeout=10) as r:
        assert "fzmj-play" in r.read().decode()
    req = urllib.request.Request(base + "/state", headers={"X-Fzmj-Token": tok})
    with urllib.request.urlopen(req, timeout=10) as r:
        st = json.loads(r.read())
    legal = [a for a, _ in st["legal"]]
    illegal = next(a for a in range(62) if a not in legal)
    code, body = _post(base + "/act", {"action": illegal, "version": st["version"]}, tok)
    assert code == 400 and "cannot take" in body["error"] and body["state"]["version"] == st["version"]
    code, body = _post(base + "/act", {"action": legal[0], "version": st["version"] + 7}, tok)
    assert code == 409 and "stale" in body["error"]
    code, body = _post(base + "/act", {"action": legal[0], "version": st["version"]}, tok)
    assert code == 200 and body["version"] == st["version"] + 1
    code, body = _post(base + "/nothing", {}, tok)
    assert code == 404
    with pytest.raises(urllib.error.HTTPError) as e:  # the record holds the walls: not before the end
        urllib.request.urlopen(f"{base}/record?token={tok}", timeout=10)
    assert e.value.code == 409


def _raw(port: int, data: bytes, timeout: float = 15) -> tuple[int, str]:
    """Send raw bytes, read the whole answer: (status, the JSON error or body text)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := c.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode("utf-8", "replace")


def _request(port, path="/act", body=b"{}", host=None, token="", extra=b"", method=b"POST"):
    host = f"127.0.0.1:{port}" if host is None else host
    head = method + b" " + path.encode() + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
    if token:
        head += b"X-Fzmj-Token: " + token.encode() + b"\r\n"
    if method == b"POST" and b"Content-Length" not in extra:
        head += b"Content-Length: " + str(len(body)).encode() + b"\r\n"
    return head + extra + b"\r\n" + body


def test_play_server_refuses_other_pages_and_rebound_names(served):
    """Class: a foreign web page or a DNS-rebound host name must neither read nor play the game."""
    s, server, base, tok = served
    port = server.server_address[1]
    v = s.version
    body = json.dumps({"action": s.game.legal_actions[0], "version": v}).encode()
    cases = [
        _request(port, body=body),  # no token (a text/plain form or fetch from another page)
        _request(port, body=body, token="x" * len(tok)),  # a wrong token
        _request(port, body=body, token=tok[:-1]),  # a prefix of the token
        _request(port, body=body, token=tok, host=f"evil.example:{port}"),  # DNS rebinding
        _request(port, body=body, token=tok, host="127.0.0.1:1"),  # another port
        _request(port, body=body, token=tok, host=""),
        _request(port, body=body, token=tok, extra=f"Origin: http://localhost:{port + 1}\r\n".encode()),
        _request(port, body=body, token=tok, extra=b"Origin: null\r\n"),  # a file:// page
        _request(port, body=body, token=tok, extra=b"Origin: http://evil.example\r\n"),
        _request(port, "/state", b"", method=b"GET"),  # reading needs the token too
        _request(port, "/", b"", method=b"GET"),
        _request(port, "/record", b"", method=b"GET", host="attacker.test"),
        _request(port, f"/state?token={tok}", b"", method=b"GET", host=f"rebind.test:{port}"),
    ]
    for raw in cases:
        code, text = _raw(port, raw)
        assert code == 403 and json.loads(text)["error"], raw
    assert s.version == v
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):  # the page's own origin and host work
        origin = f"Origin: http://{host}\r\n".encode()
        code, _ = _raw(port, _request(port, f"/state?token={tok}", b"", host=host, extra=origin, method=b"GET"))
        assert code == 200
    assert _raw(port, _request(port, "/favicon.ico", b"", method=b"GET"))[0] == 200


def test_play_server_bad_bodies_get_one_line_400s(served, capfd):
    """Class: malformed requests are the client's fault: 4xx with one line, never 500, nothing printed."""
    s, server, base, tok = served
    port = server.server_address[1]
    v = s.version
    bad = [
        (b"\xff\xfe{", 400, "UTF-8"),
        (b'{"action": "\xc3\x28"}', 400, "UTF-8"),
        (b"[" * 30000, 400, "nested"),
        (b"{not json", 400, "JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (b"null", 400, "JSON object"),
        (b'{"action": ' + b"7" * 5000 + b', "version": 0}', 400, "an integer of 5000 digits"),  # was a 500
        (b'{"action": ' + b"7" * 4000 + b', "version": 0}', 400, "an integer of 4000 digits"),
    ]
    for body, status, word in bad:
        code, text = _raw(port, _request(port, body=body, token=tok))
        assert code == status and word in json.loads(text)["error"], (body[:20], text)
    for extra, status in (
        (b"Content-Length: abc\r\n", 400),
        (b"Content-Length: -5\r\n", 400),
        (b"Content-Length: 99999999\r\n", 413),
    ):
        code, text = _raw(port, _request(port, body=b"{}", token=tok, extra=extra))
        assert code == status and "\n" not in json.loads(text)["error"]
    code, text = _raw(port, _request(port, body=b"{}", token=tok, extra=b"Content-Length: 10\r\n"))
    assert code == 400 and "shorter" in json.loads(text)["error"]  # the peer closed its half early
    assert s.version == v
    # an early disconnect: a request sent, the socket closed before the answer is read
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port)) as c:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            c.sendall(_request(port, f"/state?token={tok}", b"", method=b"GET"))
    time.sleep(0.3)
    out, err = capfd.readouterr()
    assert "Traceback" not in err and "agent" not in err and err.count("\n") <= 3


def test_play_server_idle_or_half_sent_connections_block_nobody(served):
    """Class: one stalled connection must not stop other requests (threads, socket timeouts)."""
    s, server, base, tok = served
    port = server.server_address[1]
    idle = socket.create_connection(("127.0.0.1", port))  # sends nothing
    half = socket.create_connection(("127.0.0.1", port))  # promises 100 bytes, sends 2
    half.sendall(_request(port, body=b"{}", token=tok, extra=b"Content-Length: 100\r\n"))
    try:
        t0 = time.perf_counter()
        req = urllib.request.Request(base + "/state", headers={"X-Fzmj-Token": tok})
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.status == 200
        assert time.perf_counter() - t0 < 4
    finally:
        idle.close()
        half.close()


def test_pages_embed_json_that_no_content_can_break(match, tmp_path):
    """Class: metadata or agent names holding HTML must stay data (no early end of the script)."""
    rec = json.loads(json.dumps(match))
    nasty = "<!--<script>x</script>\u2028\u2029&amp;</ScRiPt><img src=x onerror=alert(1)>"
    rec["meta"] = {"seats": [nasty] * 4, "why": nasty}
    page = R.replay_html(rec)
    blob = page.split('id="fzmj-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in blob and ">" not in blob and "&" not in blob and "\u2028" not in blob
    assert json.loads(blob)["meta"]["seat_names"] == [nasty] * 4
    s = _session(tmp_path)
    s.names = [nasty] * 4
    page = P.play_page(s, "tok")
    blob = page.split('id="fzmj-meta">', 1)[1].split("</script>", 1)[0]
    assert "<" not in blob and json.loads(blob)["seat_names"] == [nasty] * 4


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


def test_play_cli_refuses_output_paths_and_numbers_before_starting(tmp_path, capsys, monkeypatch):
    """Class: nothing is lost: every output path and number is checked before the game starts."""
    monkeypatch.chdir(tmp_path)
    base = ["--agents", "random", "--seed", "5"]
    (tmp_path / "adir").mkdir()
    assert "is a directory" in _play_cli_error([*base, "--out", "adir"], capsys)
    assert "does not exist" in _play_cli_error([*base, "--out", "nope/x.json"], capsys)
    if Path("/dev/full").exists():
        assert "not a regular file" in _play_cli_error([*base, "--out", "/dev/full", "--force"], capsys)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if not os.access(ro, os.W_OK):  # root writes anywhere: nothing to test then
            assert "not writable" in _play_cli_error([*base, "--out", str(ro / "x.json")], capsys)
    finally:
        ro.chmod(0o700)
    (tmp_path / "old.json").write_text("precious")
    assert "--force" in _play_cli_error([*base, "--out", "old.json"], capsys)
    (tmp_path / "fzmj-play-5.json").write_text("precious")  # the default name is protected too
    assert "already exists" in _play_cli_error(base, capsys)
    assert (tmp_path / "old.json").read_text() == "precious" == (tmp_path / "fzmj-play-5.json").read_text()
    assert "--hands must be 1..10000" in _play_cli_error([*base, "--hands", "20000"], capsys)
    assert "--hands" in _play_cli_error([*base, "--hands", "0"], capsys)
    assert "--seed" in _play_cli_error(["--agents", "random", "--seed", str(2**64)], capsys)
    assert "--seed" in _play_cli_error(["--agents", "random", "--seed", "-1"], capsys)


class _Broken:
    name = "broken"

    def act(self, obs, mask):
        raise RuntimeError("boom\nsecond line")


def test_play_agent_failures_are_one_line(tmp_path, capsys, monkeypatch):
    """An agent raising (before the person's first turn or later) is named in one line; no traceback."""
    g = F.Game()
    g.reset(seed=9)
    seat = (g.view.m[F.core.state.DEALER] + 1) % 4  # the dealer, an agent, acts first
    with pytest.raises(P.AgentError, match=r"seat \d \(broken\) failed: RuntimeError: boom second line"):
        P.Session([_Broken()] * 3, seat=int(seat), seed=9)
    (tmp_path / "brokenagent.py").write_text(
        "class Broken:\n    def act(self, obs, mask):\n        raise RuntimeError('boom')\n"
    )
    monkeypatch.chdir(tmp_path)
    argv = ["--agents", "python:brokenagent:Broken", "--seed", "9", "--seat", str(int(seat))]
    assert P.main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "failed: RuntimeError: boom" in err and not list(tmp_path.glob("*.json"))
    # the largest seed plays: the agents' own seeds wrap instead of overflowing
    P.Session([make_agent("random")] * 3, seat=0, seed=2**64 - 1)


def test_play_session_keeps_the_record_when_saving_fails(tmp_path, capsys):
    s = P.Session([make_agent("random:1")] * 3, seat=0, seed=4, record_path=tmp_path / "gone" / "g.json")
    rng = np.random.default_rng(1)
    while not s.game.done:
        st = s.state()
        if st["hand_over"]:
            s.next_hand(st["version"])
        else:
            s.act(int(rng.choice([a for a, _ in st["legal"]])), st["version"])
    st = s.state()
    assert st["saved"] is None and "cannot save the record" in st["save_error"]
    assert "download it from the page" in capsys.readouterr().err
    assert F.replay(s.record()).scores == s.game.scores  # still served by /record


def test_replay_cli_refuses_output_paths_that_lose_data(match, tmp_path, capsys):
    src = tmp_path / "m.json"
    F.save_record(match, src)
    before = src.read_bytes()
    (tmp_path / "d").mkdir()
    assert "is a directory" in _cli_error([str(src), "-o", str(tmp_path / "d")], capsys)
    assert "is the input file" in _cli_error([str(src), "-o", str(src)], capsys)
    assert "is the input file" in _cli_error([str(src), "-o", str(tmp_path / "." / "m.json")], capsys)
    html_named = tmp_path / "x.html"
    html_named.write_bytes(before)
    assert "is the input file" in _cli_error([str(html_named)], capsys)
    other = tmp_path / "other.json"
    other.write_text("keep me")
    assert "--force" in _cli_error([str(src), "-o", str(other)], capsys)
    if Path("/dev/full").exists():
        assert "not a regular file" in _cli_error([str(src), "-o", "/dev/full", "--force"], capsys)
    assert src.read_bytes() == before == html_named.read_bytes() and other.read_text() == "keep me"
    assert R.main([str(src), "-o", str(tmp_path / "m.html")]) == 0  # a page may be replaced
    assert R.main([str(src), "-o", str(tmp_path / "m.html")]) == 0
    assert R.main([str(src), "-o", str(other), "--force"]) == 0
    assert not list(tmp_path.glob(".*.tmp"))


# ---- fzmj-eval --save-records -----------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_eval_saves_worst_and_best_hands_as_records(tmp_path, workers):
    out = tmp_path / "records"
    res = evaluate(
        ["random:1", "random:2"], hands=16, batch=8, workers=workers, seed=0, progress=False, save_records=str(out)
    )
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
        again = evaluate(
            ["random:1", "random:2"], hands=16, batch=8, seed=0, progress=False, save_records=str(tmp_path / "r1")
        )
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


# ---- review mode ------------------------------------------------------------------------------
class _Spy:
    """Plays the first legal action and keeps every observation it was given."""

    name = "spy"

    def __init__(self):
        self.seen = []

    def act(self, obs, mask):
        self.seen.append(np.array(obs[0]))
        return np.array([int(np.flatnonzero(mask[0])[0])])


def test_review_gives_the_agent_only_the_reviewed_seats_view(match):
    from fzmj.web.review import review_record

    spy = _Spy()
    rev = review_record(match, spy, seat=2)
    g = F.Game(hands_per_game=len(match["hands"]))
    h0 = match["hands"][0]
    g.reset(seed=match["seed"], wall=h0["wall"], dealer=h0["dealer"], streak=h0["streak"])
    expect = []
    o = np.zeros((F.encode.NUM_CHANNELS, 27), dtype=np.int8)
    for s, a in match["decisions"]:
        if s == 2:
            F.encode.encode_table(g.buf, 0, 2, o)
            expect.append(o.copy())
        g.step(a)
    assert len(spy.seen) == len(expect) == len(rev["at"]) and all(
        np.array_equal(x, y) for x, y in zip(spy.seen, expect, strict=True)
    )
    steps = [i for i, (s, _) in enumerate(match["decisions"]) if s == 2]
    assert sorted(rev["at"]) == steps
    for r in rev["at"].values():  # one-hot of act: the first legal action
        assert r["top"][0][1] == 1.0 and r["agree"] == (r["played"] == r["best"]) and r["value"] is None
    assert 0 <= rev["agree"] <= rev["decisions"] <= len(steps)
    assert all(row[1] == 1.0 for row in rev["largest"])  # a one-hot disagreement is a full gap
    with pytest.raises(ValueError, match="0..3"):
        review_record(match, spy, seat=4)


def test_review_with_the_pretrained_policy_has_probabilities_and_values(match, tmp_path, capsys):
    from fzmj.web.review import review_record

    # v1's critic reads the seat's view: a value per decision; v2's reads the hidden state
    # (an oracle critic, training only): no value at play time, never one made from hidden tiles
    for spec, value_type in (("pretrained:v1", float), ("pretrained", type(None))):
        rev = review_record(match, spec, seat=0)
        for r in rev["at"].values():
            total = sum(p for _, p, _ in r["top"])
            assert 0 < total <= 1.0001 and r["top"][0][0] == r["best"] and isinstance(r["value"], value_type)
    src = tmp_path / "m.json"
    F.save_record(match, src)
    assert R.main([str(src), "-o", str(tmp_path / "r.html"), "--review", "pretrained", "--seat", "1"]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    data = json.loads(page.split('id="fzmj-data">', 1)[1].split("</script>", 1)[0])
    assert data["review"]["seat"] == 1 and data["review"]["agent"] == "pretrained"
    assert "--review" in _cli_error([str(src), "-o", str(tmp_path / "x.html"), "--review", "nobody"], capsys)
    assert "--review-seat" in _cli_error([str(src), "-o", str(tmp_path / "x.html"), "--review-seat", "7"], capsys)


def test_play_hint_comes_from_the_persons_view_and_a_failing_reviewer_costs_only_the_hint(tmp_path):
    spy = _Spy()
    s = P.Session([make_agent("random:1")] * 3, seat=0, seed=3, reviewer=spy)
    st = s.state()
    assert st["hint"]["top"][0][0] == int(np.flatnonzero(s.game.mask)[0]) and st["hint"]["agent"] == "spy"
    o = np.zeros((F.encode.NUM_CHANNELS, 27), dtype=np.int8)
    F.encode.encode_table(s.game.buf, 0, 0, o)
    assert np.array_equal(spy.seen[-1], o)
    s.state()
    assert len(spy.seen) == 1  # one evaluation per decision
    s.reviewer = _Broken()
    s._hint = None
    assert "RuntimeError" in s.state()["hint"]["error"]


def test_every_chinese_character_of_the_pages_is_in_their_font():
    """Each CJK character in the pages' sources is drawn by the font the pages embed (a missing one
    would show as a box without a system CJK font): after adding a label, `python -m fzmj.web.make_font`."""
    from fzmj.web.make_font import FAMILY, OUT, font_characters, page_characters
    from fzmj.web.replay import asset

    css = OUT.read_text(encoding="utf-8")
    missing = sorted(set(page_characters()) - font_characters(css))
    assert not missing, f"not in fzmj/web/static/cjk_font.css: {''.join(missing)} (run python -m fzmj.web.make_font)"
    assert f'"{FAMILY}"' in asset("viewer.css").split("body {", 1)[1].split("}", 1)[0]  # the body's first font


# ---- danger hints (the belief model) ------------------------------------------------------------
def test_review_and_play_hint_carry_each_legal_discards_danger(match, tmp_path, capsys):
    from fzmj.agents.belief import load_belief
    from fzmj.web.review import review_record

    model = load_belief("belief")
    rv = review_record(match, "heuristic", 0, belief=model)
    assert rv["danger_model"] == "belief" and rv["danger_note"] is None
    with_danger = [r for r in rv["at"].values() if r["danger"] is not None]
    assert with_danger
    for r in with_danger:
        ps = [p for _, p in r["danger"]]
        assert ps == sorted(ps, reverse=True) and all(0 <= p <= 1 for p in ps)
    assert all(r["danger"] is None for r in review_record(match, "heuristic", 0)["at"].values())
    s = P.Session(
        [make_agent(a) for a in ("random:1", "random:2", "random:3")],
        seat=0, seed=3, record_path=tmp_path / "g.json", reviewer=make_agent("heuristic"), danger=model,
    )  # fmt: skip
    while s.state()["hint"]["danger"] is None:  # to the person's first discard (a claim window shows none)
        st = s.state()
        s.act(st["legal"][0][0], st["version"])
    h = s.state()["hint"]
    legal = sorted(a for a, _ in s.state()["legal"] if a < 27)
    assert sorted(k for k, _ in h["danger"]) == legal
    # a model of another preset shows nothing and says why; a missing one is a one-line error
    from fzmj.web.review import danger_model

    m, note = danger_model(model, "fuzhou-home")
    assert m is None and "trained on fuzhou-lianzhong" in note
    path = tmp_path / "m.json"
    F.save_record(match, path)
    err = _cli_error([str(path), "--review", "heuristic", "--danger", f"belief:{tmp_path / 'none.pt'}"], capsys)
    assert "--danger" in err and "no such file" in err
