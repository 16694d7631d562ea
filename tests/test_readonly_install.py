"""A read-only install with no writable Numba cache folder (issue 58): the package folder's
``__pycache__`` cannot be made, HOME and ``NUMBA_CACHE_DIR`` cannot be written. ``import fzmj_env``
used to fail with Numba's ``cannot cache function ...: no locator available``; now it plays,
compiling in the process, with one line saying how to make it fast."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba

from fzmj_env import _numba_cache

ROOT = Path(__file__).resolve().parent.parent


def _read_only_copy(dest: Path) -> Path:
    """A copy of fzmj_env where no folder can hold a ``__pycache__`` (a file of that name is in the
    way: root writes into read-only folders, so a mode would not do)."""
    shutil.copytree(ROOT / "fzmj_env", dest / "fzmj_env", ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    for d in [dest / "fzmj_env", *(p for p in (dest / "fzmj_env").rglob("*") if p.is_dir())]:
        (d / "__pycache__").write_bytes(b"")
    return dest


def test_import_and_play_with_no_writable_cache_folder(tmp_path):
    src = _read_only_copy(tmp_path / "site")
    nowhere = "/proc/no-such-folder"
    env = {
        **os.environ, "PYTHONPATH": str(src), "HOME": nowhere, "XDG_CACHE_HOME": nowhere,
        "NUMBA_CACHE_DIR": nowhere, "PYTHONDONTWRITEBYTECODE": "1", "FZMJ_COMPILE_NOTICE": "0",
    }  # fmt: skip
    code = "import fzmj_env as F; print(F.__file__); print(F.is_win('123m456p789s111m55s', gold='5s'))"
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(src / "fzmj_env" / "__init__.py"), "True"]
    assert r.stderr.strip().splitlines() == [_numba_cache.no_cache_line()]


def test_a_kernel_with_no_cache_folder_at_all_compiles_in_memory(capsys):
    namespace = {"__name__": "fzmj_env.nowhere"}  # one of ours, defined in no file Numba can find
    exec(compile("def f(x):\n    return x + 1\n", "<no file>", "exec"), namespace)
    _numba_cache._fallback["said"] = False
    kernel = numba.njit(cache=True)(namespace["f"])
    assert kernel(41) == 42
    assert capsys.readouterr().err.strip() == _numba_cache.no_cache_line()
