"""A league of many agents: every pair plays duplicate matches, results are cached, agents are rated.

    fzmj-league --agents random random:1 heuristic ppo:runs/x/checkpoints/update_000100.pt \\
                --hands-per-pairing 2000 --workers 2 --dir league

**Matches.** Every pair of agents (a *pairing*) plays on the same walls, through the duplicate
evaluator (:func:`fzmj.agents.evaluate.evaluate`, reused as it is: this module has no game loop).
Format ``1v3`` (default): two matches, ``[A, B]`` (A against three B) and ``[B, A]`` (B
against three A), each playing ``W = hands_per_pairing / 8`` walls in all four seat
rotations; format ``2v2``: one match ``[A, B, A, B]`` (alternating seats) on
``W = hands_per_pairing / 4`` walls. Every match of a league uses the league's seed, so
wall ``w`` is the same deal in every match of every pairing.

**Pair statistic.** For a pairing (A, B) and wall w, ``d_w`` is A's mean score per hand on
that wall minus B's (in 1v3 the mean of the two matches' differences on the wall); the pair's
``mean_diff`` is the mean of ``d_w`` over the walls and its 95% interval the Student-t
interval over walls (walls are independent, the hands within a wall are not).

**Rating.** A score-margin paired-comparison model (the Gaussian counterpart of
Bradley-Terry, a.k.a. Massey ratings): ratings ``r`` with ``sum(r) = 0`` that fit
``r_A - r_B ≈ mean_diff(A, B)`` by least squares over the pairings. In a full round robin
``r_A`` is A's mean score difference per hand against the league's agents, counting itself as
0 (``sum_B mean_diff(A, B) / n``), in points per hand. Its 95% interval is a percentile
bootstrap over walls: the walls are resampled jointly for every pairing (they are the same
deals), and the fit is redone per resample. Why not OpenSkill or Elo: both update game by
game, so a rating would depend on the order the league grew in (not only on its results), and
a win/loss model throws away the margin, which is the whole score in mahjong.

**Cache.** ``LEAGUE_DIR/matches/<key>.json`` holds one match; the key hashes the agents'
identities in slot order, the walls, the seed, the batch and the rules' identity. An agent's
identity is its spec for a built-in (``random``, ``random:1``, ``heuristic``), the SHA-256 of
the file for an agent loaded from a file (``ppo:PATH``), and the SHA-256 of the module file for
``python:module:Class``. So adding an agent plays only its pairings, an interrupted league
resumes at the first missing match, and a changed checkpoint is a new agent. The folder also
holds ``config.json`` (seed, format, hands per pairing, batch, rules: fixed for the folder),
``roster.json`` (the agents, added to by ``--agents`` and by ``fzmj-train``'s ``league_dir``),
and the outputs ``league.json`` and ``league.html``.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import math
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fzmj_env.core.state import SPECIAL_NAMES
from fzmj_env.rules import DEFAULT_RULES
from fzmj_env.validate import OneLineParser

from . import SPEC_HELP, AgentSpecError, make_agent
from .evaluate import DEFAULT_BATCH, EvalConfigError, evaluate, mean_ci95

__all__ = [
    "LeagueError",
    "LeagueConfig",
    "Entrant",
    "open_league",
    "add_agents",
    "remove_agents",
    "write_roster",
    "entrants",
    "schedule",
    "play",
    "standings",
    "markdown",
    "html_page",
    "add_to_league",
    "check_league",
    "agent_identity",
    "rules_identity",
    "main",
]

LEAGUE_VERSION = 1
FORMATS = ("1v3", "2v2")
DEFAULT_HANDS = 2000
BOOTSTRAP = 2000  # resamples of the walls for the rating intervals
CONFIG_FILE, ROSTER_FILE, MATCH_DIR = "config.json", "roster.json", "matches"


class LeagueError(ValueError):
    """Bad league input: duplicate or missing agents, a folder made with other settings, a bad cache entry."""


# ---------------------------------------------------------------------------------------------
# identities
# ---------------------------------------------------------------------------------------------
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
        from .exec_bot import normalize_exec_spec

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
        from .exec_bot import exec_identity

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


# ---------------------------------------------------------------------------------------------
# the league folder
# ---------------------------------------------------------------------------------------------
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


def _write_json(path: Path, data) -> None:
    """Write atomically (temporary file, then rename): a kill never leaves half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def _read_json(path: Path, what: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise LeagueError(
            f"{what} {path} is unreadable ({type(e).__name__}: {e}); delete it or use another --dir"
        ) from e


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
    for key, value in (("seed", seed), ("hands_per_pairing", hands_per_pairing), ("batch", batch)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise LeagueError(f"{key} must be an integer, got {value!r}")
    if seed is not None and not 0 <= seed < 2**64:
        raise LeagueError(f"seed must be in 0..2**64-1, got {seed}")
    if hands_per_pairing is not None and hands_per_pairing < 1:
        raise LeagueError(f"hands per pairing must be >= 1, got {hands_per_pairing}")
    if batch is not None and (batch < 4 or batch % 4):
        raise LeagueError(f"batch must be a positive multiple of 4, got {batch}")
    if rules is not None and Path(rules).is_file():
        rules = str(Path(rules).resolve())
    cfg_path = root / CONFIG_FILE
    base = {"seed": 0, "format": "1v3", "hands_per_pairing": DEFAULT_HANDS, "batch": DEFAULT_BATCH}
    base_rules, base_rid = DEFAULT_RULES, None
    if cfg_path.exists():
        old = _read_json(cfg_path, "league config")
        try:
            if old.get("fzmj_league") != LEAGUE_VERSION:
                raise LeagueError(f"{cfg_path}: league version {old.get('fzmj_league')!r}, expected {LEAGUE_VERSION}")
            base = {"seed": int(old["seed"]), "format": str(old["format"]), "batch": int(old["batch"]),
                    "hands_per_pairing": int(old["hands_per_pairing"])}  # fmt: skip
            base_rules, base_rid = str(old["rules"]), dict(old["rules_id"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, LeagueError):
                raise
            raise LeagueError(f"league config {cfg_path} is unreadable (bad field {e}); delete it") from e
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
        seed=int(values["seed"]),
        format=values["format"],
        hands_per_pairing=int(values["hands_per_pairing"]),
        rules=rules_spec,
        rules_id=rid,
        batch=int(values["batch"]),
    )
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
    if not isinstance(data, list) or not all(isinstance(e, dict) and {"name", "spec"} <= set(e) for e in data):
        raise LeagueError(f"league roster {path} is unreadable (expected a list of {{name, spec}}); delete it")
    return data


def add_agents(path: str | Path, specs: list[str], names: list[str] | None = None, *, write: bool = True) -> list[dict]:
    """The folder's roster with ``specs`` added (those already in it stay as they are), written back
    unless ``write`` is False.

    A spec given twice raises :class:`LeagueError`. Names default to the specs as given.
    """
    root = Path(path)
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
        name, n = base, 2
        while name in taken:
            name, n = f"{base}#{n}", n + 1
        roster.append({"name": name, "spec": norm})
        known.add(norm)
        taken.add(name)
    if write:
        write_roster(root, roster)
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


# ---------------------------------------------------------------------------------------------
# schedule, cache, play
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Match:
    """One call of the evaluator: ``slots`` (entrant indices, 2 for 1v3, 4 for 2v2) on the league's walls."""

    slots: tuple[int, ...]
    key: str
    inputs: dict


def _pair_slots(cfg: LeagueConfig, a: int, b: int) -> list[tuple[int, ...]]:
    return [(a, b), (b, a)] if cfg.format == "1v3" else [(a, b, a, b)]


def schedule(cfg: LeagueConfig, ents: list[Entrant]) -> dict[tuple[int, int], list[Match]]:
    """The matches of every pairing ``(i, j)``, ``i < j``; a pair is ordered by identity so the key
    does not depend on the roster's order."""
    out = {}
    for i in range(len(ents)):
        for j in range(i + 1, len(ents)):
            a, b = sorted((i, j), key=lambda k: ents[k].identity)
            matches = []
            for slots in _pair_slots(cfg, a, b):
                inputs = {
                    "version": LEAGUE_VERSION,
                    "slots": [ents[k].identity for k in slots],
                    "walls": cfg.walls,
                    "seed": cfg.seed,
                    "batch": cfg.batch,
                    "rules": cfg.rules_id,
                }
                key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]
                matches.append(Match(slots, key, inputs))
            out[(i, j)] = matches
    return out


def _match_path(root: Path, m: Match) -> Path:
    return root / MATCH_DIR / f"{m.key}.json"


def _load_entry(root: Path, m: Match) -> dict | None:
    """The cached result of ``m``, None if not played yet; a damaged entry is a :class:`LeagueError`."""
    path = _match_path(root, m)
    if not path.exists():
        return None
    entry = _read_json(path, "cache entry")
    try:
        ok = entry["inputs"] == m.inputs and all(
            len(entry["agents"][ident]["per_wall"]) == m.inputs["walls"] for ident in set(m.inputs["slots"])
        )
    except (KeyError, TypeError) as e:
        raise LeagueError(
            f"cache entry {path} is unreadable (missing field {e}); delete it to replay that match"
        ) from e
    if not ok:
        raise LeagueError(f"cache entry {path} does not hold the match its name says; delete it to replay that match")
    return entry


def _check_identities(specs, identities, modules: bool = True) -> None:
    """Refuse to play (or to save) a match whose agent's file changed since the league identified it.
    ``modules=False``: skip ``python:`` agents (their module is imported when the match starts)."""
    for spec, ident in zip(specs, identities, strict=True):
        check = _spec_file(spec) is not None or spec.startswith("exec:") or (modules and spec.startswith("python:"))
        if check and agent_identity(spec) != ident:
            raise RuntimeError(f"agent {spec!r} changed while the league was running; run the league again")


def _play_match(task: tuple) -> tuple[str, dict]:
    """Play one match through the evaluator; the cache entry (per-wall scores and counts per agent)."""
    key, inputs, specs, cfg_dict = task
    _check_identities(specs, inputs["slots"], modules=False)
    res, raw = evaluate(
        list(specs),
        hands=4 * inputs["walls"],
        seed=cfg_dict["seed"],
        workers=1,
        progress=False,
        rules=cfg_dict["rules"],
        batch=cfg_dict["batch"],
        _raw=True,
    )
    _check_identities(specs, inputs["slots"])  # what was loaded is what the key names
    agents = {}
    for spec, ident in zip(specs, inputs["slots"], strict=True):
        if ident in agents:
            continue
        a = res["agents"][spec.strip()]
        n = a["hands"]
        agents[ident] = {
            "per_wall": [float(x) for x in raw["per_wall"][spec.strip()]],
            "hands": n,
            "mean_score": a["mean_score"],
            "wins": a["wins"],
            # the evaluator reports these as count / hands: exact integers back
            "self_draws": round(a["self_draw_rate"] * n),
            "deal_ins": round(a["deal_in_rate"] * n),
            "win_value_sum": (a["mean_win_value"] or 0.0) * a["wins"],
            "specials": a["specials"],
            "win_types": a["win_types"],
        }
    entry = {
        "inputs": inputs,
        "specs": list(specs),
        "agents": agents,
        "draw_rate": res["draw_rate"],
        "elapsed_s": res["timing"]["elapsed_s"],
        "decisions": res["timing"]["decisions"],
    }
    if "bot_faults" in res:  # exec bots: crashes, timeouts, ... in this match (docs/protocol.md)
        entry["bot_faults"] = res["bot_faults"]
    return key, entry


def play(
    path: str | Path,
    cfg: LeagueConfig,
    ents: list[Entrant],
    workers: int = 1,
    progress: bool = True,
    start_method: str | None = None,
) -> dict:
    """Play every match of the league not in the cache yet, saving each as soon as it ends.

    ``workers`` > 1 plays matches in that many processes; a match's result depends only on its
    key's inputs, never on ``workers``. Returns ``{"matches": played, "hands": played hands,
    "cached": matches already there, "elapsed_s": ...}``.
    """
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise LeagueError(f"workers must be a positive integer, got {workers!r}")
    root = Path(path)
    (root / MATCH_DIR).mkdir(parents=True, exist_ok=True)
    todo: list[Match] = []
    cached = 0
    for matches in schedule(cfg, ents).values():
        for m in matches:
            if _load_entry(root, m) is None:
                todo.append(m)
            else:
                cached += 1
    tasks = [(m.key, m.inputs, tuple(ents[k].spec for k in m.slots), cfg.as_dict()) for m in todo]
    paths = {m.key: _match_path(root, m) for m in todo}
    t0 = time.perf_counter()
    if progress:
        sys.stderr.write(
            f"fzmj-league: {len(ents)} agents, {len(todo)} matches to play ({len(todo) * cfg.hands_per_match} hands), "
            f"{cached} cached\n"
        )
    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(todo) * cfg.hands_per_match, unit="hand", desc="fzmj-league", disable=not progress or not todo,
        file=sys.stderr,
    )  # fmt: skip
    played = 0
    try:
        workers = min(int(workers), max(1, len(tasks)))
        if workers == 1:
            results = map(_play_match, tasks)
            pool = None
        else:
            if start_method is None:  # as the evaluator: fork unless torch is loaded here
                fork_ok = "fork" in mp.get_all_start_methods() and "torch" not in sys.modules
                start_method = "fork" if fork_ok else "spawn"
            pool = mp.get_context(start_method).Pool(workers)
            results = pool.imap_unordered(_play_match, tasks)
        try:
            for key, entry in results:
                _write_json(paths[key], entry)
                played += 1
                bar.update(cfg.hands_per_match)
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()
    finally:
        bar.close()
    return {
        "matches": played,
        "hands": played * cfg.hands_per_match,
        "cached": cached,
        "elapsed_s": time.perf_counter() - t0,
    }


# ---------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------
def _pair_walls(cfg: LeagueConfig, entries: list[dict], ia: str, ib: str) -> np.ndarray:
    """``d_w``: A's mean score per hand on wall w minus B's, averaged over the pairing's matches."""
    d = [np.asarray(e["agents"][ia]["per_wall"]) - np.asarray(e["agents"][ib]["per_wall"]) for e in entries]
    return np.mean(d, axis=0)


def _oriented(pair: dict, rank: dict) -> dict:
    """``pair`` as "a vs b" with a the better-ranked agent (the difference and interval flipped if needed)."""
    if rank[pair["a"]] < rank[pair["b"]]:
        return pair
    ci = pair["ci95"]
    return {**pair, "a": pair["b"], "b": pair["a"], "mean_diff": -pair["mean_diff"], "ci95": ci and [-ci[1], -ci[0]]}


def _fit(X_pinv: np.ndarray, diffs: np.ndarray) -> np.ndarray:
    """Least-squares ratings (sum zero: the minimum-norm solution) for pair differences ``diffs`` (P, ...)."""
    return X_pinv @ diffs


def standings(path: str | Path, cfg: LeagueConfig, ents: list[Entrant], played: dict | None = None) -> dict:
    """The league table (``league.json``) from the cache: ratings, pairs and per-agent statistics.

    Every pairing of ``ents`` must be in the cache (run :func:`play` first).
    """
    root = Path(path)
    n = len(ents)
    sched = schedule(cfg, ents)
    pairs = []
    diffs = []
    X = np.zeros((len(sched), n))
    totals = [
        {"hands": 0, "score_sum": 0.0, "wins": 0, "self_draws": 0, "deal_ins": 0, "win_value_sum": 0.0,
         "specials": dict.fromkeys(SPECIAL_NAMES, 0), "win_types": {}}
        for _ in ents
    ]  # fmt: skip
    for p, ((i, j), matches) in enumerate(sched.items()):
        entries = []
        for m in matches:
            e = _load_entry(root, m)
            if e is None:
                raise LeagueError(f"pairing {ents[i].name} vs {ents[j].name} is not played yet; run the league first")
            entries.append(e)
        for k in (i, j):
            t = totals[k]
            for e in entries:
                a = e["agents"][ents[k].identity]
                t["hands"] += a["hands"]
                t["score_sum"] += a["mean_score"] * a["hands"]
                for c in ("wins", "self_draws", "deal_ins", "win_value_sum"):
                    t[c] += a[c]
                for s, v in a["specials"].items():
                    t["specials"][s] = t["specials"].get(s, 0) + v
                for s, v in a["win_types"].items():
                    t["win_types"][s] = t["win_types"].get(s, 0) + v
        d = _pair_walls(cfg, entries, ents[i].identity, ents[j].identity)
        mean, ci = mean_ci95(d)
        diffs.append(d)
        X[p, i], X[p, j] = 1.0, -1.0
        pairs.append({"a": ents[i].name, "b": ents[j].name, "mean_diff": mean, "ci95": ci, "walls": int(d.size)})
    D = np.array(diffs)  # (P, W)
    X_pinv = np.linalg.pinv(X)
    rating = _fit(X_pinv, D.mean(axis=1))
    W = D.shape[1]
    rng = np.random.default_rng([cfg.seed & (2**63 - 1), 16])
    counts = rng.multinomial(W, np.full(W, 1.0 / W), size=BOOTSTRAP)  # (B, W) resampled walls, shared by all pairs
    boot = _fit(X_pinv, D @ counts.T / W)  # (n, B)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=1)
    agents = []
    for k, e in enumerate(ents):
        t = totals[k]
        h = t["hands"]
        agents.append(
            {
                "name": e.name,
                "spec": e.spec,
                "identity": e.identity,
                "rating": float(rating[k]),
                "rating_ci95": [float(lo[k]), float(hi[k])],
                "mean_score": t["score_sum"] / h,
                "hands": h,
                "win_rate": t["wins"] / h,
                "self_draw_rate": t["self_draws"] / h,
                "deal_in_rate": t["deal_ins"] / h,
                "wins": t["wins"],
                "mean_win_value": t["win_value_sum"] / t["wins"] if t["wins"] else None,
                "win_types": t["win_types"],
                "specials": t["specials"],
            }
        )
    order = sorted(range(n), key=lambda k: (-agents[k]["rating"], agents[k]["name"]))
    rank = {}
    for r, k in enumerate(order, 1):
        agents[k]["rank"] = rank[agents[k]["name"]] = r
    pairs = [_oriented(p, rank) for p in pairs]  # the better-ranked agent first, in leaderboard order
    pairs.sort(key=lambda p: (rank[p["a"]], rank[p["b"]]))
    return {
        "fzmj_league": LEAGUE_VERSION,
        "config": cfg.as_dict(),
        "walls_per_match": cfg.walls,
        "hands_per_match": cfg.hands_per_match,
        "matches_per_pairing": 2 if cfg.format == "1v3" else 1,
        "rating_model": (
            "score-margin paired comparison (least squares, sum zero; Gaussian Bradley-Terry / Massey): "
            "r_a - r_b fits the mean score difference per hand of each pairing; in a full round robin r_a is a's "
            "mean difference against the league's agents (itself counted as 0). 95% interval: percentile "
            f"bootstrap over walls ({BOOTSTRAP} resamples, walls resampled jointly for every pairing)"
        ),
        "agents": [agents[k] for k in order],
        "pairs": pairs,
        "played": played,
    }


# ---------------------------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------------------------
def _f(x, fmt="{:+.2f}") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def _ci(ci) -> str:
    return "–" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _headline(res: dict) -> str:
    c = res["config"]
    fmt = "A vs three B and B vs three A" if c["format"] == "1v3" else "A B A B, alternating seats"
    return (
        f"{len(res['agents'])} agents, {len(res['pairs'])} pairings; format {c['format']} ({fmt}); "
        f"{res['matches_per_pairing'] * res['hands_per_match']} hands per pairing "
        f"({res['walls_per_match']} walls × 4 seat rotations per match, duplicate); seed {c['seed']}; "
        f"rules `{c['rules_id']['name']}`"
    )


def _table_rows(res: dict) -> tuple[list[str], list[list[str]]]:
    head = ["rank", "agent", "rating (points / hand)", "95% CI", "mean score / hand", "win %", "self-draw %",
            "deal-in %", "mean win value", "hands"]  # fmt: skip
    rows = [
        [str(a["rank"]), a["name"], _f(a["rating"]), _ci(a["rating_ci95"]), _f(a["mean_score"]),
         f"{100 * a['win_rate']:.1f}", f"{100 * a['self_draw_rate']:.1f}", f"{100 * a['deal_in_rate']:.1f}",
         _f(a["mean_win_value"], "{:.1f}"), str(a["hands"])]
        for a in res["agents"]
    ]  # fmt: skip
    return head, rows


def markdown(res: dict) -> str:
    """The leaderboard, the pairs and the special counts as Markdown."""

    def md_name(s: str) -> str:
        return s.replace("|", "\\|")

    head, rows = _table_rows(res)
    lines = [f"**fzmj-league** — {_headline(res)}", ""]
    lines += ["| " + " | ".join(head) + " |", "| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += ["| " + " | ".join([r[0], md_name(r[1]), *r[2:]]) + " |" for r in rows]
    lines += [
        "",
        "Rating: least-squares fit of every pairing's mean score difference per hand (sum zero), i.e. the "
        "mean difference against the league's agents; 95% CI by bootstrap over walls.",
        "",
        "| pair (a vs b) | mean score diff / hand (a − b) | 95% CI |",
        "| --- | ---: | --- |",
    ]
    lines += [
        f"| {md_name(p['a'])} vs {md_name(p['b'])} | {_f(p['mean_diff'])} | {_ci(p['ci95'])} |" for p in res["pairs"]
    ]
    lines += ["", "| agent | " + " | ".join(SPECIAL_NAMES) + " |", "| --- |" + " ---: |" * len(SPECIAL_NAMES)]
    for a in res["agents"]:
        lines.append(
            f"| {md_name(a['name'])} | " + " | ".join(str(a["specials"].get(s, 0)) for s in SPECIAL_NAMES) + " |"
        )
    p = res.get("played")
    if p:
        lines += [
            "",
            f"_played now: {p['matches']} matches ({p['hands']} hands) in {p['elapsed_s']:.1f} s; "
            f"{p['cached']} matches from the cache_",
        ]
    return "\n".join(lines)


def _svg_ratings(res: dict) -> str:
    """A dot-and-whisker plot of the ratings and their intervals, as inline SVG (no script, no network)."""
    agents = res["agents"]
    lows = [a["rating_ci95"][0] for a in agents] + [0.0]
    highs = [a["rating_ci95"][1] for a in agents] + [0.0]
    lo, hi = min(lows), max(highs)
    span = hi - lo or 1.0
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    label_w, plot_w, row_h, top = 260, 520, 26, 30
    height = top + row_h * len(agents) + 40

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    step = 10 ** math.floor(math.log10((hi - lo) / 5 or 1))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (m * step) <= 8:
            step *= m
            break
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 20}" height="{height}" '
        f'role="img" aria-label="ratings with 95% intervals">'
    ]
    t = math.ceil(lo / step) * step
    while t <= hi:
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 8}" x2="{x(t):.1f}" y2="{height - 30}" class="grid"/>')
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - 14}" text-anchor="middle">{0 if abs(t) < step / 2 else t:+g}</text>'
        )
        t += step
    parts.append(f'<line x1="{x(0):.1f}" y1="{top - 8}" x2="{x(0):.1f}" y2="{height - 30}" class="zero"/>')
    for r, a in enumerate(agents):
        y = top + r * row_h + row_h / 2
        c_lo, c_hi = a["rating_ci95"]
        tip = html.escape(f"{a['name']}: {a['rating']:+.2f} [{c_lo:+.2f}, {c_hi:+.2f}]")
        parts.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end">{html.escape(a["name"][:40])}</text>')
        parts.append(f"<g><title>{tip}</title>")
        parts.append(f'<line x1="{x(c_lo):.1f}" y1="{y:.1f}" x2="{x(c_hi):.1f}" y2="{y:.1f}" class="ci"/>')
        for v in (c_lo, c_hi):
            parts.append(f'<line x1="{x(v):.1f}" y1="{y - 5:.1f}" x2="{x(v):.1f}" y2="{y + 5:.1f}" class="ci"/>')
        parts.append(f'<circle cx="{x(a["rating"]):.1f}" cy="{y:.1f}" r="4.5" class="dot"/></g>')
    parts.append(
        f'<text x="{label_w + plot_w / 2:.0f}" y="{top - 14}" text-anchor="middle">rating, points per hand '
        "(dot) and 95% interval</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; background: #fff; max-width: 1100px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }
td { white-space: nowrap; }
th { background: #f4f4f4; } td.name, th.name { text-align: left; }
td.pos { color: #0a6b2d; } td.neg { color: #a4161a; }
svg text { font-size: 12px; fill: #222; } svg .grid { stroke: #e4e4e4; } svg .zero { stroke: #888; }
svg .ci { stroke: #1f5fa8; stroke-width: 2; } svg .dot { fill: #1f5fa8; }
p.note { color: #555; font-size: 0.9em; }
"""


def html_page(res: dict) -> str:
    """A self-contained HTML page: leaderboard, ratings plot (inline SVG), pair matrix, special counts."""
    e = html.escape
    head, rows = _table_rows(res)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>fzmj-league</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>fzmj-league</h1>",
        f"<p>{e(_headline(res)).replace('`', '')}</p>",
        "<h2>Leaderboard</h2><table><tr>",
    ]
    out += [f'<th class="{"name" if h == "agent" else ""}">{e(h)}</th>' for h in head]
    out.append("</tr>")
    for r in rows:
        out.append(
            "<tr>" + "".join(f'<td class="{"name" if c == 1 else ""}">{e(v)}</td>' for c, v in enumerate(r)) + "</tr>"
        )
    out += ["</table>", f'<p class="note">{e(res["rating_model"])}.</p>', "<h2>Ratings</h2>", _svg_ratings(res)]
    # the pair matrix: row agent minus column agent, in leaderboard order
    names = [a["name"] for a in res["agents"]]
    cell = {}
    for p in res["pairs"]:
        cell[(p["a"], p["b"])] = (p["mean_diff"], p["ci95"])
        cell[(p["b"], p["a"])] = (-p["mean_diff"], None if p["ci95"] is None else [-p["ci95"][1], -p["ci95"][0]])
    out += [
        "<h2>Pairs: mean score difference per hand (row − column)</h2>",
        '<table><tr><th class="name"></th>' + "".join(f"<th>{e(n[:24])}</th>" for n in names) + "</tr>",
    ]
    for a in names:
        tds = []
        for b in names:
            if a == b:
                tds.append("<td>·</td>")
                continue
            m, ci = cell[(a, b)]
            cls = "pos" if ci and ci[0] > 0 else "neg" if ci and ci[1] < 0 else ""
            tds.append(f'<td class="{cls}" title="95% CI {e(_ci(ci))}">{e(_f(m))}</td>')
        out.append(f'<tr><td class="name">{e(a)}</td>' + "".join(tds) + "</tr>")
    out += [
        "</table>",
        '<p class="note">Green: the row agent is ahead with 95% confidence; red: behind. Hover a cell for its interval.</p>',
        "<h2>Special counts</h2>",
        '<table><tr><th class="name">agent</th>' + "".join(f"<th>{e(s)}</th>" for s in SPECIAL_NAMES) + "</tr>",
    ]
    for a in res["agents"]:
        out.append(
            f'<tr><td class="name">{e(a["name"])}</td>'
            + "".join(f"<td>{a['specials'].get(s, 0)}</td>" for s in SPECIAL_NAMES)
            + "</tr>"
        )
    out += ["</table>", "</body></html>", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# the trainer hook
# ---------------------------------------------------------------------------------------------
def add_to_league(path: str | Path, spec: str, name: str | None = None, rules: str | None = None) -> None:
    """Add one agent (e.g. a trainer's evaluation checkpoint) to the roster of league folder ``path``.

    Creates the folder with the default settings and ``rules`` if needed (an existing folder
    keeps its settings: :func:`check_league` compares them, once, before a run). Plays nothing:
    ``fzmj-league --dir PATH`` plays the new pairings.
    """
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


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="fzmj-league",
        description="Rank many agents: every pair plays duplicate matches on shared walls; results are cached "
        "in the league folder, so adding an agent plays only its new pairings and a stopped league resumes.",
        epilog=f"Agent specs: {SPEC_HELP}. Outputs: a Markdown leaderboard on stdout, DIR/league.json, DIR/league.html.",
    )
    p.add_argument("--agents", nargs="+", default=[], metavar="SPEC", help="agents to add to the league (its roster)")
    p.add_argument("--remove", nargs="+", default=[], metavar="NAME", help="agents to take out of the roster")
    p.add_argument("--dir", default="league", metavar="LEAGUE_DIR", help="league folder (default ./league)")
    p.add_argument(
        "--hands-per-pairing", type=int, help=f"hands per pair of agents (default {DEFAULT_HANDS}; fixed per folder)"
    )
    p.add_argument("--format", choices=FORMATS, help="1v3 (default): A vs three B and B vs three A; 2v2: A B A B")
    p.add_argument("--rules", help=f"rule preset or rules file (default {DEFAULT_RULES}; fixed per folder)")
    p.add_argument("--seed", type=int, help="seed of the walls (default 0; fixed per folder)")
    p.add_argument(
        "--workers", type=int, default=1, help="processes playing matches (default 1; results do not depend on it)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress output")
    return p


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be >= 1")
    if args.hands_per_pairing is not None and args.hands_per_pairing < 1:
        p.error("--hands-per-pairing must be >= 1")
    if len(set(args.agents)) != len(args.agents):
        dup = next(s for s in args.agents if args.agents.count(s) > 1)
        p.error(f"duplicate agent spec {dup!r}")
    try:
        cfg = open_league(
            args.dir,
            seed=args.seed,
            format=args.format,
            hands_per_pairing=args.hands_per_pairing,
            rules=args.rules,
            write=False,
        )
        roster = remove_agents(add_agents(args.dir, args.agents, write=False), args.remove)
        if len(roster) < 2:
            raise LeagueError(
                f"a league needs at least 2 agents, the folder {args.dir!r} would have {len(roster)}; add some with --agents"
            )
        ents = entrants(roster)  # every agent loads and is distinct before the roster is saved
        save_config(args.dir, cfg)
        write_roster(args.dir, roster)
        played = play(args.dir, cfg, ents, workers=args.workers, progress=not args.no_progress)
        res = standings(args.dir, cfg, ents, played)
    except (LeagueError, AgentSpecError, EvalConfigError) as e:
        p.error(str(e))
    except KeyboardInterrupt:
        sys.stderr.write(f"{p.prog}: interrupted; the finished matches are saved, run it again to resume\n")
        return 130
    except Exception as e:  # noqa: BLE001 - an agent failed during play: one line, exit 1
        sys.stderr.write(f"{p.prog}: error: {type(e).__name__}: {e}\n")
        return 1
    root = Path(args.dir)
    _write_json(root / "league.json", res)
    (root / "league.html").write_text(html_page(res), encoding="utf-8")
    print(markdown(res))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
