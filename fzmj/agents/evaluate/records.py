"""Game records of an evaluation: the worst and best hands of each agent (``fzmj-eval --save-records``).

The evaluator logs every table's decisions while it plays (``_play_batch`` with ``log``); this
keeps, batch by batch, the hands where each agent scored least and most, and at the end replays
each through the engine's ``Game`` (the same seed gives the same wall as the batched env) into
a record that ``fzmj-replay`` reads. Ties go to the earlier hand, so the choice is deterministic.

A record holds everything the observations depend on (the rules, the seed, each hand's wall,
dealer and streak, every decision): :func:`record_observations` rebuilds the observation of any
decision, v2 or v3, by replaying it through the engine's ``Game`` and the env's own encoder
(``encode_table``), nothing re-implemented. ``meta.obs_version`` names the layout the evaluation's
env gave (v3 when an agent read v3, e.g. an exec bot that asked for it) and ``meta.obs_versions``
the layout each seat's agent read.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.atomic import remove_stale_temps
from fzmj_env.checks import check_obs_version
from fzmj_env.encode import encode_table, obs_channels
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
        # per agent: lists of (score, job order, seat, wall seed, wall, rotation, decisions, layouts)
        self.best: list[list] = [[] for _ in names]
        self.worst: list[list] = [[] for _ in names]

    def add_batch(self, first_wall: int, seeds: np.ndarray, results: np.ndarray, log) -> None:
        """One batch: ``results`` (jobs, RESULT_WIDTH) as the evaluator builds them (points from RESULT_POINTS),
        ``seeds`` the wall seed of each job, ``log`` (seats, actions) (steps, jobs) and the layout
        each distinct agent read ("v2" or "v3"; optional)."""
        seats_log, actions_log = log[:2]
        layouts = tuple(log[2]) if len(log) > 2 else ("v2",) * len(self.names)
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
                rows = [(*self._entry(c, seeds, seats_log, actions_log), layouts) for c in new]
                keep[a] = sorted(keep[a] + rows, key=key)[: self.k]

    @staticmethod
    def _entry(c, seeds, seats_log, actions_log) -> tuple:
        score, order, seat, j = c
        s = seats_log[:, j]
        live = s >= 0
        decisions = [[int(x), int(y)] for x, y in zip(s[live], actions_log[live, j], strict=True)]
        return (score, order, seat, int(seeds[j]), order // 4, order % 4, decisions)

    def _record(self, entry, why: str) -> dict:
        score, order, seat, wall_seed, wall, rotation, decisions, layouts = entry
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
            "obs_version": "v3" if "v3" in layouts else "v2",
            "obs_versions": [layouts[self.slot_agent[(s - rotation) % 4]] for s in range(4)],
        }
        return rec

    def write(self, directory: str | Path) -> list[Path]:
        """Write the kept hands as records (worst and best of each agent, rank by rank, at most
        ``max_records``, each hand once); returns their paths."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(out)  # what a killed or full-disk run left there
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


def record_observations(record: dict, obs_version: int | str = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seats (D,), observations (D, C, 27) int8, masks (D, 62) int8)``: at each of the record's
    D decisions, the acting seat's observation in layout ``obs_version`` (2 or 3, C = 99 or 292)
    and its legal mask, as the env gave them. Rebuilt by replaying the record through the engine
    (``Game``) and encoding with the env's encoder (``encode_table``): one rules core, one encoder.
    A record that does not replay raises ``RecordError``."""
    game = replay(record)  # the record replays exactly (else RecordError), under its own rules
    h0 = record["hands"][0]
    game = Game(game.rules, hands_per_game=int(record["hands_per_game"]))
    game.reset(seed=record["seed"], wall=h0["wall"], dealer=h0["dealer"], streak=h0["streak"])
    n = len(record["decisions"])
    seats = np.zeros(n, dtype=np.int8)
    obs = np.zeros((n, obs_channels(check_obs_version(obs_version)), 27), dtype=np.int8)
    masks = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
    for i, (s, a) in enumerate(record["decisions"]):
        seats[i] = s
        encode_table(game.buf, 0, s, obs[i])
        masks[i] = game.mask
        game.step(int(a))
    return seats, obs, masks
