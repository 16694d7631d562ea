"""One table's view for its acting seat: legal mask, observation planes, oracle planes and the
pending reward. The batched envs (``vector.py``) and the worlds (``resample.py``) share it.

The oracle planes are compiled only where they are asked for: an env made without the oracle
passes a read-only ``oracle_out`` (``VectorEnv(oracle=False)``), and for that array type the
oracle calls below compile to nothing (a choice made when the kernel is typed, not a branch at
run time), so the oracle encoder is not compiled into the step kernels at all.
"""

from __future__ import annotations

from numba import njit
from numba.extending import overload

from .core import engine
from .encode import encode_any, oracle_v2


def _oracle_into(tb, s, oracle_out, t):
    """``oracle_v2`` of seat ``s`` into ``oracle_out[t]`` (nothing for a read-only ``oracle_out``)."""


def _oracle_clear(oracle_out, t):
    """Zero ``oracle_out[t]`` (nothing for a read-only ``oracle_out``)."""


@overload(_oracle_into)
def _oracle_into_impl(tb, s, oracle_out, t):
    if not oracle_out.mutable:
        return lambda tb, s, oracle_out, t: None
    return lambda tb, s, oracle_out, t: oracle_v2(tb, s, oracle_out[t])


@overload(_oracle_clear)
def _oracle_clear_impl(oracle_out, t):
    if not oracle_out.mutable:
        return lambda oracle_out, t: None

    def clear(oracle_out, t):
        oracle_out[t, :, :] = 0

    return clear


@njit(cache=True)
def observe_one(tb, wt, t, mask, obs, seat_out, oracle, oracle_out, pending, pending_out):
    """Mask, observation (and oracle) of the acting seat of one table; hands over its pending reward."""
    engine.legal_mask(tb, wt, mask[t])
    s = engine.acting_seat(tb)
    seat_out[t] = s
    if s < 0:  # a finished game left as it is (auto_reset=False): nothing to see or do
        obs[t, :, :] = 0
        if oracle:
            _oracle_clear(oracle_out, t)
        pending_out[t] = 0.0
        return
    encode_any(tb, s, obs[t])  # v2 or v3, by the planes obs has
    if oracle:
        _oracle_into(tb, s, oracle_out, t)
    pending_out[t] = pending[t, s]
    pending[t, s] = 0.0
