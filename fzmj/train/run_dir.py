"""Run folders of the trainer: plain names, no silent overwrite, one writer at a time.

* A run name is a plain name (letters, digits, ``._-+=@``; no path separator, not ``.``/``..``):
  ``run_name=../../x`` or an absolute path cannot send files outside ``runs_dir``.
* A fresh run into a folder that already holds a run (checkpoints or TensorBoard events) is
  REFUSED unless the user asks to overwrite (``--overwrite`` / ``overwrite: true``); overwriting
  removes the old run's checkpoints, event files and warm-start dataset (``bc_dataset/``) first,
  so the two runs never mix. Nothing else in the folder is touched.
* ``--resume CKPT`` continues in the checkpoint's own run folder (the folder above
  ``checkpoints/``), whatever ``runs_dir``/``run_name`` the checkpoint file says.
* While a run writes to its folder it holds an exclusive lock on ``<run>/.lock`` (``flock``: the
  OS drops it when the process ends, even on SIGKILL, so no stale lock is ever left behind); a
  second run into the same folder is refused with the first one's pid.
* The folder is created and a file written in it before anything large is compiled or allocated:
  an unwritable output folder is reported at once.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks; runs are not locked there
    fcntl = None

LOCK_NAME = ".lock"
_PLAIN = re.compile(r"[\w.+=@-]+")
_RUN_FILES = ("events.out.tfevents.*",)
WARM_START_DATASET = "bc_dataset"  # the warm start's games as a dataset (bc_save_dataset, train/bc_record.py)


class RunDirError(ValueError):
    """A run folder that cannot be used as asked (one line saying why and what to do)."""


def check_run_name(name: str, key: str = "run_name") -> str:
    """``name`` if it is a plain file name (see the module docstring), else ``RunDirError``."""
    if (
        not isinstance(name, str)
        or not name
        or len(name) > 200
        or name in (".", "..")
        or name.startswith((".", "-"))
        or not _PLAIN.fullmatch(name)
    ):
        raise RunDirError(
            f"{key}: {name!r} is not a plain name (letters, digits and ._-+=@, not starting with . or -; no / or \\)"
        )
    return name


def holds_a_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` already holds a run's output (checkpoints or TensorBoard events)."""
    if not run_dir.is_dir():
        return False
    ckpts = run_dir / "checkpoints"
    if ckpts.is_dir() and any(ckpts.iterdir()):
        return True
    return any(any(run_dir.glob(pattern)) for pattern in _RUN_FILES)


def clear_run(run_dir: Path) -> None:
    """Remove a previous run's output from ``run_dir``: ``checkpoints/``, the event files and the
    warm start's dataset (``bc_dataset/``, train/bc_record.py) only."""
    shutil.rmtree(run_dir / "checkpoints", ignore_errors=True)
    shutil.rmtree(run_dir / WARM_START_DATASET, ignore_errors=True)
    for pattern in _RUN_FILES:
        for p in run_dir.glob(pattern):
            p.unlink(missing_ok=True)


def resume_run_dir(ckpt_path: str | os.PathLike) -> Path:
    """The run folder a checkpoint belongs to: the folder above ``checkpoints/`` (or the
    checkpoint's own folder when it is not in a ``checkpoints/`` folder)."""
    parent = Path(ckpt_path).resolve().parent
    return parent.parent if parent.name == "checkpoints" else parent


class RunLock:
    """An exclusive lock on ``<run_dir>/.lock`` for as long as this object lives (or ``release``)."""

    def __init__(self, run_dir: Path):
        self.path = run_dir / LOCK_NAME
        self._f = open(self.path, "a+")  # noqa: SIM115 - held open for the lock's life
        if fcntl is not None:
            try:
                fcntl.flock(self._f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._f.seek(0)
                pid = self._f.read().strip() or "?"
                self._f.close()
                raise RunDirError(
                    f"run folder {run_dir} is in use by another fzmj-train (pid {pid}); wait for it or pick another run_name"
                ) from None
        self._f.seek(0)
        self._f.truncate()
        self._f.write(f"{os.getpid()}\n")
        self._f.flush()

    def release(self) -> None:
        if not self._f.closed:
            self._f.close()  # closing the file drops the flock


def open_run_dir(run_dir: Path, *, resume: bool, overwrite: bool) -> RunLock:
    """Create (or reuse, on resume) ``run_dir``, lock it and check it is writable; returns the lock.

    Raises :class:`RunDirError` for a fresh run into a folder holding a run without
    ``overwrite``, a folder in use by another run, or a folder that cannot be written.
    """
    run_dir = Path(run_dir)
    try:
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        lock = RunLock(run_dir)  # also the write probe: it creates and writes a file in the folder
        probe = run_dir / "checkpoints" / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except RunDirError:
        raise
    except OSError as e:
        raise RunDirError(f"cannot write to run folder {run_dir}: {e.strerror or e}") from None
    if not resume and holds_a_run(run_dir):
        if not overwrite:
            lock.release()
            raise RunDirError(
                f"run folder {run_dir} already holds a run (checkpoints or TensorBoard events); "
                "pick another run_name, resume it with --resume, or pass --overwrite to replace it"
            )
        clear_run(run_dir)
        (run_dir / "checkpoints").mkdir(exist_ok=True)
    return lock
