"""The one way our commands write a file: whole or not at all (docs/reference.md, "Errors").

A full disk, a quota, a kill or a folder made read-only meanwhile must never leave a half-written
file under the final name, nor destroy the older file of that name. So every file a command writes
(game records, ``fzmj-eval --out``, league files and pages, replay and play pages, trainer
checkpoints, datasets) goes to a temporary file in the same folder, is flushed to the disk, and
then replaces the target with one rename. On failure the temporary file is removed and
:class:`WriteError` names the file; nothing under the final name changes.

The temporary name is ``.NAME.fzmj-PID-RANDOM.tmp``: a process killed between the write and the
rename leaves one, and :func:`remove_stale_temps` (called by the commands that write into a folder
again and again, e.g. the league's ``matches/``) deletes those whose process is gone.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

_TEMP = re.compile(r"^\..+\.fzmj-(\d+)-[A-Za-z0-9_]+\.tmp$")


class WriteError(OSError):
    """A file could not be written; its message is one line naming the file and the cause."""

    def __str__(self) -> str:
        return str(self.strerror)


def write_atomic(path: str | os.PathLike, data, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` whole or not at all; returns the path. ``data``: text (written as
    ``encoding``), bytes, or a function that writes into the binary file it is given (``torch.save``,
    ``np.savez``: streamed, never held twice in memory). On failure :class:`WriteError` (naming
    ``path``), the temporary file removed and any old file at ``path`` untouched."""
    p = Path(path)
    raw = data.encode(encoding) if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.fzmj-{os.getpid()}-", suffix=".tmp", dir=p.parent or ".")
        with os.fdopen(fd, "wb") as f:
            raw(f) if callable(raw) else f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; the result is an ordinary file
        os.replace(tmp, p)
        tmp = None
    except OSError as e:
        raise WriteError(e.errno, f"cannot write {p}: {e.strerror or e}; nothing was written under that name") from e
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return p


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


def remove_stale_temps(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files :func:`write_atomic` left in ``folder`` (not recursive) whose
    writing process no longer runs; the paths deleted. Files it cannot delete are left."""
    gone = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return gone
    for f in entries:
        m = _TEMP.match(f.name)
        if m and not _alive(int(m.group(1))):
            try:
                f.unlink()
                gone.append(f)
            except OSError:
                pass
    return gone


def save_figure_atomic(fig, path: str | os.PathLike, **savefig_kw) -> Path:
    """A matplotlib figure saved to ``path`` whole or not at all (in the format of the path's
    suffix, through :func:`write_atomic`)."""
    kind = Path(path).suffix.lstrip(".").lower() or None
    return write_atomic(path, lambda f: fig.savefig(f, format=kind, **savefig_kw))
