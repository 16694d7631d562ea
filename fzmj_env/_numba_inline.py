"""Numba's ``inline="always"`` without its quadratic copy: one scope copy per inlined callee.

To inline a kernel, Numba copies the callee's IR (``InlineWorker.inline_ir``, twice per call
site) with ``copy.deepcopy`` of each block on its own. Every block refers to the function's
scope, which holds every variable of the function, so each block's copy copies the whole scope
again: a copy costs blocks x variables, and the engine's inlined kernels (the claims and turns
inlined into ``apply_action``, the encoder's planes) have hundreds of both. On the first
``SingleSeat-v0`` step this was about 9 of 57 CPU seconds at load (docs/engine.md, "Cold start:
compiling once, and where the cache lives").

:func:`install_fast_inlining` makes the blocks of one copy share one copy of their scope (the
state Numba's own code expects: ``inline_ir`` asserts a single callee scope and renames its
variables in it; the blocks then get the caller's scope). The inlined IR, hence the machine code
and every game, is unchanged; only the copying is cheaper. Numba versions whose inliner does not
look as expected are left alone, and ``FZMJ_FAST_INLINE=0`` leaves Numba as it is.
"""

from __future__ import annotations

import copy
import os
import threading

__all__ = ["install_fast_inlining"]

_local = threading.local()


class _ScopeSharingCopy:
    """Stands in for the ``copy`` module inside Numba's inliner (see the module docstring)."""

    def __getattr__(self, name):
        return getattr(copy, name)

    @staticmethod
    def deepcopy(x, memo=None):
        from numba.core import ir

        scopes = getattr(_local, "scopes", None)
        if memo is None and scopes is not None and isinstance(x, ir.Block):
            scope = x.scope
            if id(scope) not in scopes:  # the original is kept too, so its id is not reused
                scopes[id(scope)] = (scope, copy.deepcopy(scope))
            memo = {id(scope): scopes[id(scope)][1]}
        return copy.deepcopy(x, memo)


def install_fast_inlining() -> bool:
    """Patch Numba's inliner (once per process); False where this Numba does not match, or
    ``FZMJ_FAST_INLINE=0``."""
    if os.environ.get("FZMJ_FAST_INLINE", "1") == "0":
        return False
    try:
        from numba.core import inline_closurecall as icc
    except ImportError:  # pragma: no cover - a Numba without the module
        return False
    worker = getattr(icc, "InlineWorker", None)
    if isinstance(getattr(icc, "copy", None), _ScopeSharingCopy):
        return True
    if getattr(icc, "copy", None) is not copy or worker is None or not hasattr(worker, "inline_ir"):
        return False
    inline_ir = worker.inline_ir

    def inline_ir_sharing_scope(self, *args, **kwargs):
        outer = getattr(_local, "scopes", None)
        _local.scopes = {}  # one inline_ir call: its two copies each share their own scope copy
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            _local.scopes = outer

    worker.inline_ir = inline_ir_sharing_scope
    icc.copy = _ScopeSharingCopy()
    return True
