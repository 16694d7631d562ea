"""Training configs as data: a dataclass of typed fields, filled from YAML and ``--set key=value``.

Every key is checked on load: an unknown key, a value of the wrong type or outside its allowed
range raises :class:`ConfigError` with the key's name (and the closest known key for a typo).
Field documentation is the one-line docstring written under each field of the dataclass
(CleanRL style, or ``key(..., doc=...)``); :func:`field_docs` reads it back for ``--help`` and
for docs. A number's allowed range is in its field's metadata, declared with :func:`key`
(``lr: float = key(2.5e-4, lo=0, lo_ok=False, hi=1)``); :func:`unranged_keys` lists the numbers
without one.

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
import math
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


@dataclasses.dataclass(frozen=True)
class Range:
    """The values a config key allows: a number in ``lo``..``hi`` (``lo_ok``: ``lo`` itself too;
    None: unbounded), or one of ``choices``. ``None`` passes for an optional key (``X | None``)."""

    lo: float | None = None
    lo_ok: bool = True
    hi: float | None = None
    choices: tuple = ()

    def problem(self, key: str, v) -> str | None:
        """One line ``key: expected ..., got ...`` when ``v`` is outside the range, else None."""
        if v is None:
            return None
        if self.choices:
            names = [str(c) for c in self.choices]  # integer choices too (obs_version: 2 or 3)
            ok = v in self.choices
            return None if ok else f"{key}: expected {', '.join(names[:-1])} or {names[-1]}, got {v!r}"
        if isinstance(v, float) and not math.isfinite(v):
            return f"{key}: expected a finite number, got {v!r}"
        low = self.lo is not None and (v < self.lo or (v == self.lo and not self.lo_ok))
        if low and isinstance(v, int) and self.lo in (0, 1):
            sign = "positive" if self.lo == 1 or not self.lo_ok else "non-negative"
            return f"{key}: expected a {sign} integer, got {v!r}"
        if isinstance(v, int) and not low and self.hi is not None and v > self.hi:
            return f"{key}: expected at most {self.hi:,}, got {v:,}"
        if low or (self.hi is not None and v > self.hi):
            return f"{key}: expected {self.describe()}, got {v!r}"
        return None

    def describe(self) -> str:
        """The range in words: ``a number in [0, 1]``, ``a number > 0``, ``one of a, b``."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        lo = "" if self.lo is None else f"{'[' if self.lo_ok else '('}{self.lo:g}"
        if self.hi is None:
            return f"a number {'>=' if self.lo_ok else '>'} {self.lo:g}" if lo else "any number"
        return f"a number in {lo or '(-inf'}, {self.hi:g}]"


def key(default=dataclasses.MISSING, *, doc: str = "", factory=None, **range_):
    """A config field that carries its range (``lo``, ``lo_ok``, ``hi`` or ``choices``: see
    :class:`Range`) and, optionally, its doc in its metadata::

        reward_clip: float = key(0.0, lo=0, hi=100)  # then its docstring on the next line

    ``factory``: a default factory (a list). ``doc``: the key's doc, when it has no docstring."""
    meta = {"range": Range(**range_)} if range_ else {}
    if doc:
        meta["doc"] = doc
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def key_range(f: dataclasses.Field) -> Range | None:
    """The range a field declares (:func:`key`), or None."""
    return f.metadata.get("range")


def unranged_keys(cls, legacy=()) -> list[str]:
    """The number keys (int or float, optional or not) of dataclass ``cls`` that declare no range
    (``legacy``: keys whose range is given elsewhere)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        args = [a for a in (typing.get_args(hints[f.name]) or (hints[f.name],)) if a is not type(None)]
        numeric = any(a in (int, float) for a in args) and typing.get_origin(hints[f.name]) is not list
        if numeric and key_range(f) is None and f.name not in legacy:
            out.append(f.name)
    return out


def field_docs(cls) -> dict[str, str]:
    """The doc of each field of dataclass ``cls``: ``key(doc=...)``, else the docstring written
    under it (attribute docstrings)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs = {f.name: f.metadata["doc"] for f in dataclasses.fields(cls) if f.metadata.get("doc")}
    for prev, node in zip(body, body[1:], strict=False):
        if (
            isinstance(prev, ast.AnnAssign)
            and isinstance(prev.target, ast.Name)
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs.setdefault(prev.target.id, node.value.value.strip())
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
