"""Reading a dataset: ``open_dataset`` checks it whole (manifest, every shard's size, checksum and
row count) before anything is replayed; ``Dataset.batches`` yields shuffled batches of decisions
(numpy or torch) with bounded memory, replayed in this process or in worker processes.

Shuffling is two-level, so memory stays bounded whatever the dataset's size: the row groups
(512 hands each) are visited in a random order, and the decisions of ``buffer_groups`` of them at a
time are mixed. The order depends on ``seed`` and ``epoch`` only, never on the number of workers
(the workers' results are taken in order).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fzmj_env.rules import Rules, rules_digest, rules_from_data

from .format import DatasetError, file_sha256, read_manifest
from .replay import OBS_VERSIONS, replay_hands
from .shards import read_row_group, row_group_sizes


@dataclass(frozen=True)
class ReadOptions:
    """What each decision is replayed into (the same for every row group of one ``batches`` call)."""

    obs: str = "v2"
    hand_features: bool = False
    privileged: bool = False
    only_choices: bool = False  # drop forced decisions (one legal action), as the warm start does
    threads: int = 1  # Numba threads of the hand features
    distribution: bool = False  # each acting agent's action distribution, recomputed (see _with_distribution)
    per_group: Callable[[dict], dict] | None = None  # applied to each row group before the hand features and mixing


class Dataset:
    """A dataset folder, checked: ``manifest``, ``rules`` (the preset it was played on),
    ``num_decisions`` (recorded decisions), ``groups`` (shard path, row group index, hands)."""

    def __init__(self, folder: str | Path, verify: bool = True):
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        m = self.manifest
        if not m.get("complete"):
            raise DatasetError(f"{self.folder}: unfinished (run the command that collected it again to finish it)")
        self.rules = _rules_of(self.folder, m)
        self.slots = tuple(m["slots_recorded"])
        self.agents = tuple(m["agents"])  # the spec of each slot's agent
        self.groups: list[tuple[Path, int, int]] = []
        for s in m["shards"]:
            self.groups += _check_shard(self.folder, s, verify)
        self.num_decisions, self.num_hands = _counts(self.folder, m)

    def __len__(self) -> int:
        return self.num_decisions

    def check_rules(self, rules: Rules, who: str = "this run") -> None:
        """Refuse a dataset played on another preset than ``rules`` (compared by content digest)."""
        if rules.digest != self.rules.digest:
            raise DatasetError(
                f"{self.folder}: collected on preset {self.rules.name!r} (digest {self.rules.digest}); "
                f"{who} plays {rules.name!r} (digest {rules.digest})"
            )

    def group(self, i: int, options: ReadOptions = ReadOptions()) -> dict:  # noqa: B008 - frozen
        """The recorded decisions of row group ``i``, replayed (``replay.replay_hands``)."""
        return _read_group(self.groups[i], self.rules, self.slots, options, self.agents)

    def batches(
        self,
        batch_size: int = 1024,
        obs: str = "v2",
        *,
        hand_features: bool = False,
        privileged: bool = False,
        only_choices: bool = False,
        distribution: bool = False,
        shuffle: bool = True,
        seed: int = 0,
        epoch: int = 0,
        workers: int = 0,
        buffer_groups: int = 4,
        threads: int = 1,
        torch: bool = False,
        drop_last: bool = False,
        per_group: Callable[[dict], dict] | None = None,
    ) -> Iterator[dict]:
        """Batches of ``batch_size`` decisions: dicts of arrays (``torch``: tensors) with ``obs``,
        ``mask``, ``action``, ``ret``, ``seat``, ``slot``, ``step``, ``game``, ``wall``, ``hand``,
        ``points`` and, with ``privileged``, ``privileged_oracle`` (the hidden state; keep it out of
        a policy's input); with ``distribution``, ``probs`` (N, 62) float32 and ``has_probs``: the
        action distribution of each acting agent that has one (``action_probs``: ``ppo:``,
        ``pretrained``), recomputed from the rebuilt observation (zeros for the others). ``workers`` > 0 replays row groups in that many processes (same batches).
        ``per_group(rows) -> rows`` makes each replayed row group (whole games) into the rows to mix,
        before the hand features: fields that need whole games, e.g. returns (picklable with workers;
        run in a thread without). Without workers, two threads (one replays, one applies ``per_group``
        and the hand features) run up to ``buffer_groups`` row groups ahead while the caller uses
        the batches (the same batches: each takes the row groups in order). Memory: about
        2 x ``buffer_groups`` + 4 row groups of decisions (~13k each) at a time."""
        if obs not in OBS_VERSIONS:
            raise ValueError(f"obs must be one of {OBS_VERSIONS}, got {obs!r}")
        if batch_size < 1 or buffer_groups < 1 or workers < 0:
            raise ValueError("batch_size and buffer_groups must be >= 1, workers >= 0")
        options = ReadOptions(obs, hand_features, privileged, only_choices, threads, distribution, per_group)
        rng = np.random.default_rng([seed, epoch])
        order = rng.permutation(len(self.groups)) if shuffle else np.arange(len(self.groups))
        parts = self._replayed(order, options, workers, buffer_groups)
        for batch in _mixed(parts, batch_size, buffer_groups, rng if shuffle else None, drop_last):
            yield _to_torch(batch) if torch else batch

    def _replayed(self, order, options: ReadOptions, workers: int, ahead: int) -> Iterator[dict]:
        jobs = [(self.groups[i], self.rules, self.slots, options, self.agents) for i in order]
        if workers == 0:
            # Two threads, so the replay and the finishing overlap each other and the caller. The
            # finishing one runs a whole buffer ahead: the mixer takes row groups in bursts of
            # ``buffer_groups`` (a queue of one left it idle while a buffer's batches were used,
            # and the clone waited on data 22% of its time instead of 3%).
            replayed = read_ahead((_replay_group(*job) for job in jobs), 2)
            yield from read_ahead((_finish_group(part, options) for part in replayed), ahead)
            return
        ctx = mp.get_context("fork" if "torch" not in sys.modules else "spawn")
        with ctx.Pool(workers) as pool:
            for part, packed in bounded_imap(pool, _read_job, jobs, 2 * workers):
                yield _unpacked(part, packed)

    def decisions(self, obs: str = "v2", **kwargs) -> dict:
        """Every recorded decision at once, in order (for a small dataset: it is all in memory)."""
        parts = list(self.batches(max(1, self.num_decisions), obs, shuffle=False, **kwargs))
        return parts[0] if parts else {}


def bounded_imap(pool, fn, jobs, ahead: int) -> Iterator:
    """``pool.imap(fn, jobs)`` with at most ``ahead`` jobs submitted and not yet taken: ``imap``
    submits them all, so a consumer slower than the workers would hold every row group at once."""
    pending: deque = deque()
    for job in jobs:
        pending.append(pool.apply_async(fn, (job,)))
        if len(pending) >= ahead:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


_END = object()


def read_ahead(items: Iterable, depth: int) -> Iterator:
    """The items of ``items``, made by a daemon thread at most ``depth`` ahead of the caller, in
    order. An error in the thread is raised here; when the caller stops early (the generator is
    closed), the thread stops after the item it is making."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"read_ahead: depth must be an integer >= 1, got {depth!r}")
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, _END))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            put((False, exc))

    threading.Thread(target=run, daemon=True, name="fzmj-read-ahead").start()
    try:
        while True:
            ok, item = q.get()
            if not ok:
                raise item
            if item is _END:
                return
            yield item
    finally:
        stop.set()


def open_dataset(folder: str | Path, verify: bool = True) -> Dataset:
    """The dataset in ``folder``, checked (``verify``: every shard's sha256 too); ``DatasetError``
    (one line) for anything it cannot read as what it claims to be."""
    return Dataset(folder, verify)


def _rules_of(folder: Path, m: dict) -> Rules:
    try:
        rules = rules_from_data(m["rules_data"], f"{folder} rules_data")
    except (ValueError, KeyError, TypeError) as exc:
        raise DatasetError(f"{folder}: its preset cannot be read ({exc})") from None
    if rules_digest(m["rules_data"]) != m.get("rules_digest"):
        raise DatasetError(f"{folder}: its preset does not match its rules_digest (edited?)")
    return rules


def _counts(folder: Path, m: dict) -> tuple[int, int]:
    """(recorded decisions, hands) the manifest claims, which must be the sums over its shards."""
    counts = m.get("counts") or {}
    for key in ("recorded_decisions", "hands"):
        listed = sum(int(s.get(key, 0)) for s in m["shards"])
        if counts.get(key) != listed:
            raise DatasetError(f"{folder}: the manifest claims {counts.get(key)!r} {key}, its shards hold {listed:,}")
    return int(counts["recorded_decisions"]), int(counts["hands"])


def _check_shard(folder: Path, s: dict, verify: bool) -> list[tuple[Path, int, int]]:
    """A shard the manifest lists: present, of its size (and sha256), holding the hands it claims."""
    path = folder / str(s.get("file"))
    if path.parent != folder or not path.is_file():
        raise DatasetError(f"{path}: a shard the manifest lists is missing")
    size = path.stat().st_size
    if size != s.get("bytes"):
        raise DatasetError(f"{path}: {size:,} bytes, the manifest says {s.get('bytes')!r} (truncated or edited)")
    if verify and file_sha256(path) != s.get("sha256"):
        raise DatasetError(f"{path}: its sha256 differs from the manifest's (edited or damaged)")
    sizes = row_group_sizes(path)
    if sum(sizes) != s.get("hands"):
        raise DatasetError(f"{path}: holds {sum(sizes):,} hands, the manifest claims {s.get('hands')!r}")
    return [(path, g, n) for g, n in enumerate(sizes)]


def _read_group(group: tuple[Path, int, int], rules: Rules, slots, options: ReadOptions, agents=()) -> dict:
    return _finish_group(_replay_group(group, rules, slots, options, agents), options)


def _replay_group(group: tuple[Path, int, int], rules: Rules, slots, options: ReadOptions, agents=()) -> dict:
    """A row group's recorded decisions replayed, with the agents' distributions if asked."""
    path, g, _ = group
    out = replay_hands(
        read_row_group(path, g),
        rules,
        options.obs,
        slots,
        options.privileged,
        where=f"{path} row group {g}",
        only_choices=options.only_choices,
    )
    if options.distribution:
        _with_distribution(out, agents)
    return out


def _finish_group(out: dict, options: ReadOptions) -> dict:
    """A replayed row group made into the rows to mix: ``per_group``, then the hand features."""
    if options.per_group is not None:
        out = options.per_group(out)
    if options.hand_features:
        from fzmj_env.features import with_hand_features

        out["obs"] = with_hand_features(out["obs"], options.threads)
    return out


_AGENTS: dict = {}  # spec -> agent, made once per process


def _with_distribution(out: dict, agents) -> None:
    """``probs`` of each row whose slot's agent has ``action_probs``: not stored on disk, recomputed
    here from the observation the replay rebuilt (the one the agent saw) and the agent's spec in
    the manifest (a checkpoint must be where it was). A v3 agent needs ``obs="v3"``."""
    from fzmj.agents import make_agent
    from fzmj.agents.base import agent_obs_version

    out["probs"] = np.zeros(out["mask"].shape, np.float32)
    out["has_probs"] = np.zeros(len(out["mask"]), bool)
    for slot in np.unique(out["slot"]):
        spec = agents[int(slot)]
        if spec not in _AGENTS:
            try:
                _AGENTS[spec] = make_agent(spec)
            except ValueError as exc:  # AgentSpecError: a checkpoint moved away since the collection
                raise DatasetError(f"slot {int(slot)}'s agent {spec!r}: {exc}") from None
        agent = _AGENTS[spec]
        if not hasattr(agent, "action_probs"):
            continue
        if agent_obs_version(agent) == "v3" and out["obs"].shape[1] < 100:
            raise DatasetError(f"the distribution of {spec!r} (it reads v3) needs obs='v3'")
        rows = np.flatnonzero(out["slot"] == slot)
        out["probs"][rows] = agent.action_probs(out["obs"][rows], out["mask"][rows])[0]
        out["has_probs"][rows] = True


_PLANES = ("obs", "privileged_oracle")


def _read_job(job) -> tuple[dict, dict]:
    """A worker's row group, its 0/1 planes bit-packed (8 times less to send through the pipe;
    planes with other values, if any, go as they are): (arrays, {key: columns} of the packed)."""
    out = _read_group(*job)
    packed = {}
    for key in _PLANES:
        v = out.get(key)
        if v is not None and v.size and v.min() >= 0 and v.max() <= 1:
            out[key], packed[key] = np.packbits(v, axis=-1), v.shape[-1]
    return out, packed


def _unpacked(part: dict, packed: dict) -> dict:
    for key, columns in packed.items():
        part[key] = np.unpackbits(part[key], axis=-1, count=columns).view(np.int8)
    return part


def _mixed(parts: Iterator[dict], batch_size: int, buffer_groups: int, rng, drop_last: bool) -> Iterator[dict]:
    """Batches from the replayed row groups: ``buffer_groups`` at a time, mixed (``rng``), the rows
    left over carried into the next buffer."""
    pending: list[dict] = []
    carry: dict | None = None
    for part in parts:
        pending.append(part)
        if len(pending) == buffer_groups:
            carry = yield from _emit(carry, pending, batch_size, rng)
            pending = []
    carry = yield from _emit(carry, pending, batch_size, rng)
    if carry is not None and len(carry["action"]) and not drop_last:
        yield carry


def _emit(carry, pending: list[dict], batch_size: int, rng):
    """Yield the full batches of ``carry`` + ``pending``; return the rest. Each row is copied once,
    from its part straight into its batch (a batch's rows are drawn at random, then taken part by
    part in order: the order within a batch carries no information)."""
    parts = ([carry] if carry is not None else []) + pending
    if not parts:
        return carry
    offsets = np.cumsum([0] + [len(p["action"]) for p in parts])
    n = int(offsets[-1])
    perm = rng.permutation(n) if rng is not None else np.arange(n)
    whole = n - n % batch_size
    for i in range(0, whole, batch_size):
        yield _gather(parts, offsets, np.sort(perm[i : i + batch_size]))
    return _gather(parts, offsets, np.sort(perm[whole:]))


def _gather(parts: list[dict], offsets: np.ndarray, idx: np.ndarray) -> dict:
    """The rows ``idx`` (ascending, numbered across ``parts``) as one batch."""
    out = {k: np.empty((len(idx), *v.shape[1:]), v.dtype) for k, v in parts[0].items()}
    cuts = np.searchsorted(idx, offsets)
    for p, part in enumerate(parts):
        lo, hi = cuts[p], cuts[p + 1]
        if hi > lo:
            local = idx[lo:hi] - offsets[p]
            for k, v in part.items():
                np.take(v, local, axis=0, out=out[k][lo:hi])
    return out


def _to_torch(batch: dict) -> dict:
    import torch

    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in batch.items()}
