"""``fzmj-eval``: the command line over ``evaluate()``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from fzmj_env.atomic import write_atomic
from fzmj_env.cli import OneLineParser, check_output_dir, check_output_file, run_cli
from fzmj_env.rules import DEFAULT_RULES, available_rules, load_rules
from fzmj_env.seeding import draw_seed

from .. import SPEC_HELP, AgentSpecError
from ..ppo_agent import DEVICE_ENV, resolve_device
from .report import markdown, plot
from .run import DEFAULT_BATCH, EvalConfigError, evaluate

# what matplotlib's savefig writes (Agg, PDF, PS, SVG, PGF backends; jpg/tif/webp via Pillow)
PLOT_SUFFIXES = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp", "pgf", "raw", "rgba")


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="fzmj-eval",
        description="Benchmark four agents on Fuzhou Mahjong in the duplicate format "
        "(every wall played once per seat rotation).",
        epilog=f"Agent specs: {SPEC_HELP}.",
    )
    p.add_argument(
        "--agents",
        nargs="+",
        metavar="SPEC",
        help="(required) 1 to 4 agent specs, one per seat slot; the last fills the remaining slots "
        "(A B = A against three B)",
    )
    p.add_argument(
        "--hands", type=int, default=1000, help="hands to play, rounded up to a multiple of 4 (default 1000)"
    )
    p.add_argument(
        "--seed",
        type=int,
        help="seed of the walls (default: a secret one drawn for the run, printed afterwards); a seed "
        "others know lets a bot that knows it deal every wall",
    )
    p.add_argument(
        "--agent-seed",
        type=int,
        metavar="K",
        help="key of the agents' reset seeds (default: a secret one drawn for the run, printed afterwards); "
        "give the printed --seed and --agent-seed to replay a run exactly",
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1; results do not depend on it)")
    p.add_argument("--out", metavar="FILE.json", help="write the results as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="plot score distributions and cumulative scores")
    p.add_argument(
        "--rules",
        nargs="?",
        const="",
        default=DEFAULT_RULES,
        help=f"rule preset ({', '.join(available_rules())}) or a rules file (default {DEFAULT_RULES}); "
        "with no value: list the presets and exit",
    )
    p.add_argument(
        "--batch", type=int, default=DEFAULT_BATCH, help=f"tables per batch, a multiple of 4 (default {DEFAULT_BATCH})"
    )
    p.add_argument(
        "--device",
        help="where ppo:/pretrained policies act: auto (CUDA when there is one), cpu or cuda[:N] "
        "(default: $FZMJ_DEVICE, else cpu)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--save-records",
        metavar="DIR",
        help="write game records of the worst and best hands of each agent into DIR (for fzmj-replay)",
    )
    p.add_argument(
        "--max-records", type=int, metavar="N", help="records to keep with --save-records (default: 2 per agent)"
    )
    p.add_argument(
        "--paired",
        metavar="REF",
        help="play every hand again with REF in slot 0 against the same opponents; report the mean per-hand "
        "difference (first agent - REF) and its 95%% CI",
    )
    return p


def _check_args(p: argparse.ArgumentParser, args) -> None:
    """Everything the command line can get wrong, refused before any play (one line, exit 2)."""
    if not args.agents:
        p.error("the following arguments are required: --agents")
    if len(args.agents) > 4:
        p.error(f"--agents takes at most 4 specs (one per seat), got {len(args.agents)}")
    for flag, value in (("--hands", args.hands), ("--workers", args.workers)):
        if value < 1:
            p.error(f"{flag} must be >= 1")
    if args.batch < 4 or args.batch % 4:
        p.error("--batch must be a positive multiple of 4")
    for flag, value in (("--seed", args.seed), ("--agent-seed", args.agent_seed)):
        if value is not None and not 0 <= value < 2**64:
            p.error(f"{flag} must be in 0..2**64-1")
    try:  # the outputs are written after the work: check them before it
        if args.out is not None:
            check_output_file(args.out, "--out")
        if args.plot is not None:
            check_output_file(args.plot, "--plot", PLOT_SUFFIXES)
    except ValueError as e:
        p.error(str(e))
    if args.device is not None:  # for the agents made here and in the worker processes
        try:
            os.environ[DEVICE_ENV] = resolve_device(args.device)
        except AgentSpecError as e:
            p.error(f"--device: {e}")
    if args.max_records is not None and (args.max_records < 1 or not args.save_records):
        p.error("--max-records needs --save-records and must be >= 1")
    if args.save_records is not None:  # created and probed now: the records are written after the play
        try:
            check_output_dir(args.save_records, "--save-records")
        except ValueError as e:
            p.error(str(e))


def _run(args) -> int:
    res, raw = evaluate(
        args.agents,
        args.hands,
        seed=args.seed,
        agent_seed=draw_seed() if args.agent_seed is None else args.agent_seed,  # secret unless given
        workers=args.workers,
        progress=not args.no_progress,
        rules=args.rules,
        batch=args.batch,
        save_records=args.save_records,
        max_records=args.max_records,
        paired=args.paired,
        _raw=True,
    )
    print(markdown(res))
    if res.get("records"):
        print(
            f"\nsaved {len(res['records'])} game records to {args.save_records} (view one: fzmj-replay {res['records'][0]})"
        )
    try:
        if args.out:
            write_atomic(args.out, json.dumps(res, indent=2, ensure_ascii=False) + "\n")
        if args.plot:
            plot(res, raw, args.plot)
    except OSError as e:  # a full disk, a folder removed meanwhile: one line naming the file, exit 1
        sys.stderr.write(f"fzmj-eval: error: {e}\n")
        return 1
    if res.get("records_error"):
        sys.stderr.write(f"fzmj-eval: error: --save-records: {res['records_error']}\n")
        return 1
    return 0


def list_presets() -> str:
    """One line per shipped preset: its name, its scheme and its source (``--rules`` alone)."""
    lines = []
    for name in available_rules():
        r = load_rules(name)
        default = " (default)" if name == DEFAULT_RULES else ""
        lines.append(f"{name}{default}: scheme {r.scheme}; {r.data.get('source', '')}".rstrip("; "))
    return "\n".join(lines)


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.rules == "":  # --rules with no value
        print(list_presets())
        return 0
    _check_args(p, args)
    return run_cli(p, lambda: _run(args), (AgentSpecError, EvalConfigError))
