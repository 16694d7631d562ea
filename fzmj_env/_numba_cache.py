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
import time
from pathlib import Path

_STAMP_NAME = "numba_sources.sha256"


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


# folder -> (its files' names, sizes and modification times, the folder's digest). Each package's
# guard names the packages below it, so without this memo ``import fzmj.train`` hashed fzmj_env
# three times. A file edited later in the process changes its size or time and the folder is hashed
# again; a file modified less than _RACY_NS before the hash could change again within the clock's
# granularity without a new time (git's "racy" files), so such a folder is not memoised.
_digests: dict[Path, tuple[tuple, str]] = {}
_RACY_NS = 2_000_000_000
hash_counts: dict[Path, int] = {}
"""How many times each folder's sources were read and hashed in this process (for tests)."""


def _folder_digest(folder: Path) -> str:
    folder = folder.resolve()
    files = _sources(folder)
    stats = [p.stat() for p in files]
    key = tuple((str(p.relative_to(folder)), st.st_size, st.st_mtime_ns) for p, st in zip(files, stats, strict=True))
    memo = _digests.get(folder)
    if memo is not None and memo[0] == key:
        return memo[1]
    h = hashlib.sha256()
    for p in files:
        h.update(f"{folder.name}/{p.relative_to(folder)}".encode())
        h.update(p.read_bytes())
    digest = h.hexdigest()
    hash_counts[folder] = hash_counts.get(folder, 0) + 1
    if all(st.st_mtime_ns < time.time_ns() - _RACY_NS for st in stats):
        _digests[folder] = (key, digest)
    else:
        _digests.pop(folder, None)
    return digest


def source_fingerprint(folders: list[Path]) -> str:
    """One hash over every ``.py`` file under ``folders`` (names relative to each folder); each
    folder is read and hashed once per process unless one of its files changes."""
    h = hashlib.sha256()
    for folder in folders:
        h.update(_folder_digest(Path(folder)).encode())
    return h.hexdigest()


def numba_cache_dirs(package_dir: str | Path) -> list[Path]:
    """The folders where Numba, in this process, keeps the cache files of the kernels defined
    under ``package_dir`` (one per source folder), found by Numba's own cache locators."""
    found = (numba_cache_dir(folder) for folder in sorted({p.parent for p in _sources(Path(package_dir))}))
    return [d for d in found if d is not None]


def numba_cache_dir(folder: str | Path) -> Path | None:
    """Where Numba keeps the cache of kernels defined in ``folder``'s modules (None: nowhere
    writable, so it caches nothing)."""
    from numba.core.caching import CompileResultCacheImpl

    probe = next(iter(sorted(Path(folder).glob("*.py"))))
    # a function "defined" in that folder: Numba locates its cache as for our kernels
    namespace: dict = {}
    exec(compile("def _probe():\n    pass\n", str(probe), "exec"), namespace)
    try:
        locator = CompileResultCacheImpl(namespace["_probe"])._locator
    except RuntimeError:  # no usable location (nothing writable): Numba caches nothing there
        return None
    return Path(locator.get_cache_path())


package_fingerprints: dict[Path, str] = {}
"""Each package whose guard ran in this process (its folder, resolved) -> the fingerprint of its
sources and those of the packages below it (``_shipped_kernels.py`` checks shipped kernels by it)."""


def clear_stale_cache(package_dir: str | Path, depends_on: tuple[str | Path, ...] = ()) -> bool:
    """Delete ``package_dir``'s Numba cache files if its sources, or those of ``depends_on`` (the
    packages its kernels call), changed since the cache was written; True if deleted. Silently
    leaves a cache folder it cannot write as it is."""
    package_dir = Path(package_dir)
    fingerprint = source_fingerprint([package_dir, *map(Path, depends_on)])
    package_fingerprints[package_dir.resolve()] = fingerprint
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


# ---- no writable cache folder ------------------------------------------------------------------
_fallback = {"installed": False, "dir": None, "said": False}


def no_cache_line() -> str:
    return (
        "fzmj: no writable Numba cache folder (a read-only install?): the rules engine compiles in every "
        "process; set NUMBA_CACHE_DIR to a writable folder to keep it between runs"
    )


def _say_no_cache() -> None:
    if not _fallback["said"]:
        _fallback["said"] = True
        print(no_cache_line(), file=sys.stderr, flush=True)


def _process_cache_root() -> Path:
    """A folder of this process (its forked children share it), removed when the process exits."""
    if _fallback["dir"] is None:
        import atexit
        import shutil
        import tempfile

        _fallback["dir"] = Path(tempfile.mkdtemp(prefix="fzmj-numba-"))
        atexit.register(shutil.rmtree, _fallback["dir"], True)
    return _fallback["dir"]


def install_cache_fallback() -> None:
    """Where Numba finds no writable cache folder for one of our kernels (a read-only package folder
    and HOME, no ``NUMBA_CACHE_DIR``: a shared cluster install), ``cache=True`` made Numba raise
    ``RuntimeError: cannot cache function ...: no locator available`` when the module was imported.
    With this, such a kernel is cached in a temporary folder of the process (so the shipped kernels
    still load, and the rest compiles once per process), or, if not even that can be written, not
    cached at all; one stderr line says how to make it fast. Must run before any of our kernels is
    declared; once per process."""
    if _fallback["installed"]:
        return
    from numba.core import caching
    from numba.core.dispatcher import Dispatcher

    class _ProcessCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(_process_cache_root() / self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if not (getattr(py_func, "__module__", "") or "").startswith(_PACKAGES):
                return None
            try:
                _process_cache_root()
            except OSError:  # no temporary folder either: enable_caching below compiles in memory
                return None
            found = super().from_function(py_func, py_file)
            if found is not None:
                _say_no_cache()
            return found

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in Numba 0.61
    impl._locator_classes = [*impl._locator_classes, _ProcessCacheLocator]
    enable = Dispatcher.enable_caching

    def enable_caching(self):
        try:
            enable(self)
        except RuntimeError:  # no folder at all, not even a temporary one: compile in memory
            if not (getattr(self.py_func, "__module__", "") or "").startswith(_PACKAGES):
                raise
            _say_no_cache()

    Dispatcher.enable_caching = enable_caching
    _fallback["installed"] = True


# ---- a damaged cache file -----------------------------------------------------------------------
_PACKAGES = ("fzmj_env", "fzmj.")  # the modules whose kernels are ours
_repair = {"installed": False}


def _is_ours(cache) -> bool:
    return (getattr(getattr(cache, "_py_func", None), "__module__", "") or "").startswith(_PACKAGES)


def _drop_kernel_files(cache) -> list[str]:
    """Delete one kernel's index file and its data files; the names of those deleted."""
    cf = cache._cache_file
    index = Path(cf._index_path)
    stem = cf._index_name[: -len(".nbi")]
    gone = []
    for f in [index, *index.parent.glob(f"{stem}.*.nbc")]:
        try:
            f.unlink()
            gone.append(f.name)
        except FileNotFoundError:
            pass
    return gone


def install_cache_repair() -> None:
    """A cache file of one of our kernels that cannot be read back (a truncated ``.nbi`` or
    ``.nbc``: a full disk, a killed copy) made every command fail with a bare ``EOFError: Ran out
    of input`` from Numba's loader. With this, such a kernel's cache files are deleted, one line on
    stderr names them, and the kernel compiles and is cached again. Kernels of other packages are
    left to Numba as they are. Once per process."""
    if _repair["installed"]:
        return
    from numba.core.caching import Cache

    load = Cache.load_overload

    def load_overload(self, sig, target_context):
        try:
            return load(self, sig, target_context)
        except Exception as exc:  # unreadable: the cache is only a copy, so rebuild it
            if not _is_ours(self):
                raise
            gone = _drop_kernel_files(self)
            where = Path(self._cache_file._index_path).parent
            print(
                f"fzmj: the Numba cache of {self._py_func.__qualname__} could not be read "
                f"({type(exc).__name__}: {exc or 'damaged file'}); deleted {', '.join(gone) or 'nothing'} in "
                f"{where}, compiling it again",
                file=sys.stderr,
                flush=True,
            )
            return None

    Cache.load_overload = load_overload
    _repair["installed"] = True


# ---- the compile notice ------------------------------------------------------------------------
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
