"""``fzmj-data``: collect a dataset of recorded play (``collect``), show one (``info``), check one
whole by replaying every decision (``verify``). Bad input: one line, exit 2 (docs/reference.md)."""

from __future__ import annotations

import json
import os
import sys

from fzmj.agents import SPEC_HELP, AgentSpecError
from fzmj.agents.evaluate.run import DEFAULT_BATCH
from fzmj_env.cli import OneLineParser, run_cli
from fzmj_env.rules import DEFAULT_RULES

from .collector import DEFAULT_BATCHES_PER_SHARD, collect
from .format import DatasetError, content_digest, dataset_digest


def _parser() -> OneLineParser:
    p = OneLineParser(prog="fzmj-data", description="Datasets of recorded play (docs/data.md).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    c = sub.add_parser("collect", help="play agents and write every decision as a dataset folder")
    c.add_argument("--agents", nargs="+", required=True, metavar="SPEC", help="1 to 4 agent specs, as fzmj-eval")
    c.add_argument("--hands", type=int, required=True, help="hands to play (rounded up to whole walls of 4)")
    c.add_argument("--out", required=True, metavar="DIR", help="the dataset folder (an unfinished one is resumed)")
    c.add_argument("--rules", default=DEFAULT_RULES, help=f"rule preset (default {DEFAULT_RULES})")
    c.add_argument("--seed", type=int, default=0, help="seed of the walls (default 0: the same command, the same data)")
    c.add_argument("--agent-seed", type=int, metavar="K", help="key of the agents' seeds (default: from --seed)")
    c.add_argument(
        "--slots", type=int, nargs="+", metavar="S", help="agent slots whose decisions are recorded (default all)"
    )
    c.add_argument("--workers", type=int, default=1, help="worker processes (the data does not depend on it)")
    c.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="tables per batch, a multiple of 4")
    c.add_argument("--batches-per-shard", type=int, default=DEFAULT_BATCHES_PER_SHARD, help="batches in a shard")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    for name, what in (("info", "print a dataset's manifest summary"), ("verify", "replay every decision")):
        s = sub.add_parser(name, help=what)
        s.add_argument("folder", metavar="DIR")
    p.epilog = f"Agent specs: {SPEC_HELP}."
    return p


def _collect(args) -> int:
    m = collect(
        args.out,
        args.agents,
        args.hands,
        rules=args.rules,
        seed=args.seed,
        agent_seed=args.agent_seed,
        slots=args.slots,
        workers=args.workers,
        batch=args.batch,
        batches_per_shard=args.batches_per_shard,
        progress=not args.no_progress,
    )
    c = m["counts"]
    print(
        f"{args.out}: {c['hands']:,} hands, {c['recorded_decisions']:,} decisions recorded, "
        f"{c['bytes']:,} bytes ({c['bytes'] / max(1, c['recorded_decisions']):.2f} B/decision) in "
        f"{len(m['shards'])} shards; digest {m['digest']}"
    )
    return 0


def _info(args) -> int:
    from .loader import open_dataset

    d = open_dataset(args.folder, verify=False)
    m = dict(d.manifest)
    m.pop("rules_data")
    m["shards"] = len(m["shards"])
    print(json.dumps(m, indent=1, ensure_ascii=False))
    return 0


def _verify(args) -> int:
    from .loader import open_dataset

    d = open_dataset(args.folder)
    check_contents(d)
    n = sum(len(d.group(i)["action"]) for i in range(len(d.groups)))
    if n != d.num_decisions:
        raise DatasetError(f"{args.folder}: replayed {n:,} recorded decisions, the manifest claims {d.num_decisions:,}")
    print(f"{args.folder}: {n:,} decisions replayed, every seat, action, mask and score as stored")
    return 0


def check_contents(d) -> None:
    """Each shard's columns hash to its ``content_sha256`` and the shards to the dataset's digest."""
    from .shards import concat_hands, read_row_group

    for s in d.manifest["shards"]:
        path = d.folder / s["file"]
        hands = concat_hands([read_row_group(path, g) for p, g, _ in d.groups if p == path])
        if content_digest(hands) != s["content_sha256"]:
            raise DatasetError(f"{path}: its content differs from the manifest's content_sha256")
    if dataset_digest(d.manifest) != d.manifest.get("digest"):
        raise DatasetError(f"{d.folder}: the manifest's digest {d.manifest.get('digest')!r} is not its content's")


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.command == "collect":
        if not 1 <= len(args.agents) <= 4:
            p.error(f"--agents takes 1 to 4 specs, got {len(args.agents)}")
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            p.error(f"--out: {args.out!r} is not a folder")
    work = {"collect": _collect, "info": _info, "verify": _verify}[args.command]
    return run_cli(p, lambda: work(args), (AgentSpecError, DatasetError))


if __name__ == "__main__":
    sys.exit(main())
