"""Duplicate groups: several tables play the same wall, and each one's result is judged against
the others' (``duplicate_group: K`` in the trainer's config; K = 1 is off).

Why. One hand's score spreads about 30 points around its mean, and most of that is the wall:
the tiles dealt and drawn, not the decisions. A critic can only guess that luck from what a seat
sees. Playing each wall K times (the same seats, the same opponents) and scoring every play
against the mean of the other K - 1 plays of that wall removes it: with the cloned heuristic in
one seat and three heuristics, the spread left is about a fifth of the variance, and more than
half of the groups end identically (advantage 0: nothing to learn from a wall where every play
was the same). This is the leave-one-out baseline of RLOO / GRPO, with the wall as the "prompt",
and the same idea as duplicate bridge and the duplicate evaluation of ``fzmj-eval``.

Unbiased: another table's result does not depend on this table's actions, so subtracting it
changes the variance of the policy gradient, not its mean. Where the K plays agree up to a
decision, their gradient terms for the shared prefix cancel exactly (the K advantages sum to 0);
what is left compares the actions at the first decision where they split.

How. Group g is tables ``g*K .. g*K+K-1`` (``VectorEnv(auto_reset=False)``). They start game k
of the group on the same seed, with the same seats for the learner and its opponents (the pool
draws once per group). A table whose game ended waits (it is not stepped) until every table of
its group has finished; then the group is *settled*: every learner decision of that game gets
``advantage = R - mean(R of the other K - 1 tables, same seat)`` and ``return = R`` (R: the
seat's scaled hand score; one hand per game), and the group starts game k + 1 together. The
decisions stay in the rollout buffer, carried from rollout to rollout, until their group is
settled (``train/selfplay_buffer.py``).
"""

from __future__ import annotations

import numpy as np

from fzmj_env.seeding import game_seed
from fzmj_env.vector import RESULT_POINTS

from .opponents import IDLE


class DuplicateGroups:
    """Which tables play, which wait, and the settling of finished groups (module docstring)."""

    def __init__(self, num_tables: int, group: int, base_seed: int, reward_scale: float):
        if group < 2 or num_tables % group:
            raise ValueError(f"duplicate_group must be >= 2 and divide num_tables ({num_tables}), got {group}")
        self.B, self.K = num_tables, group
        self.base_seed = int(base_seed)
        self.scale = float(reward_scale)
        self.game = np.zeros(num_tables, dtype=np.int64)  # index of the game each table plays now
        self.waiting = np.zeros(num_tables, dtype=np.bool_)  # finished, waiting for its group
        self.score = np.zeros((num_tables, 4), dtype=np.float64)  # the finished game's scaled scores
        self.groups_settled = 0
        self.identical_groups = 0  # settled groups whose K plays scored alike (their advantages are 0)

    def seeds(self, groups: np.ndarray) -> np.ndarray:
        """Wall seed of the game each of ``groups`` plays now: one per table of the group (K copies)."""
        games = self.game[groups * self.K]
        s = np.array(
            [game_seed(np.uint64(self.base_seed), int(g), int(k)) for g, k in zip(groups, games, strict=True)],
            dtype=np.uint64,
        )
        return np.repeat(s, self.K)

    def first_seeds(self) -> np.ndarray:
        return self.seeds(np.arange(self.B // self.K))

    def active(self) -> np.ndarray:
        return np.flatnonzero(~self.waiting)

    def finished(self, done: np.ndarray, results: np.ndarray) -> np.ndarray:
        """Record the games that ended (``done``, result rows); returns the groups now complete."""
        ended = np.flatnonzero(done)
        if not len(ended):
            return ended
        self.waiting[ended] = True
        self.score[ended] = results[ended, RESULT_POINTS : RESULT_POINTS + 4] * self.scale
        groups = np.unique(ended // self.K)
        return groups[self.waiting.reshape(-1, self.K)[groups].all(axis=1)]

    def settle(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Leave-one-out advantages of complete ``groups``: ``(tables, games, advantage (n, 4), return (n, 4))``;
        their tables stop waiting and move to the next game (its walls: :meth:`seeds`)."""
        tables = (groups[:, None] * self.K + np.arange(self.K)[None, :]).reshape(-1)
        r = self.score[tables].reshape(len(groups), self.K, 4)
        others = (r.sum(axis=1, keepdims=True) - r) / (self.K - 1)
        adv = (r - others).reshape(-1, 4)
        games = self.game[tables].copy()
        self.groups_settled += len(groups)
        self.identical_groups += int((r.max(axis=1) == r.min(axis=1)).all(axis=1).sum())
        self.waiting[tables] = False
        self.game[tables] += 1
        return tables, games, adv, r.reshape(-1, 4)


class DuplicateAdvantages:
    """Duplicate groups as the trainer's advantage strategy (the interface of
    :class:`fzmj.train.advantages.GAE`): finished tables wait for their group, settled groups give
    the leave-one-out advantages, and the group's next wall is dealt here."""

    auto_reset = False  # the groups start each table's next game themselves
    carry_room = 256  # unsettled games stay in the buffer, whole chains included

    def __init__(self, num_tables: int, group: int, base_seed: int, reward_scale: float):
        self.groups = DuplicateGroups(num_tables, group, base_seed, reward_scale)
        self.group = group

    def first_seeds(self) -> np.ndarray:
        return self.groups.first_seeds()

    def live(self, all_tables: np.ndarray) -> np.ndarray:
        return self.groups.active()

    def mark_idle(self, ctrl: np.ndarray) -> None:
        ctrl[self.groups.waiting] = IDLE

    def games(self, rows: np.ndarray) -> np.ndarray:
        return self.groups.game[rows]

    def step(self, env, actions: np.ndarray, live: np.ndarray) -> tuple:
        return env.step_tables(live, actions[live])

    def next_games(self, env, done: np.ndarray, info: dict, buffer) -> tuple[np.ndarray, tuple | None]:
        groups = self.groups.finished(done, info["results"])
        if not len(groups):
            return groups, None
        tables, games, adv, ret = self.groups.settle(groups)
        buffer.settle(tables, games, adv, ret)
        return tables, env.reset_tables(tables, self.groups.seeds(groups))

    def batch(self, buffer, ranks) -> tuple:
        advantages, returns, train_idx = buffer.settled_batch()
        # no update until every rank has settled a group (early rollouts may not)
        return advantages, returns, train_idx, not ranks.all_positive(len(train_idx))

    def carry_over(self, buffer, skipped: bool) -> int:
        # the unsettled decisions wait for their group (all of them when the update was skipped)
        n = buffer.n
        return buffer.carry_over(np.arange(n) if skipped else np.flatnonzero(~buffer.settled[:n]))

    def log(self, writer, global_step: int) -> None:
        g = self.groups
        writer.add_scalar(
            "charts/duplicate_identical_share", g.identical_groups / max(g.groups_settled, 1), global_step
        )
