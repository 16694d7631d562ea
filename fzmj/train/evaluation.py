"""The trainer's evaluate step: a duplicate evaluation (``fzmj.agents.evaluate``) of the newest
checkpoint against three ``random`` and three ``heuristic`` seats, on the same walls each time;
the checkpoint then joins the league's roster when ``league_dir`` is set (nothing is played)."""

from __future__ import annotations

import json
from pathlib import Path

PAIRED_WALLS_SEED = 3_000_000
"""The paired evaluations' walls: seed ``PAIRED_WALLS_SEED + seed`` of the run, the same at every
evaluation (and in two runs of the same seed: a control and a variant meet the same walls)."""


def evaluate_checkpoint(ckpt: Path, opponent: str, args, seed: int, records: Path | None = None) -> dict:
    """Duplicate evaluation of the checkpoint against three ``opponent`` seats.

    Returns the learner's entry: mean_score, ci95, win_rate, deal_in_rate, self_draw_rate, ...
    """
    from fzmj.agents.evaluate import evaluate

    spec = f"ppo:{ckpt}"
    keep = {"save_records": str(records), "max_records": args.eval_records} if records and args.eval_records > 0 else {}
    result = evaluate(
        [spec, opponent],
        hands=args.eval_hands,
        seed=seed,
        workers=args.eval_workers,
        progress=False,
        rules=args.rules,
        **keep,
    )
    return result["agents"][spec]


class Evaluator:
    """Evaluations every ``eval_every`` updates and at the last, on rank 0; ``latest`` keeps the
    newest result per opponent for the console line."""

    OPPONENTS = ("random", "heuristic")

    def __init__(self, args, run_dir: Path, writer, main: bool):
        self.args, self.run_dir, self.writer, self.main = args, run_dir, writer, main
        self.latest: dict[str, dict] = {}

    def _due(self, every: int, update: int, stopping: bool) -> bool:
        """Every ``every`` updates and at the last (``every`` 0: never), not while stopping."""
        return every > 0 and (update % every == 0 or update == self.args.num_updates) and not stopping

    def due(self, update: int, stopping: bool) -> bool:
        return self._due(self.args.eval_every, update, stopping)

    def paired_due(self, update: int, stopping: bool) -> bool:
        return self._due(self.args.eval_paired_every, update, stopping)

    def run_paired(self, ckpt: Path, update: int, global_step: int) -> dict | None:
        """The checkpoint, then ``heuristic``, against three heuristics on the same walls:
        ``eval/paired_vs_heuristic`` (mean per-hand difference) with its 95% CI, and one line of
        ``paired.jsonl`` in the run folder (``benchmarks/studies/oracle_curves.py`` draws it)."""
        if not self.main:
            return None
        from fzmj.agents.evaluate import evaluate

        args, spec = self.args, f"ppo:{ckpt}"
        res = evaluate(
            [spec, "heuristic"],
            hands=args.eval_paired_hands,
            seed=PAIRED_WALLS_SEED + args.seed,
            workers=args.eval_workers,
            progress=False,
            rules=args.rules,
            paired="heuristic",
        )["paired"]
        lo, hi = res["ci95"]
        for name, value in (("", res["mean"]), ("_ci_low", lo), ("_ci_high", hi)):
            self.writer.add_scalar(f"eval/paired_vs_heuristic{name}", value, global_step)
        row = {
            "update": update,
            "global_step": global_step,
            "mean": res["mean"],
            "ci95": [lo, hi],
            "hands": res["hands"],
        }
        with open(self.run_dir / "paired.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        self.latest["heuristic, paired"] = {"mean_score": res["mean"], "ci95": [lo, hi]}
        return res

    def run(self, ckpt: Path, update: int, global_step: int) -> None:
        if not self.main:
            return
        args, tag = self.args, f"update_{update:06d}"
        for opponent in self.OPPONENTS:
            records = self.run_dir / "records" / f"{tag}_vs_{opponent}"
            res = evaluate_checkpoint(ckpt, opponent, args, seed=1_000_000 + args.seed, records=records)
            self.latest[opponent] = res
            self.writer.add_scalar(f"eval/score_vs_{opponent}", res["mean_score"], global_step)
            self.writer.add_scalar(f"eval/win_rate_vs_{opponent}", res["win_rate"], global_step)
        if args.league_dir:
            from fzmj.agents.league import add_to_league

            ckpt_path = self.run_dir / "checkpoints" / f"{tag}.pt"
            add_to_league(args.league_dir, f"ppo:{ckpt_path}", f"{args.run_name}/{tag}", args.rules)
