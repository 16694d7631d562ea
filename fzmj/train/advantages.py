"""How a rollout's decisions get their advantages: the trainer's "advantages" step as a strategy.

:class:`GAE` (the default) runs GAE along each (table, seat)'s own chain of decisions
(``train/selfplay_buffer.py``). :class:`fzmj.train.same_walls.DuplicateAdvantages`
(``duplicate_group > 1``) replaces it with leave-one-out baselines over tables that play the
same wall. Both answer the same questions, so the rollout and the loop never ask which is used:
which tables play, how they step, what happens when games end, which decisions are trained on,
which are carried to the next rollout.
"""

from __future__ import annotations

import numpy as np
import torch

from .selfplay_buffer import SelfPlayBuffer


class GAE:
    """Every table plays every step and starts its next game itself (``VectorEnv(auto_reset=True)``)."""

    group = 1  # tables that share a wall (and an opponent draw)
    auto_reset = True
    carry_room = 4  # buffer rows per table beyond a rollout's: the open decisions carried over

    def __init__(self, gamma: float, lam: float):
        self.gamma, self.lam = gamma, lam

    def first_seeds(self) -> np.ndarray | None:
        return None  # the env's own seeds

    def live(self, all_tables: np.ndarray) -> np.ndarray:
        """The tables stepped now."""
        return all_tables

    def mark_idle(self, ctrl: np.ndarray) -> None:
        """Set the controller of tables that do not play this step to ``IDLE``: none here."""

    def games(self, rows: np.ndarray) -> np.ndarray | None:
        """The game index of each table in ``rows`` (for the buffer): not needed here."""
        return None

    def step(self, env, actions: np.ndarray, live: np.ndarray) -> tuple:
        return env.step(actions)

    def next_games(self, env, done: np.ndarray, info: dict, buffer: SelfPlayBuffer) -> tuple[np.ndarray, tuple | None]:
        """The tables whose next game starts now, and the env's fresh ``(obs, mask, seat)`` when
        this strategy dealt them (``None``: the env already did)."""
        return np.flatnonzero(done), None

    def batch(self, buffer: SelfPlayBuffer, ranks) -> tuple[torch.Tensor, torch.Tensor, np.ndarray, bool]:
        """``(advantages, returns, trainable rows, skip the update)`` of the rollout."""
        advantages, returns, train_idx = buffer.compute_gae(self.gamma, self.lam)
        return advantages, returns, train_idx, False

    def carry_over(self, buffer: SelfPlayBuffer, skipped: bool) -> int:
        """Keep the decisions that wait for their successor; returns how many."""
        return buffer.carry_over()

    def log(self, writer, global_step: int) -> None:
        pass


def make_advantages(args, env_seed: int):
    """The strategy of the config: :class:`GAE`, or duplicate groups when ``duplicate_group > 1``."""
    if args.duplicate_group > 1:
        from .same_walls import DuplicateAdvantages

        return DuplicateAdvantages(args.num_tables, args.duplicate_group, env_seed, args.reward_scale)
    return GAE(args.gamma, args.gae_lambda)
