"""Keep Numba's on-disk cache consistent with the sources, and say when the kernels compile.

Numba keys a cached kernel on its own file only: when a function it calls lives in another file
and changes, the stale machine code is loaded anyway (a documented limitation, numba issue
#1833). Here that would mean, after ``git pull`` on an editable install, a cached batch kernel in
``vector.py`` running an old ``engine.py``: wrong games, or a crash if the state layout changed.

So each package with cached kernels calls :func:`clear_stale_cache` when it is imported (before
any kernel loads), naming its own folder and the folders of the packages its kernels call; if
the fingerprint of those sources differs from the one stored with the cache, the package's Numba
cache files (``*.nbi``, ``*.nbc``) are deleted and its kernels recompile once.

Where the cache lives is Numba's choice, made here the same way Numba makes it (its own cache
locators): ``$NUMBA_CACHE_DIR`` when set (one folder per source folder inside it), else the
``__pycache__`` folders of the installed package when writable, else Numba's user-wide cache
(``~/.cache/numba``). Every process of one install (Ray workers, torchrun ranks, a vector env's
subprocesses) therefore shares one cache; point ``NUMBA_CACHE_DIR`` at a shared folder to share
it further (a read-only install, a container image built with ``fzmj-warmup``). The guard checks
the folders Numba will use in this process, with the fingerprint stored next to the cache files.
"""

from __future__ import annotations

import hashlib
import os
import sys
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


def numba_cache_dirs(package_dir: str | Path) -> list[Path]:
    """The folders where Numba, in this process, keeps the cache files of the kernels defined
    under ``package_dir`` (one per source folder), found by Numba's own cache locators."""
    from numba.core.caching import CompileResultCacheImpl

    out = []
    for folder in sorted({p.parent for p in _sources(Path(package_dir))}):
        probe = next(iter(sorted(folder.glob("*.py"))))
        # a function "defined" in that folder: Numba locates its cache as for our kernels
        namespace: dict = {}
        exec(compile("def _probe():\n    pass\n", str(probe), "exec"), namespace)
        try:
            locator = CompileResultCacheImpl(namespace["_probe"])._locator
        except RuntimeError:  # no usable location (nothing writable): Numba caches nothing there
            continue
        out.append(Path(locator.get_cache_path()))
    return out


def clear_stale_cache(package_dir: str | Path, depends_on: tuple[str | Path, ...] = ()) -> bool:
    """Delete ``package_dir``'s Numba cache files if its sources, or those of ``depends_on`` (the
    packages its kernels call), changed since the cache was written; True if deleted. Silently
    leaves a cache folder it cannot write as it is."""
    package_dir = Path(package_dir)
    fingerprint = source_fingerprint([package_dir, *map(Path, depends_on)])
    cleared = False
    for cache_dir in numba_cache_dirs(package_dir):
        stamp = cache_dir / _STAMP_NAME
        try:
            if stamp.read_text() == fingerprint:
                continue
        except OSError:
            pass
        try:
            for f in cache_dir.iterdir():
                if f.suffix in (".nbi", ".nbc"):
                    f.unlink(missing_ok=True)
            cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(fingerprint)
            tmp.replace(stamp)
        except OSError:
            continue
        cleared = True
    return cleared


# ---- the compile notice ------------------------------------------------------------------------
_PACKAGES = ("fzmj_env", "fzmj.")
_notice = {"shown": False}


def compile_notice_line() -> str:
    return (
        "fzmj: compiling the rules engine (first run with this Numba cache, about 20-60 s; "
        "cached for later runs; `fzmj-warmup` does it ahead)..."
    )


def install_compile_notice() -> None:
    """Print :func:`compile_notice_line` on stderr, once per process, when one of our kernels
    actually compiles (a kernel loaded from the cache prints nothing). ``FZMJ_COMPILE_NOTICE=0``
    silences it."""
    if os.environ.get("FZMJ_COMPILE_NOTICE", "1") == "0":
        return
    from numba.core import event

    class _Notice(event.Listener):
        def on_start(self, ev):
            if _notice["shown"]:
                return
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            if (getattr(func, "__module__", "") or "").startswith(_PACKAGES):
                _notice["shown"] = True
                print(compile_notice_line(), file=sys.stderr, flush=True)

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Notice())
