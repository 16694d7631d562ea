"""One table's view for its acting seat: legal mask, observation planes, oracle planes and the
pending reward. The batched envs (``vector.py``) and the worlds (``resample.py``) share it."""

from __future__ import annotations

from numba import njit

from .core import engine
from .encode import encode_any, oracle_v1


@njit(cache=True)
def observe_one(tb, wt, t, mask, obs, seat_out, oracle, oracle_out, pending, pending_out):
    """Mask, observation (and oracle) of the acting seat of one table; hands over its pending reward."""
    engine.legal_mask(tb, wt, mask[t])
    s = engine.acting_seat(tb)
    seat_out[t] = s
    if s < 0:  # a finished game left as it is (auto_reset=False): nothing to see or do
        obs[t, :, :] = 0
        if oracle:
            oracle_out[t, :, :] = 0
        pending_out[t] = 0.0
        return
    encode_any(tb, s, obs[t])  # v2 or v3, by the planes obs has
    if oracle:
        oracle_v1(tb, s, oracle_out[t])
    pending_out[t] = pending[t, s]
    pending[t, s] = 0.0
