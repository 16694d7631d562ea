"""``prefetch(arr, i, nbytes)``: ask the CPU to bring ``arr[i]`` and the ``nbytes`` after it into cache
(``prefetch_write``: for writing).

Why (issue 4): a batch of 1024 tables (1.9 KB of state and 2.6 KB of observation each) does not
fit in L2, and each table's step reads scattered parts of its record (hands, discards, melds),
so the hardware prefetcher misses them and the encoder waits on L3. The batch kernels prefetch
the next table's record while they work on the current one.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

CACHE_LINE = 64


def _prefetch_codegen(write):
    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, value=args[0])
        intp = context.get_value_type(types.intp)
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        # arr[i] is the first element of row i (of a 2-D or 3-D array: arr[i, 0, 0])
        start = cgutils.get_item_pointer(context, builder, aryty, ary, [index] + [intp(0)] * (aryty.ndim - 1))
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        base = builder.bitcast(start, i8p)
        n = context.cast(builder, args[2], signature.args[2], types.intp)
        with cgutils.for_range_slice(builder, intp(0), n, intp(CACHE_LINE)) as (offset, _):
            # (address, read 0 / write 1, keep in all cache levels, data cache)
            builder.call(fn, [builder.gep(base, [offset]), i32(int(write)), i32(3), i32(1)])
        return context.get_dummy_value()

    return codegen


def _typer(arr, index, nbytes):
    if not isinstance(arr, types.Array) or not isinstance(index, types.Integer) or not isinstance(nbytes, types.Integer):
        return None
    return types.void(arr, index, nbytes)


@intrinsic
def prefetch(typingctx, arr, index, nbytes):
    sig = _typer(arr, index, nbytes)
    return (sig, _prefetch_codegen(False)) if sig is not None else None


@intrinsic
def prefetch_write(typingctx, arr, index, nbytes):
    sig = _typer(arr, index, nbytes)
    return (sig, _prefetch_codegen(True)) if sig is not None else None
