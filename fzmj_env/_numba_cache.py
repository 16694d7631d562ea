"""Keep Numba's on-disk cache consistent with the sources.

Numba keys a cached kernel on its own file only: when a function it calls lives in another file
and changes, the stale machine code is loaded anyway (a documented limitation, numba issue
#1833). Here that would mean, after ``git pull`` on an editable install, a cached batch kernel in
``vector.py`` running an old ``engine.py``: wrong games, or a crash if the state layout changed.

So at import (before any kernel loads) we fingerprint the sources of every package with cached
kernels; if the fingerprint differs from the one stored with the cache, the packages' Numba
cache files (``__pycache__/*.nbi``, ``*.nbc``) are deleted and the kernels recompile once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("fzmj_env", "agents", "train")  # every package with @njit(cache=True) kernels
_STAMP = Path(__file__).resolve().parent / "__pycache__" / "numba_sources.sha256"
_NO_KERNELS = (_ROOT / "fzmj_env" / "web",)  # the pages (issue 15): no kernel, no reason to recompile


def _sources() -> list[Path]:
    files: list[Path] = []
    for pkg in _PACKAGES:
        d = _ROOT / pkg
        if d.is_dir():
            files += sorted(
                p
                for p in d.rglob("*.py")
                if "__pycache__" not in p.parts and not any(p.is_relative_to(x) for x in _NO_KERNELS)
            )
    return files


def source_fingerprint() -> str:
    h = hashlib.sha256()
    for p in _sources():
        h.update(str(p.relative_to(_ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def clear_stale_cache() -> bool:
    """Delete our Numba cache files if the sources changed since they were written; True if deleted.
    Silently does nothing where the package directory is read-only."""
    fingerprint = source_fingerprint()
    try:
        if _STAMP.read_text() == fingerprint:
            return False
    except OSError:
        pass
    try:
        for pkg in _PACKAGES:
            for cache_dir in (_ROOT / pkg).rglob("__pycache__"):
                for f in cache_dir.iterdir():
                    if f.suffix in (".nbi", ".nbc"):
                        f.unlink(missing_ok=True)
        _STAMP.parent.mkdir(exist_ok=True)
        tmp = _STAMP.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(fingerprint)
        tmp.replace(_STAMP)
    except OSError:
        return False
    return True
