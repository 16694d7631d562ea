"""Deterministic mode (issue 58): do its digits move when the instruction set changes, and what does
it cost in steps/s?

Runs one short training (``fzmj-train --config ppo_smoke`` made a little longer: 32 tables x 32
steps x 4 updates = 4,096 steps by default, evaluations of 64 hands) in a subprocess under
each CPU setting a user or a machine could bring: the host's own (AVX-512 here), torch forced to
AVX2 with MKL on its AVX2 path, torch and MKL on their portable paths, and Numba forced to generic
code; each with the mode off and on. Prints, per run, the last update line (scores, entropy, KL,
the evaluation against random and heuristic: the digits, times removed), the SHA-256 of the final
weights (any last-bit difference shows there) and the steps/s of the last update line; then whether
each mode's digits and weights agree across the settings. Then the mode's cost: ``ppo_default``'s
network and batch (the quickstart's PPO part, no warm start), 3 updates of 16,384 steps, the mode
off and on in turn, the median steps/s of the last update line of each.

    python benchmarks/bench_deterministic.py [--steps 4096] [--rounds 1] [--cost-rounds 3] [--part both]

The first run of the mode compiles the generic Numba kernels into the cache (minutes on 2 cores);
that run's steps/s are not counted, the later ones find the cache warm.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {
    "host": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX512"},
    "portable": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
    "numba-generic": {"NUMBA_CPU_NAME": "generic"},
}
UPDATE = re.compile(r"^update (\d+)/(\d+) \| step [\d,]+ \| SPS ([\d,]+) [^|]*\|(.*)$")
SCRUB = re.compile(r"\b(SPS [\d,]+|[\d.]+ ?s\b|elapsed[^|]*)")  # times vary from run to run: not digits of the run


def one_run(name: str, deterministic: bool, steps: int, runs: Path) -> dict:
    env = {**os.environ, **SETTINGS[name], "FZMJ_COMPILE_NOTICE": "0"}
    for key in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "NUMBA_CPU_NAME"):
        if key not in SETTINGS[name]:
            env.pop(key, None)
    run_name = f"{name}_{'det' if deterministic else 'fast'}"
    cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--config", "ppo_smoke", "--no-progress"]
    cmd += ["--set", f"runs_dir={runs}", "--set", f"run_name={run_name}", "--set", "num_tables=32"]
    cmd += ["--set", "num_steps=32", "--set", f"total_timesteps={steps}", "--set", "eval_hands=64"]
    cmd += ["--deterministic"] if deterministic else []
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if proc.returncode:
        raise SystemExit(f"{run_name} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    updates = [m for m in map(UPDATE.match, lines) if m]
    last = updates[-1]
    digits = " ".join(SCRUB.sub("", last.group(4)).split()) + " | weights " + weights_digest(runs / run_name)
    return {"name": run_name, "digits": digits, "sps": int(last.group(3).replace(",", ""))}


def weights_digest(run_dir: Path) -> str:
    """The first 16 hex digits of the SHA-256 over the final checkpoint's weights, in name order."""
    import hashlib

    import torch

    model = torch.load(run_dir / "checkpoints" / "latest.pt", map_location="cpu", weights_only=True)["model"]
    h = hashlib.sha256()
    for name in sorted(model):
        h.update(name.encode() + model[name].numpy().tobytes())
    return h.hexdigest()[:16]


COST = ["--config", "ppo_default", "--set", "bc_decisions=0", "--set", "teacher_coef=0", "--set", "eval_every=0"]


def cost_run(deterministic: bool, updates: int, runs: Path, name: str, setting: str = "host") -> int:
    """The steps/s of the last update line of ``ppo_default``'s network and batch (16,384 steps an
    update), without the warm start: the quickstart's PPO part; ``setting`` one of SETTINGS."""
    cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", *COST, "--no-progress", "--set", f"runs_dir={runs}"]
    cmd += ["--set", f"run_name={name}", "--set", f"total_timesteps={16_384 * updates}"]
    cmd += ["--deterministic"] if deterministic else []
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "NUMBA_CPU_NAME")}
    env.update(SETTINGS[setting])
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if proc.returncode:
        raise SystemExit(f"{name} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    updates_seen = [m for m in map(UPDATE.match, proc.stdout.splitlines()) if m]
    return int(updates_seen[-1].group(3).replace(",", ""))


def cost(rounds: int, updates: int) -> None:
    sps: dict[bool, list[int]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for det in (False, True):  # interleaved: the machine's load falls on both alike
                sps[det].append(cost_run(det, updates, Path(tmp), f"cost{r}_{det}"))
                print(
                    f"cost round {r + 1}: {'deterministic' if det else 'default'} {sps[det][-1]:,} steps/s", flush=True
                )
    fast, det = statistics.median(sps[False]), statistics.median(sps[True])
    print(
        f"ppo_default's PPO: default {fast:,.0f} steps/s, deterministic {det:,.0f} ({det / fast - 1:+.0%}), medians of {rounds}"
    )


def breakdown(rounds: int, updates: int) -> None:
    """Which pin costs: the default with one setting of the mode at a time, then the whole mode."""
    runs = [("host", False), ("numba-generic", False), ("portable", False), ("host", True)]
    sps: dict[tuple, list[int]] = {r: [] for r in runs}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for setting, det in runs:  # interleaved: the machine's load falls on all alike
                name = f"b{r}_{setting}_{det}"
                sps[(setting, det)].append(cost_run(det, updates, Path(tmp), name, setting))
                print(
                    f"round {r + 1}: {setting}{' + the whole mode' if det else ''} {sps[(setting, det)][-1]:,} steps/s"
                )
    base = statistics.median(sps[runs[0]])
    for key in runs[1:]:
        ratios = [b / a for a, b in zip(sps[runs[0]], sps[key], strict=True)]
        print(f"{key[0]}{' + the whole mode' if key[1] else ''}: median {statistics.median(sps[key]):,.0f} steps/s "
              f"(default {base:,.0f}); per round {', '.join(f'{x - 1:+.0%}' for x in ratios)}", flush=True)  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=4096)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--cost-rounds", type=int, default=3, help="rounds of the steps/s comparison on ppo_default")
    p.add_argument("--cost-updates", type=int, default=3)
    p.add_argument("--part", choices=("digits", "cost", "both", "breakdown"), default="both")
    a = p.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    if a.part in ("digits", "both"):
        digits(a.steps, a.rounds)
    if a.part in ("cost", "both"):
        cost(a.cost_rounds, a.cost_updates)
    if a.part == "breakdown":  # not in "both": eight more runs
        breakdown(a.cost_rounds, a.cost_updates)
    print(f"load average {os.getloadavg()[0]:.1f} at the end (other work shares this machine)")
    return 0


def digits(steps: int, rounds: int) -> None:
    results: dict[bool, list[dict]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        one_run("host", True, 1024, Path(tmp) / "warm")  # compiles the generic kernels: not counted
        for r in range(rounds):
            for name in SETTINGS:
                for det in (False, True):
                    res = one_run(name, det, steps, Path(tmp) / f"r{r}")
                    results[det].append(res)
                    print(f"{res['name']:<22} {res['sps']:>6,} steps/s  {res['digits']}", flush=True)
    for det, rows in results.items():
        same = len({r["digits"] for r in rows}) == 1
        label = "deterministic" if det else "default (fast)"
        print(
            f"{label}: digits {'identical' if same else 'DIFFER'} across {len(rows)} runs; "
            f"median {statistics.median(r['sps'] for r in rows):,.0f} steps/s",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
