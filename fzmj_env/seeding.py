"""Seeds: the engine's 64-bit seed storage and the per-table game seeds of the batched envs."""

from __future__ import annotations

import hashlib

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


# ---- the seeds agents are given ----------------------------------------------------------------
# An agent's reset seed must tell it nothing about the walls: it is a keyed BLAKE2b hash (one-way,
# unlike mix64) of where it is used, under a key the agents never see. A run that is not given a
# seed draws one from the operating system's generator (64 bits: no search can find it) and
# reports it afterwards, so the run can be replayed.
_AGENT_PERSON = b"fzmj-agent-seed"  # BLAKE2b personalisation: these hashes mean nothing elsewhere
_KEY_PERSON = b"fzmj-agent-key"


def draw_seed() -> int:
    """A fresh secret 64-bit seed from the operating system's generator (``secrets``)."""
    import secrets

    return secrets.randbits(64)


def _u64_bytes(parts) -> bytes:
    return b"".join((int(p) % 2**64).to_bytes(8, "little") for p in parts)


def agent_key(seed: int) -> int:
    """The agents' key derived from a run seed (``evaluate(seed=S)`` without an agent seed): a keyed
    hash, so the agents' seeds cannot be turned back into ``seed`` (a small ``seed`` can still be
    found by trying every small value: only a secret seed keeps the walls secret)."""
    h = hashlib.blake2b(_u64_bytes([seed]), digest_size=8, key=b"fzmj-agents", person=_KEY_PERSON)
    return int.from_bytes(h.digest(), "little")


def keyed_agent_seed(key: int, *parts: int) -> int:
    """An agent's reset seed: BLAKE2b of ``parts`` (batch, agent, ... as 64-bit integers) keyed by
    ``key``, cut to 63 bits (a valid seed for numpy, torch and every ``reset``)."""
    h = hashlib.blake2b(_u64_bytes(parts), digest_size=8, key=_u64_bytes([key]), person=_AGENT_PERSON)
    return int.from_bytes(h.digest(), "little") >> 1
