"""The checkpoint to keep: ``checkpoints/best.pt``, the checkpoint of the run's highest paired point.

Each in-run paired point (``eval_paired_every``, ``evaluation.py``) is offered to :class:`BestKeeper`;
a point above the best so far replaces ``best.pt`` (written atomically, like every checkpoint)
with the policy and a ``best`` record: the point's figure, its CI, hands, wall seeds, update and
step, and how many points it was picked among. One line goes to the console and ``train.log``,
and ``eval/best_paired_vs_heuristic`` to TensorBoard.

``best.pt`` is a pick, not a place to continue from: it holds no optimizer, and ``--resume``
refuses it (:func:`refuse_resume_of_best`). Its figure is the maximum of a noisy curve, so it
reads high (the winner's curse): confirm it on walls it was not picked on (docs/training.md,
"Picking a checkpoint").
"""

from __future__ import annotations

import dataclasses
import errno
import os
from pathlib import Path

from fzmj.agents.checkpoint import load_checkpoint, save_checkpoint

from .checkpoint import CheckpointWriteError

BEST_NAME = "best.pt"


class BestKeeper:
    """Keeps ``ckpt_dir/best.pt`` at the highest paired point of the run (rank 0 only)."""

    def __init__(self, ckpt_dir: Path, args, agent, writer, log_file: Path | None, resumed_update: int | None):
        self.path, self.args, self.agent = ckpt_dir / BEST_NAME, args, agent
        self.writer, self.log_file = writer, log_file
        self.record = self._earlier_best(resumed_update)
        every = args.eval_paired_every
        # the points the pick was compared with before the resume (none without a pick: a run
        # begun before best.pt existed, or one whose pick was moved aside)
        self.points = resumed_update // every if self.record is not None and every else 0

    def offer(self, point: dict) -> bool:
        """Keep the checkpoint of ``point`` (a ``paired.jsonl`` row, of the weights just saved) if it
        is the highest so far; returns whether it was kept."""
        self.points += 1
        if self.record is not None and point["mean"] <= self.record["mean"]:
            return False
        record = {k: point[k] for k in ("mean", "ci95", "hands", "seeds", "update", "global_step")}
        record["points"] = self.points
        try:
            save_checkpoint(
                self.path,
                self.agent,
                config=dataclasses.asdict(self.args),
                update=point["update"],
                global_step=point["global_step"],
                best=record,
            )
        except OSError as e:
            why = os.strerror(e.errno) if e.errno == errno.ENOSPC else (e.strerror or str(e).splitlines()[0])
            raise CheckpointWriteError(f"cannot write {self.path}: {why} (the earlier best.pt is kept)") from None
        self.record = record
        self.writer.add_scalar("eval/best_paired_vs_heuristic", record["mean"], point["global_step"])
        lo, hi = record["ci95"]
        self._say(
            f"best.pt: update {record['update']} (step {record['global_step']:,}), paired vs heuristic "
            f"{record['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] on {record['hands']:,} hands, the highest of the run's "
            f"{record['points']} point(s) so far (a maximum reads high: confirm it on other walls, docs/training.md)"
        )
        return True

    def _say(self, line: str) -> None:
        print(line, flush=True)
        if self.log_file is not None:
            with open(self.log_file, "a", encoding="utf-8") as f:
                f.write(line + "\n")

    def _earlier_best(self, resumed_update: int | None) -> dict | None:
        """A resumed run's own pick so far: the ``best`` record of ``best.pt`` when it is of this
        run (its run name and seed) and of an update the resume goes on from. Any other file found
        there (another run's, or a pick beyond the resumed checkpoint, whose part of the run is
        played again) is moved aside to ``best_from_update_N.pt``, never overwritten."""
        if not self.path.is_file():
            return None
        try:
            data = load_checkpoint(self.path)
        except (ValueError, FileNotFoundError):
            data = {}
        record, config = data.get("best"), data.get("config") or {}
        ours = config.get("run_name") == self.args.run_name and config.get("seed") == self.args.seed
        if (
            resumed_update is not None
            and ours
            and isinstance(record, dict)
            and record.get("update", 1 << 62) <= resumed_update
        ):
            return record
        update = record.get("update", "unknown") if isinstance(record, dict) else "unknown"
        aside = self.path.with_name(f"best_from_update_{update}.pt")
        os.replace(self.path, aside)
        why = "beyond the resumed checkpoint" if ours else "of another run"
        self._say(
            f"best.pt: the run folder's best.pt is {why}: moved to {aside.name}; the next paired point makes a new one"
        )
        return None


def refuse_resume_of_best(ckpt: dict, path: str) -> None:
    """``--resume`` of a ``best.pt``: a ``ValueError`` line saying what to do instead."""
    record = ckpt.get("best")
    if record is None:
        return
    update = record.get("update", "?") if isinstance(record, dict) else "?"
    raise ValueError(
        f"{path} is a run's best.pt (its pick by the paired curve, update {update}), not a point to continue "
        "from: resume the run from its checkpoints/latest.pt, or start a new run from this policy with "
        f"--set bc_checkpoint={path}"
    )
