"""The league folder: its settings (``config.json``), its roster (``roster.json``), the agents'
identities that key the cache, and the hook the trainer uses to add checkpoints."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no locks (docs/league.md)
    fcntl = None

from fzmj_env.atomic import write_atomic
from fzmj_env.checks import MAX_SEED, check_int, short_repr
from fzmj_env.rules import DEFAULT_RULES
from fzmj_env.seeding import draw_seed

from .. import SPEC_HELP, AgentSpecError, make_agent
from ..evaluate.run import DEFAULT_BATCH

LEAGUE_VERSION = 1
FORMATS = ("1v3", "2v2")
DEFAULT_HANDS = 2000
BOOTSTRAP = 2000  # resamples of the walls for the rating intervals
CONFIG_FILE, ROSTER_FILE, MATCH_DIR = "config.json", "roster.json", "matches"


class LeagueError(ValueError):
    """Bad league input: duplicate or missing agents, a folder made with other settings, a bad cache entry."""


# ---- identities ----------------------------------------------------------------------------------
def _sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _spec_file(spec: str) -> Path | None:
    """The file a ``kind:PATH`` spec names (``ppo:PATH``, and any later kind that takes a file)."""
    kind, sep, arg = spec.partition(":")
    if not sep or kind == "python" or not arg:
        return None
    p = Path(arg).expanduser()
    return p if p.is_file() else None


def normalize_spec(spec: str) -> str:
    """``spec`` with a file argument made absolute, so the roster works from any directory."""
    s = spec.strip()
    if s.startswith("exec:"):  # the files its command names
        from ..exec_bot import normalize_exec_spec

        return normalize_exec_spec(s)
    p = _spec_file(s)
    return f"{s.partition(':')[0]}:{p.resolve()}" if p is not None else s


def agent_identity(spec: str, agent=None) -> str:
    """What the cache is keyed by: the spec of a built-in, ``kind:sha256=...`` of a file's content
    for a file-based agent, ``python:module:Class@sha256=...`` of the module file's content.

    ``agent`` (the loaded agent) is used to find a ``python:`` module's file or an agent's
    ``path`` attribute (an agent that reads a file named by something other than its spec).
    """
    s = spec.strip()
    kind, _, arg = s.partition(":")
    if kind == "exec":  # the command and the content of the files it names
        from ..exec_bot import exec_identity

        return exec_identity(s)
    if kind == "python":
        module_name = arg.rpartition(":")[0]
        module = sys.modules.get(module_name)
        origin = getattr(module, "__file__", None)
        if origin and os.path.isfile(origin):
            return f"{s}@sha256={_sha256_file(origin)}"
        return s  # a module without a file (built in, namespace): its spec is all we know
    p = _spec_file(s)
    if p is None and agent is not None and isinstance(getattr(agent, "path", None), (str, Path)):
        q = Path(agent.path)
        p = q if q.is_file() else None
    if p is not None:
        return f"{kind}:sha256={_sha256_file(p)}"
    return s


def rules_identity(rules: str) -> dict:
    """The rules' name, and the SHA-256 of the file when ``rules`` is a path to a rules file."""
    from fzmj_env.rules import load_rules

    try:
        r = load_rules(rules)
    except Exception as e:  # noqa: BLE001 - any loader failure is bad input
        raise LeagueError(f"unknown rules {rules!r}: {e}") from e
    p = Path(str(rules))
    return {"name": r.name, "file_sha256": _sha256_file(p) if p.is_file() else None}


# ---- the league folder -----------------------------------------------------------------------------
@dataclass(frozen=True)
class LeagueConfig:
    """The settings fixed for a league folder (its matches are only comparable under them)."""

    seed: int
    format: str
    hands_per_pairing: int
    rules: str  # a preset name, or an absolute path to a rules file
    rules_id: dict
    batch: int

    @property
    def walls(self) -> int:
        """Walls per match: every wall is 4 hands per match, and 1v3 plays two matches per pairing."""
        per_wall = 8 if self.format == "1v3" else 4
        return -(-self.hands_per_pairing // per_wall)

    @property
    def hands_per_match(self) -> int:
        return 4 * self.walls

    def as_dict(self) -> dict:
        return {
            "fzmj_league": LEAGUE_VERSION,
            "seed": self.seed,
            "format": self.format,
            "hands_per_pairing": self.hands_per_pairing,
            "rules": self.rules,
            "rules_id": self.rules_id,
            "batch": self.batch,
        }


@dataclass(frozen=True)
class Entrant:
    """One agent of the league: its display name, the spec it is built from, its identity."""

    name: str
    spec: str
    identity: str


# ---- locks ------------------------------------------------------------------------------------------
# Two runs on one folder would each read the roster, add their agents and write it back: the later
# write drops the earlier run's agents. Two locks (flock on files in the folder, released by the
# kernel when a process dies): ``roster`` is held for the seconds of a read-modify-write of
# roster.json / config.json (the trainer's hook takes only this one), ``run`` for a whole
# fzmj-league run (a second run waits for the first, then finds its matches in the cache).
# Always ``run`` before ``roster``, so two runs cannot wait on each other.
_HELD: set[str] = set()  # locks this process holds (a nested take is a no-op, not a self-deadlock)


@contextmanager
def folder_lock(path: str | Path, which: str = "roster") -> Iterator[None]:
    """Hold lock ``which`` ("roster" or "run") of league folder ``path``; if another process holds
    it, say so on stderr in one line and wait for it."""
    root = Path(path)
    lock = root / f".{which}.lock"
    key = str(lock.resolve()) if root.exists() else str(lock.absolute())
    if fcntl is None or key in _HELD:
        yield
        return
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            what = "playing in" if which == "run" else "updating the roster of"
            sys.stderr.write(f"fzmj-league: another process is {what} {str(root)!r}; waiting for it to finish\n")
            sys.stderr.flush()
            fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
    finally:
        if created and all(p.name.endswith(".lock") for p in root.iterdir()):
            # a run refused before writing anything leaves no folder behind (as before the locks)
            try:
                for q in root.iterdir():
                    q.unlink()
                root.rmdir()
            except OSError:
                pass  # another process is using it meanwhile
        os.close(fd)  # releases the lock


def _write_json(path: Path, data) -> None:
    """Write atomically (fzmj_env/atomic.py): a kill or a full disk never leaves half a file."""
    write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n")


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number a league file may hold")


def _read_json(path: Path, what: str):
    """A league file's JSON; unreadable, not JSON, or holding NaN / Infinity: a :class:`LeagueError`."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_constant=_no_constant)
    except (OSError, ValueError) as e:
        raise LeagueError(
            f"{what} {path} is unreadable ({type(e).__name__}: {e}); delete it or use another --dir"
        ) from e


def _check_settings(**settings) -> dict:
    """The integer settings that are not None, checked (a :class:`LeagueError` names a bad one)."""
    limits = {"seed": (0, MAX_SEED), "hands_per_pairing": (1, None), "batch": (4, None)}
    try:
        out = {k: check_int(k, v, *limits[k]) for k, v in settings.items() if v is not None}
    except ValueError as e:
        raise LeagueError(str(e)) from None
    if out.get("batch", 4) % 4:
        raise LeagueError(f"batch must be a positive multiple of 4, got {out['batch']}")
    return out


def _stored_settings(cfg_path: Path) -> tuple[dict, str, dict]:
    """The settings, the rules and the rules identity a folder's ``config.json`` holds, checked as
    strictly as the command line's (a hand-edited ``"seed": "7"`` or ``-1`` is refused)."""
    old = _read_json(cfg_path, "league config")
    if not isinstance(old, dict) or old.get("fzmj_league") != LEAGUE_VERSION:
        version = old.get("fzmj_league") if isinstance(old, dict) else None
        raise LeagueError(f"{cfg_path}: league version {version!r}, expected {LEAGUE_VERSION}")
    try:
        base = _check_settings(seed=old["seed"], hands_per_pairing=old["hands_per_pairing"], batch=old["batch"])
        if old["format"] not in FORMATS or not isinstance(old["rules"], str) or not isinstance(old["rules_id"], dict):
            raise LeagueError(f"bad field format, rules or rules_id: {old['format']!r}")
    except (KeyError, LeagueError) as e:
        raise LeagueError(f"league config {cfg_path} is unreadable (bad field {e}); delete it") from None
    return {**base, "format": old["format"]}, old["rules"], old["rules_id"]


def open_league(
    path: str | Path,
    *,
    seed: int | None = None,
    format: str | None = None,
    hands_per_pairing: int | None = None,
    rules: str | None = None,
    batch: int | None = None,
    write: bool = True,
) -> LeagueConfig:
    """Create the league folder ``path``, or open it and check the given settings against its own.

    Settings left as None take the folder's values (or the defaults for a new folder). Once a
    match has been played in the folder its settings are fixed: one that differs raises
    :class:`LeagueError` (the cached matches were played under the folder's settings); before
    that, the given settings replace the folder's (e.g. of a folder the trainer created).
    ``write=False``: nothing is written yet (:func:`save_config` does it).
    """
    root = Path(path)
    if root.exists() and not root.is_dir():
        raise LeagueError(f"league folder {str(root)!r} is not a directory")
    if format is not None and format not in FORMATS:
        raise LeagueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    _check_settings(seed=seed, hands_per_pairing=hands_per_pairing, batch=batch)
    if rules is not None and Path(rules).is_file():
        rules = str(Path(rules).resolve())
    cfg_path = root / CONFIG_FILE
    # a new folder's walls come from a secret drawn seed (a bot that knew it could deal them); kept in config.json
    base = {"seed": draw_seed(), "format": "1v3", "hands_per_pairing": DEFAULT_HANDS, "batch": DEFAULT_BATCH}
    base_rules, base_rid = DEFAULT_RULES, None
    if cfg_path.exists():
        base, base_rules, base_rid = _stored_settings(cfg_path)
    given = {"seed": seed, "format": format, "hands_per_pairing": hands_per_pairing, "batch": batch}
    rules_spec = base_rules if rules is None else rules
    rid = rules_identity(rules_spec)
    if base_rid is not None and any((root / MATCH_DIR).glob("*.json")):
        # matches were played under the folder's settings: they are fixed from now on
        for key, value in given.items():
            if value is not None and value != base[key]:
                raise LeagueError(
                    f"league folder {str(root)!r} was played with {key.replace('_', ' ')} {base[key]}, not {value} "
                    "(use another --dir for other settings)"
                )
        if rid != base_rid:
            why = " (the rules file changed since)" if rid["name"] == base_rid.get("name") else ""
            raise LeagueError(
                f"league folder {str(root)!r} was played with other rules ({base_rid.get('name')!r}) than "
                f"{rules_spec!r}{why}; use another --dir"
            )
    values = {k: base[k] if v is None else v for k, v in given.items()}
    cfg = LeagueConfig(
        seed=int(values["seed"]), format=values["format"], hands_per_pairing=int(values["hands_per_pairing"]),
        rules=rules_spec, rules_id=rid, batch=int(values["batch"]),
    )  # fmt: skip
    if write:
        save_config(root, cfg)
    return cfg


def save_config(path: str | Path, cfg: LeagueConfig) -> None:
    """Write the settings of league folder ``path`` (from :func:`open_league`, which checked them)."""
    root = Path(path)
    (root / MATCH_DIR).mkdir(parents=True, exist_ok=True)
    _write_json(root / CONFIG_FILE, cfg.as_dict())


def _roster(root: Path) -> list[dict]:
    path = root / ROSTER_FILE
    if not path.exists():
        return []
    data = _read_json(path, "league roster")
    ok = isinstance(data, list) and all(
        isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("spec"), str) for e in data
    )
    if not ok:
        raise LeagueError(f"league roster {path} is unreadable (expected a list of {{name, spec}}); delete it")
    names: set[str] = set()
    specs: set[str] = set()
    for i, e in enumerate(data):  # as strictly as the command line: a hand-edited roster is checked too
        where = f"league roster {path}, entry {i}"
        check_agent_name(e["name"], where)
        if not e["spec"].strip():
            raise LeagueError(f"{where}: an empty agent spec; fix or delete the entry")
        if e["name"] in names or e["spec"] in specs:
            what = f"name {e['name']!r}" if e["name"] in names else f"spec {e['spec']!r}"
            raise LeagueError(f"{where}: the {what} is already in the roster; each agent once, under its own name")
        names.add(e["name"])
        specs.add(e["spec"])
    return data


MAX_AGENTS = 300  # a roster's entries: 44,850 pairs, ~90k matches; the rating fit holds a (pairs, agents) matrix


def roster_estimate(n: int, cfg: LeagueConfig) -> str:
    """The size of a league of ``n`` agents, said up front: pairs, matches, hands, and about how much
    memory its table needs (every played entry is read back: per-wall scores of both agents)."""
    pairs = n * (n - 1) // 2
    matches = pairs * (2 if cfg.format == "1v3" else 1)
    # the entries read back, the pair differences, the fit's (pairs, agents) matrix and its pseudo-inverse
    mem = matches * (2 * cfg.walls * 40 + 6000) + pairs * 2 * cfg.walls * 8 + 2 * pairs * n * 8
    return (
        f"{n} agents, {pairs:,} pairs, {matches:,} matches ({matches * cfg.hands_per_match:,} hands), "
        f"about {max(1, round(mem / 2**20)):,} MiB for the table"
    )


def check_roster_size(n: int, cfg: LeagueConfig) -> None:
    """Refuse a roster over ``MAX_AGENTS`` entries in one line, with its estimate."""
    if n > MAX_AGENTS:
        raise LeagueError(
            f"a league of at most {MAX_AGENTS:,} agents, this roster would have {roster_estimate(n, cfg)}; "
            "split it into several leagues (or --remove some)"
        )


MAX_NAME = 1000  # characters in an agent's name (a row of the tables)


def check_agent_name(name: str, where: str = "agent name") -> None:
    """An agent's name in the tables: not empty, no leading or trailing blanks, printable (no newline,
    tab or other control character that would break a row), at most ``MAX_NAME`` characters."""
    if not name.strip():
        raise LeagueError(f"{where}: an empty agent name")
    if name != name.strip() or not name.isprintable() or len(name) > MAX_NAME:
        raise LeagueError(
            f"{where}: agent name {short_repr(name, 80)} must be printable, without leading or trailing blanks "
            f"or control characters (newlines, tabs), and at most {MAX_NAME} characters"
        )


def add_agents(path: str | Path, specs: list[str], names: list[str] | None = None, *, write: bool = True) -> list[dict]:
    """The folder's roster with ``specs`` added (those already in it stay as they are), written back
    unless ``write`` is False.

    A spec given twice raises :class:`LeagueError`. Names default to the specs as given.
    """
    root = Path(path)
    if not write:
        return _with_agents(root, specs, names)
    with folder_lock(root, "roster"):  # the read, the additions and the write in one hold
        roster = _with_agents(root, specs, names)
        write_roster(root, roster)
    return roster


def _with_agents(root: Path, specs: list[str], names: list[str] | None) -> list[dict]:
    roster = _roster(root)
    seen: dict[str, str] = {}
    for spec in specs:
        if not isinstance(spec, str) or not spec.strip():
            raise LeagueError(f"an agent spec must be a non-empty string ({SPEC_HELP}), got {spec!r}")
        norm = normalize_spec(spec)
        if norm in seen:
            same = f" (the same as {seen[norm]!r})" if seen[norm] != spec else ""
            raise LeagueError(f"duplicate agent spec {spec!r}{same}")
        seen[norm] = spec
    known = {e["spec"] for e in roster}
    taken = {e["name"] for e in roster}
    for i, spec in enumerate(specs):
        norm = normalize_spec(spec)
        if norm in known:
            continue
        base = (names[i] if names else spec).strip()
        check_agent_name(base, f"agent {spec!r}")
        name, n = base, 2
        while name in taken:
            name, n = f"{base}#{n}", n + 1
        roster.append({"name": name, "spec": norm})
        known.add(norm)
        taken.add(name)
    return roster


def write_roster(path: str | Path, roster: list[dict]) -> None:
    """Save the roster of league folder ``path``."""
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    _write_json(root / ROSTER_FILE, roster)


def remove_agents(roster: list[dict], which: list[str]) -> list[dict]:
    """``roster`` without the entries named (by name or spec) in ``which`` (their cached matches stay)."""
    for w in which:
        norm = normalize_spec(w)
        keep = [e for e in roster if e["name"] != w.strip() and e["spec"] != norm]
        if len(keep) == len(roster):
            names = ", ".join(e["name"] for e in roster) or "none"
            raise LeagueError(f"--remove {w!r}: no such agent in the league (agents: {names})")
        roster = keep
    return roster


def entrants(roster: list[dict]) -> list[Entrant]:
    """Load every roster agent (a bad spec or a missing file is a :class:`LeagueError`) and identify it.

    Two entries with the same identity (the same checkpoint under two paths) are refused.
    """
    out: list[Entrant] = []
    by_id: dict[str, str] = {}
    for e in roster:
        try:
            agent = make_agent(e["spec"])
        except AgentSpecError as err:
            raise LeagueError(f"agent {e['name']!r}: {err} (remove it with --remove {e['name']!r})") from err
        ident = agent_identity(e["spec"], agent)
        if ident in by_id:
            raise LeagueError(
                f"duplicate agent: {e['name']!r} is the same agent as {by_id[ident]!r} (identity {ident}); "
                f"remove one with --remove"
            )
        by_id[ident] = e["name"]
        out.append(Entrant(e["name"], e["spec"], ident))
    return out


# ---- the trainer hook ----------------------------------------------------------------------------
def add_to_league(path: str | Path, spec: str, name: str | None = None, rules: str | None = None) -> None:
    """Add one agent (e.g. a trainer's evaluation checkpoint) to the roster of league folder ``path``.

    Creates the folder with the default settings and ``rules`` if needed (an existing folder
    keeps its settings: :func:`check_league` compares them, once, before a run). Plays nothing:
    ``fzmj-league --dir PATH`` plays the new pairings.
    """
    with folder_lock(path, "roster"):  # against a league run adding agents at the same time
        if not (Path(path) / CONFIG_FILE).exists():
            open_league(path, rules=rules)
        add_agents(path, [spec], names=[name] if name else None)


def check_league(path: str | Path, rules: str | None = None) -> None:
    """Raise :class:`LeagueError` if ``path`` cannot take agents played under ``rules`` (writes nothing)."""
    root = Path(path)
    if root.exists() and not root.is_dir():
        raise LeagueError(f"league folder {str(root)!r} is not a directory")
    if (root / CONFIG_FILE).exists():
        open_league(root, rules=rules)  # an existing folder is only read and compared
