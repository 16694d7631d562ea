"""The replay page and the play page in a real headless browser.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it), driven by Playwright for
Python pointed at that executable: never ``playwright install``. Screenshots and the measured
timings go to ``tests/output/web/`` (``FZMJ_TEST_OUTPUT`` overrides the folder); the timings are
reported there, never asserted. Set ``FZMJ_NO_BROWSER=1`` to skip this file on a machine
without Chromium; otherwise a missing browser is a failure that says how to install it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, chromium_found, launch

import fzmj_env as F
from fzmj.agents import make_agent
from fzmj.web import play as P
from fzmj.web.frames import record_frames
from fzmj.web.play import play_agents
from fzmj.web.replay import write_replay
from fzmj_env.actions import A_HU

OUT = Path(os.environ.get("FZMJ_TEST_OUTPUT", Path(__file__).parent / "output")) / "web"

if os.environ.get("FZMJ_NO_BROWSER") == "1":
    pytest.skip("FZMJ_NO_BROWSER=1: browser tests skipped on request", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright for Python: pip install -e '.[dev]'")
    if not chromium_found():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set FZMJ_CHROMIUM)")
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def _watched(browser, width: int, height: int):
    """A page whose console warnings and errors (a missing favicon included) and uncaught
    exceptions are collected: any of them fails the test."""
    pg = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("warning", "error") else None)
    pg.problems = problems
    return pg, problems


@pytest.fixture()
def page(browser):
    pg, problems = _watched(browser, 1280, 960)
    yield pg
    pg.close()
    assert not problems, f"console warnings/errors on the page: {problems}"


@pytest.fixture()
def phone(browser):
    pg, problems = _watched(browser, 390, 844)
    yield pg
    pg.close()
    assert not problems, f"console warnings/errors on the page: {problems}"


def _timing(name: str, values: dict) -> None:
    """Append measured figures to the output folder (reported, never asserted)."""
    path = OUT / "timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = values
    path.write_text(json.dumps(data, indent=1))


@pytest.fixture(scope="module")
def match_record(tmp_path_factory):
    """A 4-hand match with wins and claims: two heuristic and two random seats."""
    rec = play_agents(["heuristic", "random:1", "heuristic", "random:2"], hands=4, seed=0)
    path = tmp_path_factory.mktemp("rec") / "match.json"
    F.save_record(rec, path)
    return rec, path


def _shown(page, seat: int) -> list[int]:
    """The concealed tiles the page shows for ``seat``, sorted (the drawn tile is shown last)."""
    return sorted(
        int(x)
        for x in page.eval_on_selector_all(
            f'.seat[data-seat="{seat}"] .hand .tile', "els => els.map(e => e.dataset.kind)"
        )
    )


def _state_at(record: dict, step: int) -> F.Game:
    """An independent replay of the record up to (not including) decision ``step``."""
    h0 = record["hands"][0]
    g = F.Game(hands_per_game=len(record["hands"]))
    g.reset(seed=record["seed"], wall=h0["wall"], dealer=h0["dealer"], streak=h0["streak"])
    for seat, action in record["decisions"][:step]:
        assert g.seat == seat
        g.step(action)
    return g


def _kinds(g: F.Game, seat: int) -> list[int]:
    return [k for k in range(27) for _ in range(int(g.hand(seat)[k]))]


def test_replay_page_steps_through_a_match(page, match_record, tmp_path):
    rec, src = match_record
    html = tmp_path / "match.html"
    write_replay(src, html)  # the engine is warm: the fixture played the match
    t = []
    for _ in range(3):
        t0 = time.perf_counter()
        write_replay(src, html)
        t.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    load_wall = time.perf_counter() - t0
    first_render = page.evaluate("fzmj.state.firstRenderAt")

    # the first decision: every seat's concealed tiles as the engine has them
    assert page.evaluate("document.body.dataset.step") == "0"
    g = _state_at(rec, 0)
    for s in range(4):
        assert _shown(page, s) == _kinds(g, s)
    # forward with the keyboard and the button, back with the keyboard
    for _ in range(9):
        page.keyboard.press("ArrowRight")
    page.click('button[data-move="next"]')
    assert page.evaluate("document.body.dataset.step") == "10"
    g = _state_at(rec, 10)
    for s in range(4):
        assert _shown(page, s) == _kinds(g, s)
        disc = page.eval_on_selector_all(
            f'.seat[data-seat="{s}"] .discards .tile', "els => els.map(e => +e.dataset.kind)"
        )
        assert [F.kind_name(k) for k in disc] == g.discards(s)
    assert page.inner_text(".decision .chosen") == F.actions.action_name(rec["decisions"][10][1])
    page.screenshot(path=str(OUT / "replay_step.png"), full_page=True)
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.body.dataset.step") == "9"
    g = _state_at(rec, 9)
    assert _shown(page, g.seat) == _kinds(g, g.seat)

    # step timing: 30 single decisions
    ms = []
    for _ in range(30):
        page.keyboard.press("ArrowRight")
        ms.append(page.evaluate("fzmj.state.lastRenderMs"))

    # the end of the first hand: result and scores as recorded
    page.keyboard.press("Home")
    page.keyboard.press("ArrowDown")  # next hand ...
    page.keyboard.press("ArrowLeft")  # ... and one back: the end of hand 1
    assert page.evaluate("document.body.dataset.step") == "end"
    r0 = rec["hands"][0]["result"]
    assert int(page.get_attribute(".result", "data-value")) == r0["value"]
    shown = [
        int(x)
        for x in page.eval_on_selector_all(".result .pay td[data-points]", "els => els.map(e => e.dataset.points)")
    ]
    assert shown == r0["points"]

    # jump to the end: the final scores of the match
    page.keyboard.press("End")
    assert page.evaluate("document.body.dataset.hand") == str(len(rec["hands"]) - 1)
    scores = [int(page.get_attribute(f'.seat[data-seat="{s}"] .score', "data-score")) for s in range(4)]
    assert scores == rec["scores"]
    page.screenshot(path=str(OUT / "replay_end.png"), full_page=True)
    page.click('button[data-move="prevHand"]')
    assert page.evaluate("document.body.dataset.frame") == "0"
    assert page.evaluate("document.body.dataset.hand") == str(len(rec["hands"]) - 1)
    _timing(
        "replay",
        {
            "record": f"{len(rec['hands'])} hands, {len(rec['decisions'])} decisions",
            "fzmj_replay_write_s_median": sorted(t)[1],
            "page_first_render_ms": first_render,
            "page_load_wall_s": load_wall,
            "step_render_ms_median": float(np.median(ms)),
            "step_render_ms_max": float(np.max(ms)),
        },
    )


def test_replay_page_seat_view_embeds_no_hidden_tiles(page, match_record, tmp_path):
    rec, src = match_record
    html = tmp_path / "seat2.html"
    write_replay(src, html, view=2)
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    for s in (0, 1, 3):  # backs only, and nothing hidden in the page's data
        assert set(_shown(page, s)) == {-1} and page.locator(f'.seat[data-seat="{s}"] .hand .tile.back').count() > 0
    hidden = page.evaluate(
        "fzmj.data.hands.flatMap(h => h.frames.filter(f => f.step !== null)).some(f => [0,1,3].some(s => f.seats[s].hand !== null))"
    )
    assert hidden is False
    assert _shown(page, 2) == _kinds(_state_at(rec, 0), 2)
    page.screenshot(path=str(OUT / "replay_seat2.png"), full_page=True)


def test_play_page_a_full_hand_by_clicking(page, tmp_path):
    record_path = tmp_path / "played.json"
    session = P.Session(
        [make_agent(f"random:{i}") for i in (1, 2, 3)], seat=0, hands=1, seed=21, record_path=record_path
    )
    server = P.make_server(session, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(server.url)
        page.wait_for_function("document.body.dataset.version !== undefined")
        page.fill("#pace", "0")  # no pause between the agents' steps in this test
        # an illegal request from the page's origin: refused, nothing changes
        before = page.evaluate("+document.body.dataset.version")
        status = page.evaluate(
            "v => fetch('/act', {method: 'POST', headers: {'X-Fzmj-Token': FZ.meta.token}, body: JSON.stringify({action: 99, version: v})}).then(r => r.status)",
            before,
        )
        assert status == 400 and session.version == before
        page.problems.clear()  # that deliberate 400 is the only console error allowed
        clicks = 0
        shot = False
        timed_out = False
        while page.evaluate("document.body.dataset.done") != "1":
            version = page.evaluate("document.body.dataset.version")
            if page.evaluate("document.body.dataset.handOver") == "1":
                page.screenshot(path=str(OUT / "play_result.png"), full_page=True)
                assert page.inner_text("#next-hand") == "final standings ▶"  # a 1-hand match: no next hand
                if page.evaluate("fzmj.st.state.result.winner") is not None:
                    assert page.locator(".result .tile.win").count() >= 1  # the winning tile is marked
                    assert page.locator(".result .winsplit .meld").count() >= 1  # the hand split into sets
                assert "{}" not in page.inner_text(".result") and "[]" not in page.inner_text(".result")
                page.click("#next-hand")
            elif page.locator(".seat .tile.click").count():
                if not shot and clicks >= 6:
                    page.screenshot(path=str(OUT / "play_turn.png"), full_page=True)
                    shot = True
                tiles = page.locator(".seat .tile.click")
                tiles.nth(clicks % tiles.count()).click()  # a discard: click the tile
            elif (
                not timed_out
                and page.locator("#actions button[data-action='61']").count()
                and not page.locator("#actions button.hu").count()
            ):
                # a claim window without a win: the timer, typed while the window is open, passes for them
                page.fill("#timer", "1")
                assert page.is_visible("#timerbar")
                page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=10000)
                page.fill("#timer", "0")
                assert any("seat 0 answers the claim window: pass" in x for x in session.log)
                timed_out = True
                clicks += 1
                continue
            else:
                buttons = page.locator("#actions button")
                assert buttons.count() > 0, "the person is to act but the page offers nothing"
                for b in buttons.all():  # chi / peng / kong buttons show the tiles they make
                    if b.get_attribute("data-action") in ("27", "28", "29", "30"):
                        assert b.locator(".tile").count() == 3
                acts = [b.get_attribute("data-action") for b in buttons.all()]
                pick = acts.index("59") if "59" in acts else acts.index("61") if "61" in acts else 0
                buttons.nth(pick).click()
            page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=10000)
            clicks += 1
            assert clicks < 400
        assert page.text_content("#prompt").startswith("game over")
        assert page.inner_text("#prompt").startswith("game over")  # not upper-cased by the style
        assert page.evaluate("document.getElementById('error').textContent") == ""
        assert not [t for t in page.locator("#actions button").all_inner_texts() if t.startswith("discard")]
        for link in ("#record-link", "#replay-link"):  # the standings link the record and its replay
            status = page.evaluate(
                f"fetch(document.querySelector('{link}').href).then(r => r.text().then(() => r.status))"
            )
            assert status == 200
        assert page.locator(".standings tr").count() == 5
        page.screenshot(path=str(OUT / "play_end.png"), full_page=True)
    finally:
        page.goto("about:blank")  # leave before the server stops: no refresh hits a closed port
        server.shutdown()
        server.server_close()
    rec = F.load_record(record_path)
    assert F.replay(rec).scores == rec["scores"] == session.game.scores
    assert clicks > 0 and rec["meta"]["seats"][0] == "you"
    assert timed_out  # the hand had a claim window for the person, answered by the timer
    html = tmp_path / "played.html"
    write_replay(record_path, html)  # and the viewer shows the saved game to its end
    page.goto(html.as_uri())
    page.keyboard.press("End")
    scores = [int(page.get_attribute(f'.seat[data-seat="{s}"] .score', "data-score")) for s in range(4)]
    assert scores == rec["scores"]


# ---- the defects a player met, each checked as the player would see it ------------------------
def _serve(agents=("random:1", "random:2", "random:3"), hands=1, seed=21, tmp=None):
    session = P.Session([make_agent(a) for a in agents], seat=0, hands=hands, seed=seed, record_path=tmp)
    server = P.make_server(session, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return session, server


def test_tiles_are_drawn_without_any_font(page, match_record, tmp_path):
    _, src = match_record
    html = tmp_path / "m.html"
    write_replay(src, html)
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    kinds = page.evaluate("[...Array(42).keys()].map(k => tileFace(k))")
    assert all("<text" not in face and "<path" in face or "<circle" in face or "<rect" in face for face in kinds)
    assert len(set(kinds)) == 42  # every kind has its own face


def test_win_screen_shows_the_sets_and_pair_with_each_golds_stand_in(page, tmp_path):
    """The replay's hand result draws the winner's hand as the engine splits it: one group per
    set and the pair, each gold with the tile it stands for, then the exposed melds."""
    rec = play_agents(["heuristic"] * 4, hands=1, seed=0)  # a discard win holding two golds
    src, html = tmp_path / "w.json", tmp_path / "w.html"
    F.save_record(rec, src)
    write_replay(src, html)
    data = record_frames(rec)
    r, end = data["hands"][0]["result"], data["hands"][0]["frames"][-1]
    split, seat = end["win_split"], end["seats"][r["winner"]]
    golds = [(x["tiles"][p]) for x in [*split["sets"], split["pair"]] for p in x["golds"]]
    assert golds, "the test needs a winning hand with golds"
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    page.keyboard.press("End")
    box = page.locator(".result .winsplit")
    box.wait_for()
    groups = box.locator(".meld")
    assert groups.count() == len(split["sets"]) + 1 + len(seat["melds"])
    kinds = [x["type"] for x in [*split["sets"], split["pair"]]] + [m[0] for m in seat["melds"]]
    assert [groups.nth(i).get_attribute("data-type") for i in range(groups.count())] == kinds
    stands = box.locator(".stand")
    assert stands.count() == len(golds)
    for i, k in enumerate(golds):
        st = stands.nth(i)
        assert int(st.get_attribute("data-as")) == k
        assert st.locator(".tile").get_attribute("data-kind") == str(end["gold"])  # drawn as the gold itself
        assert st.locator("small").inner_text() == "=" + F.kind_name(k)
    text = box.inner_text()
    assert "winning hand" in text and "pair" in text
    box.screenshot(path=str(OUT / "win_split.png"))


def test_play_result_box_shows_the_winners_split(page):
    """The play page's result box draws the winner's hand split into sets and pair too."""
    session, server = _serve(agents=("heuristic", "heuristic", "heuristic"), seed=0)
    try:
        while session.pending_end is None:  # the person: win when offered, else the last legal action
            legal = session.game.legal_actions
            session.act(A_HU if A_HU in legal else int(legal[-1]), session.version)
        end, r = session.pending_end["frame"], session.pending_end["result"]
        assert r["winner"] is not None, "the test needs a won hand"
        split, seat = end["win_split"], end["seats"][r["winner"]]
        page.goto(server.url)
        page.wait_for_function("document.body.dataset.handOver === '1'")
        box = page.locator(".result .winsplit")
        assert box.locator(".meld").count() == len(split["sets"]) + 1 + len(seat["melds"])
        golds = [x["tiles"][p] for x in [*split["sets"], split["pair"]] for p in x["golds"]]
        assert box.locator(".stand small").all_inner_texts() == ["=" + F.kind_name(k) for k in golds]
    finally:
        page.goto("about:blank")
        server.shutdown()
        server.server_close()


def test_replay_controls_slider_events_autoplay_calls_and_links(page, match_record, tmp_path):
    rec, src = match_record
    html = tmp_path / "m.html"
    write_replay(src, html)
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    d = page.evaluate("fzmj.data.hands[0].frames.length") + 3  # the 3rd decision of hand 2
    page.goto(html.as_uri() + f"#h2/s{d}")  # a link to a hand and a decision
    page.wait_for_function(f"document.body.dataset.decision === '{d}'")
    assert page.evaluate("document.body.dataset.hand") == "1"
    page.locator("#slider").fill("5")
    assert page.evaluate("document.body.dataset.decision") == "6"
    page.click('#events a[data-i="12"]')
    assert page.evaluate("fzmj.state.index") == 12 and page.evaluate("location.hash") == "#h1/s13"
    page.click('button[data-move="nextCall"]')
    f = page.evaluate("fzmj.data.hands[+document.body.dataset.hand].frames[+document.body.dataset.frame]")
    assert f["step"] is None or 27 <= f["action"]["action"] <= 60
    page.select_option("#speed", "60")
    page.click("#autoplay")
    start = page.evaluate("fzmj.state.index")
    page.wait_for_function(f"fzmj.state.index >= {start + 5}")
    page.click("#autoplay")
    page.select_option("#viewseat", "2")  # seat 2 now sits at the bottom
    assert page.locator('.pos-bottom .seat[data-seat="2"]').count() == 1
    assert page.locator('.pos-top .seat[data-seat="0"]').count() == 1
    page.evaluate("location.hash = '#h1/end'")
    page.wait_for_function("document.body.dataset.step === 'end'")
    assert page.locator(".discards .tile.latest").count() <= 1


def test_seat_view_numbers_its_decisions_without_gaps(page, match_record, tmp_path):
    _, src = match_record
    html = tmp_path / "seat1.html"
    write_replay(src, html, view=1)
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    seen = []
    for _ in range(page.evaluate("fzmj.total")):
        d = page.evaluate("document.body.dataset.decision")
        if d != "end":
            seen.append(int(d))
        page.keyboard.press("ArrowRight")
    assert seen == list(range(1, len(seen) + 1))
    page.keyboard.press("Home")
    assert page.inner_text("#pos").endswith(f"decision 1 / {len(seen)}")


def _no_horizontal_scroll(pg) -> None:
    assert pg.evaluate("document.documentElement.scrollWidth") <= pg.viewport_size["width"]


def test_phone_layout_fits_and_tap_targets_are_large(phone, match_record, tmp_path):
    _, src = match_record
    html = tmp_path / "m.html"
    write_replay(src, html)
    phone.goto(html.as_uri() + "#h1/s20")
    phone.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    assert phone.locator('meta[name="viewport"]').count() == 1
    _no_horizontal_scroll(phone)
    phone.screenshot(path=str(OUT / "replay_phone.png"))
    session, server = _serve()
    try:
        phone.goto(server.url)
        phone.wait_for_function("document.body.dataset.version !== undefined")
        phone.fill("#pace", "0")
        _no_horizontal_scroll(phone)
        clicks = 0
        while phone.evaluate("document.body.dataset.done") != "1" and clicks < 12:
            version = phone.evaluate("document.body.dataset.version")
            if phone.evaluate("document.body.dataset.handOver") == "1":
                break
            tiles = phone.locator(".seat.me .tile.click")
            if tiles.count():
                for box in [t.bounding_box() for t in tiles.all()]:
                    assert box["width"] >= 40 and box["height"] >= 40
                    assert 0 <= box["x"] and box["x"] + box["width"] <= 390
                    assert 0 <= box["y"] and box["y"] + box["height"] <= 844  # the hand is pinned on screen
                if clicks == 2:
                    phone.screenshot(path=str(OUT / "play_phone.png"))
                tiles.last.click()
            else:
                buttons = phone.locator("#actions button")
                for b in buttons.all():
                    box = b.bounding_box()
                    assert box["height"] >= 40 and box["width"] >= 40 and box["y"] + box["height"] <= 844
                buttons.last.click()
            phone.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=10000)
            _no_horizontal_scroll(phone)
            clicks += 1
        assert clicks >= 3
    finally:
        phone.goto("about:blank")
        server.shutdown()
        server.server_close()


def _fake_decision(page, legal: list[int], claim: bool) -> None:
    """Show a decision with the given legal actions, with fetch recorded instead of sent."""
    page.evaluate(
        """([legal, claim]) => {
        window.sent = [];
        fzmj.st.busy = false;
        window.fetch = (path, opts) => { window.sent.push([path, opts && opts.body]); return new Promise(() => {}); };
        const s = JSON.parse(JSON.stringify(fzmj.st.state));
        s.version += 1000; s.your_turn = true; s.hand_over = false; s.done = false;
        s.legal = legal.map(a => [a, FZ.meta.actions[a]]);
        s.frame.claim = claim ? {tile: 4, from: 3, rob: false, asked: []} : null;
        fzmj.show(s);
    }""",
        [legal, claim],
    )


def test_play_timer_never_passes_a_win_and_applies_at_once(page, tmp_path):
    session, server = _serve(agents=("heuristic", "heuristic", "heuristic"))
    try:
        page.goto(server.url)
        page.wait_for_function("document.body.dataset.version !== undefined")
        page.fill("#pace", "40")  # the other seats' moves are shown one by one, calls announced
        for _ in range(6):
            v = page.evaluate("document.body.dataset.version")
            page.locator(".seat.me .tile.click, #actions button[data-action='61']").last.click()
            page.wait_for_function(f"document.body.dataset.version !== '{v}'", timeout=20000)
            if page.evaluate("document.body.dataset.handOver") == "1":
                break
        assert page.evaluate("fzmj.st.paced") >= 6
        popups = page.evaluate("fzmj.st.popups")
        assert all(p in ("吃 chi", "碰 peng", "杠 kong", "胡 hu") for p in popups)
        assert not page.is_visible("#hint-label")  # no --review: no hint toggle
        page.fill("#timer", "1")
        _fake_decision(page, [59, 61], claim=True)  # a claim window offering hu
        assert page.is_visible("#timerbar")
        page.wait_for_timeout(1600)
        assert page.evaluate("window.sent") == []  # the win is not passed
        assert "never passed" in page.inner_text("#countdown")
        _fake_decision(page, [30, 61], claim=True)  # peng or pass: the timer passes
        page.wait_for_function("window.sent.length > 0", timeout=20000)  # a loaded machine's timer fires late
        assert [json.loads(b)["action"] for _, b in page.evaluate("window.sent")] == [61]
        page.fill("#timer", "0")
        assert not page.is_visible("#timerbar")
        page.check("#auto-win")
        _fake_decision(page, [59, 61], claim=True)
        page.wait_for_function("window.sent.length > 0", timeout=20000)
        assert [json.loads(b)["action"] for _, b in page.evaluate("window.sent")] == [59]
        page.uncheck("#auto-win")
        page.check("#no-calls")
        _fake_decision(page, [59, 61], claim=True)  # no-calls never passes a win
        page.wait_for_timeout(200)
        assert page.evaluate("window.sent") == []
        page.fill("#timer", "7")
        page.reload()  # the settings survive a reload
        page.wait_for_function("document.body.dataset.version !== undefined")
        assert page.input_value("#timer") == "7" and page.is_checked("#no-calls")
    finally:
        page.goto("about:blank")
        server.shutdown()
        server.server_close()


def test_play_second_tab_follows_without_errors(browser, tmp_path):
    session, server = _serve()
    a, pa = _watched(browser, 1280, 900)
    b, pb = _watched(browser, 1280, 900)
    try:
        for pg in (a, b):
            pg.goto(server.url)
            pg.wait_for_function("document.body.dataset.version !== undefined")
            pg.fill("#pace", "0")
        v = a.evaluate("document.body.dataset.version")
        a.locator(".seat.me .tile.click, #actions button").last.click()
        a.wait_for_function(f"document.body.dataset.version !== '{v}'")
        b.locator(".seat.me .tile.click, #actions button").last.click()  # tab b still shows the old state
        b.wait_for_function(f"document.body.dataset.version !== '{v}'")
        assert b.inner_text("#error") == ""  # no "stale request" shouted at the person
        assert int(b.evaluate("document.body.dataset.version")) == session.version
    finally:
        a.close()
        b.close()
        server.shutdown()
        server.server_close()
    assert not pa and not pb, pa + pb


def test_review_page_shows_the_agent_beside_each_decision(page, match_record, tmp_path):
    rec, src = match_record
    html = tmp_path / "review.html"
    t0 = time.perf_counter()
    write_replay(src, html, review_agent="pretrained", review_seat=0)
    write_s = time.perf_counter() - t0
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    first = next(i for i, (s, _) in enumerate(rec["decisions"]) if s == 0)
    page.evaluate(f"fzmj.goto(fzmj.data.hands[0].frames.findIndex(f => f.step === {first}))")
    assert page.locator(".review table tr").count() >= 1
    assert "%" in page.inner_text(".review")
    n_dis = page.evaluate("Object.values(fzmj.data.review.at).filter(r => !r.agree).length")
    assert page.locator("#events a.dis").count() == n_dis
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowLeft")  # the end of hand 1: the summary
    assert "agrees on" in page.inner_text(".review.summary")
    ms = []
    for _ in range(20):
        page.keyboard.press("ArrowRight")
        ms.append(page.evaluate("fzmj.state.lastRenderMs"))
    _timing("review", {"write_s_with_pretrained": write_s, "step_render_ms_median": float(np.median(ms))})


def test_chinese_labels_draw_without_a_cjk_font(browser, match_record, tmp_path):
    """The pages carry their Chinese characters as an embedded font (fzmj/web/make_font.py): on a
    machine whose fonts have no CJK glyphs, the labels (吃 碰 杠 胡, 金, 和局...) still draw, not as boxes."""
    latin = [
        d for d in ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/truetype/liberation") if Path(d).is_dir()
    ]
    if not latin:
        pytest.skip("no Latin-only font folder to build a CJK-free fontconfig from")
    conf = tmp_path / "fonts.conf"
    dirs = "".join(f"<dir>{d}</dir>" for d in latin)
    conf.write_text(f'<?xml version="1.0"?><fontconfig>{dirs}<cachedir>{tmp_path}/fc</cachedir></fontconfig>')
    _, path = match_record
    out = write_replay(path, tmp_path / "replay.html")
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}
    # a second Chromium of the same Playwright, started with that fontconfig
    b = browser.browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, env=env)
    try:
        pg = b.new_page(viewport={"width": 1280, "height": 960})
        pg.goto(out.as_uri())
        pg.keyboard.press("End")
        pg.wait_for_function("document.fonts.status === 'loaded'")
        faces = pg.evaluate("[...document.fonts].filter(f => f.family.includes('fzmj-cjk')).map(f => f.status)")
        assert faces == ["loaded"], faces  # a face with a unicode-range loads only once a character needs it
        assert pg.evaluate("""document.fonts.check('14px "fzmj-cjk"', '吃碰杠胡金和局')""")
        assert "和局" in pg.inner_text("body") or "胡" in pg.inner_text("body")
    finally:
        b.close()


def test_review_and_play_pages_show_each_discards_danger(page, match_record, tmp_path):
    rec, src = match_record
    html = tmp_path / "danger.html"
    write_replay(src, html, review_agent="heuristic", review_seat=0, danger="belief")
    page.goto(html.as_uri())
    page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
    step = next(int(s) for s, r in page.evaluate("fzmj.data.review.at").items() if r["danger"])
    page.evaluate(f"fzmj.goto(fzmj.data.hands[0].frames.findIndex(f => f.step === {step}))")
    want = page.evaluate(f"fzmj.data.review.at[{step}].danger")
    cells = page.locator(".review .danger .dz")
    assert cells.count() == len(want)
    assert [int(k) for k in cells.evaluate_all("els => els.map(e => e.dataset.kind)")] == [k for k, _ in want]
    levels = cells.evaluate_all("els => els.map(e => e.className)")
    for (_, p), cls in zip(want, levels, strict=True):  # one colour per level, readable at a glance
        assert ("hi" if p >= 0.08 else "mid" if p >= 0.02 else "lo") in cls
    assert "%" in page.inner_text(".review .danger")
    page.screenshot(path=str(OUT / "review_danger.png"), full_page=True)

    from fzmj.agents.belief import load_belief

    session = P.Session(
        [make_agent(f"random:{i}") for i in (1, 2, 3)], seat=0, hands=1, seed=3,
        record_path=tmp_path / "p.json", reviewer=make_agent("heuristic"), danger=load_belief("belief"),
    )  # fmt: skip
    while not any(
        a < 27 for a, _ in session.state()["legal"]
    ):  # to the person's first turn (a claim window shows no danger)
        st = session.state()
        session.act(st["legal"][0][0], st["version"])
    server = P.make_server(session, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(server.url)
        page.wait_for_function("document.body.dataset.version !== undefined")
        legal = sorted(a for a, _ in session.state()["legal"] if a < 27)
        assert legal  # the person's decision is a turn
        page.check("#hint")
        page.wait_for_selector("#hintbox .danger .dz")
        shown = page.locator("#hintbox .danger .dz").evaluate_all("els => els.map(e => +e.dataset.kind)")
        assert sorted(shown) == legal
        page.screenshot(path=str(OUT / "play_danger.png"), full_page=True)
    finally:
        server.shutdown()
        server.server_close()
