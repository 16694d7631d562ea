"""Heuristic-class bots for ``bench_league.py``: the heuristic, playing a random legal action in a
fraction ``eps`` of its decisions (``python:league_bots:Eps10`` etc.; the module must be importable,
e.g. ``PYTHONPATH=benchmarks``). They cost what the heuristic costs, and rank by ``eps``."""

from __future__ import annotations

import numpy as np

from fzmj.agents import Agent
from fzmj.agents.heuristic import HeuristicAgent


class EpsHeuristic(Agent):
    """The heuristic, except a random legal action with probability ``eps`` per decision."""

    eps = 0.1

    def __init__(self):
        self.inner = HeuristicAgent()
        self.name = f"eps-heuristic {self.eps:g}"
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)
        self._rng = np.random.default_rng(seed)

    def act(self, obs, mask) -> np.ndarray:
        a = np.asarray(self.inner.act(obs, mask), dtype=np.int64)
        flip = self._rng.random(a.shape[0]) < self.eps
        if flip.any():
            keys = self._rng.random((int(flip.sum()), mask.shape[1]))
            keys[mask[flip] == 0] = -1.0
            a[flip] = keys.argmax(axis=1)
        return a


class Eps05(EpsHeuristic):
    eps = 0.05


class Eps10(EpsHeuristic):
    eps = 0.10


class Eps25(EpsHeuristic):
    eps = 0.25


class Eps50(EpsHeuristic):
    eps = 0.50
