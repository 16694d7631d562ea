"""Write a training checkpoint's policy as a small, shippable file (no optimizer, pool or RNG).

    python -m fzmj.train.export_pretrained runs/o130_guide/checkpoints/latest.pt --out agents/pretrained/fzmj_pretrained_v2.pt

A shipped version's file never changes (``pretrained:vN`` plays it bit for bit); a new one gets
the next name and an entry in ``fzmj.agents.ppo_agent.PRETRAINED_VERSIONS`` (docs/pretrained.md).

The result is an ordinary checkpoint (``fzmj.agents.checkpoint.load_policy`` reads it; ``ppo:PATH``
plays it) that keeps the run's config, counters and any ``note`` given here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fzmj.agents.checkpoint import load_checkpoint, load_policy, save_checkpoint


def export(src: str | Path, out: str | Path, note: str = "") -> Path:
    """Copy the policy of checkpoint ``src`` to ``out`` with its config and counters; returns ``out``.
    An existing ``out`` is refused (a ValueError): shipped weights are never overwritten."""
    if Path(out).exists():
        raise ValueError(f"{out} exists: a shipped version never changes, export to a new name")
    data = load_checkpoint(src)
    policy = load_policy(src)
    return save_checkpoint(
        out,
        policy,
        config=data.get("config"),
        update=data.get("update", 0),
        global_step=data.get("global_step", 0),
        note=note,
        source=str(src),
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fzmj.train.export_pretrained", description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--out", required=True, help="the file to write (a new name: shipped versions never change)")
    p.add_argument("--note", default="")
    a = p.parse_args(argv)
    try:
        path = export(a.checkpoint, a.out, a.note)
    except (FileNotFoundError, ValueError) as e:
        p.error(str(e))
    print(f"{path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
