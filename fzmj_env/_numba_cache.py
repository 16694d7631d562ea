"""Keep Numba's on-disk cache consistent with the sources.

Numba keys a cached kernel on its own file only: when a function it calls lives in another file
and changes, the stale machine code is loaded anyway (a documented limitation, numba issue
#1833). Here that would mean, after ``git pull`` on an editable install, a cached batch kernel in
``vector.py`` running an old ``engine.py``: wrong games, or a crash if the state layout changed.

So each package with cached kernels calls :func:`clear_stale_cache` when it is imported (before
any kernel loads), naming its own folder and the folders of the packages its kernels call; if
the fingerprint of those sources differs from the one stored with the cache, the package's Numba
cache files (``__pycache__/*.nbi``, ``*.nbc``) are deleted and its kernels recompile once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_STAMP_NAME = "numba_sources.sha256"


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def source_fingerprint(folders: list[Path]) -> str:
    """One hash over every ``.py`` file under ``folders`` (names relative to each folder)."""
    h = hashlib.sha256()
    for folder in folders:
        for p in _sources(folder):
            h.update(f"{folder.name}/{p.relative_to(folder)}".encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def clear_stale_cache(package_dir: str | Path, depends_on: tuple[str | Path, ...] = ()) -> bool:
    """Delete ``package_dir``'s Numba cache files if its sources, or those of ``depends_on`` (the
    packages its kernels call), changed since the cache was written; True if deleted. Silently
    does nothing where the package directory is read-only."""
    package_dir = Path(package_dir)
    stamp = package_dir / "__pycache__" / _STAMP_NAME
    fingerprint = source_fingerprint([package_dir, *map(Path, depends_on)])
    try:
        if stamp.read_text() == fingerprint:
            return False
    except OSError:
        pass
    try:
        for cache_dir in package_dir.rglob("__pycache__"):
            for f in cache_dir.iterdir():
                if f.suffix in (".nbi", ".nbc"):
                    f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(fingerprint)
        tmp.replace(stamp)
    except OSError:
        return False
    return True
