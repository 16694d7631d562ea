"""The belief model's held-out figures against training data size (docs/belief.md, "AUC against
data size").

One data set, nested subsets, one held-out set: the training decisions are generated in chunks
of ``--chunk`` decisions (heuristic self-play, chunk i from seed ``seed + i``), each kept as
``DATA/train{i}.npz``; a size of N decisions is the first N of chunks 0, 1, 2, ... in order, so
every smaller set is a prefix of every larger one. The held-out set ``DATA/val.npz`` is played
from seed ``seed + 1000003`` (as ``fzmj-belief``'s). Files already there with the same settings
are reused (a file of other settings is an error, never overwritten). Each (arch, size) is one ``fzmj-belief`` training run (``fzmj.train.belief.train``
on those sets) in ``RUNS/{arch}_{size}``; the table gives the last epoch's held-out figures.

    nice -n 19 python benchmarks/studies/belief_curve.py                 # small defaults (minutes)
    nice -n 19 python benchmarks/studies/belief_curve.py --sizes 100000 400000 1600000 --archs mlp seq \\
        --epochs 1 --val-decisions 50000 --chunk 400000 --tables 512 --data runs/belief_curve/data --runs-dir runs/belief_curve \\
        --json runs/belief_curve/curve.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

VAL_SEED_OFFSET = 1_000_003


def chunk_set(path: Path, decisions: int, seed: int, obs_version: str, tables: int, say) -> dict:
    """One generated chunk, read from ``path`` if it holds these settings, else made and kept."""
    from fzmj.train.belief_data import generate

    key = json.dumps({"seed": seed, "decisions": decisions, "obs_version": obs_version, "tables": tables})
    if path.is_file():
        with np.load(path) as z:
            if json.loads(str(z["key"])) == json.loads(key):
                return {k: z[k] for k in z.files if k != "key"}
            raise SystemExit(f"belief_curve: {path} holds other settings ({z['key']}): use another --data folder")
    t0 = time.time()
    d = generate(decisions, ["heuristic"] * 4, "fuzhou-lianzhong", seed, tables, obs_version)
    say(f"data: {path.name}: {decisions:,} decisions in {time.time() - t0:.0f} s")
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
    np.savez(tmp, key=np.array(key), **d)
    tmp.replace(path)
    return d


def nested(chunks: list[dict], size: int) -> dict:
    """The first ``size`` decisions of the chunks in order."""
    out, left = {}, size
    parts = []
    for c in chunks:
        take = min(left, len(c["ready"]))
        parts.append({k: v[:take] for k, v in c.items()})
        left -= take
        if left == 0:
            break
    for k in parts[0]:
        out[k] = np.concatenate([p[k] for p in parts]) if len(parts) > 1 else parts[0][k]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 80_000], help="training decisions")
    ap.add_argument("--archs", nargs="+", default=["mlp"], help="mlp and/or seq")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--val-decisions", type=int, default=10_000)
    ap.add_argument("--chunk", type=int, default=40_000, help="decisions per generated chunk")
    ap.add_argument("--obs-version", default="v3")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--tables", type=int, default=64, help="self-play tables (the measured set: 512)")
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--data", default="runs/belief_curve_small/data", help="folder of the generated chunks")
    ap.add_argument("--runs-dir", default="runs/belief_curve_small", help="where the training runs go")
    ap.add_argument("--json", help="write the rows here too")
    ns = ap.parse_args(argv)

    from fzmj.train import belief as B

    def say(line: str) -> None:
        print(line, flush=True)

    data = Path(ns.data)
    data.mkdir(parents=True, exist_ok=True)
    val = chunk_set(data / "val.npz", ns.val_decisions, ns.seed + VAL_SEED_OFFSET, ns.obs_version, ns.tables, say)
    chunks = [
        chunk_set(data / f"train{i}.npz", ns.chunk, ns.seed + i, ns.obs_version, ns.tables, say)
        for i in range(math.ceil(max(ns.sizes) / ns.chunk))
    ]
    rows = []
    for arch in ns.archs:
        for size in sorted(ns.sizes):
            train_set = nested(chunks, size)
            args = B.BeliefArgs(
                run_name=f"{arch}_{size}", runs_dir=ns.runs_dir, obs_version=ns.obs_version,
                train_decisions=size, val_decisions=len(val["ready"]), epochs=ns.epochs, seed=ns.seed,
                tables=ns.tables, hidden=list(ns.hidden), arch=arch, threads=ns.threads, log_every=1000,
            )  # fmt: skip
            t0 = time.time()
            m = B.train(args, overwrite=True, sets=(train_set, val))
            rows.append({"arch": arch, "train_decisions": size, "epochs": ns.epochs, "seconds": time.time() - t0, **m})
            if ns.json:
                Path(ns.json).write_text(json.dumps(rows, indent=1))
    say("")
    say(f"held-out: {len(val['ready']):,} decisions, observation {ns.obs_version}, {ns.epochs} epoch(s)")
    say(
        "| arch | train decisions | deal-in log-loss | deal-in AUC | win_on log-loss | ready AUC "
        "| concealed log-loss | seconds |"
    )
    say("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        say(
            f"| {r['arch']} | {r['train_decisions']:,} | {r['danger_logloss']:.4f} | {r['danger_auc']:.4f} "
            f"| {r['win_on_logloss']:.4f} | {r['ready_auc']:.4f} | {r['concealed_logloss']:.4f} | {r['seconds']:.0f} |"
        )
    if rows:
        r = rows[0]
        say(
            f"constants: deal-in log-loss {r['danger_logloss_const']:.4f}, win_on {r['win_on_logloss_const']:.4f}, "
            f"concealed {r['concealed_logloss_const']:.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
