"""Replay viewer and play page timings (with their targets), in headless Chromium.

Figures, medians of ``--runs`` runs on a 4-hand match record (two heuristic, two random seats):
- ``fzmj-replay`` writing the page once the engine is warm (target < 1 s), and the bare engine
  replay of the same record in the same run (``fzmj_env.replay``) as the baseline;
- opening the page in headless Chromium: navigation start to the first frame drawn, as the page
  measures it (target < 1 s), and the wall time of ``page.goto`` until then;
- one decision step (→ key): the page's render time including style and layout (target < 50 ms);
- the play server: one person action answered (agents' moves included), ``Session.act``.

``--screenshots DIR`` also writes the README's screenshots (replay and play pages at 1366×768, and
at a phone's 390×844: ``replay_phone.png``, ``play_phone.png``).

    python benchmarks/bench_web.py [--json] [--runs R] [--screenshots docs/img]

Needs Playwright for Python and Debian's chromium (``apt-get install -y chromium``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from report import print_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _small_png(path: Path) -> None:
    """Quantize a screenshot to 128 colours: a few times smaller, still crisp (docs PNGs)."""
    from PIL import Image

    Image.open(path).convert("RGB").quantize(128, dither=Image.Dither.NONE).save(path, optimize=True)


def _play_screens(browser, out: Path) -> None:
    """The play page at the person's turn, and at the result of a won hand (heuristic opponents)."""
    import numpy as np

    from fzmj.agents import make_agent
    from fzmj.web.play import Session, make_server
    from fzmj_env.encode import NUM_CHANNELS, encode_table

    me = make_agent("heuristic")
    obs = np.zeros((NUM_CHANNELS, 27), dtype=np.int8)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(40):
            s = Session(
                [make_agent("heuristic") for _ in range(3)],
                seat=0,
                hands=1,
                seed=seed,
                record_path=Path(tmp) / "g.json",
            )
            server = make_server(s, 0)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            url = server.url
            moves = 0
            shot_turn = False
            while s.pending_end is None:
                if moves == 5:
                    page.goto(url)
                    page.wait_for_function("document.body.dataset.version !== undefined")
                    page.screenshot(path=str(out / "play_turn.png"))
                    phone = browser.new_page(viewport={"width": 390, "height": 844})
                    phone.goto(url)
                    phone.wait_for_function("document.body.dataset.version !== undefined")
                    phone.screenshot(path=str(out / "play_phone.png"))
                    phone.goto("about:blank")
                    phone.close()
                    shot_turn = True
                encode_table(s.game.buf, 0, 0, obs)
                s.act(int(me.act(obs[None], s.game.mask[None])[0]), s.version)
                moves += 1
            won = s.pending_end["result"].get("winner") is not None
            if won and shot_turn:
                page.goto(url)
                page.wait_for_function("document.body.dataset.handOver === '1'")
                page.screenshot(path=str(out / "play_result.png"), full_page=True)
            page.goto("about:blank")
            page.close()
            server.shutdown()
            server.server_close()
            if won and shot_turn:
                break
    for name in ("play_turn.png", "play_result.png", "play_phone.png"):
        _small_png(out / name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0, help="seed of the 4-hand match")
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--screenshots", metavar="DIR", help="write the README screenshots into DIR")
    args = p.parse_args(argv)

    from playwright.sync_api import sync_playwright

    import fzmj_env as F
    from fzmj.agents import make_agent
    from fzmj.web.play import Session, play_agents
    from fzmj.web.replay import write_replay

    rec = play_agents(["heuristic", "random:1", "heuristic", "random:2"], hands=4, seed=args.seed)
    fig: dict = {"record": f"4 hands, {len(rec['decisions'])} decisions"}
    with tempfile.TemporaryDirectory() as tmp:
        src, html = Path(tmp) / "match.json", Path(tmp) / "match.html"
        F.save_record(rec, src)
        write_replay(src, html)  # warm-up: kernels loaded
        writes, replays = [], []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            F.replay(F.load_record(src))
            replays.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            write_replay(src, html)
            writes.append(time.perf_counter() - t0)
        fig["fzmj-replay write (ms)"] = 1000 * statistics.median(writes)
        fig["engine replay alone, baseline (ms)"] = 1000 * statistics.median(replays)
        fig["page size (KB)"] = html.stat().st_size / 1024
        reviewer = make_agent("pretrained")
        rev_html = Path(tmp) / "review.html"
        write_replay(src, rev_html, review_agent=reviewer)  # warm-up
        reviews = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            write_replay(src, rev_html, review_agent=reviewer)
            reviews.append(time.perf_counter() - t0)
        fig["fzmj-replay --review pretrained write (ms)"] = 1000 * statistics.median(reviews)
        t0 = time.perf_counter()
        write_replay(src, rev_html, review_agent="pretrained")
        fig["  the same, loading the agent too (ms)"] = 1000 * (time.perf_counter() - t0)

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=ARGS)
            firsts, walls, steps, rsteps = [], [], [], []
            for _ in range(args.runs):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                t0 = time.perf_counter()
                page.goto(html.as_uri())
                page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
                walls.append(time.perf_counter() - t0)
                firsts.append(page.evaluate("fzmj.state.firstRenderAt"))
                for _ in range(40):
                    page.keyboard.press("ArrowRight")
                    steps.append(page.evaluate("fzmj.state.lastRenderMs"))
                if args.screenshots and len(firsts) == 1:
                    out = Path(args.screenshots)
                    out.mkdir(parents=True, exist_ok=True)
                    page.keyboard.press("Home")
                    data = page.evaluate("fzmj.data.hands[0].frames.map(f => !!f.claim && f.claim.asked.length > 0)")
                    page.evaluate(f"fzmj.goto({data.index(True, 12) if True in data[12:] else 12})")
                    page.set_viewport_size({"width": 1366, "height": 768})
                    page.screenshot(path=str(out / "replay.png"))
                    page.set_viewport_size({"width": 390, "height": 844})
                    page.screenshot(path=str(out / "replay_phone.png"))
                    for name in ("replay.png", "replay_phone.png"):
                        _small_png(out / name)
                page.close()
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(rev_html.as_uri())
            page.wait_for_function("window.fzmj && fzmj.state.firstRenderAt > 0")
            for _ in range(40):
                page.keyboard.press("ArrowRight")
                rsteps.append(page.evaluate("fzmj.state.lastRenderMs"))
            page.close()
            fig["review page step: render + layout, median (ms)"] = statistics.median(rsteps)
            fig["page open: navigation to first frame (ms)"] = statistics.median(firsts)
            fig["page open: goto wall time (ms)"] = 1000 * statistics.median(walls)
            fig["page step: render + layout, median (ms)"] = statistics.median(steps)
            fig["page step: render + layout, 95th percentile (ms)"] = float(sorted(steps)[int(0.95 * len(steps))])
            fig["page step: render + layout, max (ms)"] = float(max(steps))
            if args.screenshots:
                _play_screens(browser, Path(args.screenshots))
            browser.close()

    s = Session([make_agent("random:1"), make_agent("random:2"), make_agent("random:3")], seat=0, hands=50, seed=1)
    import numpy as np

    rng = np.random.default_rng(0)
    acts = []
    while not s.game.done and len(acts) < 300:
        if s.pending_end is not None:
            s.next_hand(s.version)
            continue
        a = int(rng.choice(s.game.legal_actions))
        t0 = time.perf_counter()
        s.act(a, s.version)
        acts.append(time.perf_counter() - t0)
    fig["play server: one person action answered (ms)"] = 1000 * statistics.median(acts)
    print_figures(fig, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
