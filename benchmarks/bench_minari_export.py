"""The Minari export (fzmj/data/minari_export.py, docs/data.md): episodes per second written by
``to_minari`` and read back by ``minari.load_dataset(...).iterate_episodes()``, for each of Minari's
storages (HDF5, one file; Arrow, a folder per episode), on the same dataset of ``heuristic``
self-play (one episode per seat and hand), with the machine and its load. One run each (the
export of a few thousand episodes takes seconds to minutes; the gap is what it measures).

    python benchmarks/bench_minari_export.py [--json] [--hands N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from report import cpu_seconds, machine_and_load, print_figures

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def export_and_read(folder: Path, data_format: str) -> dict:
    """Episodes per wall and per CPU second, written by ``to_minari`` and read back whole."""
    import minari

    from fzmj.data.minari_export import to_minari

    name = f"fzmj/bench-{data_format}-v0"
    t, c = time.perf_counter(), cpu_seconds()
    to_minari(folder / "data", name, data_format=data_format)
    write_wall, write_cpu = time.perf_counter() - t, cpu_seconds() - c
    t, c = time.perf_counter(), cpu_seconds()
    ds = minari.load_dataset(name)
    steps = sum(len(ep.actions) for ep in ds.iterate_episodes())
    read_wall, read_cpu = time.perf_counter() - t, cpu_seconds() - c
    assert steps == ds.total_steps
    n = ds.total_episodes
    return {
        f"{data_format}_write_episodes_per_s": round(n / write_wall, 1),
        f"{data_format}_write_episodes_per_cpu_s": round(n / write_cpu, 1),
        f"{data_format}_read_episodes_per_s": round(n / read_wall, 1),
        f"{data_format}_read_episodes_per_cpu_s": round(n / read_cpu, 1),
        "episodes": n,
        "steps": steps,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--hands", type=int, default=1000, help="hands of heuristic self-play (4 episodes each)")
    args = ap.parse_args()
    from fzmj.data import collect

    load_before = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench_minari_"))
    os.environ["MINARI_DATASETS_PATH"] = str(folder / "minari")
    try:
        collect(folder / "data", ["heuristic"], args.hands, seed=0, progress=False, log=lambda *_: 0)
        figures = export_and_read(folder, "hdf5") | export_and_read(folder, "arrow")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figures |= {"hands": args.hands} | machine_and_load(load_before)
    print_figures(figures, args.json)


if __name__ == "__main__":
    main()
