"""The documentation site (``mkdocs.yml``, ``docs/``): it builds in strict mode, strict mode
refuses a broken link or a missing API object, and the built site renders in a real browser.

The build needs the ``docs`` extra (``pip install -e ".[docs]"``); the browser is Debian's
``chromium`` driven by Playwright for Python (``tests/browser_helpers.py``; never ``playwright
install``). Without either the tests skip and say why, as in the wheel's venv; ``.ci/run`` installs
both. The site is served over HTTP from a thread (the search runs in a web worker, which a
``file://`` page may not start). Screenshots go to ``tests/output/docs/`` (``FZMJ_TEST_OUTPUT``
overrides the folder). ``.ci/run`` builds the site once in strict mode and points ``FZMJ_DOCS_SITE`` at it.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from browser_helpers import CHROMIUM, chromium_found, launch

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("FZMJ_TEST_OUTPUT", Path(__file__).parent / "output")) / "docs"
for _module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
    pytest.importorskip(_module, reason=f"the docs site needs {_module}: pip install -e '.[docs]'")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # Material's banner about MkDocs 2, not ours
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The whole site, built in strict mode into a temporary folder; or the one ``.ci/run`` has just
    built in strict mode from this checkout (``FZMJ_DOCS_SITE``), so CI builds it once."""
    built = os.environ.get("FZMJ_DOCS_SITE")
    if built and (Path(built) / "index.html").is_file():
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    done = _build(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_the_site_builds_strict_with_every_page_and_api_object(site):
    pages = ("index", "install", "quickstart", "contributing", "results", "results_log", "rules", "presets", "data")
    pages += ("tutorial",)
    for page in pages:
        assert (site / f"{page}.html").is_file(), page
    api = (site / "api" / "fzmj_env.html").read_text(encoding="utf-8")
    for name in ("fzmj_env.VectorEnv", "fzmj_env.Game", "fzmj_env.is_win", "fzmj_env.env"):
        assert f'id="{name}"' in api, name
    assert 'id="fzmj.agents.make_agent"' in (site / "api" / "agents.html").read_text(encoding="utf-8")
    assert 'id="fzmj.train.args.Args"' in (site / "api" / "train.html").read_text(encoding="utf-8")
    assert 'id="fzmj.data.loader.Dataset"' in (site / "api" / "data.html").read_text(encoding="utf-8")
    assert (site / "search" / "search_index.json").is_file()
    assert not (site / "hooks").exists()  # the build's hook is not a page


def test_the_tutorial_page_shows_the_notebooks_code_and_saved_outputs(site):
    """docs/tutorial.md is examples/data_tutorial.ipynb (docs/hooks/notebook_page.py): its headings, its
    code cells as Python blocks and each cell's saved output in a block titled "output"."""
    html = (site / "tutorial.html").read_text(encoding="utf-8")
    assert "<!-- notebook:" not in html  # the marker was replaced
    assert "Learning from recorded play" in html and 'id="1-collect"' in html
    assert html.count('<div class="highlight">') >= 9  # the five code cells and four outputs
    assert html.count('<span class="filename">output</span>') >= 4  # the four cells that print
    assert "open_dataset" in html and "epoch 1: loss" in html  # a cell's code, a saved output
    for printed in ("digest", "accuracy", "clone vs 3x random", "clone vs 3x heuristic"):
        assert printed in html, printed
    assert '<a href="tutorial.html">' in (site / "data.html").read_text(encoding="utf-8")  # data.md's text links it


def test_every_page_names_the_version(site):
    from fzmj_env._version import __version__

    for page in ("index.html", "api/fzmj_env.html"):
        assert f"fzmj {__version__}" in (site / page).read_text(encoding="utf-8"), page


def _small_site(tmp_path: Path, page: str) -> Path:
    """A two-page site with the real config's theme, plugins and validation, and ``page`` as its
    second page: a strict build of it takes a second, not the whole site's."""
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    (docs / "api").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\n[the page](api/page.md)\n", encoding="utf-8")
    (docs / "api" / "page.md").write_text(page, encoding="utf-8")
    cfg.update(docs_dir=str(docs), site_dir=str(tmp_path / "site"))
    cfg.pop("nav")
    cfg["hooks"] = [str(ROOT / hook) for hook in cfg.get("hooks", [])]  # relative to the real config
    (plugin,) = [p["mkdocstrings"] for p in cfg["plugins"] if isinstance(p, dict) and "mkdocstrings" in p]
    plugin["handlers"]["python"]["paths"] = [str(ROOT)]  # the package, read from the checkout
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("# API\n\n::: fzmj_env.VectorEnv\n", None),  # the control: this one builds
        ("# API\n\nSee [the rules](../rules.md).\n", "contains a link '../rules.md'"),
        ("# API\n\nSee [home](../index.md#no-such-heading).\n", "does not contain an anchor '#no-such-heading'"),
        ("# API\n\n::: fzmj_env.NoSuchThing\n", "fzmj_env.NoSuchThing could not be found"),
    ],
    ids=["control", "broken-link", "broken-anchor", "missing-api-object"],
)
def test_strict_mode_fails_on_a_broken_link_or_a_missing_api_object(tmp_path, page, message):
    done = _build(_small_site(tmp_path, page), tmp_path / "site")
    if message is None:
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode != 0
        assert message in done.stderr, done.stderr


# ---- the built site in a browser ---------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test's output is the assertions, not an access log
        pass


@pytest.fixture(scope="module")
def served(site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    if os.environ.get("FZMJ_NO_BROWSER") == "1":
        pytest.skip("FZMJ_NO_BROWSER=1: browser tests skipped on request")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python: pip install -e '.[dev]'")
    if not chromium_found():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set FZMJ_CHROMIUM)")
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    """A desktop-sized page; an uncaught exception or a console error on it fails the test."""
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    yield pg
    pg.close()
    assert not problems, f"errors on the page: {problems}"


def test_home_page_and_navigation_render(page, served):
    page.goto(f"{served}/index.html")
    assert page.locator("article h1").first.inner_text().startswith("fzmj")
    nav = page.locator("nav.md-nav--primary")
    for label in ("Install", "Quickstart", "Library examples", "Results", "API reference", "Contributing"):
        assert nav.get_by_text(label, exact=True).count() >= 1, label
    page.screenshot(path=str(OUT / "home.png"))
    nav.get_by_text("Quickstart", exact=True).first.click()
    page.wait_for_url("**/quickstart.html")
    assert page.locator("article h1").first.inner_text().startswith("Quickstart")
    assert page.locator("article pre code").count() >= 3  # the commands and the Python, as code blocks


def test_tutorial_page_renders_code_and_outputs(page, served):
    page.goto(f"{served}/tutorial.html")
    assert page.locator("article h1").first.inner_text().startswith("Learning from recorded play")
    assert page.locator("article pre code").count() >= 9  # five code cells, four outputs
    outputs = page.locator("article .highlight .filename", has_text="output")
    assert outputs.count() >= 4 and outputs.first.is_visible()
    assert "clone vs 3x heuristic" in page.locator("article").inner_text()
    page.screenshot(path=str(OUT / "tutorial.png"), full_page=True)


# a bound for a stuck page (the index loads in seconds), not a wait: the loop ends when the hits show
SEARCH_DEADLINE_S = 120


def _type(box, query: str) -> None:
    """Put ``query`` in Material's search box so that its search runs: a fill, then a key-up."""
    box.fill(query)
    box.press("End")


def _wait_for_hits(page, box, hits, query: str) -> None:
    """Poll until the search shows hits. The index loads in a web worker, which on a loaded machine
    (a clean-clone CI run beside a training run) took longer than the fixed 20 s this test once
    waited; while Material says "Initializing search" the query waits, and a query typed before the
    index was ready is typed again once it is. Material reads the box on a key-up, a focus change or
    the index becoming ready, never on an ``input`` event alone: a ``fill`` that lands after the ready
    signal is never searched (the CI failure of 2026-12-05: "Type to start searching" for 600 s), so
    every query is followed by a key press."""
    meta = page.locator(".md-search-result__meta")
    deadline = time.monotonic() + SEARCH_DEADLINE_S
    while hits.count() == 0:
        assert time.monotonic() < deadline, (
            f"no search hits for {query!r} in {SEARCH_DEADLINE_S} s: {meta.inner_text()!r}"
        )
        page.wait_for_timeout(500)
        if hits.count() == 0 and "initializ" not in meta.inner_text().lower():
            _type(box, query)


def test_search_box_finds_a_page(page, served):
    page.goto(f"{served}/index.html")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    assert box.is_visible()
    # typed after the index is ready: the order that once left the query unsearched
    meta = page.locator(".md-search-result__meta")
    deadline = time.monotonic() + SEARCH_DEADLINE_S
    while "initializ" in meta.inner_text().lower():
        assert time.monotonic() < deadline, "the search index never loaded"
        page.wait_for_timeout(200)
    _type(box, "VectorEnv")
    hits = page.locator(".md-search-result__item")
    _wait_for_hits(page, box, hits, "VectorEnv")
    assert hits.count() >= 1
    assert "VectorEnv" in page.locator(".md-search-result").inner_text()
    page.screenshot(path=str(OUT / "search.png"))


def test_api_page_renders_signatures_and_docstrings(page, served):
    page.goto(f"{served}/api/fzmj_env.html")
    heading = page.locator('[id="fzmj_env.VectorEnv"]')
    assert heading.count() == 1 and heading.is_visible()
    assert page.locator(".doc-signature").count() >= 20  # one per function, class and method
    assert page.locator(".doc-contents").count() >= 20
    # the table of contents on the right lists the documented names
    assert page.locator(".md-nav--secondary").get_by_text("VectorEnv", exact=False).count() >= 1
    page.screenshot(path=str(OUT / "api_fzmj_env.png"))
