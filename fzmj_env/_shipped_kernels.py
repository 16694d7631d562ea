"""Kernels compiled when the wheel is built, loaded where this host's Numba cache has none.

``python -m fzmj_env.build_cache`` runs ``fzmj-warmup --all`` with ``NUMBA_CPU_NAME=generic`` (code
for any x86-64) into an empty ``NUMBA_CACHE_DIR`` and copies the cache files of each package whose
stale-cache guard ran (``fzmj_env``, ``fzmj/agents``, ...) into that package's ``_kernels/``
folder (package data, so the wheel carries them), with a ``manifest.json``: the fingerprint of the
package's sources and of those below it (the guard's, ``_numba_cache.source_fingerprint``), the
Numba and Python versions, and the code generator's ``magic_tuple`` (target triple, CPU name and
features) the code was built for, and the SHA-256 of every file shipped.

At run time :func:`install_shipped_kernels` wraps Numba's ``Cache.load_overload``: when the host's
cache has no entry for a kernel defined under a guarded package, the shipped entry is looked up
with the generic ``magic_tuple`` in place of the host's and loaded. Nothing is set process-wide:
Numba code outside our packages, and our kernels that are not shipped, compile as always. The
shipped entry is used only where it is the code of these sources:

- the manifest's fingerprint equals this install's (so an edit anywhere in the package or the
  packages below it, e.g. an editable install after ``git pull``, turns the shipped kernels off),
  its Numba and Python versions and target triple are this process's;
- each of the kernel's shipped files (its index and data files) has the SHA-256 the manifest
  recorded when they were built: a file replaced by another kernel's, or edited, is skipped with
  one stderr line and the kernel compiles (Numba's own checks do not see such a swap);
- Numba's own checks still apply: the index carries Numba's version and the kernel file's
  content hash, the key the function's bytecode.

A shipped file that cannot be read (truncated, damaged) is skipped with one stderr line and the
kernel compiles (the shipped files are left alone: the install may be read-only).
``FZMJ_SHIPPED_KERNELS=0`` turns the lookup off (the build itself runs so); ``fzmj-warmup --host``
compiles the kernels for this CPU into the host cache, which later processes look in first.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import sys
from pathlib import Path

from . import _numba_cache

SHIPPED_DIR = "_kernels"
MANIFEST = "manifest.json"
_state = {"installed": False, "off": False}
_manifests: dict[tuple[Path, str], dict | None] = {}  # (package, fingerprint) -> manifest if it applies
_bad: set[str] = set()  # shipped index files found damaged in this process
loaded: list[str] = []
"""The kernels (qualified names) loaded from a shipped cache in this process (for tests)."""


def _python_tag() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"


def _package_of(py_file: Path) -> Path | None:
    """The innermost guarded package folder that holds ``py_file``."""
    found = [pkg for pkg in _numba_cache.package_fingerprints if pkg in py_file.parents]
    return max(found, key=lambda p: len(p.parts), default=None)


def _read_manifest(pkg: Path, fingerprint: str, triple: str) -> dict | None:
    import numba

    path = pkg / SHIPPED_DIR / MANIFEST
    try:
        manifest = json.loads(path.read_text())
        applies = (
            manifest["fingerprint"] == fingerprint
            and manifest["numba"] == numba.__version__
            and manifest["python"] == _python_tag()
            and manifest["magic"][0] == triple
            and isinstance(manifest["files"], dict)  # each file's SHA-256: a manifest without them is not used
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        print(f"fzmj: the shipped kernels' {path} could not be read ({type(exc).__name__}); not used", file=sys.stderr)
        return None
    return manifest if applies else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _changed_file(pkg: Path, folder: Path, base: str, manifest: dict) -> str | None:
    """The name of the first of one kernel's shipped files (its index ``BASE.nbi`` and data files
    ``BASE.N.nbc``) whose SHA-256 is not the one the manifest recorded when the wheel was built
    (a file the manifest does not list counts as changed); None when all are as built."""
    files = manifest.get("files", {})
    root = pkg / SHIPPED_DIR
    for f in sorted(folder.glob(f"{base}.*")):
        if files.get(f.relative_to(root).as_posix()) != _sha256(f):
            return f.name
    return None


def _skip(cache, shipped, folder: Path, why: str) -> None:
    """One stderr line: this kernel's shipped files are not used in this process (it compiles)."""
    _bad.add(shipped._index_path)
    print(
        f"fzmj: the shipped kernel {cache._py_func.__qualname__} in {folder} {why}; compiling it",
        file=sys.stderr,
        flush=True,
    )


def _load_shipped(cache, sig, target_context):
    """The shipped compile result of ``cache``'s kernel for ``sig``, or None."""
    from numba.core.caching import IndexDataCacheFile

    py_file = Path(inspect.getfile(cache._py_func)).resolve()
    pkg = _package_of(py_file)
    if pkg is None:
        return None
    key = cache._index_key(sig, target_context.codegen())
    memo = (pkg, _numba_cache.package_fingerprints[pkg])
    if memo not in _manifests:
        _manifests[memo] = _read_manifest(pkg, memo[1], key[1][0])
    manifest = _manifests[memo]
    if manifest is None:
        return None
    folder = pkg / SHIPPED_DIR / py_file.parent.relative_to(pkg)
    shipped = IndexDataCacheFile(str(folder), cache._impl.filename_base, cache._cache_file._source_stamp)
    if shipped._index_path in _bad:
        return None
    changed = _changed_file(pkg, folder, cache._impl.filename_base, manifest)
    if changed is not None:  # not the file that was built (replaced, edited): compile instead
        return _skip(cache, shipped, folder, f"is not the file that was built ({changed}: its checksum differs "
                     "from the manifest's)")  # fmt: skip
    try:
        data = shipped.load((key[0], tuple(manifest["magic"]), key[2]))
        result = None if data is None else cache._impl.rebuild(target_context, data)
    except Exception as exc:  # a damaged shipped file: compile instead, leave the file alone
        return _skip(cache, shipped, folder, f"could not be read ({type(exc).__name__})")
    if result is not None:
        loaded.append(cache._py_func.__qualname__)
    return result


def has_cached_code(dispatcher) -> bool:
    """Whether ``dispatcher`` (one of our cached kernels) has code for this process without
    compiling: an entry for this CPU in the host cache, or (the lookup on) a shipped one."""
    from numba.core.caching import IndexDataCacheFile
    from numba.core.registry import cpu_target

    cache = dispatcher._cache
    magic = cpu_target.target_context.codegen().magic_tuple()
    if any(key[1] == magic for key in cache._cache_file._load_index()):
        return True
    if not _state["installed"] or _state["off"]:
        return False
    py_file = Path(inspect.getfile(cache._py_func)).resolve()
    pkg = _package_of(py_file)
    memo = (pkg, _numba_cache.package_fingerprints.get(pkg))
    if pkg is None or memo[1] is None:
        return False
    if memo not in _manifests:
        _manifests[memo] = _read_manifest(pkg, memo[1], magic[0])
    if _manifests[memo] is None:
        return False
    folder = pkg / SHIPPED_DIR / py_file.parent.relative_to(pkg)
    shipped = IndexDataCacheFile(str(folder), cache._impl.filename_base, cache._cache_file._source_stamp)
    return (
        bool(shipped._load_index()) and _changed_file(pkg, folder, cache._impl.filename_base, _manifests[memo]) is None
    )


def install_shipped_kernels() -> None:
    """Look our kernels up in the shipped cache when the host's has no entry (module docstring).
    Once per process; ``FZMJ_SHIPPED_KERNELS=0`` leaves Numba's cache as it is."""
    if _state["installed"] or os.environ.get("FZMJ_SHIPPED_KERNELS", "1") == "0":
        return
    from numba.core.caching import Cache

    load = Cache.load_overload

    def load_overload(self, sig, target_context):
        data = load(self, sig, target_context)
        if data is None and self._enabled and not _state["off"]:
            data = _load_shipped(self, sig, target_context)
        return data

    Cache.load_overload = load_overload
    _state["installed"] = True


def compile_for_this_cpu() -> None:
    """From now on in this process, our kernels missing from the host cache compile (for this CPU,
    saved in the host cache) instead of loading the shipped generic code: ``fzmj-warmup --host``.
    Later processes then find the host's entries first."""
    _state["off"] = True


def export_shipped(out=None) -> list[Path]:
    """Copy this process's Numba cache files of every guarded package into the package's
    ``_kernels/`` folder (replacing what was there) with its manifest; the manifests written."""
    import numba
    from numba.core.registry import cpu_target

    magic = list(cpu_target.target_context.codegen().magic_tuple())
    written = []
    for pkg, fingerprint in sorted(_numba_cache.package_fingerprints.items()):
        dest = pkg / SHIPPED_DIR
        shutil.rmtree(dest, ignore_errors=True)
        sums: dict[str, str] = {}  # each shipped file's SHA-256, checked before the file is loaded
        size = 0
        for folder in sorted({p.parent for p in _numba_cache._sources(pkg)}):
            cache_dir = _numba_cache.numba_cache_dir(folder)
            files = sorted(f for f in cache_dir.glob("*.nb[ic]")) if cache_dir else []
            for f in files:
                target = dest / folder.relative_to(pkg) / f.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target)
                sums[target.relative_to(dest).as_posix()] = _sha256(target)
                size += f.stat().st_size
        count = len(sums)
        if not count:
            continue
        manifest = {
            "fingerprint": fingerprint, "numba": numba.__version__, "python": _python_tag(), "magic": magic,
            "files": sums,
        }  # fmt: skip
        (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        written.append(dest / MANIFEST)
        if out is not None:
            print(f"  {dest}: {count} files, {size / 1e6:.1f} MB", file=out)
    return written
