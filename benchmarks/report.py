"""Shared output of the benchmark scripts: one JSON object, or one aligned ``name: value`` line per figure."""

from __future__ import annotations

import json
import os
import platform
import resource


def print_figures(figures: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    width = max(len(k) for k in figures)
    for k, v in figures.items():
        print(f"{k:>{width}}: {v:,.2f}" if isinstance(v, float) else f"{k:>{width}}: {v}")


def cpu_seconds() -> float:
    """CPU seconds of this process and its reaped children (the worker processes)."""
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def machine_and_load(load_before: tuple) -> dict:
    """The machine and the 1-minute load average before the figures (``os.getloadavg()``) and now."""
    return {
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.processor() or platform.system()}",
        "load_average_before": round(load_before[0], 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }
