"""Every figure the README shows, regenerated, with the machine they came from and its load.

    python benchmarks/readme_figures.py                    # everything (about 10 min on 2 idle cores)
    python benchmarks/readme_figures.py --only machine tests strength
    python benchmarks/readme_figures.py --only quickstart  # the README's first command, timed
    python benchmarks/readme_figures.py --only libraries   # the five library examples (about 15 min)
    python benchmarks/readme_figures.py --check            # the deterministic figures, against the docs
    python benchmarks/readme_figures.py --check --only strength   # only the agent's (a few minutes)

Sections (in the README's order): ``machine`` (CPU model, cores, load average, versions),
``quickstart`` (the README's training command in a temporary folder: the line it ends with,
its wall time, its CPU seconds, the load average around it, then the README's follow-up
evaluation of its checkpoint), ``tests`` (what the README's test command collects, and which
integration modules skip because their library is not installed), ``speed`` (the headline
benchmarks: one figure from each of bench_is_win, bench_engine, bench_aec, bench_vector,
bench_eval, bench_train) and ``strength`` (the shipped ``pretrained`` agent against three
``heuristic`` and three ``random``, 4,000 hands of seed 7: deterministic, so the same digits on
any machine) and, only when asked for, ``libraries`` (the table of docs/integrations.md: each
library example at its default size, in the venv that has the library: this one, .venv-rllib
or .venv-agilerl). Wall-clock figures depend on the load printed beside them; CPU seconds and the
strength figures do not (the paired one plays 72,000 hands twice: a few minutes). The other tables (docs/results.md) name the script that prints each.

``--check`` reruns the deterministic figures (``CHECKED``: the quickstart's closing evaluation,
its follow-up ``fzmj-eval``, the shipped agent's strength and paired margin) of the sections
asked for (default: ``quickstart`` and ``strength``) and compares each with the value the README
and the docs print where ``CHECKED`` says; it exits 1 naming every figure that differs, with the
documented and the measured value, and 2 at once when a documented figure cannot be found. Run it
before every change to those figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
BIN = Path(sys.executable).parent
SECTIONS = ["machine", "quickstart", "tests", "speed", "strength", "libraries"]
DEFAULT_SECTIONS = SECTIONS[:-1]  # `libraries` trains five examples (about 15 min): asked for by name
QUICKSTART = [
    "--config",
    "ppo_default",
    "--set",
    "total_timesteps=3_000_000",
    "--set",
    "run_name=quickstart",
    "--deterministic",
]
INTEGRATION_LIBS = {  # test module -> the library it needs ([sb3], [tianshou], [rllib], [agilerl] extras)
    "tests/integrations/test_sb3.py": "sb3_contrib",
    "tests/integrations/test_tianshou.py": "tianshou",
    "tests/integrations/test_rllib.py": "ray",
    "tests/integrations/test_agilerl.py": "agilerl",
}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def line(key: str, value) -> None:
    print(f"  {key}: {value}", flush=True)


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[str, float, float]:
    """``cmd``'s stdout, its wall seconds and its CPU seconds (user + sys of the child and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    path = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}".rstrip(os.pathsep)
    env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"readme_figures: {' '.join(map(str, cmd))} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p.stdout, wall, cpu


def eval_result(agents: list[str], hands: int, seed: int | None, cwd: Path | None = None, extra=()) -> dict:
    """The ``--out`` JSON of one ``fzmj-eval`` run (two workers, no progress bar)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [str(BIN / "fzmj-eval"), "--agents", *agents, "--hands", str(hands), "--workers", "2"]
        cmd += ["--no-progress", "--out", str(out)] + (["--seed", str(seed)] if seed is not None else [])
        run(cmd + list(extra), cwd=cwd)
        return json.loads(out.read_text())


def evaluate(
    agents: list[str], hands: int, seed: int | None, cwd: Path | None = None, agent_seed: int | None = None
) -> str:
    extra = ["--agent-seed", str(agent_seed)] if agent_seed is not None else []  # random agents' streams
    slot = eval_result(agents, hands, seed, cwd, extra)["per_slot"][0]
    return figure(slot["mean_score"], *slot["ci95"])


def figure(mean: float, lo: float, hi: float) -> str:
    """A mean and its 95% CI as the docs print them: ``+26.34 [+25.01, +27.67]``."""
    return f"{mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def machine() -> None:
    import numba
    import numpy
    import torch

    print("machine")
    line("cpu", f"{cpu_model()}, {os.cpu_count()} cores visible")
    line("load average (1, 5, 15 min)", load())
    line(
        "python / numpy / numba / torch",
        f"{platform.python_version()} / {numpy.__version__} / {numba.__version__} / {torch.__version__}",
    )
    line("date", time.strftime("%Y-%m-%d %H:%M %Z"))


def quickstart() -> dict[str, str]:
    print("quickstart (the README's first command, training part; installs not included)")
    with tempfile.TemporaryDirectory() as tmp:
        start = load()
        out, wall, cpu = run([str(BIN / "fzmj-train"), *QUICKSTART], cwd=Path(tmp))
        evals = [ln for ln in out.splitlines() if " vs random " in ln]
        final = evals[-1] if evals else out.strip().splitlines()[-1]
        closing = " | ".join(final.split(" | ")[-2:])
        line("last line with the evaluation", final.split(" | ")[0] + " | ... | " + closing)
        line("time", f"{wall / 60:.1f} min wall, {cpu:,.0f} CPU s (load average {start} before, {load()} after)")
        ckpt = Path(tmp) / "runs" / "quickstart" / "checkpoints" / "latest.pt"
        follow_up = evaluate([f"ppo:{ckpt}", "random"], 2000, 0, agent_seed=0)
        line(
            "follow-up: fzmj-eval --agents ppo:... random --hands 2000 --seed 0 --agent-seed 0", follow_up + " per hand"
        )
    return {"quickstart": closing, "follow-up": follow_up}


def tests() -> None:
    print("tests (the README's test command: python -m pytest -q -n auto)")
    out, _, _ = run([sys.executable, "-m", "pytest", "--collect-only", "-q"], cwd=ROOT)
    m = re.search(r"(\d+) tests? collected", out) or re.search(r"(\d+) tests? collected", out.replace("\n", " "))
    collected = m.group(1) if m else out.strip().splitlines()[-1]
    skipped = [mod for mod, lib in INTEGRATION_LIBS.items() if importlib.util.find_spec(lib) is None]
    out, _, _ = run([sys.executable, "-m", "pytest", "--collect-only", "-q", "tests/integrations"], cwd=ROOT)
    m = re.search(r"(\d+) tests? collected", out)
    extras = int(m.group(1)) if m else 0
    line("collected", collected)
    line("of which in tests/integrations (collected only with the extras' libraries)", extras)
    if str(collected).isdigit():
        line("so a [dev]-only venv collects", int(collected) - extras)
    line("modules that skip here (library not installed)", ", ".join(skipped) or "none")


QUICK = {  # --quick: tiny runs that check the plumbing, not figures to quote
    "bench_is_win.py": ["--n", "200000", "--runs", "1"],
    "bench_engine.py": ["--hands", "2000", "--driver-hands", "20", "--runs", "1"],
    "bench_aec.py": ["--steps", "5000", "--repeats", "1"],
    "bench_vector.py": ["--decisions", "40000", "--runs", "1"],
    "bench_eval.py": ["--hands", "512", "--runs", "1"],
    "bench_train.py": ["--updates", "3", "--set", "bc_decisions=4096", "--set", "bc_eval_hands=0"],
}
_quick = False


def bench(script: str, *args: str) -> dict:
    extra = QUICK[script] if _quick else []
    out, _, _ = run([sys.executable, str(BENCH / script), "--json", *args, *extra])
    return json.loads(out.strip().splitlines()[-1])


def speed() -> None:
    print(
        "speed (headline benchmarks; wall clock, so read them with the load average)" + (" --quick" if _quick else "")
    )
    line("load average before", load())
    f = bench("bench_is_win.py", *([] if _quick else ["--runs", "5"]))
    line("is_win_batch, 17-tile hands/s, one core", f"{f['hands_per_s'] / 1e6:.1f} M")
    f = bench("bench_engine.py")
    line("engine, complete random hands/s, one core", f"{f['engine_hands_per_s']:,.0f}")
    f = bench("bench_aec.py")
    c4 = f.get("connect_four_v3", {}).get("steps_per_s")
    c4_text = f" (PettingZoo connect_four_v3, same loop: {c4:,.0f})" if c4 else ""
    line("AEC env, random legal play, steps/s", f"{f['fzmj_v0']['steps_per_s']:,.0f}{c4_text}")
    f = bench("bench_vector.py", "--batch-sizes", "1024")
    line(
        "VectorEnv B=1024, 1 thread, decisions/s (numpy sampling included)",
        f"{f['B1024_threads1']['decisions_per_s']:,.0f}",
    )
    f = bench("bench_eval.py")
    line("fzmj-eval, 4 heuristic agents, 2 workers, hands/s", f"{f['heuristic_hands_per_s']:,.0f}")
    f = bench("bench_train.py")
    line(
        "fzmj-train, ppo_default, env steps/s (median of the updates)",
        f"{f['wall_sps_median']:,.0f} ({f['cpu_sps_median']:,.0f} per CPU s)",
    )
    line("load average after", load())


# The seeds on which `pretrained` (v2) was checked after training (none used by a run or tuning)
# and the hands played on each (docs/results.md, "Training with what the table hides").
UNUSED_SEEDS = {4041: 4000, 5051: 4000, 6061: 4000, 7071: 4000, 8081: 4000, 9091: 4000, 10111: 16000, 20222: 16000, 30333: 16000}  # fmt: skip


def paired_vs_heuristic(seeds: dict[int, int]) -> str:
    """``pretrained`` − ``heuristic`` paired against three heuristics on each seed's walls, pooled
    by hands (independent seeds: the CI half-widths, weighted by hands, add in quadrature; unlike
    ``oracle_ablation.pooled`` of benchmarks/studies/, which takes equal hands per seed)."""
    rows = [
        eval_result(["pretrained", "heuristic"], hands, seed, extra=["--paired", "heuristic"])["paired"]
        for seed, hands in seeds.items()
    ]
    total = sum(r["hands"] for r in rows)
    mean = sum(r["mean"] * r["hands"] for r in rows) / total
    half = sum((r["hands"] / total * (r["ci95"][1] - r["ci95"][0]) / 2) ** 2 for r in rows) ** 0.5
    return figure(mean, mean - half, mean + half)


def strength() -> dict[str, str]:
    print("strength (deterministic: the same digits on any machine)")
    found = {}
    for opp in ("heuristic", "random"):
        # --agent-seed too: the random agents' streams, else a secret key drawn for each run
        found[f"pretrained vs {opp}"] = evaluate(["pretrained", opp], 4000, 7, agent_seed=7)
        line(f"pretrained vs 3 {opp}, 4,000 hands, seed 7", found[f"pretrained vs {opp}"] + " per hand")
    seeds = " / ".join(map(str, UNUSED_SEEDS))
    found["paired margin"] = paired_vs_heuristic(UNUSED_SEEDS)
    hands = sum(UNUSED_SEEDS.values())
    line(
        f"pretrained - heuristic, paired vs 3 heuristic, seeds {seeds}",
        f"{found['paired margin']} per hand ({hands:,} hands)",
    )
    return found


# ---- --check: the deterministic figures against the docs that print them --------------------------
FIGURE = r"[+\-−]\d+\.\d\d \[[+\-−]\d+\.\d\d, [+\-−]\d+\.\d\d\]"
"""A mean and its 95% CI as the docs print them (``−``, the typographic minus, reads as ``-``)."""


class Checked(NamedTuple):
    """A deterministic figure: the section that measures it, the shape of its text, and where the docs
    print it: (file, anchor) pairs, the figure being the first text of that shape after the anchor
    (a regular expression) within ``NEAR`` characters."""

    section: str
    shape: str
    places: tuple[tuple[str, str], ...]


NEAR = 400
CHECKED = {
    "quickstart": Checked("quickstart", rf"vs random {FIGURE} \| vs heuristic {FIGURE}", (("README.md", r"update 183/183"),)),
    "follow-up": Checked("quickstart", FIGURE, (("README.md", r"follow-up evaluation prints"),)),
    "pretrained vs heuristic": Checked("strength", FIGURE, (("README.md", r"vs 3 `heuristic`, 4,000 hands, seed 7"),)),
    "pretrained vs random": Checked("strength", FIGURE, (("README.md", r"vs 3 `random`, 4,000 hands, seed 7"),)),
    "paired margin": Checked(
        "strength",
        FIGURE,
        (("README.md", r"`pretrained` − `heuristic`, paired"), ("docs/pretrained.md", r"unused seeds it has played")),
    ),
}  # fmt: skip


def documented(path: str, anchor: str, shape: str, root: Path | None = None) -> str | None:
    """The figure that ``path`` prints after ``anchor`` (None when the anchor or the figure is missing)."""
    try:
        text = ((root or ROOT) / path).read_text(encoding="utf-8")
    except OSError:
        return None
    at = re.search(anchor, text)
    found = at and re.search(shape, text[at.end() : at.end() + NEAR])
    return found.group(0) if found else None


def same(a: str, b: str) -> bool:
    return a.replace("−", "-") == b.replace("−", "-")


def missing_places(names, root: Path | None = None) -> list[str]:
    """Every place of the figures ``names`` where the docs no longer print the figure."""
    return [
        f"{name}: not found in {path} after {anchor!r}"
        for name in names
        for path, anchor in CHECKED[name].places
        if documented(path, anchor, CHECKED[name].shape, root) is None
    ]


def differences(measured: dict[str, str], root: Path | None = None) -> list[str]:
    """One line per (figure, place) where the docs print another value than the one measured."""
    out = []
    for name, value in measured.items():
        for path, anchor in CHECKED[name].places:
            doc = documented(path, anchor, CHECKED[name].shape, root)
            if doc is None:
                out.append(f"{name}: not found in {path} after {anchor!r}")
            elif not same(doc, value):
                out.append(f"{name} in {path}: documented {doc}, measured {value}")
    return out


def check(sections: list[str]) -> int:
    """``--check``: rerun the checked figures of ``sections``; 0 when the docs print each one as measured."""
    names = [name for name, c in CHECKED.items() if c.section in sections]
    if not names:
        print(
            f"readme_figures: --check: no checked figure in {', '.join(sections)} (they are in: quickstart, strength)",
            file=sys.stderr,
        )
        return 2
    if missing := missing_places(names):
        print("readme_figures: --check: " + "; ".join(missing), file=sys.stderr)
        return 2
    measured = {}
    for section in dict.fromkeys(CHECKED[name].section for name in names):
        measured.update(globals()[section]())
    problems = differences({name: measured[name] for name in names})
    print("check")
    for problem in problems:
        line("DIFFERS", problem)
    places = sum(len(CHECKED[name].places) for name in names)
    line(
        "result",
        f"{len(problems)} of {places} documented figures differ"
        if problems
        else f"all {places} documented figures match",
    )
    return 1 if problems else 0


LIBRARIES = [  # (library, its extra, the example at its default size, a module the library's venv has)
    ("Stable-Baselines3 + sb3-contrib", "sb3", "sb3_maskable_ppo.py", "sb3_contrib"),
    ("TorchRL", "torchrl", "torchrl_ppo.py", "torchrl"),
    ("Tianshou", "tianshou", "tianshou_dqn.py", "tianshou"),
    ("Ray RLlib", "rllib", "rllib_selfplay.py", "ray.rllib"),
    ("AgileRL", "agilerl", "agilerl_ppo.py", "agilerl"),
]
TRAINED = re.compile(r"trained ([\d,]+) (?:learner |env )?steps.*? in ([\d.]+) s \(([\d,]+) (?:env )?steps/s")
VERDICT = re.compile(
    r"learning signal: ([+-][\d.]+) \[([+-][\d.]+), ([+-][\d.]+)\].*?(\d[\d,]*) (?:paired )?hands.*-> (.+)$",
    re.M,
)


def python_with(module: str) -> str | None:
    """An interpreter that imports ``module``: this one, else the venvs .ci/run makes (.venv-rllib, .venv-agilerl)."""
    for py in [sys.executable, *(str(ROOT / f".venv-{v}" / "bin" / "python") for v in ("rllib", "agilerl"))]:
        if Path(py).exists() and subprocess.run([py, "-c", f"import {module}"], capture_output=True).returncode == 0:
            return py
    return None


def library_row(library: str, extra: str, script: str, module: str) -> str:
    """One table row: the example at its default size, timed, its learning verdict and training speed."""
    install, example = f'`pip install "fzmj[{extra}]"`', f"`examples/{script}`"
    py = python_with(module)
    if py is None:
        return f"| {library} | {install} | {example} | not installed here | | | |"
    env = {"RAY_AUTH_MODE": "disabled"} if extra == "rllib" else {}
    out, wall, cpu = run([py, str(ROOT / "examples" / script)], cwd=ROOT / "examples", env=env)
    trained, verdict_line = TRAINED.search(out), VERDICT.search(out)
    if not (trained and verdict_line):
        sys.exit(f"readme_figures: examples/{script} printed no 'trained ...' or verdict line:\n{out[-1500:]}")
    steps, train_s, rate = trained.groups()
    steps = f"{int(steps.replace(',', '')):,}"
    mean, lo, hi, hands, verdict = verdict_line.groups()
    return (
        f"| {library} | {install} | {example} | {steps} | {wall / 60:.1f} min wall ({cpu:,.0f} CPU s; "
        f"training {float(train_s):,.0f} s) | {verdict}: {mean} [{lo}, {hi}] vs 3 random, {hands} hands | {rate} |"
    )


def libraries() -> None:
    print("libraries (each example at its default size, one after another; wall time: read it with the load)")
    line("load average before", load())
    print("| library | install | example | steps | time | learning signal | training steps/s |")
    print("| --- | --- | --- | ---: | --- | --- | ---: |")
    for row in LIBRARIES:
        print(library_row(*row), flush=True)
    line("load average after", load())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        help="sections to print (default: all but libraries; with --check: quickstart and strength)",
    )
    ap.add_argument("--quick", action="store_true", help="speed: tiny runs (checks the script, not figures to quote)")
    ap.add_argument(
        "--check",
        action="store_true",
        help="rerun the deterministic figures (sections quickstart, strength; or those of --only) and exit 1 "
        "naming each one the README or the docs print differently",
    )
    args = ap.parse_args(argv)
    global _quick
    _quick = args.quick
    machine()  # always: every figure below is read with it
    if args.check:  # the sections asked for, else every section with a checked figure
        return check(args.only or sorted({c.section for c in CHECKED.values()}))
    args.only = args.only or DEFAULT_SECTIONS
    for name in SECTIONS[1:]:
        if name in args.only:
            globals()[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
