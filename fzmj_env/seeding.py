"""Seeds: the engine's 64-bit seed storage and the per-table game seeds of the batched envs."""

from __future__ import annotations

import numpy as np
from numba import njit

from .checks import MAX_SEED
from .core import engine


def split_seed(seed: int) -> tuple[int, int]:
    """A 64-bit seed as two int32 bit patterns (lo, hi), the engine's storage."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    seed = int(seed)
    lo, hi = seed & 0xFFFFFFFF, seed >> 32
    return (lo - (1 << 32) if lo >= 1 << 31 else lo), (hi - (1 << 32) if hi >= 1 << 31 else hi)


@njit(cache=True)
def game_seed(base_seed, table, game):
    """Seed of the ``game``-th game of ``table``: a hash of (base seed, table, game)."""
    z = engine.mix64(np.uint64(base_seed) + engine.GAMMA * np.uint64(table + 1))
    return engine.mix64(z ^ (engine.GAMMA * np.uint64(game + 1)))
