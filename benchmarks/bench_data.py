"""Datasets of recorded play (fzmj/data/, docs/data.md): collection speed, the cost of writing,
bytes on disk and loading speed, with the machine and its load (a shared machine's figures move
with what else runs on it: the load averages before and after are printed beside them).

Targets (issue 55): collecting with ``heuristic`` at every seat >= 10 M decisions/min on 2 cores,
written; writing <= 20% over the same play without it; <= 16 B/decision; loading v2 planes into
torch >= 250k decisions/s. Figures are medians of ``--runs`` runs after a warm-up. The write
overhead compares CPU seconds (this process and its workers), which other jobs on a shared
machine disturb far less than the wall clock (``write_overhead_wall`` beside it).

``bytes_per_decision_*``: the layouts considered (docs/data.md, "Why hand rows"): the stored hand
rows, the same without the ``seats`` column, one row per decision (game, seat, action) beside a
hand table, and the v2 planes themselves compressed (zstd, bit-packed and not) on a sample.

    python benchmarks/bench_data.py [--json] [--hands N] [--workers W] [--runs R]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from report import cpu_seconds, machine_and_load, print_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _rates(work) -> tuple[float, float]:
    """(decisions per wall second, decisions per CPU second) of one run of ``work``."""
    t, c = time.perf_counter(), cpu_seconds()
    n = work()
    return n / (time.perf_counter() - t), n / (cpu_seconds() - c)


def collection(folder: Path, hands: int, workers: int, runs: int) -> dict:
    """Decisions per minute collected (written) and played without writing, in alternate runs."""
    from tqdm import tqdm

    from fzmj.agents.evaluate.play import Setup, distinct_agents, play_all
    from fzmj.data import collect
    from fzmj_env.rules import load_rules
    from fzmj_env.seeding import agent_key

    def written(i=[0]):  # noqa: B006 - a fresh folder per run
        i[0] += 1
        m = collect(
            folder / f"c{i[0]}", ["heuristic"], hands, seed=1, workers=workers, progress=False, log=lambda *_: 0
        )
        return m["counts"]["decisions"]

    def played():
        slot_agent, objs, _, specs = distinct_agents(["heuristic"])
        setup = Setup(slot_agent, objs, load_rules("fuzhou-lianzhong"), 1, 512, -(-hands // 4), False, agent_key(1))
        _, decisions, _ = play_all(setup, specs, workers, None, None, tqdm(disable=True), [None])
        return int(decisions.sum())

    written(), played()  # warm-up: kernels loaded in this process
    w, p = [], []
    for _ in range(runs):  # alternate, so a change in the machine's load falls on both
        w.append(_rates(written))
        p.append(_rates(played))
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    return {
        "collect_decisions_per_min": 60 * med(w, 0),
        "play_decisions_per_min": 60 * med(p, 0),
        "collect_decisions_per_cpu_min": 60 * med(w, 1),
        "play_decisions_per_cpu_min": 60 * med(p, 1),
        # CPU time, not wall time: on a shared machine the wall clock measures the other jobs too
        "write_overhead": med(p, 1) / med(w, 1) - 1,
        "write_overhead_wall": med(p, 0) / med(w, 0) - 1,
    }


def layouts(folder: Path) -> dict:
    """Bytes per recorded decision of each layout considered, on the dataset in ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fzmj.data import open_dataset
    from fzmj.data.shards import concat_hands, read_row_group

    d = open_dataset(folder)
    n = d.num_decisions
    stored = d.manifest["counts"]["bytes"]
    hands = concat_hands([read_row_group(p, g) for p, g, _ in d.groups])

    def size(table) -> int:
        sink = io.BytesIO()
        pq.write_table(table, sink, compression="zstd")
        return len(sink.getvalue())

    full = pq.read_table([p for p, _, _ in d.groups][0]).schema.names
    no_seats = sum(
        size(pq.read_table(folder / s["file"], columns=[c for c in full if c != "seats"])) for s in d.manifest["shards"]
    )
    game = np.repeat(hands["game"], hands["decisions"])
    per_decision = size(pa.table({"game": game, "seat": hands["seats"], "action": hands["actions"]}))
    hand_cols = ("game", "wall", "rotation", "hand", "wall_seed", "winner", "value")
    hand_table = size(pa.table({**{k: hands[k] for k in hand_cols}, "points": list(hands["points"])}))
    sample = d.group(0)["obs"]
    raw = sample.tobytes()
    planes = len(pa.compress(raw, "zstd")) / len(sample)
    packed = len(pa.compress(np.packbits(sample.reshape(len(sample), -1) != 0, axis=1).tobytes(), "zstd")) / len(sample)
    return {
        "bytes_per_decision": stored / n,
        "bytes_per_decision_without_seats": no_seats / n,
        "bytes_per_decision_decision_rows": (per_decision + hand_table) / n,
        "bytes_per_decision_v2_planes_zstd": planes,
        "bytes_per_decision_v2_planes_bits_zstd": packed,
        "bytes_per_decision_v2_planes_raw": sample[0].nbytes,
        "decisions_per_hand": n / d.num_hands,
    }


def loading(folder: Path, runs: int, workers: int) -> dict:
    """Recorded decisions per second into torch batches (v2, v2 with workers, v3, hand features)."""
    from fzmj.data import open_dataset

    d = open_dataset(folder)
    threads = min(2, os.cpu_count() or 1)  # the hand features' Numba threads

    def load(**kw):
        return lambda: sum(len(b["action"]) for b in d.batches(4096, torch=True, **kw))

    load()()  # warm-up
    figures = {}
    for name, kw in (
        ("load_decisions_per_s", {}),
        ("load_decisions_per_s_workers", {"workers": workers}),
        ("load_v3_decisions_per_s", {"obs": "v3"}),
        ("load_hand_features_decisions_per_s", {"hand_features": True, "threads": threads}),
    ):
        runs_ = [_rates(load(**kw)) for _ in range(runs)]
        figures[name] = statistics.median(r[0] for r in runs_)
        figures[name.replace("_per_s", "_per_cpu_s")] = statistics.median(r[1] for r in runs_)
    return figures


# VmHWM, not ru_maxrss: a child's ru_maxrss keeps the parent's peak from before the exec
_PEAK = """
import sys
from fzmj.data import open_dataset
n = sum(len(b["action"]) for b in open_dataset(sys.argv[1]).batches(4096, torch=True))
kb = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(n, kb)
"""


def load_memory(folder: Path) -> dict:
    """Peak resident memory of a fresh process that loads the whole dataset once (v2, torch, the
    default buffer): what loading holds, whatever the dataset's size."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _PEAK, str(folder)], capture_output=True, text=True, check=True)
    n, kb = out.stdout.split()
    return {"load_peak_rss_mb": int(kb) / 1024, "load_peak_rss_decisions": int(n)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--hands", type=int, default=40_000, help="hands per collection run (default 40,000)")
    ap.add_argument("--workers", type=int, default=2, help="collection and loading worker processes")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    load_before = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench_data_"))
    try:
        figures = collection(folder, args.hands, args.workers, args.runs)
        figures |= layouts(folder / "c1")
        figures |= loading(folder / "c1", args.runs, args.workers)
        figures |= load_memory(folder / "c1")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figures |= {"hands": args.hands, "workers": args.workers} | machine_and_load(load_before)
    print_figures(figures, args.json)


if __name__ == "__main__":
    main()
