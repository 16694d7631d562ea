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
reads it through :attr:`ExecAgent.obs_version` before it makes its tables (v3 too for a bot that
asked for ``last_claim``: :func:`last_claim` reads the v3 planes).

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

By concern: the spec in :mod:`.exec_spec`, the messages and the parser in :mod:`.exec_protocol`,
the process (pipes, deadlines, the kill) in :mod:`.exec_process`, the agent here; every public name
of the three is importable from this module too.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.encode import (
    NUM_CHANNELS,
    OBS_VERSION,
    OBS_VERSIONS,
    V3_CHANNELS,
)

from .base import Agent, as_batch
from .exec_process import (
    GRACE_S,
    MARK_VAR,
    _Process,
    close_all_bots,
    install_worker_cleanup,
)
from .exec_protocol import (
    MAX_LINE,
    MELD_TYPES,
    _BotFault,
    _one_line,
    history_view,
    last_claim,
    parse_actions,
    parse_line,
    public_view,
    request_message,
)
from .exec_spec import (
    FALLBACK_NAMES,
    FAULTS,
    OBS_FIELDS,
    PROTOCOL,
    VERSION,
    ExecSpec,
    exec_identity,
    normalize_exec_spec,
    parse_exec_spec,
)
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

# the agents that may play a faulting bot's turns (``fallback=``)
FALLBACKS = {"random": RandomAgent, "heuristic": HeuristicAgent}
assert tuple(FALLBACKS) == FALLBACK_NAMES  # the spec checks the names, the agent makes them

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
    "last_claim",
    "request_message",
    "PROTOCOL",
    "VERSION",
    "FAULTS",
    "OBS_FIELDS",
    "MAX_LINE",
    "MARK_VAR",
    "GRACE_S",
    "MELD_TYPES",
]


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
        # (tables, seats) of the rows of the next act() call, set by a caller that knows them (the
        # evaluator): each request row then says which table and seat it is
        self.row_context: tuple | None = None

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
                where, self.row_context = self.row_context, None  # set by the evaluator for this call only
                if where is not None and any(len(x) != n for x in where):
                    where = None
                for lo in range(0, n, step):
                    if self._proc is None:
                        break  # a fault killed it: the fallback plays the rest of this call
                    part = None if where is None else tuple(x[lo : lo + step] for x in where)
                    out[lo : lo + step] = self._request(obs[lo : lo + step], mask[lo : lo + step], part)
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
        asked for ``"v3"``), and ``"v3"`` for a bot that asked for ``last_claim`` (read from the v3
        planes; its view and planes stay in its own layout). Starts the bot if it is not running: the evaluator asks before it makes
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
            asked = "observation v3" if proc.obs_version == "v3" else "last_claim, read from observation v3"
            why = f"asked for {asked}, this table gives v2 (make the env with obs_version=3)"
            self._fault(_BotFault("garbage", why), tables)
            return None
        return proc

    def _request(self, obs: np.ndarray, mask: np.ndarray, where=None) -> np.ndarray:
        """The bot's actions for these rows; -1 where the fallback must play (fault, illegal)."""
        n = obs.shape[0]
        proc = self._proc
        self._req += 1
        if proc.reads != "v3":
            obs = obs[:, :NUM_CHANNELS]  # v3 starts with the v2 planes
        line = request_message(self._req, obs, mask, proc.fields, where, proc.obs_version)
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
