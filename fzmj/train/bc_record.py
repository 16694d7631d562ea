"""The warm start's games as a dataset (``bc_save_dataset: true``): every hand the teacher played to
its end while the warm start collected its demonstrations, written into the run folder
(``RUN/bc_dataset/``) in ``fzmj.data``'s format (Parquet hand rows, the same manifest, checksums and
digest as ``fzmj-data collect``), so that a later run's ``bc_dataset`` clones them and any Arrow
reader opens them.

What it holds, against the in-memory demonstrations: the warm start keeps the decisions with a
choice until it has ``bc_decisions`` of them, then plays the hands still running to their end for
their returns without keeping their later decisions. A dataset row is a whole hand (the replay
steps every decision of it), so those hands are written whole: the dataset's decisions with a
choice are the in-memory ones plus the ends of the hands running at the cut, about one hand per
table. Hands begun after the cut (the tables that finished first start new ones) never end and
are not written. Recording only copies what the env returns: the demonstrations, and so the
clone, are the same with it on or off.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from fzmj_env.seeding import game_seed
from fzmj_env.vector import VectorEnv

from .run_dir import WARM_START_DATASET

FOLDER = WARM_START_DATASET  # under the run folder (train/run_dir.py clears it with the run)
HANDS_PER_SHARD = 4096  # as fzmj-data collect's default shard


class HandRecorder:
    """Each step's acting seats, actions and finished hands of a ``VectorEnv`` that auto-resets
    one-hand games (``bc.collect_demonstrations(record=...)``); :meth:`hands` turns them into the
    dataset's hand rows."""

    def start(self, env: VectorEnv, player) -> None:
        """The env just reset (its first games in play) and the agent that plays every seat (reset
        with the env's seed)."""
        from fzmj.agents.base import agent_obs_version

        if env.hands_per_game != 1:
            raise ValueError("a dataset holds one-hand games: hands_per_game must be 1")
        self.env = env
        self.player_obs = agent_obs_version(player)
        self.first_game = env.games_started - 1  # each table's game now in play (its seed index)
        self.seats: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.over: list[np.ndarray] = []
        self.results: dict[tuple[int, int], np.ndarray] = {}  # (step, table) -> the hand's result row

    def step(self, actions: np.ndarray, info: dict) -> None:
        """After ``env.step(actions)``: who acted, what, and the hands that ended."""
        self.seats.append(np.array(info["acted_seat"], np.int8))
        self.actions.append(np.array(actions, np.uint8))
        over = np.array(info["hand_over"], bool)
        self.over.append(over)
        for t in np.flatnonzero(over):
            self.results[(len(self.over) - 1, int(t))] = np.array(info["results"][t])

    def hands(self) -> dict:
        """The finished hands as hand columns (``fzmj.data.shards``), in the order they ended (then
        by table); each hand is its own game and wall, its seed the env's for that table and game."""
        from fzmj.data.shards import hand_columns

        seats, actions, over = np.stack(self.seats), np.stack(self.actions), np.stack(self.over)
        ends = sorted(self.results)  # (step, table)
        seeds, counts, seat_parts, action_parts, results = [], [], [], [], []
        game = self.first_game.copy()
        start = np.zeros(over.shape[1], np.int64)  # the step each table's current hand began
        for step, t in ends:
            seeds.append(game_seed(self.env.seed, t, int(game[t])))
            seat_parts.append(seats[start[t] : step + 1, t])
            action_parts.append(actions[start[t] : step + 1, t])
            counts.append(step + 1 - start[t])
            results.append(self.results[(step, t)])
            game[t] += 1
            start[t] = step + 1
        n = len(ends)
        cat = lambda parts, dtype: np.concatenate(parts) if parts else np.zeros(0, dtype)  # noqa: E731
        return hand_columns(
            np.arange(n), np.arange(n), np.zeros(n), np.array(seeds, np.uint64), counts,
            cat(seat_parts, np.int8), cat(action_parts, np.uint8),
            np.array(results).reshape(n, -1) if n else np.zeros((0, over.shape[1]), np.int32),
        )  # fmt: skip


def write_warm_start_dataset(run_dir: Path, recorder: HandRecorder, teacher: str) -> dict:
    """The hands ``recorder`` saw ``teacher`` play (every seat) as a complete dataset in
    ``run_dir / FOLDER`` (any earlier one there is replaced); returns its manifest."""
    from fzmj.data.collector import finish_dataset, new_manifest, write_shard

    folder = Path(run_dir) / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    hands = recorder.hands()
    n = len(hands["game"])
    env = recorder.env
    manifest = new_manifest(
        env.rules, [teacher] * 4, [recorder.player_obs] * 4, [0, 1, 2, 3], env.seed, env.seed, n, env.num_tables, None
    )
    manifest.update(created_by="fzmj-train warm start (bc_save_dataset)", hands=n)
    offsets = np.r_[0, np.cumsum(hands["decisions"])]
    for lo in range(0, n, HANDS_PER_SHARD):
        hi = min(n, lo + HANDS_PER_SHARD)
        part = {k: v[lo:hi] for k, v in hands.items() if k not in ("seats", "actions")}
        part.update(
            seats=hands["seats"][offsets[lo] : offsets[hi]], actions=hands["actions"][offsets[lo] : offsets[hi]]
        )
        write_shard(folder, manifest, part)
    return finish_dataset(folder, manifest)
