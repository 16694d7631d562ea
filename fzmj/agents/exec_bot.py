"""``exec:COMMAND``: a bot in any language, run as a subprocess speaking JSON lines (docs/protocol.md).

    exec:python3 examples/bots/random_bot.py
    exec:timeout=0.5:batch=64:fallback=heuristic:perl examples/bots/random_bot.pl

Options (``NAME=VALUE:`` groups before the command, any order):

| option | meaning | default |
| --- | --- | --- |
| ``timeout=S`` | seconds the bot has to answer one request (one decision of up to ``batch`` tables) | 5 |
| ``start=S`` | seconds the bot has to answer the hello after it is started | 20 |
| ``batch=N`` | at most N tables per request (0: every table of the ``act`` call in one request) | 0 |
| ``fallback=A`` | ``random`` or ``heuristic``: who plays the bot's seat where the bot fails | random |
| ``restarts=N`` | restarts after a crash, a timeout or garbage before the seat is left to the fallback | 3 |

COMMAND is split like a POSIX shell line (``shlex``) and run without a shell, in its own
process group, stdin/stdout piped (the protocol), stderr passed through. The bot sees only
its seat's observation (the planes and/or the public view decoded from them) and the legal
actions: never the state. The hello's ``obs_version`` picks the layout: v2 (the default) or v3
(the 292 planes, and the view gains the public history of :func:`history_view`); the evaluator
reads it through :attr:`ExecAgent.obs_version` before it makes its tables.

Faults (one line on stderr each, counted in :meth:`ExecAgent.pop_faults`, play never stops):

* ``crash`` (the bot exited or closed stdout), ``timeout`` (no answer in time), ``garbage``
  (a line that is not the expected JSON answer): the process group is killed and reaped, the
  fallback plays the request's tables, the bot is restarted at the next request (at most
  ``restarts`` times; after that the fallback plays the seat for the rest of the run).
* ``illegal`` (a well-formed answer with an action its mask does not allow): the fallback
  plays that table's decision; the bot keeps running.

Every line the bot writes goes through :func:`parse_line` and :func:`parse_actions` (or the
hello's check): a well-typed answer or a fault, never another exception. ``fallback_rows``
after each ``act`` holds the rows its fallback played (the paired evaluation leaves those
hands' walls out). Stopping a bot kills its process group, its descendants and every process
carrying its environment mark (docs/protocol.md, "What is contained").
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.encode import (
    H_DISC,
    H_DISC_AFTER_CLAIM,
    H_DISC_CLAIMED,
    H_DISC_GOLD,
    H_DISC_N,
    H_DISC_TIME,
    H_FLOWER_WHEN,
    H_MELD,
    H_MELD_SOURCE,
    H_MELD_TAKEN,
    H_MELD_TYPE,
    H_MELD_WHEN,
    H_SEAT_PLANES,
    H_TIME_PLANES,
    NUM_CHANNELS,
    OBS_VERSION,
    OBS_VERSIONS,
    P_HAND_NO,
    P_HIST,
    P_SCORES,
    SCORE_BITS,
    V3_CHANNELS,
)

from .base import Agent, AgentSpecError, as_batch
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

# the agents that may play a faulting bot's turns (``fallback=``)
FALLBACKS = {"random": RandomAgent, "heuristic": HeuristicAgent}

__all__ = [
    "ExecAgent",
    "ExecSpec",
    "close_all_bots",
    "install_worker_cleanup",
    "parse_line",
    "parse_actions",
    "parse_exec_spec",
    "normalize_exec_spec",
    "exec_identity",
    "public_view",
    "history_view",
    "request_message",
    "PROTOCOL",
    "VERSION",
]

PROTOCOL = "fzmj-bot"
VERSION = 1
FAULTS = ("crash", "timeout", "garbage", "illegal")
OBS_FIELDS = ("view", "planes")
_OPTIONS = {"timeout": 5.0, "start": 20.0, "batch": 0, "fallback": "random", "restarts": 3}
_OPTION_RE = re.compile(r"([a-z_]+)=([^:\s]*):")


# ---------------------------------------------------------------------------------------------
# the spec
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExecSpec:
    """A parsed ``exec:`` spec: the options and the command's argv."""

    argv: tuple[str, ...]
    timeout: float = 5.0
    start: float = 20.0
    batch: int = 0
    fallback: str = "random"
    restarts: int = 3
    options: dict = field(default_factory=dict, compare=False)  # the ones written in the spec


def _option_value(spec: str, name: str, raw: str):
    bad = f"bad agent spec {spec!r}: "
    if name in ("timeout", "start"):
        try:
            v = float(raw)
        except ValueError:
            raise AgentSpecError(bad + f"{name}= needs a number of seconds, got {raw!r}") from None
        if not 0 < v <= 3600:
            raise AgentSpecError(bad + f"{name}= must be in (0, 3600] seconds, got {raw!r}")
        return v
    if name in ("batch", "restarts"):
        if not raw.isdigit() or int(raw) > 1_000_000:
            raise AgentSpecError(bad + f"{name}= needs an integer in 0..1000000, got {raw!r}")
        return int(raw)
    if raw not in FALLBACKS:
        raise AgentSpecError(bad + f"fallback= must be one of {', '.join(FALLBACKS)}, got {raw!r}")
    return raw


def parse_exec_spec(spec: str) -> ExecSpec:
    """Parse ``exec:[NAME=VALUE:]...COMMAND`` (:class:`AgentSpecError`, one line, when it is bad)."""
    s = spec.strip()
    if not s.startswith("exec:"):
        raise AgentSpecError(f"bad agent spec {spec!r}: expected exec:COMMAND")
    rest = s[len("exec:") :]
    opts: dict = {}
    while (m := _OPTION_RE.match(rest)) is not None:
        name, raw = m.group(1), m.group(2)
        if name not in _OPTIONS:
            raise AgentSpecError(f"bad agent spec {spec!r}: unknown option {name!r} (options: {', '.join(_OPTIONS)})")
        if name in opts:
            raise AgentSpecError(f"bad agent spec {spec!r}: option {name!r} given twice")
        opts[name] = _option_value(spec, name, raw)
        rest = rest[m.end() :]
    try:
        argv = tuple(shlex.split(rest))
    except ValueError as e:
        raise AgentSpecError(f"bad agent spec {spec!r}: cannot split the command ({e})") from None
    if not argv:
        raise AgentSpecError(f"bad agent spec {spec!r}: no command after exec: (expected exec:[OPTIONS:]COMMAND)")
    if shutil.which(argv[0]) is None:
        raise AgentSpecError(f"bad agent spec {spec!r}: command {argv[0]!r} not found or not executable")
    for a in argv[1:]:  # a script argument that is missing fails here, not at the first decision
        if _SCRIPT_RE.search(a) and not _is_command_text(a) and not os.path.isfile(a):
            raise AgentSpecError(f"bad agent spec {spec!r}: file {a!r} not found")
    return ExecSpec(argv=argv, options=opts, **opts)


_SCRIPT_RE = re.compile(r"\.(py|pl|sh|awk|rb|js|lua|jl|r|R)$")


def _is_command_text(arg: str) -> bool:
    """An argument with whitespace in it is a command line of its own (``sh -c 'exec python3
    bot.py'``), not a script path: its last word is not checked as a file."""
    return any(c.isspace() for c in arg)


def _named_files(argv) -> list[str]:
    """The existing files the command names: its arguments, and the words of an argument that is a
    command line of its own (``sh -c '...'``), so a league notices an edited script in either."""
    out = []
    for a in argv[1:]:
        words = [a]
        if _is_command_text(a):
            try:
                words = shlex.split(a)
            except ValueError:
                words = []
        out += [w for w in words if os.path.isfile(w)]
    return out


def normalize_exec_spec(spec: str) -> str:
    """``spec`` with every file the command names made absolute (a league roster then works from
    any directory); the options and the other arguments as written."""
    p = parse_exec_spec(spec)
    argv = [
        str(Path(a).resolve()) if os.path.isfile(a) and (i or "/" in a) and not os.path.isabs(a) else a
        for i, a in enumerate(p.argv)
    ]
    opts = "".join(f"{name}={value}:" for name, value in _written_options(spec))
    return f"exec:{opts}{shlex.join(argv)}"


def _written_options(spec: str) -> list[tuple[str, str]]:
    """The ``NAME=VALUE`` options as written in a valid spec, in order."""
    rest, out = spec.strip()[len("exec:") :], []
    while (m := _OPTION_RE.match(rest)) is not None:
        out.append((m.group(1), m.group(2)))
        rest = rest[m.end() :]
    return out


def exec_identity(spec: str) -> str:
    """The league's identity of an exec bot: the spec plus the content hash of every file the
    command names (the interpreter excepted), so an edited script is a new agent."""
    p = parse_exec_spec(spec)
    h = hashlib.sha256(json.dumps([p.argv, sorted(p.options.items())]).encode())
    for a in _named_files(p.argv):  # in chunks: a bot's 512 MB weights file is hashed in 1 MiB of memory
        with open(a, "rb") as f:
            for chunk in iter(lambda f=f: f.read(1 << 20), b""):
                h.update(chunk)
    return f"exec:sha256={h.hexdigest()}"


# ---------------------------------------------------------------------------------------------
# what the bot sees
# ---------------------------------------------------------------------------------------------
def _tiles(c: np.ndarray) -> list[list[int]]:
    """Each row of a (N, 27) count matrix as its kinds with repetition, ascending (a tile list)."""
    rows, cols = np.nonzero(c)
    flat = np.repeat(cols, c[rows, cols]).tolist()
    ends = np.cumsum(c.sum(axis=1, dtype=np.int64)).tolist()
    return [flat[a:b] for a, b in zip([0, *ends][: len(ends)], ends, strict=True)]


def _sets(m: np.ndarray) -> list[list[int]]:
    """The kinds set in each row of a (N, 27) 0/1 matrix."""
    return _tiles(m != 0)


def _hot(m: np.ndarray) -> list:
    """The column of the one-hot in each row of a (N, K) 0/1 matrix, None for an empty row."""
    return np.where(m.any(axis=1), m.argmax(axis=1), -1).tolist()


def _seat_columns(o: np.ndarray, r: int) -> list[list]:
    """Each field of relative seat r's view, as one list over the batch (``_SEAT_KEYS`` order)."""
    b = 9 + 20 * r
    recent = [_hot(o[:, b + 12 + j]) for j in range(4)]
    f = o[:, b + 19]
    return [
        _tiles(o[:, b : b + 4].sum(axis=1, dtype=np.int64)),
        _sets(o[:, b + 4]),
        _sets(o[:, b + 5]),
        _sets(o[:, b + 6]),
        _tiles(o[:, b + 7 : b + 11].sum(axis=1, dtype=np.int64)),
        _sets(o[:, b + 11]),
        [[k for k in ks if k >= 0] for ks in zip(*recent, strict=True)],
        o[:, b + 18].sum(axis=1, dtype=np.int64).tolist(),
        (f[:, 0] == 1).tolist(),
        (f[:, 1] == 1).tolist(),
        (f[:, 2] == 1).tolist(),
        (f[:, 3] == 1).tolist(),
        f[:, 4:9].sum(axis=1, dtype=np.int64).tolist(),
        f[:, 9:13].sum(axis=1, dtype=np.int64).tolist(),
        o[:, 98, 3 * r : 3 * r + 3].sum(axis=1, dtype=np.int64).tolist(),
    ]


_SEAT_KEYS = (
    "melds", "pengs", "kongs", "taken", "discards", "claimed", "recent", "flowers",
    "dealer", "gold_discarded", "current", "discarder", "n_melds", "concealed_kongs", "swim",
)  # fmt: skip
_PHASES = ("turn", "discard", "claim", "over")


def public_view(obs: np.ndarray) -> list[dict]:
    """The decoded public view of each observation row (docs/protocol.md names every field).

    A function of the observation only, decoded for the whole batch at once (one numpy pass
    per field, then one dict per row)."""
    o = np.asarray(obs, dtype=np.int8)
    if o.ndim == 2:
        o = o[None]
    n = o.shape[0]

    def col(m):
        return [None if k < 0 else k for k in _hot(m)]

    drawable = o[:, 89].sum(axis=1, dtype=np.int64)
    drawable = np.where(drawable == 27, 27 + 2 * o[:, 90].sum(axis=1, dtype=np.int64), drawable)
    ph = o[:, 95]
    phase = [_PHASES[k] if k >= 0 else "none" for k in _hot(ph[:, :4])]
    seats = [[dict(zip(_SEAT_KEYS, v, strict=True)) for v in zip(*_seat_columns(o, r), strict=True)] for r in range(4)]
    fields = {
        "hand": _tiles(o[:, 0:4].sum(axis=1, dtype=np.int64)),
        "gold": col(o[:, 4]),
        "golds": o[:, 5].sum(axis=1, dtype=np.int64).tolist(),
        "drawn": col(o[:, 8]),
        "passed": _sets(o[:, 6]),
        "own_concealed_kongs": _sets(o[:, 7]),
        "phase": phase,
        "to_act": (ph[:, 6] == 1).tolist(),
        "rob_window": (ph[:, 4] == 1).tolist(),
        "heaven_possible": (ph[:, 5] == 1).tolist(),
        "claim_tile": col(o[:, 96]),
        "seats": [list(x) for x in zip(*seats, strict=True)] if n else [],
        "drawable": drawable.tolist(),
        "tiles_left_div4": o[:, 91].sum(axis=1, dtype=np.int64).tolist(),
        "reserve": o[:, 92].sum(axis=1, dtype=np.int64).tolist(),
        "streak": o[:, 93].sum(axis=1, dtype=np.int64).tolist(),
        "hands_left": o[:, 94].sum(axis=1, dtype=np.int64).tolist(),
        "preset": col(o[:, 97, :5]),
        "loss_cap": (o[:, 97, 5] == 1).tolist(),
    }
    keys = list(fields)
    return [dict(zip(keys, v, strict=True)) for v in zip(*fields.values(), strict=True)]


# ---- observation v3: the public history (docs/protocol.md, "Observation v3") ----------------------
MELD_TYPES = ("chi", "peng", "exposed_kong", "added_kong", "concealed_kong")  # meld_type's t = 0..4
_N_MELDS = H_MELD_TYPE - H_MELD  # meld planes per seat (MAX_MELDS)


def _first(m: np.ndarray) -> list:
    """The column of the one-hot in each row of a (..., K) 0/1 array, None for an empty row."""
    return np.where(m.any(axis=-1), m.argmax(axis=-1), -1).tolist()


def _meld_histories(h: np.ndarray) -> list[list[dict]]:
    """Each row's melds of one seat's v3 blocks ``h`` (N, 47, 27), in the order they were made."""
    n = h.shape[0]
    types = _first(h[:, H_MELD_TYPE, : 5 * _N_MELDS].reshape(n, _N_MELDS, 5))
    sources = _first(h[:, H_MELD_SOURCE, : 3 * _N_MELDS].reshape(n, _N_MELDS, 3))
    taken = _first(h[:, H_MELD_TAKEN, : 3 * _N_MELDS].reshape(n, _N_MELDS, 3))
    kinds = _sets(h[:, H_MELD : H_MELD + _N_MELDS].reshape(n * _N_MELDS, 27))
    when = _sets(h[:, H_MELD_WHEN : H_MELD_WHEN + _N_MELDS].reshape(n * _N_MELDS, 27))
    out = []
    for i in range(n):
        melds = []
        for j, t in enumerate(types[i]):
            if t < 0:
                break  # melds fill 0, 1, ... in order
            d, k = sources[i][j], taken[i][j]
            melds.append(
                {
                    "type": MELD_TYPES[t],
                    "kinds": kinds[i * _N_MELDS + j],
                    "source": None if d < 0 else d + 1,
                    "taken": None if k < 0 else k,
                    "when": when[i * _N_MELDS + j],
                }
            )
        out.append(melds)
    return out


def _seat_histories(h: np.ndarray, score: np.ndarray) -> list[dict]:
    """The v3 fields of one relative seat in each row: its blocks ``h`` (N, 47, 27) and its score
    planes (N, 27), decoded for the whole batch at once (one numpy pass per field)."""
    n = h.shape[0]
    disc = _first(h[:, H_DISC : H_DISC + H_DISC_N])
    level = score[:, :SCORE_BITS].sum(axis=1, dtype=np.int64) - score[:, SCORE_BITS : 2 * SCORE_BITS].sum(
        axis=1, dtype=np.int64
    )
    columns = {
        "discard_order": [[k for k in ks if k >= 0] for ks in disc],
        "disc_claimed_at": _sets(h[:, H_DISC_CLAIMED]),
        "disc_after_claim_at": _sets(h[:, H_DISC_AFTER_CLAIM]),
        "disc_gold_at": _sets(h[:, H_DISC_GOLD]),
        "disc_time": _sets(h[:, H_DISC_TIME : H_DISC_TIME + H_TIME_PLANES].reshape(n, -1)),  # T = 27 plane + column
        "meld_history": _meld_histories(h),
        "flowers_when": h[:, H_FLOWER_WHEN : H_FLOWER_WHEN + 4].sum(axis=1, dtype=np.int64).tolist(),
        "score_level": level.tolist(),
        "score_leads": (score[:, 26] != 0).tolist(),
    }
    keys = list(columns)
    return [dict(zip(keys, v, strict=True)) for v in zip(*columns.values(), strict=True)]


def history_view(obs: np.ndarray) -> list[dict]:
    """The v3 fields of each observation row (N, V3_CHANNELS, 27): ``{"seats": [4 dicts],
    "hand_no": n}``, decoded from planes 99-291 only (docs/protocol.md names every field), for the
    whole batch at once."""
    o = np.asarray(obs, dtype=np.int8)
    if o.ndim == 2:
        o = o[None]
    seats = [
        _seat_histories(o[:, P_HIST + H_SEAT_PLANES * r : P_HIST + H_SEAT_PLANES * (r + 1)], o[:, P_SCORES + r])
        for r in range(4)
    ]
    hand_no = o[:, P_HAND_NO].sum(axis=1, dtype=np.int64).tolist()
    return [{"seats": list(s), "hand_no": k} for *s, k in zip(*seats, hand_no, strict=True)]


def _add_history(views: list[dict], obs: np.ndarray) -> None:
    """Add the v3 fields to each row's public view (each seat's and ``hand_no``)."""
    for v, h in zip(views, history_view(obs), strict=True):
        for seat, more in zip(v["seats"], h["seats"], strict=True):
            seat.update(more)
        v["hand_no"] = h["hand_no"]


def request_message(req_id: int, obs: np.ndarray, mask: np.ndarray, fields=("view",)) -> str:
    """The ``act`` request line for a batch (without the newline): what the bot is sent. ``obs``
    (N, C, 27) in the layout the bot asked for: v2 (C = 99) or v3 (C = 292: ``planes`` is then
    the whole v3 tensor, and ``view`` gains the v3 fields of :func:`history_view`)."""
    obs = np.asarray(obs, dtype=np.int8)
    if not gc.isenabled():
        return _request_message(req_id, obs, mask, fields)
    gc.disable()  # many small lists and dicts, all garbage a moment later: no cycle scans meanwhile
    try:
        return _request_message(req_id, obs, mask, fields)
    finally:
        gc.enable()


def _request_message(req_id: int, obs: np.ndarray, mask: np.ndarray, fields) -> str:
    rows = [{"legal": lg} for lg in _sets(mask)]
    if "view" in fields:
        views = public_view(obs[:, :NUM_CHANNELS])
        if obs.shape[1] == V3_CHANNELS:  # a bot that asked for observation v3: its history too
            _add_history(views, obs)
        for row, v in zip(rows, views, strict=True):
            row["view"] = v
    if "planes" in fields:
        flat = (np.asarray(obs, dtype=np.int8).reshape(len(rows), -1) + 48).astype(np.uint8)
        for row, p in zip(rows, flat, strict=True):
            row["planes"] = p.tobytes().decode("ascii")
    return json.dumps({"type": "act", "id": req_id, "rows": rows}, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# the process
# ---------------------------------------------------------------------------------------------
class _BotFault(Exception):
    def __init__(self, kind: str, why: str):
        super().__init__(why)
        self.kind = kind


MAX_LINE = 64 << 20  # bytes in one answer line; a longer one is garbage
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


def _one_line(what, limit: int = 80) -> str:
    from fzmj_env.checks import short_repr

    return short_repr(what, limit)


def parse_line(raw: bytes) -> dict:
    """One line of a bot as a JSON object, or a ``garbage`` fault; never another exception
    (invalid UTF-8, nesting deeper than the parser's recursion limit, integers beyond Python's
    digit limit, lone surrogates: all are faults)."""
    try:
        msg = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _BotFault("garbage", f"JSON nested too deep: {_one_line(raw[:60])}") from None
    except Exception:  # noqa: BLE001 - whatever the decoder makes of a hostile line is a fault
        raise _BotFault("garbage", f"not JSON: {_one_line(raw[:60])}") from None
    if not isinstance(msg, dict):
        raise _BotFault("garbage", f"not a JSON object: {_one_line(raw[:60])}")
    return msg


def parse_actions(ans: dict, req_id: int, n: int) -> np.ndarray:
    """The actions of an ``act`` answer to request ``req_id`` with ``n`` rows, as int64 with -1
    for every entry that is not an integer in ``0..NUM_ACTIONS-1`` (booleans, floats, strings,
    big integers of either sign); a malformed answer is a ``garbage`` fault."""
    acts = ans.get("actions")
    rid = ans.get("id")
    if (
        ans.get("type") != "act"
        or type(rid) is not int
        or rid != req_id
        or not isinstance(acts, list)
        or len(acts) != n
    ):
        raise _BotFault("garbage", f"expected an act answer to request {req_id} with {n} action(s)")
    return np.array([x if type(x) is int and 0 <= x < NUM_ACTIONS else -1 for x in acts], dtype=np.int64)


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
        """The layout of the planes the bot is sent: the one it asked for, but v2 when it asked for
        neither the view nor the planes (``legal`` alone is the same in both: its tables need not
        build v3, which costs a v3 bot half its hands/s)."""
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


# ---------------------------------------------------------------------------------------------
# the agent
# ---------------------------------------------------------------------------------------------
class ExecAgent(Agent):
    """An agent played by an external program over the ``fzmj-bot`` JSON-lines protocol."""

    def __init__(self, spec: str):
        self.spec = parse_exec_spec(spec)
        self.name = spec.strip()
        self._proc: _Process | None = None
        self._seed = None
        self._seed_pending = False
        self._req = 0
        self._restarts = 0
        self._disabled = False
        self._illegal_lines = 0
        self._last_pid = None
        self._faults = dict.fromkeys(FAULTS + ("fallback_decisions",), 0)
        self._fallback = None
        self.fallback_rows = np.zeros(0, dtype=np.int64)  # rows of the last act() the fallback played
        self.bot_name: str | None = None  # the name its hello gave, when printable and short

    # -- public -------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        self._seed = None if seed is None else int(seed)
        self._seed_pending = True
        if self._fallback is not None:
            self._fallback.reset(seed)

    def act(self, obs, mask) -> np.ndarray:
        v3 = np.ndim(obs) in (2, 3) and np.shape(obs)[-2] == V3_CHANNELS
        obs, mask = as_batch(obs, mask, channels=V3_CHANNELS if v3 else NUM_CHANNELS)
        n = obs.shape[0]
        out = np.full(n, -1, dtype=np.int64)
        if not self._disabled:
            proc = self._start_for(obs.shape[1], n)
            if proc is not None:
                step = proc.max_batch or self.spec.batch or n
                if self.spec.batch:
                    step = min(step, self.spec.batch)
                for lo in range(0, n, step):
                    if self._proc is None:
                        break  # a fault killed it: the fallback plays the rest of this call
                    out[lo : lo + step] = self._request(obs[lo : lo + step], mask[lo : lo + step])
        bad = np.flatnonzero(out < 0)
        self.fallback_rows = bad  # the evaluator marks these hands as played partly by the fallback
        if bad.size:
            out[bad] = self._fallback_agent().act(obs[bad], mask[bad])
            self._faults["fallback_decisions"] += int(bad.size)
        return out

    def pop_faults(self) -> dict:
        """Fault counts since the last call (``crash``, ``timeout``, ``garbage``, ``illegal``,
        ``fallback_decisions``), then zeroed; the evaluator adds them to its result."""
        f, self._faults = self._faults, dict.fromkeys(self._faults, 0)
        return f

    def close(self) -> None:
        """Stop the bot: end its input, give it ``GRACE_S`` to exit by itself, then kill its
        process group and reap it."""
        self._stop(grace=True)

    def _stop(self, grace: bool = False) -> None:
        if self._proc is not None:
            self._proc.close(grace)
            self._proc = None

    def __getstate__(self):  # pickled for a spawned worker: the process stays here
        d = dict(self.__dict__)
        d["_proc"] = None
        return d

    # -- internals ----------------------------------------------------------------------------
    def _fallback_agent(self) -> Agent:
        if self._fallback is None:
            self._fallback = FALLBACKS[self.spec.fallback]()
            if self._seed is not None:
                self._fallback.reset(self._seed)
        return self._fallback

    def _say(self, what: str) -> None:
        # a spec holds a command line of any length: its head and tail name the bot well enough
        name = self.name if len(self.name) <= 100 else f"{self.name[:60]}...{self.name[-37:]}"
        sys.stderr.write(f"fzmj: exec bot {name!r}: {what}\n")
        sys.stderr.flush()

    def _fault(self, e: _BotFault, tables: int) -> None:
        """Count a fault, kill the bot; one line says what happened and what comes next."""
        self._faults[e.kind] += 1
        status = self._proc.exit_status() if e.kind == "crash" and self._proc is not None else ""
        self._stop()  # a fault: killed at once (a timeout costs the limit plus the kill)
        if self._restarts >= self.spec.restarts:
            self._disabled = True
            nxt = f"no restarts left: {self.spec.fallback} plays its seat from now on"
        else:
            nxt = "restarted at the next request"
        self._say(f"{e.kind}: {e}{status}; {self.spec.fallback} plays {tables} table(s); {nxt}")

    def _ensure_started(self) -> _Process | None:
        if self._proc is not None and self._proc.owner != os.getpid():
            self._proc.close()  # inherited through fork: the parent's bot; close our pipe copies
            self._proc, self._req = None, 0
        if self._proc is not None:
            return self._proc
        if self._req:  # started before: this is a restart
            self._restarts += 1
        self._req += 1
        try:
            self._proc = _Process(self.spec)
            self._last_pid = self._proc.proc.pid
        except OSError as e:
            self._fault(_BotFault("crash", f"cannot start: {e}"), 0)
            return None
        hello = {
            "type": "hello",
            "protocol": PROTOCOL,
            "version": VERSION,
            "obs_version": OBS_VERSION,
            "obs_shape": [NUM_CHANNELS, 27],
            "obs_versions": list(OBS_VERSIONS),
            "actions": NUM_ACTIONS,
            "timeout_s": self.spec.timeout,
            "max_batch": self.spec.batch or None,
            "seed": self._seed,
        }
        try:
            ans = self._proc.exchange(json.dumps(hello), time.monotonic() + self.spec.start)
            self._check_hello(ans)
        except _BotFault as e:
            e.args = (f"at the handshake: {e}",)
            self._fault(e, 0)
            return None
        return self._proc

    def _check_hello(self, ans: dict) -> None:
        """Take the bot's hello, field by field, as only well-typed values (else a ``garbage`` fault)."""
        if ans.get("type") != "hello" or ans.get("protocol") != PROTOCOL:
            raise _BotFault("garbage", f'expected {{"type": "hello", "protocol": "{PROTOCOL}", ...}}')
        version = ans.get("version")
        if type(version) is not int or version != VERSION:
            self._restarts = self.spec.restarts  # another protocol version will not fix itself
            raise _BotFault("garbage", f"speaks version {_one_line(version)}, this engine speaks {VERSION}")
        fields = ans.get("obs", ["view"])
        if not isinstance(fields, list) or not all(isinstance(f, str) and f in OBS_FIELDS for f in fields):
            raise _BotFault("garbage", f"obs must be a list of some of {OBS_FIELDS}, got {_one_line(fields)}")
        mb = ans.get("max_batch", 0)
        mb = 0 if mb is None else mb
        if type(mb) is not int or mb < 0:
            raise _BotFault("garbage", f"max_batch must be a non-negative integer, got {_one_line(mb)}")
        name = ans.get("name")
        if name is not None and not isinstance(name, str):
            raise _BotFault("garbage", f"name must be a string, got {_one_line(name)}")
        self._proc.obs_version = self._hello_obs_version(ans)
        self._proc.fields = tuple(dict.fromkeys(fields))
        self._proc.max_batch = min(mb, 1 << 30)
        self._proc.name = name[:200] if isinstance(name, str) else None
        if isinstance(name, str) and name.strip() and name.isprintable() and len(name) <= 100:
            self.bot_name = name.strip()  # the reports show it (fzmj-eval's Markdown), keyed by the spec

    def _hello_obs_version(self, ans: dict) -> str:
        """The observation layout the bot's hello asks for: ``"v2"`` (the default, also ``2``) or
        ``"v3"`` (``3``); anything else is refused like another protocol version (no restart)."""
        v = ans.get("obs_version", OBS_VERSION)
        if type(v) is int and f"v{v}" in OBS_VERSIONS:
            v = f"v{v}"
        if type(v) is not str or v not in OBS_VERSIONS:
            self._restarts = self.spec.restarts  # another layout will not fix itself
            raise _BotFault(
                "garbage", f"asks for observation {_one_line(v)}, this engine has {', '.join(OBS_VERSIONS)}"
            )
        return v

    @property
    def obs_version(self) -> str:
        """The observation layout this bot reads: the one its hello asked for (``"v2"`` unless it
        asked for ``"v3"``). Starts the bot if it is not running: the evaluator asks before it makes
        its env (a bot that fails to start reads ``"v2"``; its fallback plays)."""
        if self._disabled:
            return OBS_VERSION
        proc = self._ensure_started()
        return OBS_VERSION if proc is None else proc.reads

    def _start_for(self, channels: int, tables: int) -> _Process | None:
        """The running bot for a table of ``channels`` planes; a bot that asked for v3 at a table
        that gives v2 is refused (one line, no restart: the table will not change)."""
        proc = self._ensure_started()
        if proc is not None and proc.reads == "v3" and channels < V3_CHANNELS:
            self._restarts = self.spec.restarts
            why = "asked for observation v3, this table gives v2 (make the env with obs_version=3)"
            self._fault(_BotFault("garbage", why), tables)
            return None
        return proc

    def _request(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The bot's actions for these rows; -1 where the fallback must play (fault, illegal)."""
        n = obs.shape[0]
        proc = self._proc
        self._req += 1
        if proc.reads != "v3":
            obs = obs[:, :NUM_CHANNELS]  # v3 starts with the v2 planes
        line = request_message(self._req, obs, mask, proc.fields)
        if self._seed_pending:
            line = json.dumps({"type": "reset", "seed": self._seed}) + "\n" + line
            self._seed_pending = False
        try:
            ans = proc.exchange(line, time.monotonic() + self.spec.timeout)
            a = parse_actions(ans, self._req, n)
        except _BotFault as e:
            self._fault(e, n)
            return np.full(n, -1, dtype=np.int64)
        acts = ans["actions"]
        ok = a >= 0
        ok[ok] = mask[np.flatnonzero(ok), a[ok]] == 1
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            self._faults["illegal"] += int((~ok).sum())
            self._illegal_lines += 1
            if self._illegal_lines > 3:
                return np.where(ok, a, -1)
            more = "; further illegal answers are counted, not printed" if self._illegal_lines == 3 else ""
            self._say(
                f"illegal: answered {_one_line(acts[k])} where the legal actions are {np.flatnonzero(mask[k]).tolist()} "
                f"({int((~ok).sum())} of {n} table(s)); {self.spec.fallback} plays those{more}"
            )
            a[~ok] = -1
        return a
