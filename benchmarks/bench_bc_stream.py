"""Does the streamed clone (``bc_stream``, fzmj/train/bc_stream.py) wait on data? The loader alone
(the clone's read options: v2 + hand features, the hidden state, the all-seeing teacher's labels
and the returns per row group) against the whole streamed clone (ppo_default's network; the same
with one replay process; the long recipe's tile network), in
decisions per second, with the share of the clone's time spent waiting for a batch after the
first (which waits for the loader's buffer to fill: printed apart); the machine and
its load averages printed beside them, and each stage of the loader alone (a shared machine's figures move with what else runs).

    python benchmarks/bench_bc_stream.py DATASET --decisions 200000 --json

Medians of ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from functools import partial
from types import SimpleNamespace


def loader_alone(folder: str, decisions: int) -> float:
    """Decisions/s of the clone's batches with nothing trained on them."""
    from fzmj.data import open_dataset
    from fzmj.data.loader import ReadOptions
    from fzmj.train.bc_stream import BUFFER_GROUPS, _prepare, _subset, game_split

    data = open_dataset(folder)
    split = game_split(data, decisions, 0.05, progress=False)
    prep = partial(
        _prepare, lo=split["cut"], hi=split["last"], teacher="oracle:defend", scale=0.02, gamma=1.0, oracle=False
    )
    view = _subset(data, split["train_groups"])
    prep(view.group(0, ReadOptions(privileged=True, only_choices=True)))  # warm: the kernels load once per process
    t0, n = time.perf_counter(), 0
    for batch in view.batches(1024, hand_features=True, privileged=True, only_choices=True, per_group=prep,
                              buffer_groups=BUFFER_GROUPS, torch=True):  # fmt: skip
        n += len(batch["action"])
    return n / (time.perf_counter() - t0)


def stages(folder: str, groups: int = 4) -> dict:
    """Decisions/s of each stage of the loader, one row group at a time: the replay (v2 planes and
    the hidden state, decisions with a choice), the teacher's labels with the returns, the hand
    features (one Numba thread)."""
    from fzmj.data import open_dataset
    from fzmj.data.loader import ReadOptions, _read_group
    from fzmj.train.bc_stream import _prepare
    from fzmj_env.features import with_hand_features

    data = open_dataset(folder)
    prep = partial(_prepare, lo=0, hi=1 << 62, teacher="oracle:defend", scale=0.02, gamma=1.0, oracle=False)
    options = ReadOptions(privileged=True, only_choices=True)
    with_hand_features(prep(_read_group(data.groups[0], data.rules, data.slots, options))["obs"])  # warm
    spent = {"replay": 0.0, "teacher_and_returns": 0.0, "hand_features": 0.0}
    n = 0
    for group in data.groups[1 : 1 + groups]:
        t0 = time.perf_counter()
        rows = _read_group(group, data.rules, data.slots, options)
        t1 = time.perf_counter()
        rows = prep(rows)
        t2 = time.perf_counter()
        with_hand_features(rows["obs"])
        t3 = time.perf_counter()
        n += len(rows["action"])
        for key, dt in zip(spent, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            spent[key] += dt
    return {f"{k}_decisions_per_s": round(n / v) for k, v in spent.items()}


def streamed_clone(folder: str, decisions: int, workers: int | None = None, network: str = "mlp") -> dict:
    """The streamed clone of ppo_default's network (MLP 128-128 with the hand features), or with
    ``network="resnet"`` the tile network of the long recipe (32 channels x 2 blocks), one epoch;
    ``workers``: replay processes (default: ``replay_workers()``, none on up to four cores)."""
    import torch

    from fzmj.agents.policy import ActorCritic
    from fzmj.train import bc_stream
    from fzmj.train.bc_stream import stream_clone

    if workers is not None:
        bc_stream.replay_workers = lambda: workers

    torch.manual_seed(0)
    tile = dict(network="resnet", res_channels=32, res_blocks=2) if network == "resnet" else {}
    policy = ActorCritic(hidden_sizes=(128, 128), hand_features=True, **tile)
    args = SimpleNamespace(
        bc_dataset=folder, rules="fuzhou-lianzhong", bc_decisions=decisions, bc_teacher="oracle:defend",
        obs_version=2, reward_scale=0.02, gamma=1.0, bc_batch_size=1024, bc_epochs=1, bc_learning_rate=1e-3,
        vf_coef=0.5, seed=1,
    )  # fmt: skip
    s = stream_clone(policy, args, progress=False)
    keep = ("decisions_per_s", "data_wait", "first_batches_s", "accuracy")
    return {k: s[k] for k in keep}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="a dataset folder (fzmj-data collect), e.g. heuristic self-play")
    ap.add_argument("--decisions", type=int, default=200_000, help="recorded decisions read (default 200,000)")
    ap.add_argument("--runs", type=int, default=1, help="runs, median taken (default 1)")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)  # the trainer's setting: one torch thread
    load_before = os.getloadavg()[0]
    parts = stages(a.dataset)
    loads = [loader_alone(a.dataset, a.decisions) for _ in range(a.runs)]
    clones = [streamed_clone(a.dataset, a.decisions) for _ in range(a.runs)]
    process = [streamed_clone(a.dataset, a.decisions, workers=1) for _ in range(a.runs)]
    tile = [streamed_clone(a.dataset, a.decisions, network="resnet") for _ in range(a.runs)]
    out = {
        "loader_decisions_per_s": round(statistics.median(loads)),
        "clone_decisions_per_s": round(statistics.median(c["decisions_per_s"] for c in clones)),
        "clone_data_wait": round(statistics.median(c["data_wait"] for c in clones), 3),
        "clone_first_batch_s": round(statistics.median(c["first_batches_s"] for c in clones), 2),
        "clone_accuracy": round(statistics.median(c["accuracy"] for c in clones), 4),
        "clone_one_worker_decisions_per_s": round(statistics.median(c["decisions_per_s"] for c in process)),
        "clone_one_worker_data_wait": round(statistics.median(c["data_wait"] for c in process), 3),
        "clone_resnet_decisions_per_s": round(statistics.median(c["decisions_per_s"] for c in tile)),
        "clone_resnet_data_wait": round(statistics.median(c["data_wait"] for c in tile), 3),
        "clone_resnet_first_batch_s": round(statistics.median(c["first_batches_s"] for c in tile), 2),
        **parts,
        "decisions": a.decisions,
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.processor() or platform.system()}",
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
