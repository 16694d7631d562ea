"""MkDocs hook (mkdocs.yml ``hooks``): the site's name carries the package's version, read from its
single source, ``fzmj_env/_version.py`` (so the header of every page says which release it documents)."""

from __future__ import annotations

import re
from pathlib import Path


def on_config(config):
    source = Path(__file__).resolve().parents[2] / "fzmj_env" / "_version.py"
    version = re.search(r'__version__ = "([^"]+)"', source.read_text(encoding="utf-8")).group(1)
    config["site_name"] = f"fzmj {version}"
    return config
