"""The trainer's log step: TensorBoard scalars (CleanRL's tags) and one console line per window.

The console line of every window also goes to ``train.log`` in the run folder. On a terminal
the console shows a progress bar instead (updates done of the total, env steps/s, time left),
with a line only where an evaluation landed and at the end; piped or redirected output (logs,
CI, tests) keeps one line per window. ``fzmj-train --no-progress`` keeps the lines on a terminal.

Tags: ``charts/*`` (learning rate, SPS, decisions trained and carried, the learner's hand
results), ``losses/*`` (policy, value, entropy, KL, clip fraction, explained variance, teacher),
``perf/*`` (rollout, update and CPU seconds), ``eval/*`` (``train/evaluation.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from fzmj_env.vector import results_of

from .opponents import LEARNER


class HandStats:
    """Hands finished during a logging window, from the learner's seats: score, wins, deal-ins."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.seat_hands = self.points = self.wins = self.deal_ins = self.self_draws = 0

    def record(self, info: dict, controller: np.ndarray) -> None:
        for res in results_of(info):
            learner = np.flatnonzero(controller[res["table"]] == LEARNER)
            winner, discarder = res["winner"], res["discarder"]
            self.seat_hands += len(learner)
            self.points += sum(res["points"][s] for s in learner)
            if winner is not None and winner in learner:
                self.wins += 1
                self.self_draws += discarder is None
            if winner is not None and discarder is not None and discarder != winner and discarder in learner:
                self.deal_ins += 1

    def summary(self) -> dict | None:
        if self.seat_hands == 0:
            return None
        n = self.seat_hands
        return {
            "mean_hand_score": self.points / n,
            "win_rate": self.wins / n,
            "deal_in_rate": self.deal_ins / n,
            "self_draw_rate": self.self_draws / n,
        }


class Logger:
    """Writes one update's scalars, and the console line every ``log_every`` updates."""

    def __init__(
        self,
        writer,
        num_updates: int,
        log_every: int,
        stats: HandStats,
        ranks,
        start_step: int,
        *,
        log_file: Path | None = None,
        bar: ProgressBar | None = None,
    ):
        self.writer, self.num_updates, self.log_every = writer, num_updates, log_every
        self.stats, self.ranks = stats, ranks
        self.start_time, self.start_step = time.time(), start_step
        self.sps = 0
        # The console's rate is the last window's, so a slowdown (another job, an evaluation) shows
        # at once; charts/SPS stays CleanRL's average since the process started.
        self.window_time, self.window_step = self.start_time, start_step
        self.log_file, self.bar = log_file, bar

    def scalars(self, global_step: int, lr: float, teacher_coef: float, result, times: dict) -> None:
        """The update's charts, losses and timings (``result``: :class:`fzmj.train.update.UpdateResult`)."""
        w, step = self.writer, global_step
        self.sps = int((global_step - self.start_step) / max(time.time() - self.start_time, 1e-9))
        w.add_scalar("charts/learning_rate", lr, step)
        w.add_scalar("charts/SPS", self.sps, step)
        w.add_scalar("charts/trained_decisions", result.trained, step)
        w.add_scalar("charts/carried_decisions", result.carried, step)
        w.add_scalar("perf/rollout_seconds", times["rollout"], step)
        w.add_scalar("perf/update_seconds", times["update"], step)
        w.add_scalar("perf/cpu_seconds", times["cpu"], step)  # all threads
        w.add_scalar("losses/value_loss", result.value_loss, step)
        w.add_scalar("losses/policy_loss", result.policy_loss, step)
        w.add_scalar("losses/entropy", result.entropy, step)
        w.add_scalar("losses/old_approx_kl", result.old_approx_kl, step)
        w.add_scalar("losses/approx_kl", result.approx_kl, step)
        w.add_scalar("losses/clipfrac", result.clipfrac, step)
        w.add_scalar("losses/explained_variance", result.explained_variance, step)
        w.add_scalar("losses/teacher_loss", result.teacher_loss, step)
        w.add_scalar("charts/teacher_coef", teacher_coef, step)

    def console(
        self, update: int, global_step: int, result, times: dict, latest_eval: dict, evaluated: bool = False
    ) -> None:
        """Every ``log_every`` updates (and the last): the window's hand results, on the console
        (or the bar: every update; a line where ``evaluated`` and at the end), ``train.log`` and the charts."""
        if self.bar is not None:
            self.bar.advance(update, global_step)
        if update % self.log_every and update != self.num_updates:
            return
        line = self._window_line(update, global_step, result, times, latest_eval)
        if self.log_file is not None:
            with open(self.log_file, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        if self.bar is None:
            print(line, flush=True)
            return
        self.bar.describe(line.split(" | ", 3)[-1].split(" | ent ")[0])  # the hand results
        if evaluated or update == self.num_updates:
            self.bar.write(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _window_line(self, update: int, global_step: int, result, times: dict, latest_eval: dict) -> str:
        self.ranks.sum_counters(self.stats)  # the hands of all ranks
        hs = self.stats.summary()
        now = time.time()
        window_sps = int((global_step - self.window_step) / max(now - self.window_time, 1e-9))
        self.window_time, self.window_step = now, global_step
        self.writer.add_scalar("charts/SPS_window", window_sps, global_step)
        line = (
            f"update {update}/{self.num_updates} | step {global_step:,} | SPS {window_sps:,} "
            f"({times['rollout']:.1f}s + {times['update']:.1f}s)"
        )
        if hs is not None:
            for key, value in hs.items():
                self.writer.add_scalar(f"charts/{key}", value, global_step)
            line += (
                f" | score {hs['mean_hand_score']:+.2f} | win {hs['win_rate']:.1%} | deal-in {hs['deal_in_rate']:.1%}"
            )
            self.stats.reset()
        line += f" | ent {result.entropy:.2f} | kl {result.approx_kl:.4f}"
        for opponent, res in latest_eval.items():
            ci = res.get("ci95") or [float("nan")] * 2
            line += f" | vs {opponent} {res['mean_score']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]"
        return line


class ProgressBar:
    """The console's bar over a run's env steps (tqdm): ``update 45/183``, steps/s and time left."""

    def __init__(self, num_updates: int, steps_per_update: int, start_update: int, start_step: int, file=None):
        from tqdm.auto import tqdm

        self.num_updates = num_updates
        self.tqdm = tqdm(
            total=num_updates * steps_per_update,
            initial=start_step,
            unit=" steps",
            unit_scale=True,
            desc=self._desc(start_update - 1),
            file=file if file is not None else sys.stdout,
            dynamic_ncols=True,
            smoothing=0.1,
            bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} steps [{elapsed}<{remaining}, {rate_fmt}]{postfix}",
        )

    def _desc(self, update: int) -> str:
        return f"update {update}/{self.num_updates}"

    def advance(self, update: int, global_step: int) -> None:
        self.tqdm.set_description_str(self._desc(update), refresh=False)
        self.tqdm.update(global_step - self.tqdm.n)

    def describe(self, text: str) -> None:
        self.tqdm.set_postfix_str(text)

    def write(self, line: str) -> None:
        self.tqdm.write(line, file=self.tqdm.fp)

    def close(self) -> None:
        self.tqdm.close()
