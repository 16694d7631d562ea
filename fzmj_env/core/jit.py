"""``njit`` for the rules engine's kernels: one compiled version per kernel, not one per call site.

When a Numba kernel calls another, the callee is compiled for the exact argument types of that
call site, and a constant argument is typed as its literal value: ``finish_win(tb, wt, s,
WT_DISCARD, d)`` and ``finish_win(tb, wt, s, WT_ROB_GOLD, -1)`` are two specializations, and
an ``int32`` read from the state's ``m`` array against an ``int64`` loop index is another. Each
specialization compiles (and links in) the whole scoring code again: before this module the
first step of the Gymnasium env compiled 143 kernel versions, 53 of them such duplicates.

Kernels made with this ``njit`` widen, for calls from other kernels, every signed integer
argument (literal or not) to ``int64`` and every literal boolean to ``bool``; the call site
casts its values to those types. The kernel then compiles once. Values are unchanged (all our
integers fit in ``int64``, and Numba computes small signed integers in ``int64`` anyway), so
games are bit-identical. Calls from Python are typed as before (a Python ``int`` is ``int64``).

Each separately compiled kernel is optimised and turned into machine code with every kernel it
calls linked in, so a deep call chain pays for its callees again at every level. The engine's
kernels that have a single caller (``resolve_claims``, ``discard``, ``score_win``, ...) are
therefore ``inline="always"``: their code becomes part of their caller's and they are not
compiled on their own (about 15% less compile time on a cold cache).
"""

from __future__ import annotations

from numba import njit as _numba_njit
from numba import types
from numba.core.registry import CPUDispatcher

__all__ = ["njit"]


def _widen(t):
    if isinstance(t, types.BooleanLiteral):
        return types.boolean
    if isinstance(t, types.IntegerLiteral):
        return types.int64 if -(2**63) <= t.literal_value < 2**63 else t
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


class _WideningDispatcher(CPUDispatcher):
    """A CPU dispatcher whose calls from other kernels use widened argument types (see above)."""

    def get_call_template(self, args, kws):
        args = tuple(_widen(a) for a in args)
        kws = {k: _widen(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def njit(*args, **kws):
    """``numba.njit`` (same arguments) making a dispatcher that compiles once per widened signature."""
    if args and callable(args[0]) and not kws:
        return _widening(_numba_njit(args[0]))
    dec = _numba_njit(*args, **kws)
    return lambda func: _widening(dec(func))


def _widening(disp):
    # Same layout as CPUDispatcher (no new slots): swapping the class keeps every attribute.
    if type(disp) is CPUDispatcher:
        disp.__class__ = _WideningDispatcher
    return disp
