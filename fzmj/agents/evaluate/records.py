"""Game records of an evaluation: the worst and best hands of each agent (``fzmj-eval --save-records``).

The evaluator logs every table's decisions while it plays (``_play_batch`` with ``log``); this
keeps, batch by batch, the hands where each agent scored least and most, and at the end replays
each through the engine's ``Game`` (the same seed gives the same wall as the batched env) into
a record that ``fzmj-replay`` reads. Ties go to the earlier hand, so the choice is deterministic.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from fzmj_env.game import Game
from fzmj_env.record import make_record, replay, save_record
from fzmj_env.vector import RESULT_POINTS, RESULT_WIDTH


class RecordKeeper:
    """Keeps the ``k`` worst and ``k`` best hands per agent (``k`` from ``max_records``)."""

    def __init__(self, names: list[str], slot_agent: np.ndarray, rules, seed: int, max_records: int | None):
        self.names = names
        self.slot_agent = np.asarray(slot_agent)
        self.rules = rules
        self.seed = seed
        self.agent_seed = None  # the run's agent key, set by the evaluator
        n_agents = len(names)
        self.max_records = 2 * n_agents if max_records is None else int(max_records)
        self.k = max(1, math.ceil(self.max_records / (2 * n_agents)))
        # per agent: lists of (score, job order, seat, wall seed, wall, rotation, decisions)
        self.best: list[list] = [[] for _ in names]
        self.worst: list[list] = [[] for _ in names]

    def add_batch(self, first_wall: int, seeds: np.ndarray, results: np.ndarray, log) -> None:
        """One batch: ``results`` (jobs, RESULT_WIDTH) as the evaluator builds them (points from RESULT_POINTS),
        ``seeds`` the wall seed of each job, ``log`` (seats, actions) (steps, jobs)."""
        seats_log, actions_log = log
        jobs = results.shape[0]
        pts = results[:, RESULT_POINTS:RESULT_WIDTH].astype(np.int64)
        rot = np.arange(jobs) % 4
        for a in range(len(self.names)):
            cand = []
            for seat in range(4):
                owned = self.slot_agent[(seat - rot) % 4] == a
                for j in np.flatnonzero(owned):
                    cand.append((int(pts[j, seat]), first_wall * 4 + int(j), seat, int(j)))
            if not cand:
                continue
            hi = sorted(cand, key=lambda c: (-c[0], c[1], c[2]))[: self.k]
            lo = sorted(cand, key=lambda c: (c[0], c[1], c[2]))[: self.k]
            for keep, new, key in (
                (self.best, hi, lambda c: (-c[0], c[1], c[2])),
                (self.worst, lo, lambda c: (c[0], c[1], c[2])),
            ):
                rows = [self._entry(c, seeds, seats_log, actions_log) for c in new]
                keep[a] = sorted(keep[a] + rows, key=key)[: self.k]

    @staticmethod
    def _entry(c, seeds, seats_log, actions_log) -> tuple:
        score, order, seat, j = c
        s = seats_log[:, j]
        live = s >= 0
        decisions = [[int(x), int(y)] for x, y in zip(s[live], actions_log[live, j], strict=True)]
        return (score, order, seat, int(seeds[j]), order // 4, order % 4, decisions)

    def _record(self, entry, why: str) -> dict:
        score, order, seat, wall_seed, wall, rotation, decisions = entry
        game = Game(self.rules, hands_per_game=1)
        game.reset(seed=wall_seed)
        for s, a in decisions:
            if game.seat != s:
                raise RuntimeError(f"evaluation record of wall {wall}: the replay disagrees on the seat to act")
            game.step(a)
        rec = make_record(game)
        if rec["hands"][0]["result"]["points"][seat] != score:
            raise RuntimeError(f"evaluation record of wall {wall}: the replay gives a different result")
        replay(rec)
        rec["meta"] = {
            "source": "fzmj-eval",
            "why": why,
            "eval_seed": self.seed,
            "agent_seed": self.agent_seed,
            "wall": wall,
            "rotation": rotation,
            "seats": [self.names[self.slot_agent[(s - rotation) % 4]] for s in range(4)],
        }
        return rec

    def write(self, directory: str | Path) -> list[Path]:
        """Write the kept hands as records (worst and best of each agent, rank by rank, at most
        ``max_records``, each hand once); returns their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        order = []
        for r in range(self.k):
            for a, name in enumerate(self.names):
                for kind, keep in (("worst", self.worst[a]), ("best", self.best[a])):
                    if r < len(keep):
                        order.append((name, kind, r, keep[r]))
        labels: dict[int, list[str]] = {}  # hand (job order) -> why it was kept, every reason
        first: dict[int, tuple] = {}
        for name, kind, r, entry in order:
            labels.setdefault(entry[1], []).append(f"{kind} hand #{r + 1} of {name} ({entry[0]:+d} at seat {entry[2]})")
            first.setdefault(entry[1], (name, kind, r, entry))
        paths: list[Path] = []
        for key, (name, kind, r, entry) in first.items():
            if len(paths) >= self.max_records:
                break
            short = name
            if "/" in name and ":" in name:  # ppo:runs/x/checkpoints/latest.pt -> ppo_latest
                kind_, _, path = name.partition(":")
                short = f"{kind_}_{Path(path).stem}"
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", short).strip("_")[:40] or "agent"
            path = out / f"{len(paths):02d}_{safe}_{kind}{r + 1}_wall{entry[4]}_rot{entry[5]}.json"
            save_record(self._record(entry, "; ".join(labels[key])), path)
            paths.append(path)
        return paths
