"""Training configs as data: a dataclass of typed fields, filled from YAML and ``--set key=value``.

Every key is checked on load: an unknown key, a value of the wrong type or outside its allowed
range raises :class:`ConfigError` with the key's name (and the closest known key for a typo).
Field documentation is the one-line docstring written under each field of the dataclass
(CleanRL style); :func:`field_docs` reads it back for ``--help`` and for docs.

The configs that ship live in ``fzmj/train/configs/`` (package data, so an installed wheel has
them; the repository's top-level ``configs`` is a link to that folder): ``--config ppo_default``
names one, and a path still reads a file. Each file's first comment line describes it in one line
(``fzmj-train --list-configs``).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from fzmj_env.cli import read_yaml_file, read_yaml_text

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
"""The configs that ship with the package (``--config NAME``)."""


class ConfigError(ValueError):
    """A config file or override is malformed: the message names the offending key."""

    def __init__(self, message: str = ""):  # a value's repr from a file can be huge: one short line
        super().__init__(message if len(message) <= 300 else f"{message[:240]}... ({len(message)} characters)")


def shipped_configs() -> dict[str, str]:
    """Name -> one-line description (the file's first comment line) of every config that ships."""
    out = {}
    for path in sorted(CONFIG_DIR.glob("*.yaml")):
        first = path.read_text(encoding="utf-8").partition("\n")[0]
        out[path.stem] = first.removeprefix("#").strip() if first.startswith("#") else ""
    return out


def resolve_config(spec: str | Path) -> Path:
    """The file of ``--config SPEC``: a path that exists, else the name of a shipped config
    (``ppo_default`` or ``ppo_default.yaml``). Anything else: :class:`ConfigError` listing the names."""
    path = Path(spec)
    if path.exists():
        return path
    text = str(spec)
    name = text.removesuffix(".yaml")
    if name and "/" not in text and "\\" not in text and (CONFIG_DIR / f"{name}.yaml").is_file():
        return CONFIG_DIR / f"{name}.yaml"
    names = ", ".join(shipped_configs())
    raise ConfigError(f"config file {text}: no such file, and not the name of a shipped config ({names})")


def field_docs(cls) -> dict[str, str]:
    """The docstring written under each field of dataclass ``cls`` (attribute docstrings)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs = {}
    for prev, node in zip(body, body[1:], strict=False):
        if (
            isinstance(prev, ast.AnnAssign)
            and isinstance(prev.target, ast.Name)
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs[prev.target.id] = node.value.value.strip()
    return docs


def _type_name(tp) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _coerce(key: str, value: Any, tp) -> Any:
    """``value`` checked against the annotation ``tp`` (int, float, bool, str, list[...], X | None)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _coerce(key, value, inner[0])
        raise ConfigError(f"{key}: unsupported annotation {tp}")
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: expected a list of {_type_name(item)}, got {value!r}")
        return [_coerce(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {value!r}")
        return value
    if tp in (int, float) and isinstance(value, str):
        value = _yaml_number(value)  # PyYAML reads 1e-3 (no dot) as a string
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:  # 1e6 in YAML
                return int(value)
            raise ConfigError(f"{key}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {value!r}")
        return value
    raise ConfigError(f"{key}: unsupported annotation {tp}")


def _yaml_number(text: str):
    """``"1e-3"`` -> 0.001 (YAML 1.1 needs ``1.0e-3`` for a float); anything else stays as it is."""
    try:
        return float(text) if text.strip().lower().lstrip("+-")[:1].isdigit() else text
    except ValueError:
        return text


def _unknown(key: str, known) -> ConfigError:
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"unknown config key {key!r}{hint}")


def from_dict(cls, data: dict, base=None, where: str = "config"):
    """An instance of dataclass ``cls``: ``base`` (or the defaults) updated with ``data``, checked."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys to values, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    values = dataclasses.asdict(base) if base is not None else {}
    for key, value in data.items():
        if key not in hints or key not in names:
            raise _unknown(str(key), names)
        values[key] = _coerce(key, value, hints[key])
    try:
        cfg = cls(**values)
    except ConfigError:
        raise
    except TypeError as e:  # pragma: no cover - a missing required field
        raise ConfigError(f"{where}: {e}") from None
    return cfg


def parse_override(text: str) -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value)``; the value is read as YAML (``lr=3e-4``, ``sizes=[64,64]``)."""
    if "=" not in text:
        raise ConfigError(f"--set expects key=value, got {text!r}")
    key, raw = text.split("=", 1)
    key = key.strip()
    value = read_yaml_text(raw, f"--set {key}", ConfigError) if raw.strip() else ""
    return key, value


def load_config(cls, path: str | Path | None = None, overrides: list[str] | None = None):
    """Defaults of ``cls``, then the YAML file at ``path``, then ``key=value`` overrides, all checked."""
    data: dict = {}
    where = "config"
    if path is not None:
        where = str(path)
        data = read_yaml_file(path, "config file", error=ConfigError, empty_ok=True)
    for item in overrides or []:
        key, value = parse_override(item)
        data[key] = value
    return from_dict(cls, data, where=where)


def to_yaml(cfg) -> str:
    """The config as YAML (every field, in declaration order)."""
    return yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False)
