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
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fzmj.agents import make_agent

import fzmj_env as F
from fzmj.web import play as P
from fzmj.web.play import play_agents
from fzmj.web.replay import write_replay

CHROMIUM = (
    os.environ.get("FZMJ_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
    or "/usr/bin/chromium"
)
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
]
OUT = Path(os.environ.get("FZMJ_TEST_OUTPUT", Path(__file__).parent / "output")) / "web"

if os.environ.get("FZMJ_NO_BROWSER") == "1":
    pytest.skip("FZMJ_NO_BROWSER=1: browser tests skipped on request", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright for Python: pip install -e '.[dev]'")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set FZMJ_CHROMIUM)")
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 960})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


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
        # an illegal request from the page's origin: refused, nothing changes
        before = page.evaluate("+document.body.dataset.version")
        status = page.evaluate(
            "v => fetch('/act', {method: 'POST', headers: {'X-Fzmj-Token': FZ.meta.token}, body: JSON.stringify({action: 99, version: v})}).then(r => r.status)",
            before,
        )
        assert status == 400 and session.version == before
        clicks = 0
        shot = False
        timed_out = False
        while page.evaluate("document.body.dataset.done") != "1":
            version = page.evaluate("document.body.dataset.version")
            if page.evaluate("document.body.dataset.handOver") == "1":
                page.screenshot(path=str(OUT / "play_result.png"), full_page=True)
                page.click("#next-hand")
            elif page.locator(".seat .tile.click").count():
                if not shot and clicks >= 6:
                    page.screenshot(path=str(OUT / "play_turn.png"), full_page=True)
                    shot = True
                tiles = page.locator(".seat .tile.click")
                tiles.nth(clicks % tiles.count()).click()  # a discard: click the tile
            elif not timed_out and page.locator("#actions button", has_text="pass").count():
                # a claim window: the person's timer (set now) answers "pass" for them
                page.fill("#timer", "1")
                page.evaluate("fzmj.show(fzmj.st.state)")
                page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=10000)
                page.fill("#timer", "0")
                assert any("seat 0 answers the claim window: pass" in x for x in session.log)
                timed_out = True
                clicks += 1
                continue
            else:
                buttons = page.locator("#actions button")
                assert buttons.count() > 0, "the person is to act but the page offers nothing"
                labels = buttons.all_inner_texts()
                pick = labels.index("hu") if "hu" in labels else labels.index("pass") if "pass" in labels else 0
                buttons.nth(pick).click()
            page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=10000)
            clicks += 1
            assert clicks < 400
        assert page.text_content("#prompt").startswith("game over")
        assert page.evaluate("document.getElementById('error').textContent") == ""
        page.screenshot(path=str(OUT / "play_end.png"), full_page=True)
    finally:
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
