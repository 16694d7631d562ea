"""A simulated full disk for the tests of the output files (issue 58): every file that
``fzmj_env.atomic.write_atomic`` opens whose name ``hits`` accepts takes 100 bytes, then its next
write raises ``OSError(ENOSPC)`` (as a real full disk does, after part of the data)."""

from __future__ import annotations

import errno
import os

import fzmj_env.atomic as atomic


class _FullFile:
    def __init__(self, f):
        self.f, self.room = f, 100

    def write(self, b) -> int:
        if len(b) > self.room:
            self.f.write(bytes(b[: self.room]))
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(b)
        return self.f.write(b)

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


def fill_disk(monkeypatch, hits=lambda name: True) -> None:
    """From now on (in this process), atomic writes whose final name ``hits`` (the temporary file's
    name is ``.NAME.fzmj-PID-RANDOM.tmp``) fail."""
    real = os.fdopen

    def fdopen(fd, *a, **k):
        f = real(fd, *a, **k)
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        ours = name.startswith(".") and ".fzmj-" in name and name.endswith(".tmp")
        return _FullFile(f) if ours and hits(name[1:].split(".fzmj-")[0]) else f

    monkeypatch.setattr(atomic.os, "fdopen", fdopen)
