"""The warm start's games as a dataset (``bc_save_dataset``, fzmj/train/bc_record.py): what recording
and writing cost beside the warm start's own collection, and what the dataset holds.

The default config's collection (``heuristic`` at every seat of 256 tables until 200,000 decisions
with a choice) runs without and with the recorder in alternate runs; the figures are medians of
``--runs`` runs after a warm-up, in CPU seconds (what other jobs on a shared machine disturb least)
and wall seconds, with the load averages before and after. Also printed: the dataset's hands,
decisions (in memory and on disk), bytes on disk and bytes per decision.

    python benchmarks/bench_bc_record.py [--json] [--decisions N] [--tables B] [--runs R]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from report import cpu_seconds, print_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _timed(work) -> tuple[float, float, object]:
    t, c = time.perf_counter(), cpu_seconds()
    out = work()
    return time.perf_counter() - t, cpu_seconds() - c, out


def main() -> None:
    from fzmj.train.bc import collect_demonstrations
    from fzmj.train.bc_record import HandRecorder, write_warm_start_dataset

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--decisions", type=int, default=200_000, help="bc_decisions (default 200,000, ppo_default's)")
    ap.add_argument("--tables", type=int, default=256, help="num_tables (default 256, ppo_default's)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    load_before = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench_bc_record_"))
    kw = dict(num_tables=args.tables, seed=0, gamma=0.99, progress=False)

    def plain():
        return collect_demonstrations("heuristic", args.decisions, **kw)

    def recorded():
        record = HandRecorder()
        demos = collect_demonstrations("heuristic", args.decisions, record=record, **kw)
        return demos, write_warm_start_dataset(folder, record, "heuristic")

    try:
        collect_demonstrations("heuristic", 2_000, **kw)  # warm-up: the kernels compiled
        off, on = [], []
        for _ in range(args.runs):  # alternate, so a change in the machine's load falls on both
            off.append(_timed(plain))
            on.append(_timed(recorded))
        demos, manifest = on[-1][2]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    cpu_off, cpu_on = statistics.median(r[1] for r in off), statistics.median(r[1] for r in on)
    counts = manifest["counts"]
    print_figures(
        {
            "collect_cpu_s": round(cpu_off, 2),
            "collect_recorded_written_cpu_s": round(cpu_on, 2),
            "record_overhead_cpu": round(cpu_on / cpu_off - 1, 3),
            "collect_wall_s": round(statistics.median(r[0] for r in off), 2),
            "collect_recorded_written_wall_s": round(statistics.median(r[0] for r in on), 2),
            "decisions_in_memory": len(demos),
            "hands_written": counts["hands"],
            "decisions_written": counts["decisions"],
            "bytes_on_disk": counts["bytes"],
            "bytes_per_decision": round(counts["bytes"] / counts["decisions"], 2),
            "decisions": args.decisions,
            "tables": args.tables,
            "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.processor() or platform.system()}",
            "load_average_before": round(load_before[0], 2),
            "load_average_after": round(os.getloadavg()[0], 2),
        },
        args.json,
    )


if __name__ == "__main__":
    main()
