"""The league's matches: the schedule, the cache entries (one JSON file per match, checksummed)
and playing what the cache lacks through the duplicate evaluator."""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing as mp
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from fzmj_env.atomic import remove_stale_temps
from fzmj_env.checks import check_int

from ..evaluate.play import default_start_method
from ..evaluate.run import evaluate
from ..exec_bot import install_worker_cleanup
from .folder import (
    LEAGUE_VERSION,
    MATCH_DIR,
    Entrant,
    LeagueConfig,
    LeagueError,
    _read_json,
    _spec_file,
    _write_json,
    agent_identity,
)


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
    return dict(iter_schedule(cfg, ents))


def iter_schedule(cfg: LeagueConfig, ents: list[Entrant]) -> Iterator[tuple[tuple[int, int], list[Match]]]:
    """:func:`schedule` one pairing at a time: nothing held for the pairs not reached yet."""
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
            yield (i, j), matches


def _match_path(root: Path, m: Match) -> Path:
    return root / MATCH_DIR / f"{m.key}.json"


# ---- cache entries ---------------------------------------------------------------------------------
# An entry carries the SHA-256 of its own content (canonical JSON, the "checksum" field left out):
# a hand edit of one agent's results would otherwise change the ratings silently. A mismatch is
# refused, naming the file (exit 2), rather than replayed: an edit is deliberate, and replaying
# would hide it; deleting the file replays that match.
def _checksum(entry: dict) -> str:
    body = {k: v for k, v in entry.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, allow_nan=False).encode()).hexdigest()


_COUNTS = ("wins", "self_draws", "deal_ins")


def _check_agent(a, walls: int, hands: int) -> None:
    """One agent's results in an entry: raises ValueError naming the first bad field."""
    if not isinstance(a, dict):
        raise ValueError("an agent's results are not an object")
    per_wall = a.get("per_wall")
    if not isinstance(per_wall, list) or len(per_wall) != walls:
        raise ValueError(f"per_wall must be a list of {walls} numbers")
    for x in (*per_wall, a.get("mean_score"), a.get("win_value_sum")):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"{x!r} is not a finite number")
    check_int("hands", a.get("hands"), hands, hands)
    for c in _COUNTS:
        check_int(c, a.get(c), 0, hands)
    for c in ("specials", "win_types"):
        if not isinstance(a.get(c), dict):
            raise ValueError(f"{c} must be an object")
        for name, v in a[c].items():
            check_int(f"{c}.{name}", v, 0, hands)
    if "decisions" in a:  # entries cached before the evaluator counted each agent's decisions have none
        check_int("decisions", a["decisions"], 0)


def _load_entry(root: Path, m: Match) -> dict | None:
    """The cached result of ``m``, None if not played yet; a damaged or edited entry is a :class:`LeagueError`."""
    path = _match_path(root, m)
    if not path.exists():
        return None
    entry = _read_json(path, "cache entry")
    redo = "delete it to replay that match"
    if not isinstance(entry, dict) or "checksum" not in entry:
        raise LeagueError(f"cache entry {path} has no checksum (edited, or written by an older fzmj-league); {redo}")
    if entry["checksum"] != _checksum(entry):
        raise LeagueError(f"cache entry {path} was changed after it was written (checksum mismatch); {redo}")
    if entry.get("inputs") != m.inputs or not isinstance(entry.get("agents"), dict):
        raise LeagueError(f"cache entry {path} does not hold the match its name says; {redo}")
    slots = m.inputs["slots"] + [m.inputs["slots"][-1]] * (4 - len(m.inputs["slots"]))  # the evaluator's 4 slots
    try:
        for ident in set(slots):
            _check_agent(entry["agents"].get(ident), m.inputs["walls"], 4 * m.inputs["walls"] * slots.count(ident))
        _check_faults(entry, len(m.inputs["slots"]))
    except ValueError as e:
        raise LeagueError(f"cache entry {path} is unreadable ({e}); {redo}") from None
    return entry


def _check_faults(entry: dict, n_slots: int) -> None:
    """The fields the league table's fault shares come from: the match's specs and decisions, and
    the exec bots' fault counts (non-negative integers)."""
    specs = entry.get("specs")
    if not isinstance(specs, list) or len(specs) != n_slots or not all(isinstance(x, str) for x in specs):
        raise ValueError(f"specs must be a list of {n_slots} agent specs")
    check_int("decisions", entry.get("decisions"), 0)
    faults = entry.get("bot_faults", {})
    if not isinstance(faults, dict):
        raise ValueError("bot_faults must be an object")
    for name, f in faults.items():
        if not isinstance(f, dict):
            raise ValueError(f"bot_faults.{name} must be an object")
        for k, v in f.items():
            check_int(f"bot_faults.{name}.{k}", v, 0)


# ---- playing -----------------------------------------------------------------------------------------
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
            "decisions": a["decisions"],  # the evaluator's count of this agent's own decisions
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
    entry["checksum"] = _checksum(entry)
    return key, entry


def _results(tasks: Iterator, n_tasks: int, workers: int, start_method: str | None):
    """The played matches as they end: in this process, or in a pool (terminated on the way out).
    ``tasks`` is read a window at a time (a pool's feeder would otherwise queue every match at once)."""
    workers = min(workers, max(1, n_tasks))
    if workers == 1:
        yield from map(_play_match, tasks)
        return
    ctx = mp.get_context(start_method or default_start_method())  # as the evaluator's
    pool = ctx.Pool(workers, initializer=install_worker_cleanup)  # a worker's exit kills its exec bots
    try:
        while window := list(islice(tasks, 16 * workers)):
            yield from pool.imap_unordered(_play_match, window)
    except BaseException:  # also a generator closed early (GeneratorExit)
        pool.terminate()  # SIGTERM: the workers' handler kills their bots' processes first
        pool.join()
        raise
    pool.close()
    pool.join()


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
    try:
        workers = check_int("workers", workers, 1)
    except ValueError as e:
        raise LeagueError(str(e)) from None
    root = Path(path)
    (root / MATCH_DIR).mkdir(parents=True, exist_ok=True)
    for folder in (root, root / MATCH_DIR):  # temporary files of a run killed or out of disk space
        remove_stale_temps(folder)
    # two passes over the schedule, one pairing at a time: set-up memory does not grow with the pairs
    n_todo = cached = 0
    for _, ms in iter_schedule(cfg, ents):
        for m in ms:
            if _load_entry(root, m) is None:  # every cached entry is checked before anything is played
                n_todo += 1
            else:
                cached += 1
    as_dict = cfg.as_dict()
    tasks = (
        (m.key, m.inputs, tuple(ents[k].spec for k in m.slots), as_dict)
        for _, ms in iter_schedule(cfg, ents)
        for m in ms
        if not _match_path(root, m).exists()  # checked above; this run holds the folder's run lock
    )
    t0 = time.perf_counter()
    if progress:
        sys.stderr.write(
            f"fzmj-league: {len(ents)} agents, {n_todo} matches to play ({n_todo * cfg.hands_per_match} hands), "
            f"{cached} cached\n"
        )
    from tqdm.auto import tqdm

    bar = tqdm(
        total=n_todo * cfg.hands_per_match, unit="hand", desc="fzmj-league", disable=not progress or not n_todo,
        file=sys.stderr,
    )  # fmt: skip
    played = 0
    try:
        for key, entry in _results(tasks, n_todo, workers, start_method):
            _write_json(root / MATCH_DIR / f"{key}.json", entry)  # _match_path's name
            played += 1
            bar.update(cfg.hands_per_match)
    finally:
        bar.close()
    return {
        "matches": played,
        "hands": played * cfg.hands_per_match,
        "cached": cached,
        "elapsed_s": time.perf_counter() - t0,
    }
