"""Cold start per capability: what the first use of each entry point compiles, and how long it takes.

Each capability runs in a fresh subprocess with an empty ``NUMBA_CACHE_DIR`` (cold), then once
more with the cache that run left (warm):

| capability | what the subprocess does |
| --- | --- |
| ``gym``   | ``gym.make("fzmj/SingleSeat-v0")`` (heuristic opponents), ``reset``, one step |
| ``aec``   | ``fzmj_env.env()``, ``reset``, one step with a random legal action |
| ``eval``  | ``fzmj-eval --agents heuristic random --hands 8 --no-progress`` |
| ``train`` | ``fzmj-train --config configs/ppo_smoke.yaml`` (run folder in a temporary directory) |

Wall seconds are the subprocess's (Python start and imports included); CPU seconds are its
user + system time (``getrusage`` of the children). "Kernels" counts the kernel versions of our
packages that compiled (Numba's ``numba:compile`` events); ``--detail`` lists them, with the
seconds spent in each (its own, not its callees').

The hand tables (``fzmj_env/core/_tables/``) are not in the Numba cache: they are built once
per install (about 1 s) and stay. ``--tables`` times their build in a subprocess, and the cache
guard (``fzmj_env/_numba_cache.py``: hashing the sources at import) is timed on its own too.

A "from the wheel" row (``--wheel-python VENV/bin/python``) runs the same capability with the
interpreter of a venv the wheel is installed in, outside the checkout, with an empty
``NUMBA_CACHE_DIR``: its "cold" run is a new user's first run, served by the kernels the wheel
ships (``python -m fzmj_env.build_cache``; 0 kernels compiled when they apply).

    python benchmarks/bench_cold_start.py [--only gym aec ...] [--detail] [--stages] [--json] [--tables]
        [--wheel-python VENV/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run inside each subprocess: count (and time) the compiles of our kernels, then do the work.
_PROBE = r"""
import json, os, sys, time
from numba.core import event

_stack, _rows = [], []

class _L(event.Listener):
    def on_start(self, ev):
        _stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        t0, inner = _stack.pop()
        dt = time.perf_counter() - t0
        if _stack:
            _stack[-1][1] += dt
        f = getattr(ev.data.get("dispatcher"), "py_func", None)
        mod = getattr(f, "__module__", "") or ""
        if mod.startswith(("fzmj_env", "fzmj.")):
            sig = ", ".join(str(a) for a in ev.data.get("args") or ()) if os.environ.get("FZMJ_PROBE_SIGS") else ""
            _rows.append([mod + "." + f.__qualname__, round(dt - inner, 3), sig])

event.register("numba:compile", _L())

_stages = None
if os.environ.get("FZMJ_PROBE_STAGES"):  # --stages: CPU seconds per compiler stage, library sizes
    import collections
    from numba.core import codegen as _cg, compiler_machinery as _cm

    _stages, _open = collections.Counter(), []

    def _timed(name, fn):  # charges each stage its own CPU seconds, not its nested compiles'
        def wrapper(*a, **k):
            _open.append([time.process_time(), 0.0])
            try:
                return fn(*a, **k)
            finally:
                t0, inner = _open.pop()
                dt = time.process_time() - t0
                _stages[name] += dt - inner
                if _open:
                    _open[-1][1] += dt
        return wrapper

    _run_pass = _cm.PassManager._runPass
    _cm.PassManager._runPass = lambda self, i, pss, st: _timed(pss.name(), _run_pass)(self, i, pss, st)
    for _n in ("_optimize_final_module", "_optimize_functions", "add_ir_module"):
        setattr(_cg.CPUCodeLibrary, _n, _timed("llvm_" + _n.lstrip("_"), getattr(_cg.CPUCodeLibrary, _n)))
    _cg.JITCodeLibrary._finalize_specific = _timed("llvm_machine_code", _cg.JITCodeLibrary._finalize_specific)
    _sizes = [0, 0, 0]  # libraries; LLVM instructions of their own; with their callees linked in
    _count = _timed("probe_counting", lambda m: sum(1 for f in m.functions for b in f.blocks for _ in b.instructions))
    _finalize = _cg.CPUCodeLibrary.finalize

    def _finalize_counted(self):
        _sizes[0] += 1
        _sizes[1] += _count(self._final_module)
        _finalize(self)
        _sizes[2] += _count(self._final_module)

    _cg.CPUCodeLibrary.finalize = _finalize_counted
try:
    exec(compile(os.environ["FZMJ_PROBE_CODE"], "<capability>", "exec"), {"__name__": "__capability__"})
except SystemExit as e:
    if e.code not in (0, None):
        raise
with open(os.environ["FZMJ_PROBE_OUT"], "w") as fh:
    json.dump(_rows, fh)
if _stages is not None:
    with open(os.environ["FZMJ_PROBE_OUT"] + ".stages", "w") as fh:
        json.dump({"stages_cpu_s": dict(_stages), "libraries": _sizes[0], "own_instructions": _sizes[1],
                   "linked_instructions": _sizes[2]}, fh)
"""

CAPABILITIES = {
    "gym": """
import gymnasium as gym, numpy as np, fzmj_env
e = gym.make("fzmj/SingleSeat-v0")
_, info = e.reset(seed=0)
e.step(int(np.flatnonzero(info["action_mask"])[0]))
""",
    "aec": """
import numpy as np, fzmj_env
e = fzmj_env.env()
e.reset(seed=0)
obs, *_ = e.last()
e.step(int(np.random.default_rng(0).choice(np.flatnonzero(obs["action_mask"]))))
""",
    "eval": """
import sys
from fzmj.agents.evaluate.cli import main
sys.exit(main(["--agents", "heuristic", "random", "--hands", "8", "--no-progress"]))
""",
    "train": """
import os, sys
from fzmj.train.ppo_selfplay import main
sys.exit(main(["--config", "configs/ppo_smoke.yaml", "--set", "runs_dir=" + os.environ["FZMJ_PROBE_TMP"]]))
""",
}

_TABLES = """
import time
from fzmj_env.core import hand
for name, build in (("win", hand._build_win_table), ("shanten", hand._build_shanten_table)):
    t0 = time.perf_counter(); build(); print(name, round(time.perf_counter() - t0, 2))
"""

_GUARD = """
import time
t0 = time.perf_counter()
from fzmj_env import _numba_cache
import fzmj_env
from pathlib import Path
t1 = time.perf_counter()
_numba_cache.source_fingerprint([Path(fzmj_env.__path__[0])])
t2 = time.perf_counter()
import fzmj.train
t3 = time.perf_counter()
print(round(t2 - t1, 3), round(t3 - t2, 3))
"""


def run_once(
    name: str, cache_dir: str, tmp: str, code: str | None = None, stages: bool = False, python: str | None = None
) -> dict:
    """One subprocess for capability ``name``: wall, CPU seconds, the compiled kernels (and with
    ``stages``, the compiler's CPU seconds per stage and the code libraries' sizes). With ``python``
    (the interpreter of a venv the wheel is installed in) it runs that interpreter in a folder
    outside the checkout, the checkout off the path: the installed package, its shipped kernels."""
    out = Path(tmp) / f"{name}.json"
    code = code or CAPABILITIES[name]
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    if stages:
        env["FZMJ_PROBE_STAGES"] = "1"
    env.update(FZMJ_PROBE_OUT=str(out), FZMJ_PROBE_TMP=tempfile.mkdtemp(dir=tmp), FZMJ_COMPILE_NOTICE="0")
    if python is None:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
        cwd = ROOT
    else:  # the shipped config by name: the checkout's configs/ is not there
        env.pop("PYTHONPATH", None)
        code, cwd = code.replace('"configs/ppo_smoke.yaml"', '"ppo_smoke"'), env["FZMJ_PROBE_TMP"]
    env["FZMJ_PROBE_CODE"] = code
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([python or sys.executable, "-c", _PROBE], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"bench_cold_start: {name} failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    rows = json.loads(out.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    res = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "kernels": len(rows), "compiled": rows}
    if stages:
        res["stages"] = json.loads(Path(f"{out}.stages").read_text())
    return res


def measure(names: list[str], stages: bool = False, python: str | None = None) -> list[dict]:
    out = []
    for name in names:
        with tempfile.TemporaryDirectory(prefix="fzmj-cold-") as tmp:
            cache = str(Path(tmp) / "numba_cache")
            os.mkdir(cache)
            cold = run_once(name, cache, tmp, stages=stages, python=python)
            warm = run_once(name, cache, tmp, python=python)
        label = name if python is None else f"{name}, from the wheel"
        out.append({"capability": label, "cold": cold, "warm": warm})
    return out


def side_figures() -> dict:
    """The hand tables' build and the cache guard's hashing, each in a fresh subprocess."""
    env = dict(os.environ, FZMJ_COMPILE_NOTICE="0")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    guard = subprocess.run(
        [sys.executable, "-c", _GUARD], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    one, train_import = map(float, guard.stdout.split())
    with tempfile.TemporaryDirectory(prefix="fzmj-cold-") as cache:  # the builders are kernels too
        env["NUMBA_CACHE_DIR"] = cache
        tables = subprocess.run(
            [sys.executable, "-c", _TABLES], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
    built = {k: float(v) for k, v in (line.split() for line in tables.stdout.splitlines())}
    return {"hash_fzmj_env_s": one, "import_fzmj_train_s": train_import, "table_build_s": built}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="+", choices=list(CAPABILITIES), default=list(CAPABILITIES))
    p.add_argument("--detail", action="store_true", help="list the kernel versions each cold run compiled")
    p.add_argument("--tables", action="store_true", help="also time the hand tables' build and the cache guard")
    p.add_argument(
        "--stages",
        action="store_true",
        help="time each compiler stage in the cold runs (the probes add about a tenth) and count the LLVM "
        "instructions of each code library, on its own and with its callees linked in",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument(
        "--wheel-python",
        metavar="PYTHON",
        help="also a 'from the wheel' row per capability: this interpreter (a venv with the wheel installed, "
        "python -m fzmj_env.build_cache before building it), run outside the checkout with an empty Numba cache",
    )
    a = p.parse_args(argv)
    rows = measure(a.only, stages=a.stages)
    if a.wheel_python:
        rows += measure(a.only, python=a.wheel_python)
    extra = side_figures() if a.tables else None
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    if a.json:
        print(json.dumps({"rows": rows, "side": extra, "loadavg": load}, indent=1))
        return 0
    print(
        f"| capability | cold wall s | cold CPU s | kernels compiled | warm wall s | warm CPU s |  (load {' '.join(load)})"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        c, w = r["cold"], r["warm"]
        print(
            f"| {r['capability']} | {c['wall_s']:.1f} | {c['cpu_s']:.1f} | {c['kernels']} | {w['wall_s']:.1f} | {w['cpu_s']:.1f} |"
        )
    if a.detail:
        for r in rows:
            print(f"\n{r['capability']}: {r['cold']['kernels']} kernel versions (own seconds)")
            for k, s, sig in sorted(r["cold"]["compiled"], key=lambda x: -x[1]):
                print(f"  {s:6.2f}  {k}" + (f"  ({sig})" if sig else ""))
    if a.stages:
        for r in rows:
            st = r["cold"]["stages"]
            print(
                f"\n{r['capability']}: {st['libraries']} code libraries, {st['own_instructions']:,} LLVM "
                f"instructions of their own, {st['linked_instructions']:,} with their callees linked in; "
                "CPU s per stage:"
            )
            for k, v in sorted(st["stages_cpu_s"].items(), key=lambda kv: -kv[1]):
                if v >= 0.1:
                    print(f"  {v:6.2f}  {k}")
    if extra:
        print(
            f"\ncache guard: hashing fzmj_env {extra['hash_fzmj_env_s']:.3f} s; import fzmj.train after fzmj_env "
            f"{extra['import_fzmj_train_s']:.3f} s; hand tables built in "
            + ", ".join(f"{k} {v:.2f} s" for k, v in extra["table_build_s"].items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
