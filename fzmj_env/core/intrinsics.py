"""Four small Numba intrinsics for the batch kernels' hot loops. Each is a few lines
of LLVM IR; each is there because a measurement showed the plain Numba code paying for it.

* ``borrow(a)``: a view of array ``a`` that the Numba runtime does not reference-count. Every
  array a jitted helper receives or slices is otherwise counted with an atomic increment and
  decrement: dozens of atomics per table and step (each helper taking ``wt``, ``out`` or
  ``mask``), about a quarter of a step. The batch kernels own their arrays for the whole call,
  so they borrow them once at the top. Never return a borrowed array or keep it past the call.
* ``prefetch(a, i, nbytes)``: ask the CPU to load ``a[i]`` and the ``nbytes`` after it into
  cache. A table's step reads scattered parts of its record; the kernels prefetch the next
  table's record while they work on the current one.
* ``load8(a, offset)`` / ``store8(a, offset, value)``: the 8 bytes of a C-contiguous int8
  array at flat byte ``offset`` as one little-endian uint64 (unaligned). The encoder builds
  eight binary observation columns per store with them (``encode.py``, ``_thresholds``).
  No bounds check: callers keep ``offset + 8 <= a.size``.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

CACHE_LINE = 64
_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_I8P = ir.IntType(8).as_pointer()


@intrinsic
def borrow(typingctx, arr):
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(arr)(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    return arr(arr), codegen


@intrinsic
def prefetch(typingctx, arr, index, nbytes):
    if not (isinstance(arr, types.Array) and isinstance(index, types.Integer) and isinstance(nbytes, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, value=args[0])
        intp = context.get_value_type(types.intp)
        i = context.cast(builder, args[1], signature.args[1], types.intp)
        # a[i] is the first element of row i (of a 2-D or 3-D array: a[i, 0, 0])
        start = cgutils.get_item_pointer(context, builder, aryty, ary, [i] + [intp(0)] * (aryty.ndim - 1))
        base = builder.bitcast(start, _I8P)
        n = context.cast(builder, args[2], signature.args[2], types.intp)
        # llvmlite mangles the name for the pointer kind in use (llvm.prefetch.p0 or .p0i8)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [_I8P], ir.FunctionType(ir.VoidType(), [_I8P, _I32, _I32, _I32])
        )
        with cgutils.for_range_slice(builder, intp(0), n, intp(CACHE_LINE)) as (offset, _):
            # (address, read, keep in all cache levels, data cache)
            builder.call(fn, [builder.gep(base, [offset]), _I32(0), _I32(3), _I32(1)])
        return context.get_dummy_value()

    return types.void(arr, index, nbytes), codegen


def _bytes_array(arr) -> bool:
    return isinstance(arr, types.Array) and arr.dtype in (types.int8, types.uint8) and arr.layout == "C"


def _word_pointer(context, builder, aryty, array, offset_type, offset):
    ary = context.make_array(aryty)(context, builder, value=array)
    off = context.cast(builder, offset, offset_type, types.intp)
    return builder.bitcast(builder.gep(builder.bitcast(ary.data, _I8P), [off]), _I64.as_pointer())


@intrinsic
def load8(typingctx, arr, offset):
    if not (_bytes_array(arr) and isinstance(offset, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        ptr = _word_pointer(context, builder, signature.args[0], args[0], signature.args[1], args[1])
        return builder.load(ptr, align=1)

    return types.uint64(arr, offset), codegen


@intrinsic
def store8(typingctx, arr, offset, value):
    if not (_bytes_array(arr) and isinstance(offset, types.Integer) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        ptr = _word_pointer(context, builder, signature.args[0], args[0], signature.args[1], args[1])
        v = context.cast(builder, args[2], signature.args[2], types.uint64)
        builder.store(v, ptr, align=1)
        return context.get_dummy_value()

    return types.void(arr, offset, value), codegen
