"""Suite-wide settings.

The compile notice (``fzmj_env/_numba_cache.py``) is one line on stderr the first time a process
compiles one of our kernels. Which test process compiles first depends on the order the tests
run in (``pytest -n auto`` spreads them over workers), so tests that count stderr lines would
depend on it: the suite turns the notice off. ``tests/test_warmup.py`` checks the notice itself,
in processes that turn it back on.
"""

import os

os.environ.setdefault("FZMJ_COMPILE_NOTICE", "0")
