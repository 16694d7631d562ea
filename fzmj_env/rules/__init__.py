"""Rule presets as data (R13): one YAML file per preset, validated on load.

Only ``fuzhou-lianzhong`` (the default) is implemented by the engine today. The other R13
presets change the *shape* of the scoring formula (who pays what, extra specials), not just
its numbers, so they need engine support before they can be shipped as files here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ..core import state as S

DEFAULT_RULES = "fuzhou-lianzhong"
PRESET_DIR = Path(__file__).parent
KNOWN_BUT_UNSUPPORTED = {
    "fuzhou-lianzhong-classic",
    "fuzhou-lianzhong-2",
    "fuzhou-bianfeng",
    "fuzhou-home",
}

_SCHEMA = {
    "name": str,
    "source": str,
    "reserve": {"base": int, "exposed_kong": int, "concealed_kong": int, "flower_set": int},
    "scoring": {
        "base": int,
        "multiplier": int,
        "flower_set_bonus": int,
        "kong_points": {"exposed": int, "concealed": int},
        "specials": {name: int for name in S.SPECIAL_NAMES},
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


def _validate(data, schema, where: str) -> None:
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a mapping, got {type(data).__name__}")
    for key in data:
        if key not in schema:
            raise RulesError(f"{where}: unknown key {key!r} (allowed: {', '.join(schema)})")
    for key, sub in schema.items():
        if key not in data:
            raise RulesError(f"{where}: missing key {key!r}")
        value = data[key]
        path = f"{where}.{key}"
        if isinstance(sub, dict):
            _validate(value, sub, path)
        elif sub is int:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise RulesError(f"{path}: expected a non-negative integer, got {value!r}")
        elif not isinstance(value, sub):
            raise RulesError(f"{path}: expected {sub.__name__}, got {value!r}")


def _params(data: dict) -> np.ndarray:
    r, sc = data["reserve"], data["scoring"]
    values = {
        S.R_RESERVE_BASE: r["base"],
        S.R_RESERVE_EXPOSED_KONG: r["exposed_kong"],
        S.R_RESERVE_CONCEALED_KONG: r["concealed_kong"],
        S.R_RESERVE_FLOWER_SET: r["flower_set"],
        S.R_BASE: sc["base"],
        S.R_MULT: sc["multiplier"],
        S.R_FLOWER_SET_BONUS: sc["flower_set_bonus"],
        S.R_KONG_EXPOSED_PTS: sc["kong_points"]["exposed"],
        S.R_KONG_CONCEALED_PTS: sc["kong_points"]["concealed"],
    }
    for i, name in enumerate(S.SPECIAL_NAMES):
        values[S.R_SPECIAL_VALUES + i] = sc["specials"][name]
    out = np.zeros(S.NUM_SCALARS - S.R_RESERVE_BASE, dtype=np.int32)
    for slot, v in values.items():
        out[slot - S.R_RESERVE_BASE] = v
    return out


def available_rules() -> list[str]:
    """Names of the presets that ship with the package."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def load_rules(rules: str | Path | Rules = DEFAULT_RULES) -> Rules:
    """Load a preset by name (``"fuzhou-lianzhong"``) or from a YAML file path."""
    if isinstance(rules, Rules):
        return rules
    text = str(rules)
    path = Path(text)
    if not (text.endswith((".yaml", ".yml")) and path.exists()):
        if text in KNOWN_BUT_UNSUPPORTED:
            raise RulesError(
                f"rule preset {text!r} (RULES.md R13) is not implemented yet; available: {', '.join(available_rules())}"
            )
        path = PRESET_DIR / f"{text}.yaml"
        if not path.exists():
            raise RulesError(f"unknown rule preset {text!r}; available: {', '.join(available_rules())}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RulesError(f"{path}: not valid YAML: {exc}") from exc
    _validate(data, _SCHEMA, path.name)
    return Rules(name=data["name"], data=data, params=_params(data))
