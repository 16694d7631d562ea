"""``random``: uniform over the legal actions, from a seeded numpy Generator."""

from __future__ import annotations

import numpy as np

from fzmj_env.checks import check_seed

from .base import Agent, as_batch


class RandomAgent(Agent):
    """Picks uniformly among the legal actions of each row.

    The stream is a function of the seed only: ``reset()`` rewinds it to the constructor's
    seed, ``reset(seed)`` restarts it from ``seed``.
    """

    def __init__(self, seed: int = 0, name: str = "random"):
        self.seed = check_seed(seed)
        self.name = name
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(self.seed if seed is None else check_seed(seed))

    def act(self, obs, mask) -> np.ndarray:
        _, mask = as_batch(obs, mask, check_values=False)  # the observation's values are never read here
        legal = mask != 0
        if not legal.any(axis=1).all():
            raise ValueError("a row of the mask has no legal action")
        # uniform among the legal ones: a uniform key per action, the largest legal key wins
        keys = self._rng.random(mask.shape)
        keys[~legal] = -1.0
        return keys.argmax(axis=1).astype(np.int64)
