"""The trainer's evaluate step: a duplicate evaluation (``fzmj.agents.evaluate``) of the newest
checkpoint against three ``random`` and three ``heuristic`` seats, on the same walls each time;
the checkpoint then joins the league's roster when ``league_dir`` is set (nothing is played).
The paired point (``eval_paired_every``): the checkpoint minus ``heuristic`` on reserved walls,
which ranks the run's checkpoints and keeps ``best.pt`` (``best.py``)."""

from __future__ import annotations

import json
from pathlib import Path

SELECTION_SEEDS = 2**63
"""The in-run paired points' wall seeds: ``SELECTION_SEEDS + i`` for i < ``eval_paired_seeds``
(at most ``MAX_PAIRED_SEEDS``), the same at every point of every run, so a curve ranks its own
checkpoints on common walls and two runs meet the same walls. No training wall comes from this
range: every base seed of the trainer's tables, demonstrations and DAgger rounds is reduced
modulo 2**63 (``run_setup``, ``bc``, ``distill``; the ranks' seeds are 63-bit), and every
pre-registered check (docs/results.md) uses small seeds, so these walls stay unseen by training and
by the checks (docs/training.md, "Picking a checkpoint")."""
CONFIRM_SEEDS = SELECTION_SEEDS + 1000
"""Reserved for confirming a pick on walls it was not picked on (``fzmj-eval --paired --seed``
``2**63 + 1000 + i``): never played by the trainer."""
MAX_PAIRED_SEEDS = 1000


def paired_seeds(count: int) -> list[int]:
    """The wall seeds of an in-run paired point (``count`` of them)."""
    return [SELECTION_SEEDS + i for i in range(count)]


def pooled(results: list[dict]) -> dict:
    """Paired results of equal hands on independent walls pooled: the mean of the means, the CI
    half-widths added in quadrature (how the pre-registered checks pool their seeds)."""
    k = len(results)
    mean = sum(r["mean"] for r in results) / k
    half = sum(((r["ci95"][1] - r["ci95"][0]) / 2) ** 2 for r in results) ** 0.5 / k
    return {"mean": mean, "ci95": [mean - half, mean + half], "hands": sum(r["hands"] for r in results)}


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
        self.best = None  # the run's BestKeeper (train/best.py), set by setup_run on rank 0

    def _due(self, every: int, update: int, stopping: bool) -> bool:
        """Every ``every`` updates and at the last (``every`` 0: never), not while stopping."""
        return every > 0 and (update % every == 0 or update == self.args.num_updates) and not stopping

    def due(self, update: int, stopping: bool) -> bool:
        return self._due(self.args.eval_every, update, stopping)

    def paired_due(self, update: int, stopping: bool) -> bool:
        return self._due(self.args.eval_paired_every, update, stopping)

    def run_paired(self, ckpt: Path, update: int, global_step: int) -> dict | None:
        """The checkpoint, then ``heuristic``, against three heuristics on the same walls, drawn
        from ``eval_paired_seeds`` reserved seeds (:data:`SELECTION_SEEDS`): ``eval/paired_vs_heuristic``
        (mean per-hand difference) with its 95% CI, one line of ``paired.jsonl`` in the run folder
        (``benchmarks/studies/oracle_curves.py`` draws it), and ``best.pt`` kept by it (``self.best``)."""
        if not self.main:
            return None
        row = {"update": update, "global_step": global_step, **self.paired_point(f"ppo:{ckpt}")}
        lo, hi = row["ci95"]
        for name, value in (("", row["mean"]), ("_ci_low", lo), ("_ci_high", hi)):
            self.writer.add_scalar(f"eval/paired_vs_heuristic{name}", value, global_step)
        with open(self.run_dir / "paired.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        self.latest["heuristic, paired"] = {"mean_score": row["mean"], "ci95": [lo, hi]}
        if self.best is not None:
            self.best.offer(row)
        return row

    def paired_point(self, spec: str) -> dict:
        """``spec`` and ``heuristic`` on ``eval_paired_hands`` hands, split evenly over the seeds;
        the evaluations leave the training's generators as they were (an agent's reset seeds
        torch), so the evaluation settings never change the run itself."""
        import torch

        from fzmj.agents.evaluate import evaluate

        args = self.args
        seeds = paired_seeds(args.eval_paired_seeds)
        # torch.manual_seed reseeds every device: a CUDA run's generators are kept too
        cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
        with torch.random.fork_rng(devices=list(range(torch.cuda.device_count())) if cuda else []):
            parts = [
                evaluate(
                    [spec, "heuristic"],
                    hands=args.eval_paired_hands // len(seeds),
                    seed=seed,
                    workers=args.eval_workers,
                    progress=False,
                    rules=args.rules,
                    paired="heuristic",
                )["paired"]
                for seed in seeds
            ]
        return {**pooled(parts), "seeds": seeds}

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
