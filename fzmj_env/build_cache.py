"""``python -m fzmj_env.build_cache``: compile the kernels for a generic x86-64 into the package.

Run it in the source tree before building the wheel:

    python -m fzmj_env.build_cache && python -m build --wheel     # or: pip wheel --no-deps .

It runs ``fzmj-warmup --all`` in a child process with ``NUMBA_CPU_NAME=generic`` and an empty
``NUMBA_CACHE_DIR``, then copies the cache files into each package's ``_kernels/`` folder
(package data, git-ignored; ``fzmj_env/_shipped_kernels.py`` says how they are found at run time).
A separate command, not a setuptools hook: the build must run our code with Numba, NumPy,
Gymnasium and PettingZoo imported, which an isolated build environment does not have.

Exit codes: 0 done, 1 the warm-up failed, 2 bad arguments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ._shipped_kernels import SHIPPED_DIR
from .cli import OneLineParser

_ROOT = Path(__file__).resolve().parent.parent


def _child(root: str) -> int:
    """In the generic child: warm everything, check the imports came from ``root``, export."""
    import numba

    from . import _shipped_kernels, warmup

    if numba.config.CPU_NAME != "generic":
        print("build_cache: error: NUMBA_CPU_NAME is not 'generic' in the child", file=sys.stderr)
        return 1
    rc = warmup.main(["--all"])
    if rc:
        return rc
    outside = [p for p in _shipped_kernels._numba_cache.package_fingerprints if Path(root) not in p.parents]
    if outside:
        print(f"build_cache: error: {outside[0]} is not in the tree {root} (another install first on the path?)")
        return 1
    _shipped_kernels.export_shipped(out=sys.stdout)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m fzmj_env.build_cache",
        description="Compile every kernel `fzmj-warmup --all` compiles for a generic x86-64 CPU and put the "
        "cache files into the packages' _kernels/ folders (run before building the wheel).",
    )
    parser.parse_args(argv)
    for old in [*_ROOT.glob(f"fzmj_env/**/{SHIPPED_DIR}"), *_ROOT.glob(f"fzmj/**/{SHIPPED_DIR}")]:
        shutil.rmtree(old)
    with tempfile.TemporaryDirectory(prefix="fzmj-build-cache-") as tmp:
        env = {**os.environ, "NUMBA_CPU_NAME": "generic", "NUMBA_CACHE_DIR": tmp, "FZMJ_SHIPPED_KERNELS": "0"}
        env.pop("NUMBA_CPU_FEATURES", None)  # generic implies none
        code = "import sys; from fzmj_env.build_cache import _child; sys.exit(_child(sys.argv[1]))"
        rc = subprocess.call([sys.executable, "-c", code, str(_ROOT)], env=env, cwd=_ROOT)
    if rc:
        print(f"build_cache: error: the generic warm-up failed (exit code {rc})", file=sys.stderr)
        return 1
    print(f"build_cache: shipped kernels written under {_ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
