"""Draw the paired curves of training runs into one PNG, and print them as a table.

Each run's trainer writes ``paired.jsonl`` (``eval_paired_every``, fzmj/train/evaluation.py): at
fixed updates, the checkpoint and then ``heuristic`` each play the same walls against three
heuristics; the line is the mean per-hand difference with its 95% CI. Runs of the same seed meet
the same walls, so their curves compare lever against lever (docs/results.md, "Training with
what the table hides").

    python benchmarks/studies/oracle_curves.py runs/o24_control runs/o24_critic runs/o24_teacher \\
        -o docs/results/oracle_curves.png

``--ablation FILE`` adds the curves of ``oracle_ablation.py --json FILE`` (checkpoints of a run,
each played on the ablation's seeds; pooled over the seeds, so many more hands a point): one line
per run name prefix before ``@`` (``guide@44M=...``), labelled with its seeds, the rows against
``heuristic``;
an agent spec that is no checkpoint (``pretrained``) is drawn as a dashed level.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def read_curve(run: Path) -> list[dict]:
    """The run's paired evaluations in step order (a resumed run's repeats: the newest kept)."""
    path = run / "paired.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{run}: no paired.jsonl (was the run made with eval_paired_every > 0?)")
    rows: dict[int, dict] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
            rows[int(row["global_step"])] = row
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}:{n}: not a paired evaluation line ({e})") from None
    return [rows[k] for k in sorted(rows)]


def read_ablation(path: Path) -> tuple[dict[str, list[dict]], dict[str, dict], list[int]]:
    """``(curves, levels, seeds)`` of an ``oracle_ablation.py --json`` file, against ``heuristic``
    and pooled over its seeds: checkpoints grouped by the name before ``@``, other specs as
    levels; the wall seeds in order."""
    from fzmj.train.evaluation import pooled

    every = json.loads(path.read_text())
    rows = [r for r in every if r["ref"] == "heuristic"]
    curves: dict[str, list[dict]] = {}
    levels: dict[str, dict] = {}
    for name in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == name]
        point = pooled(mine)
        if "global_step" in mine[0]:
            curves.setdefault(name.partition("@")[0], []).append({**point, "global_step": mine[0]["global_step"]})
        else:
            levels[name] = point
    curves = {k: sorted(v, key=lambda r: r["global_step"]) for k, v in curves.items()}
    return curves, levels, sorted({r["seed"] for r in every})


def draw(curves: dict[str, list[dict]], out: Path, levels: dict[str, dict] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, rows in curves.items():
        x = [r["global_step"] / 1e6 for r in rows]
        y = [r["mean"] for r in rows]
        lo = [r["ci95"][0] for r in rows]
        hi = [r["ci95"][1] for r in rows]
        ax.plot(x, y, marker="o", label=name)
        ax.fill_between(x, lo, hi, alpha=0.15)
    for name, lv in (levels or {}).items():
        ax.axhline(lv["mean"], ls="--", lw=1.0, color="black", label=f"{name} ({lv['mean']:+.2f})")
    ax.axhline(0.0, color="grey", lw=0.8)
    hands = sorted({r["hands"] for rows in curves.values() for r in rows})
    ax.set_xlabel("env steps (millions)")
    ax.set_ylabel("points / hand vs heuristic (paired)")
    ax.set_title(f"paired vs 3 heuristic, the same {' or '.join(f'{h:,}' for h in hands)} hands a point (95% CI)")
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", type=Path, help="run folders (runs/<run_name>)")
    ap.add_argument("--ablation", type=Path, nargs="+", default=[], help="oracle_ablation.py --json files")
    ap.add_argument("-o", "--out", type=Path, help="PNG to write (default: only the table)")
    a = ap.parse_args(argv)
    if not a.runs and not a.ablation:
        ap.error("give run folders, --ablation files, or both")
    levels: dict[str, dict] = {}
    try:
        curves = {(f"{run.name} (trainer's walls)" if a.ablation else run.name): read_curve(run) for run in a.runs}
        for path in a.ablation:
            more, lv, seeds = read_ablation(path)
            levels.update(lv)
            seeds = "/".join(map(str, seeds))
            for name, rows in more.items():
                curves[f"{name} (seeds {seeds})"] = rows
    except (FileNotFoundError, ValueError, KeyError) as e:
        print(f"oracle_curves: {e}", file=sys.stderr)
        return 2
    for name, rows in curves.items():
        for r in rows:
            lo, hi = r["ci95"]
            print(
                f"{name:<24} {r['global_step']:>12,} steps  {r['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}]  ({r['hands']} hands)"
            )
    for name, lv in levels.items():
        lo, hi = lv["ci95"]
        print(f"{name:<24} {'(level)':>12}        {lv['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}]  ({lv['hands']} hands)")
    if a.out:
        draw(curves, a.out, levels)
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
