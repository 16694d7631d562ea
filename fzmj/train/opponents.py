"""The opponent pool: who plays each seat of each table, decided per game.

With probability ``prob`` a new game at a table is a *pool game*: the learner plays
``learner_seats`` seats drawn at random and one opponent plays the others; that opponent is the
*target* agent (``target``, an agent spec: ``heuristic`` by default) with probability
``heuristic_frac``, else a frozen past policy (a snapshot of
the learner taken every few updates, or a checkpoint given in ``pool_paths``). Otherwise the
learner plays all four seats (pure self-play). Only the learner's decisions are trained on; the
opponents' actions are computed here, batched over every table where they are to act.

A snapshot slot that is refilled while games against it are in progress hands those games to
the newer snapshot; with snapshots many updates apart this changes little and keeps the pool a
fixed set of networks.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

LEARNER = -1
IDLE = -2  # a table that does not play this step (duplicate groups: waiting for its group)
HEURISTIC = 0  # opponent id 0; frozen policies are 1..


class OpponentPool:
    """Per-table, per-seat controllers (``LEARNER`` or an opponent id) and the opponents' moves."""

    def __init__(
        self,
        num_tables: int,
        prob: float,
        heuristic_frac: float,
        size: int,
        learner_seats: int,
        rng: np.random.Generator,
        device,
        target: str = "heuristic",
        threads: int = 1,
        rules=None,
    ):
        self.prob = prob
        self.threads = threads  # Numba threads for the opponents' host work (the env's own count)
        self.heuristic_frac = heuristic_frac
        self.size = size
        self.learner_seats = learner_seats
        self.rng = rng
        self.device = torch.device(device)
        self.controller = np.full((num_tables, 4), LEARNER, dtype=np.int64)
        self.heuristic = None
        if prob > 0 and heuristic_frac > 0:
            from fzmj.agents import make_agent, reset_agent

            self.heuristic = make_agent(target)  # the target agent (opponent id 0)
            reset_agent(self.heuristic, None, rules)  # the preset played (a search plays it out)
            if hasattr(self.heuristic, "threads"):  # HeuristicAgent: a large batch over the env's threads
                self.heuristic.threads = threads
        self.fixed: list[torch.nn.Module] = []  # frozen checkpoints (pool_paths), never replaced
        self.snapshots: list[torch.nn.Module] = []  # ring of past learners
        self._next_slot = 0

    # ---- membership --------------------------------------------------------------------------
    @property
    def frozen(self) -> list[torch.nn.Module]:
        return self.fixed + self.snapshots

    def add_fixed(self, policy: torch.nn.Module) -> None:
        self.fixed.append(policy.to(self.device).eval().requires_grad_(False))

    def add_snapshot(self, learner: torch.nn.Module) -> None:
        """Freeze a copy of the learner into the ring of ``size`` snapshots."""
        if self.size <= 0:
            return
        frozen = copy.deepcopy(learner).eval().requires_grad_(False)
        if len(self.snapshots) < self.size:
            self.snapshots.append(frozen)
        else:
            self.snapshots[self._next_slot] = frozen
        self._next_slot = (self._next_slot + 1) % self.size

    def state_dicts(self) -> list[dict]:
        return [p.state_dict() for p in self.snapshots]

    def load_state_dicts(self, learner: torch.nn.Module, states: list[dict]) -> None:
        self.snapshots, self._next_slot = [], 0
        for sd in states:
            frozen = copy.deepcopy(learner)
            frozen.load_state_dict(sd)
            self.add_snapshot(frozen)

    # ---- per game ------------------------------------------------------------------------------
    def assign(self, tables, group: int = 1) -> None:
        """Draw who plays each seat of the new games at ``tables``. With ``group`` > 1 (duplicate
        groups, ``train/same_walls.py``) the listed tables come in whole groups of that many
        consecutive tables, and each group's first table draws for all of them."""
        tables = np.asarray(tables)
        if group > 1:
            leaders = tables[tables % group == 0]
            self.assign(leaders)
            for i in range(1, group):
                self.controller[leaders + i] = self.controller[leaders]
            return
        for t in tables.tolist():
            self.controller[t] = LEARNER
            if self.rng.random() >= self.prob:
                continue
            use_heuristic = self.heuristic is not None and (not self.frozen or self.rng.random() < self.heuristic_frac)
            if use_heuristic:
                opponent = HEURISTIC
            elif self.frozen:
                opponent = 1 + int(self.rng.integers(len(self.frozen)))
            else:
                continue  # nothing to play against yet
            others = self.rng.permutation(4)[self.learner_seats :]
            self.controller[t, others] = opponent

    # ---- per step ------------------------------------------------------------------------------
    def act(self, ctrl: np.ndarray, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray) -> None:
        """Write the opponents' actions into ``actions`` for the tables whose acting seat is theirs."""
        for opponent in np.unique(ctrl[ctrl >= 0]).tolist():  # ids >= 0 (LEARNER and IDLE tables are skipped)
            rows = np.flatnonzero(ctrl == opponent)
            if opponent == HEURISTIC:
                actions[rows] = self.heuristic.act(obs[rows], mask[rows])
            else:
                policy = self.frozen[opponent - 1]
                # features on the host (over the env's threads), one copy to the device
                o = torch.from_numpy(policy.prepare_host(obs[rows], self.threads)).to(self.device)
                m = torch.from_numpy(mask[rows]).to(self.device)
                actions[rows] = policy.act(o, m, deterministic=False).cpu().numpy()


class NoOpponents:
    """Pure self-play (``pool_prob: 0``): the learner plays every seat; every method does nothing."""

    snapshots: list = []

    def __init__(self, num_tables: int):
        self.controller = np.full((num_tables, 4), LEARNER, dtype=np.int64)

    def assign(self, tables, group: int = 1) -> None:
        pass

    def act(self, ctrl: np.ndarray, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray) -> None:
        pass

    def add_snapshot(self, learner: torch.nn.Module) -> None:
        pass

    def state_dicts(self) -> None:
        return None  # a checkpoint of a run without pool has no "pool" entry

    def load_state_dicts(self, learner: torch.nn.Module, states) -> None:
        pass


def make_pool(args, rng: np.random.Generator, device, threads: int = 1) -> OpponentPool | NoOpponents:
    """The trainer's opponents: an :class:`OpponentPool` with its fixed checkpoints, or none."""
    if args.pool_prob <= 0:
        return NoOpponents(args.num_tables)
    from fzmj.agents.checkpoint import load_policy

    pool = OpponentPool(
        args.num_tables,
        args.pool_prob,
        args.pool_heuristic_frac,
        args.pool_size,
        args.pool_learner_seats,
        rng,
        device,
        target=args.pool_target,
        threads=threads,
        rules=args.rules,
    )
    for path in args.pool_paths:
        pool.add_fixed(load_policy(path, device))
    return pool
