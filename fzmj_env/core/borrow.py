"""``borrow(a)``: a view of array ``a`` that the Numba runtime does not reference-count.

Why (issue 4): every array a jitted function receives or slices is reference-counted with an
atomic increment and decrement. In the batch kernels that is dozens of atomic operations per
table and step (each call of a helper that takes ``wt``, ``out`` or ``mask``), about a quarter
of the step's time. The batch kernels hold their arrays for the whole call, so they borrow them
once at the top: views of a borrowed array carry no runtime pointer, and the runtime skips them.

Never return a borrowed array to Python or keep it past the call that borrowed it.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic


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
