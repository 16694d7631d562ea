"""A bot's process (docs/protocol.md, "What is contained"): started in its own session with a mark
in its environment, its pipes read and written against a deadline, and stopped with its process
group, its descendants and everything carrying its mark killed and reaped."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
import weakref

from fzmj_env.encode import (
    OBS_VERSION,
)

from .exec_protocol import MAX_LINE, _BotFault, parse_line
from .exec_spec import ExecSpec

# ---------------------------------------------------------------------------------------------
# the process
# ---------------------------------------------------------------------------------------------
# Every process a bot starts inherits this variable (value: a token per bot process): the kill
# finds them by it even after they left the bot's process group and tree (setsid, double fork).
MARK_VAR = "FZMJ_BOT_PROCESS"
_LIVE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id -> _Process not closed yet


def _children_map() -> tuple[dict, dict]:
    """(pid -> parent pid, pid -> environ bytes) of this user's processes, read from /proc
    (empty where /proc is missing or a process vanished meanwhile)."""
    parents, environs = {}, {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents, environs
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            parents[int(name)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            with open(f"/proc/{name}/environ", "rb") as f:
                environs[int(name)] = f.read()
        except (OSError, ValueError, IndexError):
            continue
    return parents, environs


def _descendants(root: int, token: bytes) -> set[int]:
    """The processes under ``root`` in the process tree, and every process that carries the bot's
    mark ``token`` in its environment (the ones that left the tree); this process excluded."""
    parents, environs = _children_map()
    mark = f"{MARK_VAR}=".encode() + token + b"\0"
    found = {pid for pid, env in environs.items() if mark in env}
    kids: dict = {}
    for pid, ppid in parents.items():
        kids.setdefault(ppid, []).append(pid)
    todo = [root, *found]
    while todo:
        for c in kids.get(todo.pop(), ()):
            if c not in found:
                found.add(c)
                todo.append(c)
    found.discard(os.getpid())
    return found


def _kill_group(proc: subprocess.Popen, owner: int, token: bytes, key: int) -> None:
    """Close our ends of the pipes, kill the bot's process group, its descendants and whatever
    carries its mark, and reap the bot (the kill and the reaping only in the process that started
    it: a forked child's copy leaves it alone)."""
    with _sigterm_held():
        _kill_group_now(proc, owner, token, key)


GRACE_S = 0.25  # seconds a bot has to exit by itself after the end of its input (its last write, stderr line)


def _close_pipe(f) -> None:
    try:
        if f is not None:
            f.close()
    except OSError:
        pass


def _kill_group_now(proc: subprocess.Popen, owner: int, token: bytes, key: int) -> None:
    _LIVE.pop(key, None)
    _close_pipe(proc.stdin)
    _close_pipe(proc.stdout)
    if os.getpid() != owner:
        return
    for _ in range(3):  # a process may fork while we kill: look again until none is found
        pids = _descendants(proc.pid, token)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if not pids:
            break
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process stuck in the kernel
        pass


def close_all_bots() -> None:
    """Kill every bot process this process started (an exiting worker's clean-up)."""
    for key, p in list(_LIVE.items()):  # in _LIVE until killed, even where its finalizer has already fired
        p.finalizer.detach()
        _kill_group(p.proc, p.owner, p.token, key)


# A worker's SIGTERM (``Pool.terminate``) can arrive in the middle of starting a bot (Popen has
# forked it, the bot is not in _LIVE yet) or of killing one (a worker that read the pool's stop
# sentinel is closing its bots on its way out, and that bot's finalizer has already fired): the
# handler's os._exit would then leave the bot running. Inside these blocks the handler only notes
# the signal; it runs when the outermost block ends.
_held = 0
_held_signal: int | None = None


@contextlib.contextmanager
def _sigterm_held():
    global _held, _held_signal
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if _held_signal is not None and not _held:
            signum, _held_signal = _held_signal, None
            _on_sigterm(signum, None)  # kills the bots left, then exits


def _on_sigterm(signum, frame) -> None:  # pragma: no cover - runs in a terminated worker
    global _held_signal
    if _held:
        _held_signal = signum
        return
    close_all_bots()
    os._exit(128 + signum)


def install_worker_cleanup() -> None:
    """In a worker process: kill this process's bots when it is terminated (``Pool.terminate``
    sends SIGTERM, which would skip every clean-up) and when it exits normally (a pool worker
    leaves through ``os._exit``: only multiprocessing's own finalizers run)."""
    from multiprocessing import util

    signal.signal(signal.SIGTERM, _on_sigterm)
    util.Finalize(None, close_all_bots, exitpriority=10)


class _Process:
    """One running bot: its pipes, a read buffer, the handshake's answer."""

    def __init__(self, spec: ExecSpec):
        token = os.urandom(12).hex()
        env = {**os.environ, MARK_VAR: token}
        with _sigterm_held():  # a worker's SIGTERM waits until the bot is in _LIVE (then kills it too)
            self.proc = subprocess.Popen(
                spec.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, start_new_session=True, env=env
            )
            self.owner = os.getpid()
            _LIVE[id(self)] = self
            self.token = token.encode()
            self.finalizer = weakref.finalize(self, _kill_group, self.proc, self.owner, self.token, id(self))
        self.buf = bytearray()
        self.scanned = 0  # bytes of buf known to hold no newline
        self.nl = -1  # index of the first newline in buf, -1: none found yet
        self.fields: tuple[str, ...] = ("view",)
        self.obs_version = OBS_VERSION  # the layout the bot asked for in its hello
        self.max_batch = 0
        self.name = None
        os.set_blocking(self.proc.stdin.fileno(), False)

    def close(self, grace: bool = False) -> None:
        """Stop the bot; with ``grace``, first close its stdin and give it ``GRACE_S`` to exit by
        itself (the end of a run: its last write and stderr line are not lost)."""
        if grace and self.finalizer.alive and self.owner == os.getpid():
            _close_pipe(self.proc.stdin)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=GRACE_S)
        self.finalizer()

    @property
    def reads(self) -> str:
        """The layout the bot's tables must give: v3 when it asked for ``last_claim`` (read from
        the v3 planes, whatever layout its view and planes are in), else the one it asked for, but
        v2 when it asked for neither the view nor the planes (``legal`` alone is the same in both:
        its tables need not build v3, which costs a v3 bot half its hands/s)."""
        if "last_claim" in self.fields:
            return "v3"
        return self.obs_version if self.fields else OBS_VERSION

    def _scan(self) -> None:
        """Find the first newline in the buffer; each byte is searched once (linear in the line)."""
        if self.nl < 0:
            self.nl = self.buf.find(b"\n", self.scanned)
            if self.nl < 0:
                self.scanned = len(self.buf)
                if self.scanned > MAX_LINE:
                    raise _BotFault("garbage", f"a line longer than {MAX_LINE >> 20} MiB")

    def _line(self) -> bytes | None:
        """The next complete line in the buffer (without its newline), None if there is none yet."""
        self._scan()
        if self.nl < 0:
            return None
        raw = bytes(self.buf[: self.nl])
        del self.buf[: self.nl + 1]
        self.nl, self.scanned = -1, 0
        if len(raw) > MAX_LINE:
            raise _BotFault("garbage", f"a line longer than {MAX_LINE >> 20} MiB")
        return raw

    def exchange(self, line: str | None, deadline: float) -> dict:
        """Write ``line`` (if any) and read one answer line before ``deadline``, as a dict."""
        out = memoryview((line + "\n").encode()) if line is not None else memoryview(b"")
        fin, fout = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        poller = select.poll()
        poller.register(fin, select.POLLIN)
        if len(out):
            poller.register(fout, select.POLLOUT)
        while True:
            if not len(out):
                raw = self._line()
                while raw is not None and not raw.strip():
                    raw = self._line()
                if raw is not None:
                    return parse_line(raw)
            left = deadline - time.monotonic()
            if left <= 0:
                raise _BotFault("timeout", "no answer in time")
            for fd, ev in poller.poll(left * 1000):
                if fd == fout:
                    try:
                        n = os.write(fout, out[:65536])
                    except BrokenPipeError:
                        raise _BotFault("crash", "closed its stdin") from None
                    except BlockingIOError:
                        continue
                    out = out[n:]
                    if not len(out):
                        poller.unregister(fout)
                elif ev & (select.POLLIN | select.POLLHUP | select.POLLERR):
                    try:
                        chunk = os.read(fin, 1 << 20)
                    except OSError as e:
                        raise _BotFault("crash", f"stdout unreadable ({e.strerror})") from None
                    if not chunk:
                        raise _BotFault("crash", "closed its stdout")
                    self.buf += chunk
                    self._scan()  # a line past the limit is refused as it arrives

    def exit_status(self) -> str:
        try:
            rc = self.proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            return ""
        return f" (exit status {rc})" if rc >= 0 else f" (killed by signal {-rc})"
