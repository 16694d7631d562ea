"""Rule presets as data (R13, docs/presets.md P1–P5): one YAML file per preset, validated on load.

Each file names a ``scheme`` (the branch of the one Numba rules core it plays: ``lianzhong``,
``classic``, ``lianzhong-2``, ``bianfeng``, ``home``) and the numbers of that scheme. The
engine reads them from the table's rule slots (``core/state.py`` R_*), so a user can copy a
preset file, change a number (a special's value, the 边锋 ``loss_cap``, ``gold_kan`` 60 or 120)
and pass the file path as ``rules=``. A key the scheme does not know, a missing key or a
wrong type names itself in a ``RulesError``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ..core import state

DEFAULT_RULES = "fuzhou-lianzhong"
PRESET_DIR = Path(__file__).parent

_RESERVE = {"base": int, "exposed_kong": int, "concealed_kong": int, "flower_set": int}
_KONG = {"exposed": int, "concealed": int}
# specials each scheme knows (docs/presets.md); the others are not specials of that preset
_SPECIALS = {
    "lianzhong": state.SPECIAL_NAMES[:7],  # P1 = R11.3
    "classic": state.SPECIAL_NAMES,  # P2: + half_flush, full_flush, gold_kan
    "lianzhong-2": ("rob_gold", "no_flower_no_kong", "three_golds", "golden_pair"),  # P3
    "bianfeng": ("rob_gold", "no_flower_no_kong", "three_golds", "golden_pair"),  # P4
    "home": ("heavenly", "rob_gold", "three_golds"),  # P5: listed, worth 0
}
# scoring keys per scheme besides kong_points and specials
_SCORING = {
    "lianzhong": {"base": int, "multiplier": int, "flower_set_bonus": int},
    "classic": {"base": int, "multiplier": int, "flower_set_bonus": int},
    "lianzhong-2": {"base": int, "multiplier": int, "flower_set_bonus": int, "special_bonus": int},
    "bianfeng": {"base": int, "multiplier": int, "flower_set_bonus": int, "loss_cap": int},
    "home": {"base": int, "multiplier": int, "discard_bonus": int, "swim_multipliers": list},
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
    scoring["specials"] = {name: int for name in _SPECIALS[scheme]}
    return {"name": str, "source": str, "scheme": str, "reserve": _RESERVE, "scoring": scoring}


def _validate(data, schema, where: str, optional=()) -> None:
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a mapping, got {type(data).__name__}")
    for key in data:
        if key not in schema:
            raise RulesError(f"{where}: unknown key {key!r} (allowed: {', '.join(schema)})")
    for key, sub in schema.items():
        if key not in data:
            if key in optional:
                continue
            raise RulesError(f"{where}: missing key {key!r}")
        value = data[key]
        path = f"{where}.{key}"
        if isinstance(sub, dict):
            _validate(value, sub, path)
        elif sub is int:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise RulesError(f"{path}: expected a non-negative integer, got {value!r}")
        elif sub is list:
            if not (
                isinstance(value, list)
                and len(value) == state.MAX_SWIM
                and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
            ):
                raise RulesError(f"{path}: expected a list of {state.MAX_SWIM} non-negative integers, got {value!r}")
        elif not isinstance(value, sub):
            raise RulesError(f"{path}: expected {sub.__name__}, got {value!r}")


def validate_rules(data, where: str = "rules") -> None:
    """Raise ``RulesError`` unless ``data`` is a valid preset mapping."""
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a mapping, got {type(data).__name__}")
    scheme = data.get("scheme", "lianzhong")
    if scheme not in state.SCHEME_NAMES:
        raise RulesError(f"{where}.scheme: unknown scheme {scheme!r} (one of {', '.join(state.SCHEME_NAMES)})")
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
    path = Path(text)
    if not (text.endswith((".yaml", ".yml")) and path.exists()):
        path = PRESET_DIR / f"{text}.yaml"
        if text.endswith((".yaml", ".yml")) or not path.exists():
            raise RulesError(
                f"unknown rule preset {text!r} (no such preset or file); available: {', '.join(available_rules())}"
            )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RulesError(f"{path}: not valid YAML: {exc}") from exc
    return rules_from_data(data, path.name)
