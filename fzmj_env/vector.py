"""The batched self-play environment: B tables stepped inside Numba with one Python call.

Each call of :meth:`VectorEnv.step` applies one action per table (for the seat that must act
there), advances every table to its next decision, resets finished games with the next seed
of the table's own seed sequence, and writes the next observations, masks and acting seats
into preallocated buffers. There is no Python loop over tables; the rules are the engine's
(``core/engine.py``) and the observation is the AEC env's encoder (``encode.py``, v2).

Self-play bookkeeping: ``info["acted_seat"]`` says which seat took each action, and
``info["pending_reward"]`` gives, for the seat that must act next at each table, the reward
it received since its own previous decision (to be credited to that previous decision).
When a game ends, ``info["final_reward"][t]`` holds every seat's reward since its last
decision (the game's last rewards included), and the table's new game starts with nothing
pending.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .actions import NUM_ACTIONS, action_name
from .checks import (
    MAX_TABLES,
    check_bool,
    check_hands_per_game,
    check_int,
    check_memory,
    check_obs_version,
    check_reward_scale,
    read_only,
)
from .core import engine, state
from .core.hand import get_win_table
from .core.intrinsics import borrow, prefetch
from .encode import ORACLE_CHANNELS, obs_channels
from .observe import observe_one
from .resample import belief_log_weights, check_belief_factors, observe_tables, resample_buffer
from .rules import DEFAULT_RULES, Rules, load_rules
from .seeding import game_seed, split_seed
from .snapshot import (
    FORMAT,
    GAMES_AT,
    GAMES_BYTES,
    HEADER_BYTES,
    PENDING_AT,
    PENDING_BYTES,
    PENDING_OUT_AT,
    PENDING_OUT_BYTES,
    STALE_TAG,
    STATE_BYTES,
    StateError,
    check_restorable,
    checked_in_place,
    checked_snapshots,
    new_snapshots,
    refusal,
    restore_scratch,
    stale_state,
    table_bytes,
    table_records,
    tag_pickle,
    untag_pickle,
)


@njit(cache=True)
def _start_game(tb, wt, seed, hands_per_game):
    engine.set_seed(tb, seed)
    engine.reset_table(tb, wt, -1, 0, hands_per_game, False)


@njit(cache=True, nogil=True)
def _find_illegal(actions, mask, seat):
    """(first table whose action is not legal for its acting seat, number of such tables);
    finished tables (seat -1, only without auto_reset) accept any action."""
    first = -1
    n = 0
    for t in range(actions.shape[0]):
        a = actions[t]
        if seat[t] >= 0 and (a < 0 or a >= mask.shape[1] or mask[t, a] != 1):
            n += 1
            if first < 0:
                first = t
    return first, n


@njit(cache=True)
def _reset_one(buf, wt, t, base_seed, games, hands_per_game):
    _start_game(buf[t], wt, game_seed(base_seed, t, games[t]), hands_per_game)
    games[t] += 1


_RESULT_SLOTS = (
    state.WINNER,
    state.WIN_TYPE,
    state.DISCARDER,
    state.FLOWER_PTS,
    state.GOLD_PTS,
    state.SPECIALS,
    state.VALUE,
    state.RES_HAND_NO,
    state.RES_DEALER,
    state.RES_STREAK,
    state.SPECIALS_COUNTED,
)
RESULT_POINTS = len(_RESULT_SLOTS)  # column of points[0] in a result row (see results_of)
RESULT_WIDTH = RESULT_POINTS + 4


@njit(cache=True)
def _copy_result(tb, out):
    """Result of the hand that just ended: the _RESULT_SLOTS, then points[4] (see ``results_of``)."""
    m = tb.m
    for i in range(len(_RESULT_SLOTS)):
        out[i] = m[_RESULT_SLOTS[i]]
    for s in range(4):
        out[len(_RESULT_SLOTS) + s] = tb.points[s]


# One signature for every step and reset kernel: the arguments that do not change between steps
# are packed once, at construction, into two tuples (a tuple of arrays costs Numba's dispatcher
# no more than the same arrays as separate arguments; a namedtuple would cost ~15 µs per call):
#   cfg = (base_seed uint64, hands_per_game, reward_scale float32, oracle, auto_reset)
#   io  = the per-table buffers the kernels write, in the order of the IO_* names below.
CFG_SEED, CFG_HANDS, CFG_SCALE, CFG_ORACLE, CFG_AUTO_RESET = range(5)
(
    IO_GAMES,
    IO_REWARDS,
    IO_DONE,
    IO_HAND_OVER,
    IO_PENDING,
    IO_FINAL,
    IO_MASK,
    IO_OBS,
    IO_SEAT,
    IO_ORACLE,
    IO_PENDING_OUT,
    IO_RESULTS,
    IO_MASK_OUT,
    IO_SEAT_OUT,
) = range(14)


@njit(cache=True, inline="always")
def _borrowed(io):
    """``io`` with every array borrowed (core/intrinsics.py: no atomic reference counting in the
    helpers called per table)."""
    return (
        borrow(io[IO_GAMES]),
        borrow(io[IO_REWARDS]),
        borrow(io[IO_DONE]),
        borrow(io[IO_HAND_OVER]),
        borrow(io[IO_PENDING]),
        borrow(io[IO_FINAL]),
        borrow(io[IO_MASK]),
        borrow(io[IO_OBS]),
        borrow(io[IO_SEAT]),
        borrow(io[IO_ORACLE]),
        borrow(io[IO_PENDING_OUT]),
        borrow(io[IO_RESULTS]),
        borrow(io[IO_MASK_OUT]),
        borrow(io[IO_SEAT_OUT]),
    )


@njit(cache=True, inline="always")
def _publish(t, io):
    """Copy table ``t``'s mask and seat (the ones ``step`` checks actions against, never handed
    out) into the buffers the caller gets (read-only views of them, see ``VectorEnv``)."""
    mask, mask_out = io[IO_MASK], io[IO_MASK_OUT]
    for a in range(mask.shape[1]):
        mask_out[t, a] = mask[t, a]
    io[IO_SEAT_OUT][t] = io[IO_SEAT][t]


@njit(cache=True)
def _restore_table(saved, t, tag, scratch, params, hands, dst_bytes, buf, wt, oracle, out):
    """``restore_tables`` of one state into table ``t``, in one call (Numba's dispatcher costs more
    than the work: ``out`` holds only the buffers a restore writes; the arguments after ``t`` are
    the env's ``_restore_args``): the state put in and checked there (``checked_in_place``), then,
    if it passes, the table observed and the header read: games started, every seat's pending
    reward, the one handed to the acting seat. Returns 0, or why it is refused (``STALE_TAG`` or a
    ``check_tables`` code; nothing changed)."""
    games, pending, pending_out, mask, obs, seat, oracle_out, mask_out, seat_out = out
    problem, _, _ = checked_in_place(saved, tag, buf, dst_bytes, t, scratch, params, hands, wt)
    if problem != 0:
        return problem
    header = saved[0, :HEADER_BYTES]
    games[t] = header[GAMES_AT : GAMES_AT + 8].view(np.int64)[0]
    pending[t, :] = header[PENDING_AT : PENDING_AT + 16].view(np.float32)
    observe_one(buf[t], wt, t, mask, obs, seat, oracle, oracle_out, pending, pending_out)
    pending_out[t] = header[PENDING_OUT_AT : PENDING_OUT_AT + 4].view(np.float32)[0]
    mask_out[t, :] = mask[t]
    seat_out[t] = seat[t]
    return 0


@njit(cache=True, inline="always")
def _observe(buf, wt, t, cfg, io):
    """Mask, observation (and oracle) of table ``t``'s acting seat; its pending reward handed over."""
    observe_one(
        buf[t], wt, t, io[IO_MASK], io[IO_OBS], io[IO_SEAT], cfg[CFG_ORACLE], io[IO_ORACLE],
        io[IO_PENDING], io[IO_PENDING_OUT],
    )  # fmt: skip
    _publish(t, io)


@njit(cache=True)
def _step_one(buf, wt, t, action, cfg, io):
    """One table's step (its finished hand's result copied before any reset); then observe it."""
    rewards, done, hand_over, pending, final = (
        io[IO_REWARDS],
        io[IO_DONE],
        io[IO_HAND_OVER],
        io[IO_PENDING],
        io[IO_FINAL],
    )
    tb = buf[t]
    for s in range(4):
        rewards[t, s] = 0.0
        final[t, s] = 0.0
    done[t] = False
    hand_over[t] = False
    if tb.m[state.PHASE] == state.PH_OVER:  # finished and not reset (auto_reset=False): the action is ignored
        return
    code = engine.apply_action(tb, wt, action)
    if code == engine.STEP_HAND_OVER or code == engine.STEP_GAME_OVER:
        hand_over[t] = True
        _copy_result(tb, io[IO_RESULTS][t])
        scale = cfg[CFG_SCALE]
        for s in range(4):
            r = tb.points[s] * scale
            rewards[t, s] = r
            pending[t, s] += r
    if code == engine.STEP_GAME_OVER:
        done[t] = True
        for s in range(4):
            final[t, s] = pending[t, s]
            pending[t, s] = 0.0
        if cfg[CFG_AUTO_RESET]:
            _reset_one(buf, wt, t, cfg[CFG_SEED], io[IO_GAMES], cfg[CFG_HANDS])


@njit(cache=True, nogil=True)
def _step_range(lo, hi, buf, wt, actions, cfg, io):
    """Step tables ``lo .. hi-1`` and observe them."""
    wt, actions, io = borrow(wt), borrow(actions), _borrowed(io)
    for t in range(lo, hi):
        if t + 1 < hi:  # the next table's record comes in from L3 while this one is stepped
            prefetch(buf, t + 1, buf.itemsize)
        _step_one(buf, wt, t, actions[t], cfg, io)
        _observe(buf, wt, t, cfg, io)


@njit(cache=True, nogil=True)
def _step_list(tables, buf, wt, actions, cfg, io):
    """Step only the tables listed in ``tables`` (``actions[i]`` for ``tables[i]``) and observe them;
    the per-step outputs of the other tables are zeroed."""
    rewards, done, hand_over, final, pending_out = (
        io[IO_REWARDS], io[IO_DONE], io[IO_HAND_OVER], io[IO_FINAL], io[IO_PENDING_OUT],
    )  # fmt: skip
    for t in range(buf.shape[0]):
        done[t] = False
        hand_over[t] = False
        pending_out[t] = 0.0
        for s in range(4):
            rewards[t, s] = 0.0
            final[t, s] = 0.0
    for i in range(tables.shape[0]):
        t = tables[i]
        _step_one(buf, wt, t, actions[i], cfg, io)
        _observe(buf, wt, t, cfg, io)


@njit(cache=True, nogil=True)
def _find_illegal_at(tables, actions, mask, seat):
    """As :func:`_find_illegal` for ``actions[i]`` at table ``tables[i]``: (first position, count);
    count -1: ``tables[first]`` is out of range, -2: it repeats an earlier table."""
    B = mask.shape[0]
    seen = np.zeros(B, dtype=np.bool_)
    for i in range(tables.shape[0]):
        t = tables[i]
        if t < 0 or t >= B:
            return i, -1
        if seen[t]:
            return i, -2
        seen[t] = True
    first = -1
    n = 0
    for i in range(tables.shape[0]):
        t = tables[i]
        a = actions[i]
        if seat[t] >= 0 and (a < 0 or a >= mask.shape[1] or mask[t, a] != 1):
            n += 1
            if first < 0:
                first = i
    return first, n


@njit(cache=True, parallel=True, nogil=True)
def _step_parallel(buf, wt, actions, cfg, io, n):
    """``n`` contiguous chunks of tables, one per thread."""
    B = buf.shape[0]
    chunk = (B + n - 1) // n
    for w in prange(n):
        _step_range(w * chunk, min(B, (w + 1) * chunk), buf, wt, actions, cfg, io)


@njit(cache=True, nogil=True)
def _reset_all(buf, wt, first_seeds, use_first, cfg, io):
    games, pending = io[IO_GAMES], io[IO_PENDING]
    hpg = cfg[CFG_HANDS]
    for t in range(buf.shape[0]):
        games[t] = 0
        for s in range(4):
            pending[t, s] = 0.0
        if use_first:  # game 0 of table t uses exactly first_seeds[t] (like Game.reset(seed=...))
            _start_game(buf[t], wt, first_seeds[t], hpg)
            games[t] = 1
        else:
            _reset_one(buf, wt, t, cfg[CFG_SEED], games, hpg)
        _observe(buf, wt, t, cfg, io)


@njit(cache=True, nogil=True)
def _reset_list(tables, seeds, buf, wt, cfg, io):
    """Start a new game with ``seeds[i]`` at each of ``tables`` (its game counter moves on) and observe it."""
    games, pending = io[IO_GAMES], io[IO_PENDING]
    for i in range(tables.shape[0]):
        t = tables[i]
        for s in range(4):
            pending[t, s] = 0.0
        _start_game(buf[t], wt, seeds[i], cfg[CFG_HANDS])
        games[t] += 1
        _observe(buf, wt, t, cfg, io)


_HEADER = new_snapshots(1)[0, :HEADER_BYTES]  # a saved state's header: copied, then filled in


class VectorEnv:
    """B Fuzhou tables stepped together (same engine and encoder as the AEC env).

    ``obs_version``: 2 (default, ``(99, 27)`` planes) or 3 (``(V3_CHANNELS, 27)`` = v2's planes then
    the public history, docs/observation.md).

    Examples:
        >>> env = VectorEnv(1024, seed=0)
        >>> obs, mask, seat = env.reset()
        >>> obs, mask, seat, rewards, done, info = env.step(actions)   # actions: (B,) ints

    The arrays returned are read-only views of the env's own buffers (no copy on the hot path),
    and the next call overwrites them: copy what you keep (``mask.copy()`` to edit one). Writing
    into one raises at once, and its ``writeable`` flag cannot be turned back on. ``step`` checks
    the actions against a mask the env keeps to itself (the kernels copy each table's mask and
    seat into the returned buffers), so no write into what it returned, by any means, gets an
    illegal action applied.

    Copies (docs/search.md): ``copy.deepcopy`` and pickles are exact, independent copies;
    ``save_tables(tables)`` / ``restore_tables(tables, saved)`` save and restore chosen tables.
    """

    def __init__(
        self,
        num_tables: int,
        rules: str | Rules = DEFAULT_RULES,
        seed: int = 0,
        hands_per_game: int = 1,
        oracle: bool = False,
        reward_scale: float = 1.0,
        num_threads: int = 1,
        auto_reset: bool = True,
        obs_version: int | str = 2,
    ):
        num_tables = check_int("num_tables", num_tables, 1, MAX_TABLES)
        self.obs_version = check_obs_version(obs_version)  # "v2" / "v3" (docs/observation.md)
        channels = obs_channels(self.obs_version)
        hands_per_game = check_hands_per_game(hands_per_game)  # int32 in the state
        reward_scale = check_reward_scale(reward_scale)
        num_threads = check_int("num_threads", num_threads, 1)
        oracle = check_bool("oracle", oracle)
        auto_reset = check_bool("auto_reset", auto_reset)
        if num_threads > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(
                f"num_threads={num_threads} exceeds the {numba.config.NUMBA_NUM_THREADS} threads Numba can use here"
            )
        split_seed(seed)  # validates
        B = int(num_tables)
        self.num_tables = B
        self.rules = load_rules(rules)
        self.seed = int(seed)
        self.hands_per_game = int(hands_per_game)
        self.oracle = bool(oracle)
        self.reward_scale = float(reward_scale)
        self.num_threads = int(num_threads)
        self.auto_reset = bool(auto_reset)
        self.num_actions = NUM_ACTIONS
        self.obs_shape = (channels, 27)
        self._wt = get_win_table()
        per_table = (
            state.STATE_DTYPE.itemsize + (channels + (ORACLE_CHANNELS if oracle else 0)) * 27 + NUM_ACTIONS + 128
        )
        check_memory(f"num_tables={B}", B * per_table)  # before numpy's lazy zeros meet the OOM killer
        try:
            self._allocate(B, oracle)
        except MemoryError:
            raise ValueError(
                f"num_tables={B}: not enough memory for the tables ({B * per_table / 1e9:.1f} GB)"
            ) from None
        self._ready = False

    def _allocate(self, B: int, oracle: bool) -> None:
        self.buf = state.new_state(B)
        for t in range(B):
            engine.set_rules(self.buf, t, self.rules.params)
        self._games = np.zeros(B, dtype=np.int64)
        self._obs = np.zeros((B, *self.obs_shape), dtype=np.int8)
        self._oracle = np.zeros((B if oracle else 1, ORACLE_CHANNELS, 27), dtype=np.int8)
        self._mask = np.zeros((B, NUM_ACTIONS), dtype=np.int8)
        self._seat = np.zeros(B, dtype=np.int64)
        self._rewards = np.zeros((B, 4), dtype=np.float32)
        self._final = np.zeros((B, 4), dtype=np.float32)
        self._pending = np.zeros((B, 4), dtype=np.float32)
        self._pending_out = np.zeros(B, dtype=np.float32)
        self._done = np.zeros(B, dtype=np.bool_)
        self._hand_over = np.zeros(B, dtype=np.bool_)
        self._results = np.zeros((B, RESULT_WIDTH), dtype=np.int32)
        self._mask_out = np.zeros((B, NUM_ACTIONS), dtype=np.int8)  # copies of _mask and _seat: handed out
        self._seat_out = np.zeros(B, dtype=np.int64)
        self.world_log_weights = np.zeros(0)  # of the last load_worlds (with a belief)
        self._link()
        self._ready = False

    # the arrays that hold the env's state; everything else is views of them or derived (_link)
    _OWNED = (
        "buf", "_games", "_obs", "_oracle", "_mask", "_seat", "_rewards", "_final", "_pending", "_pending_out",
        "_done", "_hand_over", "_results", "_mask_out", "_seat_out", "world_log_weights",
    )  # fmt: skip

    def _link(self) -> None:
        """The kernels' argument tuples and the read-only views handed out, over the owned arrays."""
        self._wt = get_win_table()
        self._bytes = table_bytes(self.buf)
        self._oracle.flags.writeable = self.oracle  # read-only: the kernels compile without the oracle (observe.py)
        self._io = (
            self._games, self._rewards, self._done, self._hand_over, self._pending, self._final,
            self._mask, self._obs, self._seat, self._oracle, self._pending_out, self._results,
            self._mask_out, self._seat_out,
        )  # fmt: skip
        # what a one-table restore writes (_restore_table: fewer arrays, a cheaper call) and where it
        # keeps the table's own bytes and checks the mask
        self._restore_out = (
            self._games, self._pending, self._pending_out, self._mask, self._obs, self._seat, self._oracle,
            self._mask_out, self._seat_out,
        )  # fmt: skip
        self._restore_args = (FORMAT, restore_scratch(), self.rules.params, self.hands_per_game, self._bytes, self.buf,
                              self._wt, self.oracle, self._restore_out)  # fmt: skip
        # what the caller gets: read-only views, made once (_mask and _seat are never handed out)
        self._ro_obs, self._ro_mask, self._ro_seat, self._ro_rewards, self._ro_done = map(
            read_only, (self._obs, self._mask_out, self._seat_out, self._rewards, self._done)
        )
        self._ro_info = {
            "pending_reward": read_only(self._pending_out),
            "final_reward": read_only(self._final),
            "hand_over": read_only(self._hand_over),
            "results": read_only(self._results),
        }
        if self.oracle:
            self._ro_info["oracle"] = read_only(self._oracle)
        self._cfg = (
            np.uint64(self.seed),
            self.hands_per_game,
            np.float32(self.reward_scale),
            self.oracle,
            self.auto_reset,
        )

    # ------------------------------------------------------------------------------------------
    def reset(self, seeds=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a game on every table. Returns ``(obs (B,C,27) int8, mask (B,62) int8, seat (B,))``.

        Game k of table t uses seed ``game_seed(seed, t, k)``; with ``seeds`` (B integers in
        0..2**64-1), game 0 of table t uses ``seeds[t]`` itself, exactly like
        ``Game.reset(seed=seeds[t])`` (duplicate evaluation, comparisons with the AEC env).
        The arrays are the env's own buffers, overwritten by the next call: copy what you keep.
        """
        if seeds is None:
            first = np.zeros(self.num_tables, dtype=np.uint64)
        else:
            seeds = np.asarray(seeds)
            if seeds.shape != (self.num_tables,):
                raise ValueError(f"seeds must have shape ({self.num_tables},), got {seeds.shape}")
            if seeds.dtype.kind not in "iu" or (seeds.dtype.kind == "i" and (seeds < 0).any()):
                raise ValueError("seeds must be non-negative integers")
            first = seeds.astype(np.uint64)
        _reset_all(self.buf, self._wt, first, seeds is not None, self._cfg, self._io)
        self._ready = True
        return self._ro_obs, self._ro_mask, self._ro_seat

    def _illegal(self, t: int, a: int, n_illegal: int) -> ValueError:
        """The error for an illegal action ``a`` at table ``t`` (the first of ``n_illegal`` in the batch)."""
        name = action_name(a) if 0 <= a < NUM_ACTIONS else "out of range 0..61"
        return ValueError(
            f"illegal action at table {t}: seat {int(self._seat[t])} cannot take action {a} ({name}); "
            f"legal: {np.flatnonzero(self._mask[t]).tolist()} ({int(n_illegal)} illegal in this batch)"
        )

    def _tables_arg(self, tables, method: str) -> np.ndarray:
        """``tables`` of :meth:`step_tables` / :meth:`reset_tables` as a 1-D integer array (after reset)."""
        if not self._ready:
            raise RuntimeError(f"call reset() before {method}()")
        tables = np.asarray(tables)
        if tables.ndim != 1 or tables.dtype.kind not in "iu":
            raise ValueError(f"tables must be a 1-D integer array, got shape {tables.shape} dtype {tables.dtype}")
        return tables

    def reset_tables(self, tables, seeds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new game at the listed tables only, game i with ``seeds[i]`` exactly (like
        ``Game.reset(seed=seeds[i])``), whatever their state; the other tables are untouched.
        For drivers that choose each game's wall themselves, e.g. the trainer's duplicate groups
        (several tables playing the same wall, ``auto_reset=False``). Returns ``(obs, mask, seat)``
        of all B tables (the env's own buffers)."""
        tables = self._tables_arg(tables, "reset_tables")
        seeds = np.asarray(seeds)
        if (
            seeds.shape != tables.shape
            or seeds.dtype.kind not in "iu"
            or (seeds.dtype.kind == "i" and (seeds < 0).any())
        ):
            raise ValueError(f"seeds must be non-negative integers of shape {tables.shape}")
        if len(tables) and (tables.min() < 0 or tables.max() >= self.num_tables):
            raise ValueError(f"tables must be in 0..{self.num_tables - 1}")
        if len(np.unique(tables)) != len(tables):
            raise ValueError("tables must be distinct")
        _reset_list(tables.astype(np.int64), seeds.astype(np.uint64), self.buf, self._wt, self._cfg, self._io)
        return self._ro_obs, self._ro_mask, self._ro_seat

    def load_worlds(
        self, tables, src: np.ndarray, t: int, seat: int, seeds, belief=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Load, into each of ``tables``, the world of ``seeds[i]`` drawn from ``seat``'s view of
        table ``t`` of the state buffer ``src`` (``Game.buf``, ``VectorEnv.buf``; same preset):
        one Numba call for all of them (``fzmj_env/resample.py``, docs/engine.md). The tables
        then play on like any other (``step_tables``; ``auto_reset=False`` keeps a finished
        world as it is). Returns ``(obs, mask, seat)`` of all B tables (the env's own buffers).

        ``belief``: per relative seat, kind and count weights ``(3, 27, 5)``: the worlds are
        still drawn uniformly (an exact proposal) and ``self.world_log_weights`` gets each one's
        log importance weight under the belief, in the order of ``tables`` (``fzmj_env/resample.py``,
        "worlds weighted by a belief"); without it, zeros."""
        tables = self._tables_arg(tables, "load_worlds")
        factors = None if belief is None else check_belief_factors(belief)
        resample_buffer(src, t, seat, seeds, self.buf, tables, self._wt)
        self.world_log_weights = (
            np.zeros(len(tables)) if factors is None else belief_log_weights(self.buf, tables, seat, factors)
        )
        return self._observe_tables(tables)

    def _observe_tables(self, tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observe the listed tables again after their state was written into ``buf`` directly
        (``load_worlds``, the search benchmarks): masks, observations, seats, pending rewards."""
        tables = np.asarray(tables, dtype=np.int64)  # no copy when it is one already (read only)
        observe_tables(
            tables, self.buf, self._wt, self._mask, self._obs, self._seat,
            self.oracle, self._oracle, self._pending, self._pending_out,
        )  # fmt: skip
        self._mask_out[tables] = self._mask[tables]
        self._seat_out[tables] = self._seat[tables]
        return self._ro_obs, self._ro_mask, self._ro_seat

    # ---- copies, saved tables, pickles (docs/search.md) --------------------------------------
    def save_tables(self, tables) -> np.ndarray:
        """The state of each of ``tables`` as saved states (``(len(tables), STATE_BYTES)`` uint8,
        ``fzmj_env/snapshot.py``), a copy: the table's engine record, its game count and pending
        rewards. ``restore_tables`` puts them back (into these tables or others)."""
        tables, n = self._tables_in_range(tables, "save_tables")
        out = np.empty((n, STATE_BYTES), dtype=np.uint8)
        out[:, :HEADER_BYTES] = _HEADER
        out[:, GAMES_BYTES] = self._games[tables, None].view(np.uint8)
        out[:, PENDING_BYTES] = self._pending[tables].view(np.uint8)
        out[:, PENDING_OUT_BYTES] = self._pending_out[tables, None].view(np.uint8)
        out[:, HEADER_BYTES:] = self._bytes[tables]
        return out

    def restore_tables(self, tables, saved: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Put ``saved[i]`` (from ``save_tables`` or ``Game.save_state``, same preset and
        ``hands_per_game``) into table ``tables[i]``; the other tables are untouched. Every state is
        checked first (``StateError``, a ``ValueError``: nothing is written unless all pass).
        Returns ``(obs, mask, seat)`` of all B tables (the env's own buffers)."""
        if type(tables) is int and 0 <= tables < self.num_tables and self._ready:
            # one table: its tag checked, copied and observed in one Numba call
            saved = checked_snapshots(saved, 1, "VectorEnv.restore_tables", tag=False)
            problem = _restore_table(saved, tables, *self._restore_args)
            if problem == STALE_TAG:
                raise stale_state("VectorEnv.restore_tables", 0)
            if problem:
                raise refusal(problem, 0, "VectorEnv", self.rules)
            return self._ro_obs, self._ro_mask, self._ro_seat
        tables, n = self._tables_in_range(tables, "restore_tables")
        saved = checked_snapshots(saved, n, "VectorEnv.restore_tables")
        check_restorable(table_records(saved), self.rules, self.hands_per_game, self._wt, "VectorEnv")
        self._bytes[tables] = saved[:, HEADER_BYTES:]
        self._observe_tables(tables)  # hands over nothing: the saved rewards are put back below
        self._pending[tables] = saved[:, PENDING_BYTES].view(np.float32)
        self._games[tables] = saved[:, GAMES_BYTES].view(np.int64)[:, 0]
        self._pending_out[tables] = saved[:, PENDING_OUT_BYTES].view(np.float32)[:, 0]
        return self._ro_obs, self._ro_mask, self._ro_seat

    def _tables_in_range(self, tables, method: str) -> tuple[np.ndarray | slice, int]:
        """``(tables as an index, their count)``: one table given as an int is a slice (numpy
        indexes by a slice several times faster than by an array)."""
        if type(tables) is int and 0 <= tables < self.num_tables and self._ready:
            return slice(tables, tables + 1), 1
        tables = self._tables_arg(tables, method)
        if len(tables) and (tables.min() < 0 or tables.max() >= self.num_tables):
            raise StateError(f"{method}: tables must be in 0..{self.num_tables - 1}, got {tables.tolist()}")
        if len(tables) > 1 and len(np.unique(tables)) != len(tables):
            raise StateError(f"{method}: tables must be distinct, got {tables.tolist()}")
        return tables.astype(np.int64, copy=False), len(tables)

    def __getstate__(self) -> dict:
        d = {
            k: v
            for k, v in self.__dict__.items()
            if not k.startswith(("_ro_", "_io", "_wt", "_bytes", "_cfg", "_restore_"))
        }
        return tag_pickle(d)

    def __setstate__(self, d: dict) -> None:
        d = untag_pickle(d, "fzmj_env VectorEnv")
        self.__dict__.update(d)
        self._link()
        if self._ready:  # every table checked, as a restore would (the masks are the engine's again)
            check_restorable(self.buf, self.rules, self.hands_per_game, self._wt, "unpickled VectorEnv", self._mask,
                             np.empty(self.num_tables, dtype=np.int64))  # fmt: skip

    def __deepcopy__(self, memo: dict) -> VectorEnv:
        """An independent env that plays on exactly as this one would: its arrays copied, the rules shared."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        d = self.__getstate__()
        for k in self._OWNED:
            d[k] = d[k].copy()
        new.__setstate__(d)
        for k in ("_ro_obs", "_ro_mask", "_ro_seat", "_ro_rewards", "_ro_done"):  # what a driver holds
            memo[id(getattr(self, k))] = getattr(new, k)
        return new

    def step(self, actions: np.ndarray):
        """Apply one action per table. Returns ``(obs, mask, seat, rewards (B,4), done (B,), info)``.

        ``rewards[t, s]``: seat ``s``'s score change at this step (a hand ended), times
        ``reward_scale``. ``done[t]``: the game at table t ended at this step (its next game is
        already dealt in the returned obs; with ``auto_reset=False`` the table stays finished:
        seat -1, an all-zero mask and observation, and its later actions are ignored). ``info`` holds ``acted_seat``, ``pending_reward``,
        ``final_reward``, ``hand_over`` and ``results`` (see :func:`results_of`), plus
        ``oracle`` if enabled. Raises ``ValueError`` naming the first illegal (table, seat, action).
        """
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_tables,):
            raise ValueError(f"actions must have shape ({self.num_tables},), got {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
        actions = actions.astype(np.int64, copy=False)
        first, n_illegal = _find_illegal(actions, self._mask, self._seat)
        if n_illegal:
            raise self._illegal(int(first), int(actions[first]), n_illegal)
        acted = self._seat.copy()
        if self.num_threads > 1:
            numba.set_num_threads(self.num_threads)
            _step_parallel(self.buf, self._wt, actions, self._cfg, self._io, self.num_threads)
        else:
            _step_range(0, self.num_tables, self.buf, self._wt, actions, self._cfg, self._io)
        return self._outputs(acted)

    def step_tables(self, tables: np.ndarray, actions: np.ndarray):
        """Step only the listed tables; every other table keeps its state, observation and mask.

        ``tables``: distinct table indices (any integer array); ``actions[i]`` is the action at
        ``tables[i]``. Returns what :meth:`step` returns, for all B tables; ``rewards``, ``done``,
        ``final_reward``, ``hand_over`` and ``pending_reward`` are zero at the tables not stepped.
        For drivers in which some tables wait (e.g. one learning seat whose turn it is) while the
        others play on (``fzmj.integrations.gymnasium``).
        """
        tables = self._tables_arg(tables, "step_tables")
        actions = np.asarray(actions)
        if actions.shape != tables.shape or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers of shape {tables.shape}, got {actions.shape} {actions.dtype}")
        return self._step_tables(tables.astype(np.int64, copy=False), actions.astype(np.int64, copy=False))

    def _step_tables(self, tables: np.ndarray, actions: np.ndarray):
        """:meth:`step_tables` for callers whose ``tables`` and ``actions`` already are 1-D int64
        arrays of one shape, after ``reset`` (the single-seat driver, once per opponent decision);
        tables and actions are still checked by the kernel."""
        first, n_illegal = _find_illegal_at(tables, actions, self._mask, self._seat)
        if n_illegal == -1:
            raise ValueError(f"tables must be in 0..{self.num_tables - 1}, got {int(tables[first])}")
        if n_illegal == -2:
            raise ValueError(f"tables must be distinct, table {int(tables[first])} appears twice")
        if n_illegal:
            raise self._illegal(int(tables[first]), int(actions[first]), n_illegal)
        acted = self._seat.copy()
        _step_list(tables, self.buf, self._wt, actions, self._cfg, self._io)
        return self._outputs(acted)

    def _outputs(self, acted: np.ndarray):
        """What :meth:`step` and :meth:`step_tables` return, from the buffers the kernels wrote."""
        info = {"acted_seat": acted, **self._ro_info}
        return self._ro_obs, self._ro_mask, self._ro_seat, self._ro_rewards, self._ro_done, info

    @property
    def oracle_planes(self) -> np.ndarray:
        """Oracle planes of each table's acting seat, as of the last reset/step (``oracle=True`` only)."""
        if not self.oracle:
            raise RuntimeError("this VectorEnv was made with oracle=False")
        return self._ro_info["oracle"]

    @property
    def games_started(self) -> np.ndarray:
        """Games started so far per table (the next game of table t uses seed index games_started[t])."""
        return self._games.copy()


def results_of(info: dict) -> list[dict]:
    """The hands that ended at a step, as dicts like ``Game.result`` (plus ``table``)."""
    from .core.state import SPECIAL_NAMES, WIN_TYPE_NAMES

    out = []
    res = info["results"]
    for t in np.flatnonzero(info["hand_over"]):
        r = res[t]
        winner = int(r[0])
        out.append(
            {
                "table": int(t),
                "winner": None if winner < 0 else winner,
                "win_type": None if winner < 0 else WIN_TYPE_NAMES[int(r[1])],
                "discarder": None if r[2] < 0 else int(r[2]),
                "flower_points": int(r[3]),
                "gold_points": int(r[4]),
                "specials": [name for i, name in enumerate(SPECIAL_NAMES) if int(r[5]) >> i & 1],
                "value": int(r[6]),
                "hand_no": int(r[7]),
                "dealer": int(r[8]),
                "streak": int(r[9]),
                "points": [int(x) for x in r[RESULT_POINTS:RESULT_WIDTH]],
                "specials_counted": [name for i, name in enumerate(SPECIAL_NAMES) if int(r[10]) >> i & 1],
            }
        )
    return out
