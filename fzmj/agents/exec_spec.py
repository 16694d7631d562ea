"""The ``exec:`` spec of a bot (docs/protocol.md, "The spec"): its options, its command (checked
before anything is played), the roster's normal form and the league's identity of the bot."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .base import AgentSpecError

PROTOCOL = "fzmj-bot"
VERSION = 1
FAULTS = ("crash", "timeout", "garbage", "illegal")
OBS_FIELDS = ("view", "planes", "last_claim")
_OPTIONS = {"timeout": 5.0, "start": 20.0, "batch": 0, "fallback": "random", "restarts": 3}
_OPTION_RE = re.compile(r"([a-z_]+)=([^:\s]*):")
FALLBACK_NAMES = ("random", "heuristic")  # who may play a faulting bot's turns (``fallback=``)


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
    if raw not in FALLBACK_NAMES:
        raise AgentSpecError(bad + f"fallback= must be one of {', '.join(FALLBACK_NAMES)}, got {raw!r}")
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
