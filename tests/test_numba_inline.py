"""fzmj_env/_numba_inline.py: Numba's inliner copies a callee's scope once (docs/engine.md, "Cold
start: compiling once, and where the cache lives"); the inlined code computes the same."""

from __future__ import annotations

import os
import subprocess
import sys

from numba import njit
from numba.core import inline_closurecall as icc

import fzmj_env  # noqa: F401  (installs the patch)
from fzmj_env._numba_inline import _ScopeSharingCopy, install_fast_inlining


def test_installed_once_with_this_numba():
    assert install_fast_inlining()
    assert isinstance(icc.copy, _ScopeSharingCopy)
    assert icc.InlineWorker.inline_ir.__name__ == "inline_ir_sharing_scope"
    assert install_fast_inlining()  # a second call changes nothing
    assert icc.InlineWorker.inline_ir.__closure__[0].cell_contents.__name__ == "inline_ir"


@njit(inline="always")
def _branchy(a, b):
    s = 0
    for i in range(a):
        if i % 3 == 0:
            s += b
        elif i % 3 == 1:
            s -= i
        else:
            s *= 2
    return s


@njit
def _calls_twice(n):
    t = 0
    for k in range(n):
        t += _branchy(k, 3) - _branchy(n - k, 1)
    return t


def test_inlined_kernel_computes_the_same():
    assert _calls_twice(12) == _calls_twice.py_func(12)


def test_switched_off_by_the_environment():
    code = "import copy, fzmj_env; from numba.core import inline_closurecall as icc; print(icc.copy is copy)"
    env = dict(os.environ, FZMJ_FAST_INLINE="0", FZMJ_COMPILE_NOTICE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
