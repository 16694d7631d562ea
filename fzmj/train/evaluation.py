"""The trainer's evaluate step: a duplicate evaluation (``fzmj.agents.evaluate``) of the newest
checkpoint against three ``random`` and three ``heuristic`` seats, on the same walls each time;
the checkpoint then joins the league's roster when ``league_dir`` is set (nothing is played)."""

from __future__ import annotations

from pathlib import Path


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

    def due(self, update: int, stopping: bool) -> bool:
        every = self.args.eval_every
        return every > 0 and (update % every == 0 or update == self.args.num_updates) and not stopping

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
