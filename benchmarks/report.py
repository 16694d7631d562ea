"""Shared output of the benchmark scripts: one JSON object, or one aligned ``name: value`` line per figure."""

from __future__ import annotations

import json


def print_figures(figures: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    width = max(len(k) for k in figures)
    for k, v in figures.items():
        print(f"{k:>{width}}: {v:,.2f}" if isinstance(v, float) else f"{k:>{width}}: {v}")
