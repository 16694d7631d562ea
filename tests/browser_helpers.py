"""Debian's chromium for the browser tests, driven by Playwright for Python (never ``playwright
install``): where it is, the flags it runs with, and whether it is there. Shared by
``tests/test_web_browser.py`` (the replay and play pages) and ``tests/test_docs_site.py``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


def chromium_found() -> bool:
    return Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is not None


def launch(playwright, **kw):
    """Debian's chromium, headless, with the suite's flags."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, **kw)
