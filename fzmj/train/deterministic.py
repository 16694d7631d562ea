"""Deterministic mode (``deterministic: true`` in a config, or ``fzmj-train --deterministic``): the
same seed gives the same run, digit for digit, on any x86-64 CPU (docs/training.md).

Without it the digits depend on the CPU model: the same seed printed ``+25.72 | -1.00`` on a Xeon
and ``+25.24 | +0.29`` on an AVX-512 EPYC (issue 58). The sources, and how each is pinned:

- torch picks each CPU kernel (matrix products' edges, reductions, activations) by the instruction
  set it finds at import (``ATEN_CPU_CAPABILITY``: default / avx2 / avx512): the vector width decides
  the order of a sum. Pinned to ``default``, the portable kernels, which must be set before torch is
  imported: so the command runs itself again in a process whose environment pins it (:func:`relaunch`).
- MKL, torch's BLAS, picks its code path by CPU too: ``MKL_CBWR=COMPATIBLE`` (its documented mode
  for the same results on every Intel and AMD x86-64 CPU).
- oneDNN (torch's convolutions and some products) dispatches by CPU: turned off in the process
  (``torch.backends.mkldnn``), and ``ONEDNN_MAX_CPU_ISA=SSE41`` for anything that still reaches it.
- Numba compiles our kernels for the host CPU: with AVX-512 a ``fastmath`` float loop (the policy's
  sparse first layer, ``binary_linear.py``) sums 16 lanes at a time, with AVX2 8, and LLVM fuses
  multiply-adds where the CPU has FMA. ``NUMBA_CPU_NAME=generic``: code for a baseline x86-64, the
  same instructions everywhere (the shipped kernels are built so too).
- Threads: torch splits reductions by its thread count, which defaults to the machine's cores.
  The mode uses ``torch_threads`` threads, :data:`DEFAULT_THREADS` when that key is 0; the digits
  are those of the thread count, whatever the machine.

What is left is the C library's own math functions (``exp``, ``log`` of glibc pick an FMA variant
where the CPU has one): correctly rounded in nearly every case, so no difference has been seen.
The cost is measured by ``benchmarks/bench_deterministic.py`` (docs/training.md).
"""

from __future__ import annotations

import os
import subprocess
import sys

PINNED = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "NUMBA_CPU_NAME": "generic",
}
UNSET = ("NUMBA_CPU_FEATURES",)  # generic means no extra features
DEFAULT_THREADS = 2


def pinned_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's) with the instruction sets pinned."""
    out = {**(os.environ if env is None else env), **PINNED}
    for name in UNSET:
        out.pop(name, None)
    return out


def is_pinned() -> bool:
    """Whether this process was started with the pinned environment."""
    return all(os.environ.get(k) == v for k, v in PINNED.items()) and not any(k in os.environ for k in UNSET)


def relaunch(argv: list[str] | None) -> int:
    """Run ``fzmj-train ARGV`` again in a process whose environment pins the instruction sets (they are
    read when torch and Numba are imported, which this process has done). From the command line the
    process replaces itself (same pid: Ctrl-C, torchrun and job schedulers see one process); called
    with an explicit ``argv`` (a test, a script) it runs a child and returns its exit code."""
    cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", *(sys.argv[1:] if argv is None else argv)]
    sys.stdout.flush()
    sys.stderr.flush()
    if argv is None:
        os.execve(sys.executable, cmd, pinned_env())
    return subprocess.call(cmd, env=pinned_env())


def apply(torch_threads: int) -> str:
    """In the pinned process: check that the pins took effect, fix the threads, turn oneDNN off;
    returns the line the trainer prints. ``RuntimeError`` when torch or Numba was imported before
    the environment was set (an embedding process): the digits would not be portable."""
    import numba
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "DEFAULT" or numba.config.CPU_NAME != "generic":
        raise RuntimeError(
            f"deterministic mode: torch uses its {capability} kernels and Numba compiles for "
            f"{numba.config.CPU_NAME or 'this CPU'}; start the process with {' '.join(f'{k}={v}' for k, v in PINNED.items())}"
        )
    threads = torch_threads or DEFAULT_THREADS
    torch.set_num_threads(threads)
    torch.backends.mkldnn.enabled = False
    return (
        f"deterministic mode: portable torch kernels, MKL_CBWR=COMPATIBLE, generic Numba code, "
        f"{threads} torch threads (the same digits on any x86-64 CPU)"
    )
