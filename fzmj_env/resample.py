"""Worlds from one seat's view: resample everything a seat cannot see (determinization).

``resample_into(src, t, seat, seeds, dst, tables, wt)`` writes, for each seed, a new table into
``dst[tables[i]]``: the game of ``src[t]`` at the same decision point, with the public
information and ``seat``'s private information kept and the hidden information drawn uniformly
among the assignments consistent with what ``seat`` observed. ``Game.resample`` and
``VectorEnv.load_worlds`` are the Python entry points; ``docs/engine.md`` lists what is and
is not resampled.

The world is built from ``seat``'s information only: the unseen tiles are counted from what
the seat sees (R12), laid out in kind order and shuffled with a stream of the seed. Two games
the seat cannot tell apart therefore give bit-identical worlds for the same seed; nothing of
the true hidden arrangement (other hands, concealed kong kinds, wall order) is read.

Uniform means uniform over the placements of the physical unseen tiles into the hidden slots
(the measure a fair shuffle induces), conditioned on what the seat knows:

* other seats' concealed tiles are suit tiles (a flower is always laid out at once, R4), so
  the unseen flowers lie in the wall;
* another seat's concealed kong is four tiles of one suit kind, never the gold (R7): its kind
  is drawn among the kinds whose four copies are all unseen;
* under home (P5) a seat's public swim level says whether its hand has the 游金 shape since
  its last discard: worlds that disagree are rejected and redrawn (exact; bounded tries).
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

from .core.engine import GAMMA, acting_seat, claim_options, mix64, set_seed, update_waits
from .core.hand import swims_counts
from .core.state import (
    A_PASS,
    ASK_POS,
    CLAIM_FROM,
    CLAIM_TILE,
    GOLD,
    HEAD,
    MELD_ADDED_KONG,
    MELD_CHI,
    MELD_CONCEALED_KONG,
    MELD_EXPOSED_KONG,
    MELD_PENG,
    N_ASK,
    PH_CLAIM,
    PH_OVER,
    PHASE,
    R_SCHEME,
    ROB_WINDOW,
    SCHEME_HOME,
    STATE_DTYPE,
    TAIL,
)
from .observe import observe_one

# resample_table() codes
OK = 0
ERR_NOT_ACTING = -1  # ``seat`` is not the seat to act (or the game is over)
ERR_INCONSISTENT = -2  # the visible tiles exceed the set, or the hidden slots do not add up
ERR_NO_KONG_KIND = -3  # no kind left with four unseen copies for a concealed kong
ERR_TOO_MANY_TRIES = -4  # the swim constraint (P5) rejected every draw
MAX_TRIES = 100_000
_SALT_WORLD = np.uint64(0x5EED0F3A11D5EA7)  # the world's stream; the world's game seed
_SALT_GAME = np.uint64(0x9A3E5EEDC0FFEE11)

ERRORS = {
    ERR_NOT_ACTING: "the seat is not the seat to act (worlds are drawn at the seat's own decisions)",
    ERR_INCONSISTENT: "the table's state is inconsistent (the visible tiles and the hidden slots do not add up)",
    ERR_NO_KONG_KIND: "no kind has four unseen copies for another seat's concealed kong",
    ERR_TOO_MANY_TRIES: f"no draw among {MAX_TRIES} met the public swim levels (P5)",
}


@njit(cache=True, inline="always")
def _below(rng, n):
    """(next rng, a uniform integer in 0..n-1) (Lemire's multiply-shift on 32 random bits)."""
    rng += GAMMA
    r = np.int64(((mix64(rng) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))
    return rng, r


@njit(cache=True)
def unseen_counts(tb, seat, out):
    """Tiles of each kind (42) ``seat`` has not seen, into ``out``; returns the number of other
    seats' concealed kongs (their kinds are unseen too), or -1 if a count goes negative."""
    for k in range(42):
        out[k] = 4 if k < 34 else 1
    out[tb.m[GOLD]] -= 1  # the gold indicator, set aside face up (R5)
    for k in range(27):
        out[k] -= tb.hand[seat, k]
    hidden_kongs = 0
    for s in range(4):
        for i in range(15):
            out[27 + i] -= tb.flowers[s, i]
        for i in range(tb.n_disc[s]):
            if tb.disc_claimed[s, i] == 0:  # a claimed discard is counted in the claimer's meld
                out[tb.disc[s, i]] -= 1
        for j in range(tb.n_melds[s]):
            mt = tb.meld[s, j, 0]
            k = tb.meld[s, j, 1]
            if mt == MELD_CHI:
                out[k] -= 1
                out[k + 1] -= 1
                out[k + 2] -= 1
            elif mt == MELD_PENG:
                out[k] -= 3
            elif mt == MELD_EXPOSED_KONG or mt == MELD_ADDED_KONG:
                out[k] -= 4
            elif mt == MELD_CONCEALED_KONG:
                if s == seat:
                    out[k] -= 4
                else:
                    hidden_kongs += 1
    for k in range(42):
        if out[k] < 0:
            return -1
    return hidden_kongs


@njit(cache=True)
def _draw(tb, seat, unseen, pool, rng):
    """One draw of the hidden part into ``tb`` (kongs, hands, live wall); returns (code, rng)."""
    gold = tb.m[GOLD]
    cnt = unseen.copy()
    # other seats' concealed kongs: a kind with four unseen copies, never the gold (R7)
    for s in range(4):
        if s == seat:
            continue
        for j in range(tb.n_melds[s]):
            if tb.meld[s, j, 0] != MELD_CONCEALED_KONG:
                continue
            n = 0
            for k in range(27):
                n += (cnt[k] == 4) & (k != gold)
            if n == 0:
                return ERR_NO_KONG_KIND, rng
            rng, r = _below(rng, n)
            for k in range(27):
                if cnt[k] == 4 and k != gold:
                    if r == 0:
                        tb.meld[s, j, 1] = k
                        cnt[k] = 0
                        break
                    r -= 1
    # suit tiles in kind order, then flowers; the hands take a uniform subset of the suit tiles
    ns = 0
    for k in range(27):
        for _ in range(cnt[k]):
            pool[ns] = k
            ns += 1
    n = ns
    for k in range(27, 42):
        for _ in range(cnt[k]):
            pool[n] = k
            n += 1
    need = 0
    for s in range(4):
        if s != seat:
            for k in range(27):
                need += tb.hand[s, k]
    head = tb.m[HEAD]
    live = tb.m[TAIL] - head + 1
    if need > ns or need + live != n:
        return ERR_INCONSISTENT, rng
    for i in range(need):  # partial Fisher-Yates over the suit tiles
        rng, r = _below(rng, ns - i)
        j = i + r
        x = pool[i]
        pool[i] = pool[j]
        pool[j] = x
    p = 0
    for s in range(4):
        if s == seat:
            continue
        size = 0
        for k in range(27):
            size += tb.hand[s, k]
            tb.hand[s, k] = 0
        for _ in range(size):
            tb.hand[s, pool[p]] += 1
            p += 1
    for i in range(n - 1, need, -1):  # the rest (suit tiles and flowers) in a uniform order
        rng, r = _below(rng, i - need + 1)
        j = need + r
        x = pool[i]
        pool[i] = pool[j]
        pool[j] = x
    for i in range(live):
        tb.wall[head + i] = pool[need + i]
    return OK, rng


@njit(cache=True)
def _swims_agree(tb, wt, seat):
    """P5: each other seat that has discarded swims in the world iff its public level says so."""
    if tb.m[R_SCHEME] != SCHEME_HOME:
        return True
    gold = tb.m[GOLD]
    for s in range(4):
        if s != seat and tb.n_disc[s] > 0:
            if swims_counts(wt, tb.hand[s], gold) != (tb.swim[s] > 0):
                return False
    return True


@njit(cache=True)
def _fill_drawn_part(tb):
    """Wall positions already drawn are never read again; they get the rest of the set in kind
    order, so the wall stays a permutation of the 144 tiles and holds nothing of the truth."""
    left = np.empty(42, np.int64)
    for k in range(42):
        left[k] = 4 if k < 34 else 1
    head = tb.m[HEAD]
    tail = tb.m[TAIL]
    for i in range(head, tail + 1):
        left[tb.wall[i]] -= 1
    k = 0
    for i in range(144):
        if head <= i <= tail:
            continue
        while left[k] == 0:
            k += 1
        tb.wall[i] = k
        left[k] -= 1


@njit(cache=True)
def _reopen_claims(tb, wt, seat):
    """A claim window in the world: ``seat`` is asked first; the other seats' options come from
    their world hands and they answer after it (claim answers are blind, R8)."""
    m = tb.m
    d = m[CLAIM_FROM]
    kind = m[CLAIM_TILE]
    n = 1
    tb.ask[0] = seat
    for s in range(4):
        tb.choice[s] = A_PASS
        if s != seat:
            tb.opts[s] = 0
    for i in range(1, 5):
        s = (d + i) % 4
        if i == 4 and not m[ROB_WINDOW]:
            break
        if s == seat:
            continue
        o = claim_options(tb, wt, s, d, kind)
        tb.opts[s] = o
        if o:
            tb.ask[n] = s
            n += 1
    m[N_ASK] = n
    m[ASK_POS] = 0


@njit(cache=True)
def resample_table(tb, wt, seat, unseen, pool, seed):
    """Overwrite the hidden part of ``tb`` (a copy of the original) with a world for ``seat``."""
    m = tb.m
    if m[PHASE] == PH_OVER or acting_seat(tb) != seat:
        return ERR_NOT_ACTING
    if unseen_counts(tb, seat, unseen) < 0:
        return ERR_INCONSISTENT
    rng = mix64(np.uint64(seed) ^ _SALT_WORLD)
    ok = False
    for _ in range(MAX_TRIES):
        code, rng = _draw(tb, seat, unseen, pool, rng)
        if code != OK:
            return code
        if _swims_agree(tb, wt, seat):
            ok = True
            break
    if not ok:
        return ERR_TOO_MANY_TRIES
    _fill_drawn_part(tb)
    for s in range(4):
        if s != seat:
            tb.passed[s, :] = 0  # 过水 of another seat is not reconstructed (docs/engine.md)
            update_waits(tb, wt, s)  # every other seat holds 3n+1 tiles at this seat's decision
    if m[PHASE] == PH_CLAIM:
        _reopen_claims(tb, wt, seat)
    set_seed(tb, mix64(np.uint64(seed) ^ _SALT_GAME))  # the world's later hands
    return OK


@njit(cache=True)
def resample_into(src_bytes, t, seat, seeds, dst_bytes, dst, tables, wt, codes):
    """For each ``i``: copy table ``t`` of the source buffer into ``dst[tables[i]]`` and draw the
    world of ``seeds[i]`` there. ``*_bytes`` are the buffers viewed as ``uint8[B, itemsize]``;
    ``codes[i]`` gets each world's code (0 = OK)."""
    unseen = np.empty(42, np.int64)
    pool = np.empty(144, np.int8)
    for i in range(tables.shape[0]):
        u = tables[i]
        dst_bytes[u, :] = src_bytes[t, :]
        codes[i] = resample_table(dst[u], wt, seat, unseen, pool, seeds[i])


def check_seat_seed(seat, seed) -> tuple[int, int]:
    """(seat, seed) validated: ValueError with one line for anything else."""
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
    return int(seat), int(seed)


def resample_buffer(src: np.ndarray, t: int, seat: int, seeds, dst: np.ndarray, tables, wt) -> None:
    """Python wrapper of :func:`resample_into` with input checks; raises ValueError on a bad
    seat, seed or table, or when the world cannot be drawn (the reason in one line)."""
    seat, _ = check_seat_seed(seat, 0)
    seeds = np.asarray(seeds)
    tables = np.asarray(tables, dtype=np.int64)
    if seeds.ndim != 1 or seeds.dtype.kind not in "iu" or (seeds.dtype.kind == "i" and (seeds < 0).any()):
        raise ValueError("seeds must be a 1-D array of non-negative integers")
    if tables.shape != seeds.shape:
        raise ValueError(f"tables must have the shape of seeds {seeds.shape}, got {tables.shape}")
    if len(tables) and (tables.min() < 0 or tables.max() >= len(dst) or len(np.unique(tables)) != len(tables)):
        raise ValueError(f"tables must be distinct indices in 0..{len(dst) - 1}")
    if src.dtype != STATE_DTYPE or dst.dtype != STATE_DTYPE:
        raise ValueError("src and dst must be state buffers (state.new_state)")
    if not 0 <= t < len(src):
        raise ValueError(f"table {t} is not in 0..{len(src) - 1}")
    codes = np.zeros(len(seeds), np.int64)
    n = STATE_DTYPE.itemsize
    resample_into(
        src.view(np.uint8).reshape(len(src), n),
        int(t),
        seat,
        seeds.astype(np.uint64),
        dst.view(np.uint8).reshape(len(dst), n),
        dst,
        tables,
        wt,
        codes,
    )
    bad = np.flatnonzero(codes)
    if len(bad):
        raise ValueError(f"cannot draw a world for seat {seat}: {ERRORS[int(codes[bad[0]])]}")


@njit(cache=True)
def observe_tables(tables, buf, wt, mask, obs, seat_out, oracle, oracle_out, pending, pending_out):
    """Mask and observation of the acting seat of each listed table (after loading worlds)."""
    for i in range(tables.shape[0]):
        t = tables[i]
        for s in range(4):
            pending[t, s] = 0.0
        observe_one(buf[t], wt, t, mask, obs, seat_out, oracle, oracle_out, pending, pending_out)


# ---- worlds weighted by a belief ------------------------------------------------------------------
# A belief over the other seats' hands reweights the uniform worlds above: the target is
#     P(world) ∝ P_uniform(world) · prod_{r, k} factors[r, k, count of kind k in relative seat r+1's hand]
# with ``factors`` (3, 27, 5) non-negative (relative seats 1, 2, 3 of the drawing seat; counts 0..4).
# The uniform worlds are an exact proposal, so a world's importance weight is that product exactly;
# ``prior_count_dist`` gives the uniform worlds' own marginals, so ``factors = belief / prior`` makes
# the target's per-kind marginals those of the belief (up to their dependence, which it keeps).
# Sampling is therefore importance sampling: weights, or sampling-importance-resampling among
# candidates (``Game.resample(..., belief=...)``), never an exact draw from the belief.
BELIEF_SHAPE = (3, 27, 5)


def check_belief_factors(factors) -> np.ndarray:
    """``factors`` as float64 ``(3, 27, 5)``, finite and non-negative (one-line ValueError)."""
    f = np.asarray(factors, dtype=np.float64)
    if f.shape != BELIEF_SHAPE:
        raise ValueError(f"belief must have shape {BELIEF_SHAPE} (relative seat, kind, count), got {f.shape}")
    if not np.isfinite(f).all() or (f < 0).any():
        raise ValueError("belief weights must be finite and non-negative")
    return f


@njit(cache=True)
def world_log_weights(buf, tables, seat, log_factors, out):
    """``out[i]`` = sum over relative seats r and kinds k of ``log_factors[r, k, hand count]`` of
    the world in ``buf[tables[i]]`` (drawn for ``seat``)."""
    for i in range(tables.shape[0]):
        tb = buf[tables[i]]
        acc = 0.0
        for r in range(3):
            s = (seat + 1 + r) % 4
            for k in range(27):
                acc += log_factors[r, k, min(tb.hand[s, k], 4)]
        out[i] = acc


def belief_log_weights(buf: np.ndarray, tables, seat: int, factors) -> np.ndarray:
    """Log importance weights (unnormalised) of the worlds at ``tables`` of ``buf`` under
    ``factors`` (see above); -inf where a factor is 0."""
    f = check_belief_factors(factors)
    tables = np.asarray(tables, dtype=np.int64)
    out = np.zeros(len(tables), np.float64)
    with np.errstate(divide="ignore"):
        world_log_weights(buf, tables, int(seat), np.log(f), out)
    return out


def prior_count_dist(buf: np.ndarray, t: int, seat: int) -> np.ndarray:
    """``(3, 27, 5)``: P(count of kind k in relative seat r+1's hand = c) over the uniform worlds
    of ``seat``'s view of table ``t`` (hypergeometric: the hands take a uniform subset of the
    unseen suit tiles; other seats' concealed kongs, which take four unseen copies of a kind
    first, are ignored here, so this is the uniform marginal up to them)."""
    tb = buf[t]
    unseen = np.zeros(42, np.int64)
    if unseen_counts(tb, seat, unseen) < 0:
        raise ValueError(f"cannot draw a world for seat {seat}: {ERRORS[ERR_INCONSISTENT]}")
    U = int(unseen[:27].sum())
    out = np.zeros(BELIEF_SHAPE)
    for r in range(3):
        n = int(tb["hand"][(seat + 1 + r) % 4].sum())
        for k in range(27):
            u = int(unseen[k])
            for c in range(min(u, n, 4) + 1):
                out[r, k, c] = comb(u, c) * comb(U - u, n - c) / comb(U, n) if U >= n else float(c == 0)
    return out


def sir_pick(log_w: np.ndarray, seed: int) -> int:
    """Index drawn with probability proportional to ``exp(log_w)`` from ``seed`` (deterministic)."""
    w = np.exp(log_w - np.max(log_w)) if np.isfinite(log_w).any() else np.ones(len(log_w))
    u = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, 0xB11EF])).random()
    return int(min(np.searchsorted(np.cumsum(w) / w.sum(), u, side="right"), len(w) - 1))
