"""The dataset on disk: a folder of Parquet shards (one row per hand) and ``manifest.json``.

A row keeps what happened in a hand, never an observation: the wall's seed (with the preset it
fixes the wall and the dealer), every decision as ``seats[i]`` / ``actions[i]`` (all four seats:
the replay needs them), each seat's points and the hand's result. The loader replays the rows
through the Numba engine (``VectorEnv``) and gets every observation (v2, v3, the hand features),
mask and the hidden state back bit for bit, at about 2 bytes a decision on disk (docs/data.md has
the numbers against stored planes). Any Parquet reader opens the shards without fzmj.

The manifest names the schema and fzmj versions, the preset (its whole content and digest), the
agents of each slot, the seeds, the counts and, per shard, the file's size and sha256 and a digest
of its content (independent of the Parquet writer), so an edited, truncated or foreign file is
refused before a batch is made from it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from fzmj_env.atomic import write_atomic

FORMAT = "fzmj-dataset"
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 << 20
# what a hand row holds (the Parquet columns), in order; docs/data.md describes each
HAND_COLUMNS = ("game", "wall", "rotation", "hand", "wall_seed", "seats", "actions", "points", "winner", "value")


class DatasetError(ValueError):
    """A dataset that cannot be read as it claims to be (one line, naming the file and what is wrong)."""


def pyarrow():
    """``pyarrow`` and ``pyarrow.parquet``, or one line saying how to install them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError('datasets need pyarrow: pip install "fzmj[data]"') from None
    return pa, pq


def shard_name(i: int) -> str:
    return f"shard-{i:05d}.parquet"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def content_digest(hands: dict) -> str:
    """sha256 of a shard's columns as little-endian arrays (what the dataset means, not how one
    Parquet writer laid it out): the same hands give the same digest under any pyarrow."""
    h = hashlib.sha256()
    for key in (*HAND_COLUMNS, "decisions"):
        v = np.asarray(hands[key])
        h.update(key.encode())
        h.update(np.ascontiguousarray(v, dtype=v.dtype.newbyteorder("<")).tobytes())
    return h.hexdigest()


def dataset_digest(manifest: dict) -> str:
    """The digest ``fzmj-data collect`` prints: the settings that made the data and each shard's content."""
    keys = ("schema_version", "rules_digest", "agents", "slots_recorded", "seed", "agent_seed", "walls")
    what = {k: manifest.get(k) for k in keys}
    what["shards"] = [s["content_sha256"] for s in manifest["shards"]]
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def write_manifest(folder: Path, manifest: dict) -> None:
    write_atomic(folder / MANIFEST, (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode())


def read_manifest(folder: str | Path) -> dict:
    """The manifest of a dataset folder, its format and versions checked (``DatasetError`` otherwise)."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise DatasetError(f"{folder}: not a dataset folder (expected a folder holding {MANIFEST})")
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise DatasetError(f"{path}: too large for a manifest")
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{folder}: not a dataset (no {MANIFEST})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise DatasetError(f"{path}: not a dataset manifest ({type(exc).__name__}: {exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DatasetError(f"{path}: not an fzmj dataset manifest (format {_get(manifest, 'format')!r})")
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise DatasetError(
            f"{path}: schema version {version!r}, this fzmj reads version {SCHEMA_VERSION} "
            f"(written by fzmj {manifest.get('fzmj_version')!r})"
        )
    _check_fzmj_version(path, manifest.get("fzmj_version"))
    return manifest


def _get(obj, key):
    return obj.get(key) if isinstance(obj, dict) else None


def _check_fzmj_version(path: Path, version) -> None:
    """A dataset written by a newer fzmj may hold what this one cannot rebuild: refused by name.
    (Same schema version and an older or equal fzmj: the replay itself checks every decision.)"""
    from fzmj_env._version import __version__

    if not isinstance(version, str) or not all(p.isdigit() for p in version.split(".")[:3]):
        raise DatasetError(f"{path}: unreadable fzmj_version {version!r}")
    if _release(version) > _release(__version__):
        raise DatasetError(f"{path}: written by fzmj {version}, newer than this fzmj {__version__}: upgrade fzmj")


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
