"""The clone path's first training line: seconds from ``fzmj-train``'s start to its first PPO update.

A new user's first run from a clone (the README's first command after its installs): a fresh
``git clone`` of this checkout (no hand tables, no ``__pycache__``), an empty ``NUMBA_CACHE_DIR``,
the wheel's shipped kernels off (a clone has none), ``fzmj-train --config ppo_default``. Rounds
interleave the trainer's compile ahead in two processes (``after``, the default) and the
compile inline as the run goes (``before``: ``FZMJ_WARM_AHEAD=0``); each round starts from a
clean clone. Prints one line per run, then the medians.

    python benchmarks/bench_first_update.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_UPDATE = re.compile(r"^update 1/")


def first_update_seconds(clone: Path, ahead: bool) -> float:
    """One run in a clean ``clone``: the seconds until the trainer prints its first update."""
    shutil.rmtree(clone / "fzmj_env" / "core" / "_tables", ignore_errors=True)
    for cache in clone.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    with tempfile.TemporaryDirectory() as numba_cache, tempfile.TemporaryDirectory() as runs:
        env = {
            **os.environ,
            "PYTHONPATH": str(clone),
            "NUMBA_CACHE_DIR": numba_cache,
            "FZMJ_SHIPPED_KERNELS": "0",
            "FZMJ_WARM_AHEAD": "1" if ahead else "0",
        }
        cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--config", "ppo_default", "--no-progress"]
        cmd += ["--set", "run_name=first", "--set", f"runs_dir={runs}"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for line in proc.stdout:
                if FIRST_UPDATE.match(line):
                    return time.perf_counter() - t0
        finally:
            proc.kill()
            proc.wait()
    raise RuntimeError("fzmj-train ended before its first update")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2, help="rounds of (before, after) (default 2)")
    a = ap.parse_args(argv)
    times = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        for r in range(1, a.rounds + 1):
            for mode in ("before", "after"):
                load = os.getloadavg()[0]
                times[mode].append(first_update_seconds(clone, ahead=mode == "after"))
                print(f"round {r} {mode:6s} {times[mode][-1]:6.1f} s  (load {load:.1f} at its start)", flush=True)
    for mode, ts in times.items():
        print(f"{mode}: median {statistics.median(ts):.1f} s over {len(ts)} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
