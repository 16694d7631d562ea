"""Engine throughput and import times (with their targets).

Figures: complete random hands per second with random legal actions chosen inside Numba
(no Python per decision); the same through the Python driver ``Game``; cold (compile) and
warm (cached) import time of the package and its first engine call.

    python benchmarks/bench_engine.py [--json] [--hands N] [--runs R] [--cold] [--rules PRESET]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import print_figures

ROOT = Path(__file__).resolve().parents[1]
_IMPORT_SNIPPET = (
    "import time; t=time.perf_counter(); import fzmj_env as F; "
    "g=F.Game(); g.reset(seed=0); g.step(g.legal_actions[0]); print(time.perf_counter()-t)"
)


def engine_hands_per_s(n_hands: int, runs: int, rules: str = "fuzhou-lianzhong") -> dict:
    from fzmj_env.core import engine, state
    from fzmj_env.core.hand import get_win_table
    from fzmj_env.core.random_play import play_random_games
    from fzmj_env.rules import load_rules

    buf = state.new_state(1)
    engine.set_rules(buf, 0, load_rules(rules).params)
    wt = get_win_table()
    play_random_games(buf, 0, wt, 0, 10, 1)  # warm-up (compile or load the cache)
    rates, dec_rates = [], []
    for r in range(runs):
        t = time.perf_counter()
        decisions, hands, _ = play_random_games(buf, 0, wt, 1_000_000 * (r + 1), n_hands, 1)
        dt = time.perf_counter() - t
        rates.append(hands / dt)
        dec_rates.append(decisions / dt)
    return {"engine_hands_per_s": statistics.median(rates), "engine_decisions_per_s": statistics.median(dec_rates)}


def driver_hands_per_s(n_hands: int, runs: int, rules: str = "fuzhou-lianzhong") -> dict:
    import numpy as np

    from fzmj_env import Game

    game = Game(rules)
    rates = []
    for r in range(runs):
        rng = np.random.default_rng(r)
        t = time.perf_counter()
        for i in range(n_hands):
            game.reset(seed=r * 100_000 + i)
            while not game.done:
                legal = game.legal_actions
                game.step(legal[int(rng.integers(len(legal)))])
        rates.append(n_hands / (time.perf_counter() - t))
    return {"driver_hands_per_s": statistics.median(rates)}


def import_seconds(cold: bool) -> dict:
    """Warm import (+ first engine call) in a fresh process; with ``cold`` also a clean compile."""
    env = dict(os.environ)
    out = {}
    if cold:  # copy the package to a temp dir so no Numba cache exists
        tmp = Path(tempfile.mkdtemp())
        shutil.copytree(ROOT / "fzmj_env", tmp / "fzmj_env", ignore=shutil.ignore_patterns("__pycache__", "_tables"))
        env_cold = dict(env, PYTHONPATH=str(tmp))
        res = subprocess.run(
            [sys.executable, "-c", _IMPORT_SNIPPET], env=env_cold, cwd=tmp, capture_output=True, text=True, check=True
        )
        out["cold_import_s"] = float(res.stdout.strip().splitlines()[-1])
        shutil.rmtree(tmp, ignore_errors=True)
    warm = []
    for _ in range(3):
        res = subprocess.run(
            [sys.executable, "-c", _IMPORT_SNIPPET], env=env, capture_output=True, text=True, check=True
        )
        warm.append(float(res.stdout.strip().splitlines()[-1]))
    out["warm_import_s"] = statistics.median(warm)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hands", type=int, default=20000, help="hands per engine run")
    parser.add_argument("--driver-hands", type=int, default=300, help="hands per driver run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="also measure a cold compile (about a minute)")
    parser.add_argument("--rules", default="fuzhou-lianzhong", help="rule preset (bench_presets.py compares them all)")
    args = parser.parse_args()
    fig = {"rules": args.rules}
    fig.update(import_seconds(args.cold))
    fig.update(engine_hands_per_s(args.hands, args.runs, args.rules))
    fig.update(driver_hands_per_s(args.driver_hands, max(3, args.runs // 2), args.rules))
    fig["runs"] = args.runs
    print_figures(fig, args.json)


if __name__ == "__main__":
    main()
