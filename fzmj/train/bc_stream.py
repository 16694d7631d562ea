"""The warm start streamed from a large dataset (``bc_stream: true`` with ``bc_dataset``): the same
fit as ``train/bc.py`` (masked cross-entropy + ``vf_coef`` x the value error on the returns
``train/bc_dataset.py`` gives), but the minibatches come from ``fzmj.data``'s loader as they are
replayed, so memory holds a few row groups whatever the dataset's size (in memory, every decision's
planes are held at once: 2,673 bytes each for v2 with the hand features, ~55 GB for 20 M).

Why a key, not a size above which streaming switches on by itself: which path trains (and so the
clone's weights) would then depend on the machine's memory; a config names one path everywhere.

- Which decisions: whole games in dataset order while the decisions played in them (read from the
  hand rows without a replay: forced ones included, and every seat's in a dataset that records
  some seats only) add up to at most ``bc_decisions``; a ``bc_decisions`` above the dataset's
  size takes all of it, and says so in one line.
- Held out: the first ``holdout`` share of those games (as in memory: whole games, never trained on);
  the accuracy is measured on them after the last epoch (one more replay of their row groups).
- Each row group is prepared whole (:func:`_prepare`): its games kept, each decision's return along
  its seat's chain, the all-seeing teacher's labels (``bc_teacher: oracle:defend``) from the
  replayed hidden state. Labels depend on the decision alone, so they equal the in-memory path's.
- The row groups are replayed and prepared by two threads of the loader (replay; labels, returns
  and hand features; ``fzmj.data.loader``: its Numba kernels release the GIL) while the update
  runs, and mixed into batches by a third (a queue of ``PREFETCH`` batches); on a machine of more
  than four cores, worker processes replay instead (:func:`replay_workers`). Each epoch's first
  batch waits for the loader to fill its buffer (``first_batches_s``, about a second); after it,
  ``data_wait`` is the share of the time the update waited for a batch (0: the clone never waits
  on data).
"""

from __future__ import annotations

import os
import time
from functools import partial

import numpy as np
import torch

from .bc_dataset import _returns, open_checked
from .bc_loss import clone_update, label_hits

PREFETCH = 4  # batches the loader thread may run ahead (memory: PREFETCH batches + BUFFER_GROUPS row groups)
BUFFER_GROUPS = 4  # row groups mixed at a time (~13k decisions each): the loader's shuffle buffer


def replay_workers() -> int:
    """Processes that replay row groups beside the training one: none up to four cores, where the
    loader's threads keep up with the update (two cores, ppo_default's network: ``data_wait``
    0.5% after 0.95 s for the first batch, against 55% before the kernels released the GIL,
    ``benchmarks/bench_bc_stream.py``, docs/data.md); on more (a GPU host, whose update is faster),
    one per core beyond two, at most eight (each replays a row group whole, ~50k decisions/s a
    core; not measured here). The batches are the same whatever the number (the loader takes the
    workers' results in order)."""
    cores = os.cpu_count() or 1
    return 0 if cores <= 4 else min(8, cores - 2)


def stream_clone(policy, args, log=None, progress: bool = True, holdout: float = 0.05) -> dict:
    """Fit ``policy`` in place on ``args.bc_dataset`` streamed (see the module docstring); returns
    the statistics of ``bc.behaviour_clone`` plus ``decisions_per_s``, ``data_wait`` and
    ``first_batches_s`` (see the module docstring)."""
    from .oracle_teacher import ORACLE_TEACHERS

    data = open_checked(args.bc_dataset, args.rules)
    split = game_split(data, args.bc_decisions, holdout, progress)
    teacher = args.bc_teacher if args.bc_teacher in ORACLE_TEACHERS else ""
    read = dict(
        obs="v3" if args.obs_version == 3 else "v2",
        hand_features=policy.hand_features,
        privileged=bool(teacher) or policy.oracle_critic,
        only_choices=True,
    )
    prep = partial(_prepare, teacher=teacher, scale=args.reward_scale, gamma=args.gamma, oracle=policy.oracle_critic)
    train = _subset(data, split["train_groups"])
    held = _subset(data, split["held_groups"])
    train_read = dict(read, per_group=partial(prep, lo=split["cut"], hi=split["last"]))
    stats = _fit(policy, train, train_read, args, log, progress, split["train_played"])
    held_read = dict(read, per_group=partial(prep, lo=split["first"], hi=split["cut"] - 1))
    stats.update(holdout_stream(policy, held, held_read, args.bc_batch_size))
    stats.update(decisions=stats["train_decisions"] + stats["holdout_decisions"])
    return stats


def game_split(data, decisions: int, holdout: float, progress: bool = True) -> dict:
    """The games to clone and to hold out, from the shards' hand columns (no replay): ``first``,
    ``cut``, ``last`` game ids (held out: ``first <= game < cut``; trained on: ``cut <= game <=
    last``) and the row groups holding each part."""
    from fzmj.data import DatasetError
    from fzmj.data.shards import read_row_group

    games, counts, group_of = [], [], []
    for i, (path, g, _hands) in enumerate(data.groups):
        hands = read_row_group(path, g)
        games.append(hands["game"].astype(np.int64))
        counts.append(hands["decisions"])
        group_of.append(np.full(len(hands["game"]), i))
    game, count, group_of = (np.concatenate(x) for x in (games, counts, group_of))
    if len(game) == 0 or (np.diff(game) <= 0).any():
        raise DatasetError(f"{data.folder}: its games are not in increasing order (not as fzmj-data collect wrote it)")
    total = int(count.sum())
    if decisions >= total and progress:
        print(f"bc: bc_decisions {decisions:,} >= the {total:,} decisions played in the dataset: cloning all of it")
    n = max(1, int(np.searchsorted(np.cumsum(count), decisions, side="right")))
    n_held = max(1, int(round(holdout * n)))
    if n < 2:
        raise DatasetError(f"{data.folder}: bc_decisions {decisions:,} keep one game: a clone needs two (one held out)")
    n_held = min(n_held, n - 1)
    return dict(
        first=int(game[0]),
        cut=int(game[n_held]),
        last=int(game[n - 1]),
        held_groups=sorted(set(group_of[:n_held].tolist())),
        train_groups=sorted(set(group_of[n_held:n].tolist())),
        played=int(count[:n].sum()),
        train_played=int(count[n_held:n].sum()),
    )


def _subset(data, groups: list[int]):
    """The dataset ``data`` reading only its row groups ``groups`` (a shallow copy)."""
    import copy

    view = copy.copy(data)
    view.groups = [data.groups[i] for i in groups]
    return view


_TEACHERS: dict = {}  # spec -> the all-seeing teacher, made once


def _prepare(rows: dict, lo: int, hi: int, teacher: str, scale: float, gamma: float, oracle: bool) -> dict:
    """One replayed row group (decisions with a choice) made into clone rows: its games ``lo..hi``,
    each decision's return (``bc_dataset._returns``: the seat's chain is within the group, as the
    group holds whole games), the teacher's labels; only the fields the fit reads."""
    keep = (rows["game"] >= lo) & (rows["game"] <= hi)
    if not keep.all():  # only the row groups at the split's edges hold games of both sides
        rows = {k: v[keep] for k, v in rows.items()}
    ret = _returns(rows, scale, gamma)
    action = rows["action"].astype(np.int64)
    if teacher:
        from .oracle_teacher import make_teacher

        if teacher not in _TEACHERS:
            _TEACHERS[teacher] = make_teacher(teacher)
        action = np.asarray(_TEACHERS[teacher].act(rows["obs"], rows["mask"], rows["privileged_oracle"]), np.int64)
    out = dict(obs=rows["obs"], mask=rows["mask"], action=action, ret=ret, game=rows["game"], step=rows["step"])
    if oracle:
        out["privileged_oracle"] = rows["privileged_oracle"]
    return out


def prefetched(batches, depth: int = PREFETCH):
    """The items of ``batches``, produced by a thread at most ``depth`` ahead
    (``fzmj.data.loader.read_ahead``); yields ``(item, seconds waited for it)``. An error in the
    thread is raised here."""
    from fzmj.data.loader import read_ahead

    items = read_ahead(batches, depth)
    while True:
        t = time.perf_counter()
        item = next(items, _DONE)
        waited = time.perf_counter() - t
        if item is _DONE:
            return
        yield item, waited


_DONE = object()


def _fit(policy, data, read: dict, args, log, progress: bool, played: int) -> dict:
    """Minibatch Adam over ``bc_epochs`` streamed passes (the loss and clipping of
    ``bc.behaviour_clone``); the learning rate decays linearly to a tenth over the minibatches:
    in the first epoch as if each of the ``played`` decisions of the trained games had a choice
    (forced ones, if any, make it decay a little less), then over the count the first epoch saw."""
    opt = torch.optim.Adam(policy.parameters(), lr=args.bc_learning_rate, eps=1e-5)
    dev = next(policy.parameters()).device
    total = max(1, -(-played // args.bc_batch_size) * args.bc_epochs)  # refined after the first epoch
    step, seen, wait, fill, t0 = 0, 0, 0.0, 0.0, time.perf_counter()
    stats: dict = {}
    for epoch in range(args.bc_epochs):
        sums, n = np.zeros(2), 0
        source = data.batches(
            args.bc_batch_size, seed=args.seed, epoch=epoch, torch=True, buffer_groups=BUFFER_GROUPS,
            workers=replay_workers(), **read,
        )  # fmt: skip
        for batch, waited in prefetched(source):
            if n == 0:  # the loader fills its buffer before the epoch's first batch
                fill, waited = fill + waited, 0.0
            for g in opt.param_groups:
                g["lr"] = args.bc_learning_rate * (1.0 - 0.9 * min(1.0, step / total))
            ce, v_loss = _step(policy, opt, batch, args.vf_coef, dev)
            m = len(batch["action"])
            sums += (ce * m, v_loss * m)
            n, step, wait = n + m, step + 1, wait + waited
            if progress and step % 500 == 0:
                _progress(epoch, args.bc_epochs, n, seen + n, wait, fill, t0, sums / n)
        if epoch == 0:
            total = max(1, step * args.bc_epochs)
        seen += n
        stats.update(train_decisions=n, ce=float(sums[0]) / max(n, 1), value_loss=float(sums[1]) / max(n, 1))
        if log is not None:
            for name, v in (("ce", stats["ce"]), ("value_loss", stats["value_loss"])):
                log(f"bc/{name}", v, epoch)
        if progress:
            _progress(epoch, args.bc_epochs, n, seen, wait, fill, t0, sums / max(n, 1), end=True)
    elapsed = time.perf_counter() - t0
    stats.update(
        decisions_per_s=seen / elapsed,
        data_wait=wait / max(elapsed - fill, 1e-9),
        first_batches_s=fill,
        fit_seconds=elapsed,
    )
    return stats


def _step(policy, opt, batch: dict, vf_coef: float, dev) -> tuple[float, float]:
    """One minibatch of ``bc.behaviour_clone``'s update (``bc_loss.clone_update``); (CE, value loss)."""
    oracle = batch.get("privileged_oracle")
    return clone_update(
        policy, opt, batch["obs"].to(dev), batch["mask"].to(dev), batch["action"].to(dev), batch["ret"].to(dev),
        None if oracle is None else oracle.to(dev), vf_coef,
    )  # fmt: skip


def _progress(epoch, epochs, n, seen, wait, fill, t0, losses, end: bool = False) -> None:
    dt = time.perf_counter() - t0
    print(
        f"bc stream: epoch {epoch + 1}/{epochs}{' done' if end else ''}: {n:,} decisions, ce {losses[0]:.4f} "
        f"value loss {losses[1]:.4f}; {seen / dt:,.0f} decisions/s, waited on data {wait / max(dt - fill, 1e-9):.0%} "
        f"after {fill:.1f}s for the first batches ({dt:.0f}s)",
        flush=True,
    )


@torch.no_grad()
def holdout_stream(policy, data, read: dict, batch_size: int) -> dict:
    """Accuracy (argmax == label) and CE of ``policy`` on the held-out games, streamed."""
    hits, ce_sum, n = 0, 0.0, 0
    dev = next(policy.parameters()).device
    for batch in data.batches(max(batch_size, 4096), shuffle=False, torch=True, **read):
        oracle = batch.get("privileged_oracle")
        action = batch["action"].to(dev)
        batch_hits, ce = label_hits(
            policy, batch["obs"].to(dev), batch["mask"].to(dev), action, None if oracle is None else oracle.to(dev)
        )
        hits += batch_hits
        ce_sum += ce * len(action)
        n += len(action)
    return {"accuracy": hits / max(n, 1), "holdout_ce": ce_sum / max(n, 1), "holdout_decisions": n}
