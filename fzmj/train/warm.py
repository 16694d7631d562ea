"""The trainer's ``fzmj-warmup`` targets (the ``fzmj.warmup`` entry points in pyproject.toml), and
its first run's parallel compile.

``train``: the GAE over seat chains; ``belief``: the belief network's labels (``fzmj-belief``).
On a cold cache :func:`warm_ahead` compiles what a training run needs in two processes at once,
the engine in one, the kernels that only read observations (hand features, the heuristic, the
policy's first layer, the GAE) in the other, before the run starts (docs/engine.md).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np


def warm_train() -> None:
    from .selfplay_buffer import gae_chains

    n = 2
    gae_chains(
        np.zeros(n, np.float32), np.zeros(n, np.float32), np.full(n, -1, np.int64), np.ones(n, np.bool_),
        np.float32(1.0), np.float32(0.95), np.zeros(n, np.float32), np.zeros(n, np.bool_),
    )  # fmt: skip


def warm_belief() -> None:
    from .belief_data import generate

    generate(4, ["random"] * 4, rules="fuzhou-lianzhong", seed=0, tables=2)  # hidden_labels


def warm_ahead(oracle: bool, out=None) -> bool:
    """Where this host would compile the engine (no cached code for the batched step), compile a
    training run's kernels in two processes at once; False where there was nothing to do (a
    warm cache, the wheel's kernels, one CPU, or ``FZMJ_WARM_AHEAD=0``)."""
    from fzmj_env import _shipped_kernels, warmup
    from fzmj_env.vector import _step_range

    if os.environ.get("FZMJ_WARM_AHEAD", "1") == "0" or (os.cpu_count() or 1) < 2:
        return False
    out = sys.stderr if out is None else out
    try:
        if _shipped_kernels.has_cached_code(_step_range):
            return False
    except Exception:  # Numba's cache internals moved: compile as the run goes, as before
        return False
    t0 = time.perf_counter()
    print("fzmj: compiling the kernels a training run needs in two processes (first run with this cache)...", file=out)
    engine = ["vector", *(["oracle"] if oracle else [])]
    try:
        warmup.warm_in_processes([engine, ["features", "heuristic", "policy", "train"]])
    except (OSError, RuntimeError) as exc:  # the run compiles what is missing itself
        print(f"fzmj: the compile ahead failed ({exc}); compiling as the run goes", file=out, flush=True)
        return False
    print(f"fzmj: compiled in {time.perf_counter() - t0:.0f} s", file=out, flush=True)
    return True
