"""Game records: save any game as JSON and replay it through the engine, bit for bit.

A record holds the preset (its name, its full content ``rules_data`` and the content hash
``rules_digest``, so a game played under a custom rules file replays anywhere), the seed, each hand's wall, dealer and streak, every decision as
``[seat, action]`` and each hand's result. :func:`replay` re-plays the decisions from the first
wall and refuses the record (``RecordError``) at the first point where the engine disagrees.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .atomic import write_atomic
from .checks import MAX_HANDS_PER_GAME, MAX_SEED
from .game import Game, IllegalActionError
from .rules import Rules, RulesError, load_rules, rules_digest, rules_from_data

RECORD_FORMAT = "fzmj-record"
RECORD_VERSION = 2  # v2: + rules_data, rules_digest; v1 records (name only) still replay
_KEYS = {"format", "version", "rules", "seed", "hands_per_game", "hands", "decisions", "scores"}
_KEYS_V2 = _KEYS | {"rules_data", "rules_digest"}


class RecordError(ValueError):
    """A record is corrupted or inconsistent with the engine."""


def make_record(game: Game) -> dict:
    """The record of the game played so far on ``game`` (a JSON-ready dict)."""
    hands = []
    for i, start in enumerate(game.hand_starts):
        hand = dict(start)
        hand["result"] = game.results[i] if i < len(game.results) else None
        hands.append(hand)
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "rules": game.rules.name,
        "rules_data": game.rules.data,
        "rules_digest": game.rules.digest,
        "seed": game.seed,
        "hands_per_game": game.hands_per_game,
        "hands": hands,
        "decisions": [[int(s), int(a)] for s, a in game.decisions],
        "scores": game.scores,
    }


def save_record(record: dict, path: str | Path) -> None:
    """Write ``record`` to ``path`` whole or not at all (``atomic.WriteError`` naming the file)."""
    write_atomic(path, json.dumps(record, ensure_ascii=False, indent=1))


MAX_RECORD_BYTES = 64 << 20  # a 10,000-hand game is ~10 MB; refuse anything far beyond before parsing it


def load_record(path: str | Path) -> dict:
    """Read a record file; raises ``RecordError`` (one line) for anything that is not a record:
    a missing file, a directory, unreadable or invalid UTF-8 / JSON, absurd nesting, wrong fields."""
    p = Path(path)
    try:
        if p.is_dir():
            raise RecordError(f"{path}: is a directory, expected a record file")
        if p.stat().st_size > MAX_RECORD_BYTES:
            raise RecordError(f"{path}: {p.stat().st_size:,} bytes, too large for a record (max {MAX_RECORD_BYTES:,})")
        text = p.read_bytes().decode("utf-8")
        record = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecordError:
        raise
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record file") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the record ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except (json.JSONDecodeError, _NonFinite) as exc:
        raise RecordError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise RecordError(f"{path}: JSON nested too deeply to be a record") from None
    try:
        _check_shape(record)
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None
    return record


class _NonFinite(ValueError):
    pass


def _no_constant(name: str):
    """``NaN``, ``Infinity``: Python's json reads them, JSON has no such numbers (and a page
    that shows the record could not parse them back)."""
    raise _NonFinite(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):  # 1e999 reads as inf
        raise _NonFinite(f"{text[:20]} is out of range for a number")
    return x


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_shape(record) -> None:
    """Every field has the type and range a record's fields have (before any of it reaches the engine)."""
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object")
    if record.get("format") != RECORD_FORMAT or record.get("version") not in (1, RECORD_VERSION):
        raise RecordError(f"unsupported record format {record.get('format')!r} version {record.get('version')!r}")
    missing = (_KEYS if record["version"] == 1 else _KEYS_V2) - set(record)
    if missing:
        raise RecordError(f"record is missing keys: {', '.join(sorted(missing))}")
    if not (_is_int(record["seed"]) and 0 <= record["seed"] <= MAX_SEED):
        raise RecordError(f"seed must be an integer in 0..2**64-1, got {record['seed']!r}")
    hpg = record["hands_per_game"]
    if not (_is_int(hpg) and 1 <= hpg <= MAX_HANDS_PER_GAME):
        raise RecordError(f"hands_per_game must be an integer in 1..{MAX_HANDS_PER_GAME}, got {hpg!r}")
    if not isinstance(record["hands"], list) or not record["hands"]:
        raise RecordError("record has no hands")
    for i, h in enumerate(record["hands"]):
        if not isinstance(h, dict):
            raise RecordError(f"hand {i} must be an object, got {type(h).__name__}")
    if not isinstance(record["decisions"], list):
        raise RecordError(f"decisions must be a list of [seat, action], got {type(record['decisions']).__name__}")
    for i, d in enumerate(record["decisions"]):
        if not (isinstance(d, list) and len(d) == 2 and all(_is_int(x) for x in d)):
            raise RecordError(f"decision {i} must be [seat, action], got {d!r}")
    scores = record["scores"]
    if not (isinstance(scores, list) and len(scores) == 4 and all(_is_int(x) for x in scores)):
        raise RecordError(f"scores must be 4 integers, got {scores!r}")


def record_rules(record: dict) -> Rules:
    """The preset a record was played under: its stored content (v2; the digest must match), or
    the shipped preset of that name (v1 records)."""
    if record.get("version") == 1:
        try:
            return load_rules(record["rules"])
        except RulesError as exc:
            raise RecordError(f"record's rules: {exc}") from exc
    data = record["rules_data"]
    try:
        rules = rules_from_data(data, "record rules_data")
    except RulesError as exc:
        raise RecordError(f"record's rules: {exc}") from exc
    if rules_digest(data) != record["rules_digest"]:
        raise RecordError(f"record's rules_data does not match its rules_digest {record['rules_digest']!r} (edited?)")
    if rules.name != record["rules"]:
        raise RecordError(f"record names preset {record['rules']!r} but its rules_data is {rules.name!r}")
    return rules


def replay(record: dict, rules: str | Rules | None = None) -> Game:
    """Re-play a record through the engine under the preset it names; return the finished ``Game``.

    ``rules`` (a preset name, file or ``Rules``), if given, must be the record's own preset
    (same content): replaying under another preset raises ``RecordError``. Raises
    ``RecordError`` naming the first disagreement: a wall, a seat to act, an illegal
    action, a hand result, the final scores, or decisions left over or missing.
    """
    _check_shape(record)
    own = record_rules(record)
    if rules is not None:
        try:
            asked = load_rules(rules)
        except RulesError as exc:
            raise RecordError(str(exc)) from exc
        if asked.digest != own.digest:
            raise RecordError(
                f"record was played under preset {own.name!r} (digest {own.digest}); it cannot be replayed under "
                f"{asked.name!r} (digest {asked.digest})"
            )
    first = record["hands"][0]
    try:
        game = Game(own, hands_per_game=int(record["hands_per_game"]))
        game.reset(seed=record["seed"], wall=first["wall"], dealer=first["dealer"], streak=first["streak"])
    except (ValueError, TypeError, KeyError) as exc:
        raise RecordError(f"record cannot start: {exc}") from None
    for i, (seat, action) in enumerate(record["decisions"]):
        if game.done:
            raise RecordError(f"decision {i}: the game is already over, {len(record['decisions']) - i} decisions left")
        if seat != game.seat:
            raise RecordError(f"decision {i}: record says seat {seat} acts, the engine says seat {game.seat}")
        try:
            game.step(action)
        except IllegalActionError as exc:
            raise RecordError(f"decision {i}: {exc}") from exc
    if not game.done:
        raise RecordError(f"the record ends before the game does (seat {game.seat} is still to act)")
    if len(game.hand_starts) != len(record["hands"]):
        raise RecordError(f"record has {len(record['hands'])} hands, the replay played {len(game.hand_starts)}")
    for i, (mine, theirs) in enumerate(zip(make_record(game)["hands"], record["hands"], strict=True)):
        if record["version"] == 1 and isinstance(theirs.get("result"), dict):  # v1 results had fewer keys
            mine["result"] = {k: mine["result"].get(k) for k in theirs["result"]}
        for key in ("wall", "dealer", "streak", "result"):
            if mine[key] != theirs.get(key):
                raise RecordError(f"hand {i}: {key} differs from the record (replay gives {mine[key]!r})")
    if game.scores != record["scores"]:
        raise RecordError(f"final scores differ: record {record['scores']}, replay {game.scores}")
    return game
