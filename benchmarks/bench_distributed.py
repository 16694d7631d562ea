"""Throughput of ``fzmj-train`` as several ranks vs one process, at equal cores.

Runs, interleaved and repeated (so a busy neighbour disturbs every variant alike), a few updates
of a config (no evaluation; one checkpoint at the end) as:

* ``1x2``: one plain process, ``env_threads=2``, ``torch_threads=2``;
* ``1x1``: one plain process on one thread (a reference: half the cores);
* ``1xcfg``: one plain process with the config's own threads (the default config: one env
  thread, torch on all cores; what ``fzmj-train --config ...`` runs today);
* ``2x1``: two ranks under torchrun (gloo), ``env_threads=1``, ``torch_threads=1`` each, the
  config's ``num_tables`` per rank (the global batch doubles, as a user gets with ``--nproc 2``);
* ``2x1-half``: the same with half the tables per rank (the same global batch as ``1x2``).

SPS is steady state, from rank 0's console: env steps (of all ranks) between the end of update
``--warmup`` and the end of the last update, over the wall seconds between those two lines
(``sps``) and over the CPU seconds the rank processes used meanwhile, all threads
(``cpu_sps``, read from /proc; on a machine shared with other jobs the wall figure drops, and a
process whose threads wait for each other in parallel regions suffers most, while the CPU figure
tells what the work costs). Prints each variant's medians and their ratios to the first variant's.

    nice python benchmarks/bench_distributed.py [--config configs/ppo_default.yaml] [--updates 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import print_figures

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^update (\d+)/\d+ \| step ([\d,]+)")


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` (all their threads) so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")


def run_variant(
    name: str, config: str, updates: int, warmup: int, tables: int, extra: list[str]
) -> tuple[float, float]:
    """Steady-state env steps per wall second and per CPU second of one run of variant ``name``."""
    ranks = 2 if name.startswith("2x") else 1
    per_rank = tables if name != "2x1-half" else tables // 2
    threads = 2 if name == "1x2" else 1
    with tempfile.TemporaryDirectory() as tmp:
        sets = [f"num_tables={per_rank}"]
        if name != "1xcfg":
            sets += [f"env_threads={threads}", f"torch_threads={threads}"]
        sets += [
            "eval_every=0",
            f"save_every={updates}",
            f"runs_dir={tmp}",
            "run_name=bench",
            *extra,
        ]
        argv = ["--config", config] + sum((["--set", s] for s in sets), [])
        if ranks == 1:
            cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", *argv]
        else:
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
            cmd += ["-m", "fzmj.train.ppo_selfplay", *argv]
        steps_per_update = ranks * per_rank
        # total_timesteps from the batch: updates of the global batch
        cmd += ["--set", f"total_timesteps={updates * steps_per_update * _num_steps(config, extra)}"]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        marks: list[tuple[int, float, float]] = []  # (steps, wall, cpu) at the end of each update
        with subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        ) as proc:
            ranks_pids = None
            for line in proc.stdout:
                m = LINE.match(line)
                if m:
                    now = time.perf_counter()
                    if ranks_pids is None:
                        ranks_pids = [proc.pid] if ranks == 1 else _children(proc.pid)
                    marks.append((int(m.group(2).replace(",", "")), now, _cpu_seconds(ranks_pids)))
            rc = proc.wait()
    if rc != 0 or len(marks) <= warmup:
        raise SystemExit(f"{name}: the run failed (exit code {rc}, {len(marks)} updates)")
    (s0, t0, c0), (s1, t1, c1) = marks[warmup - 1], marks[-1]
    return (s1 - s0) / (t1 - t0), (s1 - s0) / max(c1 - c0, 1e-9)


def _num_steps(config: str, extra: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from fzmj.train.config import load_config
    from fzmj.train.ppo_selfplay import Args

    return load_config(Args, config, extra).num_steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(ROOT / "configs/ppo_default.yaml"))
    ap.add_argument("--updates", type=int, default=8, help="updates per run (of the global batch)")
    ap.add_argument("--warmup", type=int, default=2, help="updates left out of the measure")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--variants", default="1x2,2x1,2x1-half,1x1", help="comma-separated: 1x2, 2x1, 2x1-half, 1x1, 1xcfg"
    )
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    ns = ap.parse_args()
    if not 1 <= ns.warmup < ns.updates:
        raise SystemExit("--warmup must be at least 1 and below --updates")
    sys.path.insert(0, str(ROOT))
    from fzmj.train.config import load_config
    from fzmj.train.ppo_selfplay import Args

    tables = load_config(Args, ns.config, ns.overrides).num_tables
    variants = ns.variants.split(",")
    unknown = set(variants) - {"1x2", "2x1", "2x1-half", "1x1", "1xcfg"}
    if unknown:
        raise SystemExit(f"unknown variants: {', '.join(sorted(unknown))}")
    sps: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    load_before = os.getloadavg()[0]
    for r in range(ns.repeats):
        for v in variants:
            wall, per_cpu = run_variant(v, ns.config, ns.updates, ns.warmup, tables, ns.overrides)
            sps[v].append(wall)
            cpu[v].append(per_cpu)
            print(
                f"# round {r + 1}/{ns.repeats} {v}: {wall:,.0f} env steps/s, {per_cpu:,.0f} per CPU second "
                f"(load {os.getloadavg()[0]:.1f})",
                file=sys.stderr,
                flush=True,
            )
    out = {"config": ns.config, "overrides": ns.overrides, "updates": ns.updates, "repeats": ns.repeats}
    base, base_cpu = statistics.median(sps[variants[0]]), statistics.median(cpu[variants[0]])
    for v in variants:
        med, med_cpu = statistics.median(sps[v]), statistics.median(cpu[v])
        out[f"{v}_sps_median"] = med
        out[f"{v}_sps_runs"] = ", ".join(f"{x:,.0f}" for x in sps[v])
        out[f"{v}_sps_vs_{variants[0]}"] = med / base
        out[f"{v}_cpu_sps_median"] = med_cpu
        out[f"{v}_cpu_sps_vs_{variants[0]}"] = med_cpu / base_cpu
    out["load_average_before_after"] = f"{load_before:.2f} / {os.getloadavg()[0]:.2f}"
    print_figures(out, ns.json)


if __name__ == "__main__":
    main()
