"""Output files of the web tools: checked before any work starts, written atomically.

A path is refused (one line, ``ValueError``) when it is a directory or another non-regular
file (``/dev/full``), when its folder is missing or not writable, when it is one of the
inputs, or when it already exists and ``force`` is not given. The write is
``fzmj_env.atomic.write_atomic``: a full disk leaves the old file intact.
"""

from __future__ import annotations

import os
from pathlib import Path

from fzmj_env.atomic import write_atomic  # noqa: F401 - the pages' writer (one for every command)


def check_out_path(path: str | Path, force: bool = False, inputs: tuple = (), what: str = "output") -> Path:
    """``path`` as a Path, or ``ValueError`` naming why nothing may be written there."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{what} {str(p)!r} is a directory, expected a file name")
    for src in inputs:
        same = os.path.samefile(p, src) if p.exists() and Path(src).exists() else p.resolve() == Path(src).resolve()
        if same:
            raise ValueError(f"{what} {str(p)!r} is the input file; give another name")
    if p.exists() or p.is_symlink():
        if not p.is_file():
            raise ValueError(f"{what} {str(p)!r} is not a regular file")
        if not force:
            raise ValueError(f"{what} {str(p)!r} already exists (add --force to overwrite it)")
    parent = p.parent
    if not parent.is_dir():
        raise ValueError(f"{what}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{what}: directory {str(parent)!r} is not writable")
    return p
