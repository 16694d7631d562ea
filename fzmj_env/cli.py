"""The command-line toolkit every fzmj command shares: one-line usage errors, the error contract
of a command's body (docs/reference.md, "Errors"), output files checked before the work, and the safe YAML
readers behind ``--rules``, ``--config`` and ``--set``."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

from .checks import short_repr


# ---- command lines -------------------------------------------------------------------------------
class OneLineParser(argparse.ArgumentParser):
    """``argparse`` whose usage errors are one line, ``PROG: error: ...``, exit code 2 (docs/reference.md,
    "Errors"), and with ``--version`` (``PROG VERSION``, exit 0), the package's version, on every command."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from ._version import __version__

        self.add_argument("--version", action="version", version=f"%(prog)s {__version__}")

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def run_cli(parser: argparse.ArgumentParser, work, bad_input: tuple = (), interrupted: str = "interrupted") -> int:
    """A command's body ``work()`` (returns the exit code) with the error contract of docs/reference.md: bad
    input (an exception of ``bad_input``) is ``PROG: error: ...`` and exit 2; Ctrl-C one line and
    exit 130; anything else raised during the work (an agent failing mid-game) one line, exit 1."""
    try:
        return work()
    except bad_input as e:
        parser.error(str(e))
    except KeyboardInterrupt:
        sys.stderr.write(f"{parser.prog}: {interrupted}\n")
        return 130
    except Exception as e:  # noqa: BLE001 - the contract: one line, never a traceback
        sys.stderr.write(f"{parser.prog}: error: {type(e).__name__}: {e}\n")
        return 1


# ---- files ----------------------------------------------------------------------------------------
def check_output_file(path: str | os.PathLike, what: str, suffixes: tuple[str, ...] | None = None) -> Path:
    """An output file the program will write at the END of its work, checked BEFORE the work:
    not a directory, its folder exists and is writable, an existing file is writable, and its
    suffix is one of ``suffixes`` (case-insensitive) when given. Returns the path."""
    p = Path(path)
    if str(path) == "":
        raise ValueError(f"{what}: expected a file name, got an empty string")
    if p.is_dir():
        raise ValueError(f"{what}: {str(path)!r} is a directory, expected a file name")
    if suffixes is not None and p.suffix.lower().lstrip(".") not in suffixes:
        raise ValueError(
            f"{what}: unsupported file type {p.suffix or '(none)'!r} of {str(path)!r} (use one of: {', '.join('.' + s for s in suffixes)})"
        )
    parent = p.absolute().parent
    if not parent.is_dir():
        raise ValueError(f"{what}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"{what}: {str(path)!r} is not writable")
    return p


def check_output_dir(path: str | os.PathLike, what: str) -> Path:
    """An output folder the program will fill at the END of its work, checked BEFORE the work: it
    is created if missing (with its parents) and a probe file is written in it and removed, so a
    folder that cannot be created or written (``/proc/x``, a read-only mount, a full disk) is one
    ``ValueError`` line naming it now, not after hours of play. Returns the path."""
    p = Path(path)
    if str(path) == "":
        raise ValueError(f"{what}: expected a folder name, got an empty string")
    if p.exists() and not p.is_dir():
        raise ValueError(f"{what}: {str(path)!r} is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".fzmj-probe-{os.getpid()}.tmp"
        with open(probe, "wb") as f:
            f.write(b"probe")
            f.flush()
            os.fsync(f.fileno())
        probe.unlink()
    except OSError as e:
        raise ValueError(f"{what}: cannot write into {str(path)!r}: {e.strerror or e}") from None
    return p


# ---- YAML files -----------------------------------------------------------------------------------
MAX_YAML_BYTES = 1 << 20
"""Largest YAML file a loader reads (rules files and trainer configs are a few hundred bytes)."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@functools.lru_cache(maxsize=1)
def _safe_loader():
    """A ``yaml.SafeLoader`` subclass that refuses aliases (``*name``) and duplicate keys. An alias
    shares a node; nested aliases make a 1 KB file describe gigabytes of data ("billion laughs"),
    which a later ``repr`` or walk would expand. Anchors alone are harmless and accepted."""
    import yaml

    class _NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(
                    None, None, f"aliases (*{event.anchor}) are not allowed", event.start_mark
                )
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):
            # YAML says keys are unique, PyYAML keeps the last value: ``lr: 1e-3`` twice in a config,
            # the second edited, would silently win. Refused, naming the key and both lines.
            if isinstance(node, yaml.MappingNode):
                first: dict = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    line = key_node.start_mark.line + 1
                    try:
                        seen = key in first
                    except TypeError:
                        continue  # an unhashable key: the base constructor says so
                    if seen:
                        where = f"line {line}" if first[key] == line else f"lines {first[key]} and {line}"
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {short_repr(key)} ({where})", key_node.start_mark
                        )
                    first[key] = line
            return super().construct_mapping(node, deep=deep)

    return _NoAliasLoader


def read_yaml_text(text: str, where: str, error: type[Exception] = ValueError):
    """Parse YAML ``text`` with the safe, alias-free loader; any failure is one line
    ``where:LINE:COL: message`` (``where`` names the file or the option) raised as ``error``."""
    import yaml

    try:
        return yaml.load(text, Loader=_safe_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        what = _one_line(": ".join(x for x in (exc.context, exc.problem) if x) or "not valid YAML")
        raise error(f"{where}{pos}: {what}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: not valid YAML: {_one_line(exc)}") from None
    except RecursionError:
        raise error(f"{where}: not valid YAML: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise error(f"{where}: not valid YAML: {_one_line(exc)[:200]}") from None


def read_yaml_file(
    path: str | os.PathLike,
    what: str,
    max_bytes: int = MAX_YAML_BYTES,
    error: type[Exception] = ValueError,
    empty_ok: bool = False,
) -> dict:
    """The mapping in the YAML file ``path``, read safely: at most ``max_bytes`` are read (a link
    to ``/dev/zero`` or a huge file is refused without being read whole), the text must be UTF-8,
    aliases are refused (no "billion laughs"), and the top level must be a mapping (an empty file
    is ``{}`` when ``empty_ok``). Every failure is one line naming ``what`` and the file, raised as
    ``error`` (a ``ValueError`` subclass of the caller's choosing)."""
    where = f"{what} {os.fspath(path)}"
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
    except IsADirectoryError:
        raise error(f"{where}: is a directory, expected a YAML file") from None
    except OSError as exc:
        raise error(f"{where}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise error(f"{where}: larger than {max_bytes} bytes; not a {what}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (byte {exc.start})") from None
    data = read_yaml_text(text, os.fspath(path), error)
    if data is None and empty_ok:
        return {}
    if not isinstance(data, dict):
        raise error(f"{where}: expected a mapping of keys to values, got {type(data).__name__}")
    return data
