"""Cells and Markdown tables of the reports (``fzmj-eval`` and ``fzmj-league`` share them)."""

from __future__ import annotations

import math


def num(x, fmt: str = "{:+.2f}") -> str:
    """``x`` formatted, or an en dash for a missing value (None or NaN)."""
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def interval(ci) -> str:
    """A 95% interval ``[low, high]`` as ``[-0.30, +1.09]``, or an en dash when there is none."""
    return "–" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def pct(x: float) -> str:
    """A rate as a percentage with one decimal (``0.249`` -> ``24.9``)."""
    return f"{100 * x:.1f}"


def md_table(head: list[str], align: str, rows: list[list[str]]) -> list[str]:
    """A Markdown table as lines; ``align`` has one letter per column: ``l`` left, ``r`` right."""
    rule = {"l": "---", "r": "---:"}
    return [
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(rule[c] for c in align) + " |",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
