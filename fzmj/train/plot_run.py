"""Export a training run's curves from its TensorBoard event file to a PNG.

python -m fzmj.train.plot_run runs/<run_name> docs/results/curve.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fzmj_env.atomic import save_figure_atomic

PANELS = (
    ("eval/score_vs_random", "eval: score / hand vs 3 random"),
    ("eval/score_vs_heuristic", "eval: score / hand vs 3 heuristic"),
    ("losses/entropy", "policy entropy"),
    ("losses/explained_variance", "explained variance"),
    ("charts/win_rate", "learner win rate (training games)"),
    ("charts/SPS", "env steps / s"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="the run directory holding the event file(s)")
    parser.add_argument("out", type=Path, help="PNG file to write")
    args = parser.parse_args(argv)
    if not args.run_dir.is_dir():
        print(f"plot_run: no such run directory: {args.run_dir}", file=sys.stderr)
        return 2

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(args.run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for ax, (tag, title) in zip(axes.flat, PANELS, strict=True):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("env steps")
        ax.grid(alpha=0.3)
        if tag not in tags:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes)
            continue
        events = acc.Scalars(tag)
        ax.plot([e.step for e in events], [e.value for e in events], marker="." if len(events) < 60 else None)
        if tag.startswith("eval/"):
            ax.axhline(0.0, color="grey", lw=0.8)
    fig.suptitle(f"fzmj-train: {args.run_dir.name}")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_figure_atomic(fig, args.out, dpi=90)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
