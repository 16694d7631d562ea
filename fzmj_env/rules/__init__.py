"""Rule presets as data (R13, docs/presets.md P1–P5): one YAML file per preset, validated on load.

Each file names a ``scheme`` (the branch of the one Numba rules core it plays: ``lianzhong``,
``classic``, ``lianzhong-2``, ``bianfeng``, ``home``) and the numbers of that scheme. The
engine reads them from the table's rule slots (``core/state.py`` R_*), so a user can copy a
preset file, change a number (a special's value, the 边锋 ``loss_cap``, ``gold_kan`` 60 or 120)
and pass the file path as ``rules=``; a file's ``name`` is its file name without ``.yaml``
(``my-rules.yaml`` says ``name: my-rules``), so a copy never reports itself as the original. A key the scheme does not know, a missing key or a
wrong type or a number out of its range names itself in a ``RulesError`` (one line).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..checks import short_repr
from ..cli import read_yaml_file
from ..core import state

DEFAULT_RULES = "fuzhou-lianzhong"
PRESET_DIR = Path(__file__).parent

# Inclusive bounds of every number in a preset file. They keep each hand's payments inside the
# engine's int32 points with a wide margin (docs/presets.md, "Limits on a rules file", derives it;
# tests/test_rules_files.py checks the extreme values): with the dealer streak at its most,
# MAX_STREAK + MAX_HANDS_PER_GAME = 20,000, the largest winner's gain of any scheme is about 4.2e8
# (联众 2: (h x multiplier + special + special_bonus) x base, three payers, plus the streak x base).
WALL_IN_PLAY = 144 - 65 - 1
"""Most tiles the wall can hold when play starts (R3: 65 dealt; R5: at least the gold flipped)."""
MAX_SPECIAL = 10_000
_RESERVE = {
    "base": (0, WALL_IN_PLAY - 1),  # a reserve of the whole wall would draw every hand at once
    "exposed_kong": (0, WALL_IN_PLAY),
    "concealed_kong": (0, WALL_IN_PLAY),
    "flower_set": (0, WALL_IN_PLAY),
}
_KONG = {"exposed": (0, 100), "concealed": (0, 100)}
_BASE, _MULT, _FLOWER_SET_BONUS = (0, 100), (0, 64), (0, 100)
# specials each scheme knows (docs/presets.md); the others are not specials of that preset
_SPECIALS = {
    "lianzhong": state.SPECIAL_NAMES[:7],  # P1 = R11.3
    "classic": state.SPECIAL_NAMES,  # P2: + half_flush, full_flush, gold_kan
    "lianzhong-2": ("rob_gold", "no_flower_no_kong", "three_golds", "golden_pair"),  # P3
    "bianfeng": ("rob_gold", "no_flower_no_kong", "three_golds", "golden_pair"),  # P4
    "home": ("heavenly", "rob_gold", "three_golds"),  # P5: listed, worth 0
}
# scoring keys per scheme besides kong_points and specials; a list is (length, (lo, hi))
_SCORING = {
    "lianzhong": {"base": _BASE, "multiplier": _MULT, "flower_set_bonus": _FLOWER_SET_BONUS},
    "classic": {"base": _BASE, "multiplier": _MULT, "flower_set_bonus": _FLOWER_SET_BONUS},
    "lianzhong-2": {
        "base": _BASE,
        "multiplier": _MULT,
        "flower_set_bonus": _FLOWER_SET_BONUS,
        "special_bonus": (0, MAX_SPECIAL),
    },
    "bianfeng": {"base": _BASE, "multiplier": _MULT, "flower_set_bonus": _FLOWER_SET_BONUS, "loss_cap": (0, 10**9)},
    "home": {
        "base": _BASE,
        "multiplier": _MULT,
        "discard_bonus": (0, 100),
        "swim_multipliers": [state.MAX_SWIM, _MULT],
    },
}


class RulesError(ValueError):
    """A rule preset is unknown or its file is malformed."""


@dataclass(frozen=True)
class Rules:
    """A validated rule preset. ``params`` is what the engine copies into each table."""

    name: str
    data: dict
    params: np.ndarray  # int32 values for the R_* slots of the state, in slot order

    @property
    def scheme(self) -> str:
        """The branch of the rules core this preset plays (``SCHEME_NAMES``)."""
        return self.data.get("scheme", "lianzhong")

    @property
    def digest(self) -> str:
        """A hash of the preset's content (records check it on replay)."""
        return rules_digest(self.data)


def rules_digest(data: dict) -> str:
    """sha256 (first 16 hex digits) of a preset's content, independent of key order and comments."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _schema(scheme: str) -> dict:
    scoring = dict(_SCORING[scheme])
    scoring["kong_points"] = _KONG
    scoring["specials"] = {name: (0, MAX_SPECIAL) for name in _SPECIALS[scheme]}
    return {"name": str, "source": str, "scheme": str, "reserve": _RESERVE, "scoring": scoring}


def _check_int(path: str, value, bounds: tuple[int, int]) -> None:
    lo, hi = bounds
    if not isinstance(value, int) or isinstance(value, bool):
        raise RulesError(f"{path}: expected an integer in {lo}..{hi}, got {short_repr(value)}")
    if not lo <= value <= hi:
        raise RulesError(f"{path}: {short_repr(value)} is out of range; allowed {lo}..{hi}")


def _validate(data, schema, where: str, optional=()) -> None:
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a mapping, got {type(data).__name__}")
    for key in data:
        if key not in schema:
            raise RulesError(f"{where}: unknown key {short_repr(key)} (allowed: {', '.join(schema)})")
    for key, sub in schema.items():
        if key not in data:
            if key in optional:
                continue
            raise RulesError(f"{where}: missing key {key!r}")
        value = data[key]
        path = f"{where}.{key}"
        if isinstance(sub, dict):
            _validate(value, sub, path)
        elif isinstance(sub, tuple):
            _check_int(path, value, sub)
        elif isinstance(sub, list):
            length, (lo, hi) = sub
            if not isinstance(value, list) or len(value) != length:
                raise RulesError(f"{path}: expected a list of {length} integers in {lo}..{hi}, got {short_repr(value)}")
            for i, v in enumerate(value):
                _check_int(f"{path}[{i}]", v, (lo, hi))
        elif not isinstance(value, sub):
            raise RulesError(f"{path}: expected {sub.__name__}, got {short_repr(value)}")


def validate_rules(data, where: str = "rules") -> None:
    """Raise ``RulesError`` unless ``data`` is a valid preset mapping."""
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a mapping, got {type(data).__name__}")
    scheme = data.get("scheme", "lianzhong")
    if scheme not in state.SCHEME_NAMES:
        raise RulesError(
            f"{where}.scheme: unknown scheme {short_repr(scheme)} (one of {', '.join(state.SCHEME_NAMES)})"
        )
    _validate(data, _schema(scheme), where, optional=("scheme",))


def _params(data: dict) -> np.ndarray:
    scheme = data.get("scheme", "lianzhong")
    r, sc = data["reserve"], data["scoring"]
    values = {
        state.R_RESERVE_BASE: r["base"],
        state.R_RESERVE_EXPOSED_KONG: r["exposed_kong"],
        state.R_RESERVE_CONCEALED_KONG: r["concealed_kong"],
        state.R_RESERVE_FLOWER_SET: r["flower_set"],
        state.R_BASE: sc["base"],
        state.R_MULT: sc["multiplier"],
        state.R_FLOWER_SET_BONUS: sc.get("flower_set_bonus", 0),
        state.R_KONG_EXPOSED_PTS: sc["kong_points"]["exposed"],
        state.R_KONG_CONCEALED_PTS: sc["kong_points"]["concealed"],
        state.R_SCHEME: state.SCHEME_NAMES.index(scheme),
        state.R_LOSS_CAP: sc.get("loss_cap", 0),
        state.R_SPECIAL_BONUS: sc.get("special_bonus", 0),
        state.R_DISCARD_BONUS: sc.get("discard_bonus", 0),
    }
    for i, v in enumerate(sc.get("swim_multipliers", [0] * state.MAX_SWIM)):
        values[state.R_SWIM_MULT + i] = v
    for i, name in enumerate(state.SPECIAL_NAMES):  # -1: not a special of this preset
        values[state.R_SPECIAL_VALUES + i] = sc["specials"].get(name, -1)
    out = np.zeros(state.NUM_SCALARS - state.R_RESERVE_BASE, dtype=np.int32)
    for slot, v in values.items():
        out[slot - state.R_RESERVE_BASE] = v
    return out


def available_rules() -> list[str]:
    """Names of the presets that ship with the package."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def rules_from_data(data: dict, where: str = "rules") -> Rules:
    """A ``Rules`` from an already parsed preset mapping (e.g. one stored in a record)."""
    validate_rules(data, where)
    return Rules(name=data["name"], data=data, params=_params(data))


def load_rules(rules: str | Path | Rules = DEFAULT_RULES) -> Rules:
    """Load a preset by name (``"fuzhou-home"``) or from a YAML file path."""
    if isinstance(rules, Rules):
        return rules
    if not isinstance(rules, (str, Path)):
        raise RulesError(f"rules must be a preset name or a YAML file path, got {type(rules).__name__}")
    text = str(rules)
    if len(text) > 4096 or "\0" in text:
        raise RulesError(f"unknown rule preset {short_repr(text)} (no such preset or file)")
    path = Path(text)
    if not (text.endswith((".yaml", ".yml")) and path.exists()):
        path = PRESET_DIR / f"{text}.yaml"
        if text.endswith((".yaml", ".yml")) or not path.exists():
            raise RulesError(
                f"unknown rule preset {short_repr(text)} (no such preset or file); available: {', '.join(available_rules())}"
            )
    data = read_yaml_file(path, "rules file", error=RulesError)
    rules = rules_from_data(data, path.name)
    if rules.name != path.stem:  # a copied preset that kept its name would report itself as the original
        raise RulesError(
            f"{path.name}: name {short_repr(rules.name)} is not the file's name {path.stem!r} "
            f"(a preset is named after its file: rename one of them)"
        )
    return rules
