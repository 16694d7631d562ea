"""``collect()``: play any agents on any preset over the batched engine (the evaluator's duplicate
format: every wall once per seat rotation, one hand per game) and write every decision as a dataset.

The play is ``fzmj.agents.evaluate``'s (``play_all``, its workers and agent seeds), so whatever
``fzmj-eval`` accepts plays here and the same settings give the same games; its per-batch log of
seats and actions becomes hand rows (``shards.py``). Every ``batches_per_shard`` batches a shard is
written atomically, then the manifest: a killed run leaves finished shards and a manifest that
lists them, and the same command again verifies them and plays on from the next batch.
"""

from __future__ import annotations

import errno
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fzmj.agents.evaluate.play import Setup, distinct_agents, obs_layouts, play_all
from fzmj.agents.evaluate.run import DEFAULT_BATCH, close_made
from fzmj_env._version import __version__
from fzmj_env.checks import MAX_TABLES, check_int, check_seed
from fzmj_env.rules import DEFAULT_RULES, load_rules
from fzmj_env.seeding import agent_key

from .format import (
    FORMAT,
    SCHEMA_VERSION,
    DatasetError,
    content_digest,
    dataset_digest,
    file_sha256,
    read_manifest,
    shard_name,
    write_atomic,
    write_manifest,
)
from .shards import concat_hands, hands_of_batch, to_parquet_bytes

DEFAULT_BATCHES_PER_SHARD = 8  # 8 x 128 walls = 4096 hands, ~100k decisions, ~120 kB
# for the estimate printed up front (docs/data.md: measured with heuristic self-play)
EST_DECISIONS_PER_HAND = 25
EST_BYTES_PER_DECISION = 2.0
# the settings a resumed run must share with the folder's manifest
RUN_KEYS = ("rules_digest", "agents", "slots_recorded", "seed", "agent_seed", "walls", "batch", "batches_per_shard")


@dataclass
class ShardWriter:
    """The evaluator's record keeper for a dataset: takes each batch's log, writes a shard every
    ``batches_per_shard`` batches (temp file + rename), then the manifest listing it."""

    folder: Path
    manifest: dict
    n_batches: int
    parts: list = field(default_factory=list)
    batches_seen: int = 0

    def add_batch(self, first_wall: int, seeds: np.ndarray, results: np.ndarray, log) -> None:
        self.parts.append(hands_of_batch(first_wall, seeds, results, log))
        self.batches_seen += 1
        done = len(self.manifest["shards"]) * self.manifest["batches_per_shard"] + len(self.parts)
        if len(self.parts) == self.manifest["batches_per_shard"] or done == self.n_batches:
            self._write_shard(concat_hands(self.parts))
            self.parts = []

    def _write_shard(self, hands: dict) -> None:
        write_shard(self.folder, self.manifest, hands)


def write_shard(folder: Path, manifest: dict, hands: dict) -> None:
    """The next shard of ``manifest``'s dataset in ``folder`` (temp file + rename), then the manifest
    listing it (its counts updated): a kill leaves the finished shards and a manifest naming them."""
    i = len(manifest["shards"])
    path = folder / shard_name(i)
    data = to_parquet_bytes(hands)
    try:
        write_atomic(path, data)
    except OSError as exc:
        kept = f"shards 0-{i - 1} are kept" if i else "no shard was finished"
        why = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        raise DatasetError(
            f"cannot write {path} ({why}); {kept}: make room and run the same command to resume"
        ) from None
    slot = (hands["seats"].astype(np.int64) - np.repeat(hands["rotation"], hands["decisions"])) % 4
    recorded = int(np.isin(slot, manifest["slots_recorded"]).sum())
    manifest["shards"].append(
        {
            "file": path.name,
            "hands": len(hands["game"]),
            "decisions": int(hands["decisions"].sum()),
            "recorded_decisions": recorded,
            "first_wall": int(hands["wall"][0]),
            "bytes": len(data),
            "sha256": file_sha256(path),
            "content_sha256": content_digest(hands),
        }
    )
    _update_counts(manifest)
    write_manifest(folder, manifest)


def _update_counts(manifest: dict) -> None:
    shards = manifest["shards"]
    manifest["counts"] = {k: sum(s[k] for s in shards) for k in ("hands", "decisions", "recorded_decisions", "bytes")}


def _settings(hands, seed, agent_seed, slots, workers, batch, batches_per_shard) -> tuple:
    try:
        hands = check_int("hands", hands, 1)
        seed = check_seed(seed, "seed")
        key = agent_key(seed) if agent_seed is None else check_seed(agent_seed, "agent_seed")
        workers = check_int("workers", workers, 1)
        batch = check_int("batch", batch, 4, MAX_TABLES)
        if batch % 4:
            raise ValueError(f"batch must be a positive multiple of 4, got {batch}")
        batches_per_shard = check_int("batches_per_shard", batches_per_shard, 1)
        slots = sorted({check_int("slot", s, 0, 3) for s in (range(4) if slots is None else slots)})
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    if not slots:
        raise DatasetError("slots: record at least one slot (0-3)")
    return hands, seed, key, slots, workers, batch, batches_per_shard


def new_manifest(rules, agents: list, agent_obs: list, slots, seed, key, walls, batch, batches_per_shard) -> dict:
    """The manifest of a dataset about to be written (no shard yet): ``agents`` and ``agent_obs``
    per slot (slot s sits at seat (s + rotation) % 4)."""
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "fzmj_version": __version__,
        "created_by": "fzmj-data collect",
        "preset": rules.name,
        "rules_digest": rules.digest,
        "rules_data": rules.data,
        "agents": list(agents),
        "agent_obs": list(agent_obs),
        "slots_recorded": slots,
        "seed": seed,
        "agent_seed": key,
        "hands_per_game": 1,
        "walls": walls,
        "hands": 4 * walls,
        "batch": batch,
        "batches_per_shard": batches_per_shard,
        "privileged": ["oracle"],  # rebuilt by the replay, never stored, never in a public field
        "shards": [],
        "complete": False,
    }


def finish_dataset(folder: Path, manifest: dict) -> dict:
    """Mark the dataset complete with its digest (the manifest written last): a reader opens it now."""
    _update_counts(manifest)
    manifest["complete"] = True
    manifest["digest"] = dataset_digest(manifest)
    write_manifest(folder, manifest)
    return manifest


def _resume(folder: Path, manifest: dict) -> dict:
    """The folder's manifest when it is this run's (its finished shards verified), else ``manifest``."""
    if not (folder / "manifest.json").exists():
        if folder.exists() and any(p.suffix == ".parquet" for p in folder.iterdir()):
            raise DatasetError(f"{folder}: holds shards but no manifest: not a dataset this command can resume")
        return manifest
    old = read_manifest(folder)
    for key in RUN_KEYS:
        if old.get(key) != manifest.get(key):
            raise DatasetError(
                f"{folder}: holds a dataset of other settings ({key}: {old.get(key)!r}, this run {manifest.get(key)!r}); "
                "use another --out"
            )
    for s in old["shards"]:
        path = folder / s["file"]
        if not path.is_file() or file_sha256(path) != s["sha256"]:
            raise DatasetError(f"{path}: missing or changed since it was written; remove the folder to start again")
    return old


def estimate(hands: int, slots: list[int]) -> tuple[int, int]:
    """(decisions recorded, bytes on disk) a collection of ``hands`` hands is expected to take."""
    decisions = hands * EST_DECISIONS_PER_HAND
    return decisions * len(slots) // 4, int(decisions * EST_BYTES_PER_DECISION)


def collect(
    out: str | Path,
    agents: list,
    hands: int,
    *,
    rules: str = DEFAULT_RULES,
    seed: int = 0,
    agent_seed: int | None = None,
    slots=None,
    workers: int = 1,
    batch: int = DEFAULT_BATCH,
    batches_per_shard: int = DEFAULT_BATCHES_PER_SHARD,
    progress: bool = True,
    start_method: str | None = None,
    log=print,
) -> dict:
    """Play ``hands`` hands (rounded up to whole walls of 4) of ``agents`` (1-4 specs or agents, as
    ``evaluate``) and write them into the folder ``out``; returns the manifest (its ``digest``:
    the same arguments give the same digest, whatever ``workers``). ``slots``: the agent slots
    whose decisions the loader yields (default all four; every decision is stored, the replay
    needs them). A folder holding this run's unfinished dataset is resumed."""
    hands, seed, key, slots, workers, batch, batches_per_shard = _settings(
        hands, seed, agent_seed, slots, workers, batch, batches_per_shard
    )
    try:
        rules_obj = load_rules(rules)
    except ValueError as exc:
        raise DatasetError(f"rules: {exc}") from None
    slot_agent, objs, names, specs = distinct_agents(agents)
    layouts = obs_layouts(objs)  # what each agent reads (an exec bot says so in its hello)
    walls = -(-hands // 4)
    folder = Path(out)
    agent_names = [names[slot_agent[i]] for i in range(4)]
    agent_obs = [str(layouts[slot_agent[i]]) for i in range(4)]
    manifest = new_manifest(rules_obj, agent_names, agent_obs, slots, seed, key, walls, batch, batches_per_shard)
    manifest = _resume(folder, manifest)
    if manifest["complete"]:
        log(f"{folder}: already complete ({manifest['counts']['recorded_decisions']:,} decisions)")
        return manifest
    _announce(folder, manifest, hands, slots, log)  # before the folder is made: a refusal leaves nothing
    folder.mkdir(parents=True, exist_ok=True)
    for stray in folder.glob("*.tmp"):  # a shard a killed run was writing
        stray.unlink()
    n_batches = -(-walls // (batch // 4))
    first = len(manifest["shards"]) * batches_per_shard
    writer = ShardWriter(folder, manifest, n_batches)
    setup = Setup(slot_agent, objs, rules_obj, seed, batch, walls, True, key)
    from tqdm.auto import tqdm

    done_hands = sum(s["hands"] for s in manifest["shards"])
    bar = tqdm(
        total=4 * walls, initial=done_hands, unit="hand", desc="fzmj-data", disable=not progress, file=sys.stderr
    )
    try:
        play_all(
            setup, specs, min(workers, max(1, n_batches - first)), start_method, writer, bar, [None] * len(objs), first
        )
    finally:
        bar.close()
        close_made(objs, specs)
    return finish_dataset(folder, manifest)


def _announce(folder: Path, manifest: dict, hands: int, slots: list[int], log) -> None:
    """The size expected, before any play; refused when the disk cannot hold it."""
    decisions, size = estimate(hands, slots)
    existing = next(p for p in (folder.absolute(), *folder.absolute().parents) if p.exists())
    free = shutil.disk_usage(existing).free
    log(
        f"fzmj-data: {hands:,} hands of {' / '.join(manifest['agents'])} on {manifest['preset']}: about "
        f"{decisions:,} decisions recorded, about {size / 1e6:.1f} MB on disk ({free / 1e9:.1f} GB free)"
        + (f"; resuming after {len(manifest['shards'])} finished shards" if manifest["shards"] else "")
    )
    if size > free:
        raise DatasetError(f"{folder}: about {size / 1e6:.0f} MB needed, {free / 1e6:.0f} MB free on its disk")
