"""A Python driver over one table of the Numba engine, for tests, tools and records.

Every rule is applied by the engine (``core/engine.py``); this class only moves data between
Python and the state buffer and names things.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from .actions import NUM_ACTIONS, action_name
from .checks import check_hands_per_game, check_streak
from .core import engine, state
from .core.hand import get_win_table
from .resample import belief_log_weights, check_belief_factors, check_seat_seed, resample_buffer, sir_pick
from .rules import DEFAULT_RULES, Rules, load_rules
from .seeding import split_seed
from .snapshot import (
    FORMAT,
    HEADER_BYTES,
    LOGS_BYTES,
    STALE_TAG,
    STATE_BYTES,
    check_restorable,
    checked_snapshots,
    new_snapshots,
    refusal,
    restore_one,
    restore_scratch,
    stale_state,
    table_bytes,
    tag_pickle,
    untag_pickle,
)
from .tiles import COPIES, NUM_TILES, format_tiles, kind_name, parse_tile_list

_KIND_NAMES = [kind_name(k) for k in range(42)]
_HEADER = new_snapshots(1)[0, :HEADER_BYTES]  # copied by save_state (a fresh array costs more than a copy)


class IllegalActionError(ValueError):
    """An action that is not legal for the acting seat (the message says which and why)."""


def parse_wall(wall: Sequence[int] | Sequence[str] | str | np.ndarray) -> np.ndarray:
    """A scripted wall (R3): 144 kind indices, kind names, or one notation string, in wall order.

    Raises ``ValueError`` unless it is exactly the 144-tile set (R1) in some order.
    """
    if isinstance(wall, str):
        kinds = parse_tile_list(wall)
    else:
        items = list(wall)
        kinds = []
        for i, x in enumerate(items):
            if isinstance(x, str):
                got = parse_tile_list(x)
                if len(got) != 1:
                    raise ValueError(f"wall position {i}: {x!r} is not exactly one tile")
                kinds.append(got[0])
            elif isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= int(x) < 42:
                kinds.append(int(x))
            else:
                raise ValueError(f"wall position {i}: {x!r} is not a tile kind (0..41 or notation)")
    if len(kinds) != NUM_TILES:
        raise ValueError(f"a wall holds exactly {NUM_TILES} tiles, got {len(kinds)}")
    counts = np.bincount(np.asarray(kinds, dtype=np.int64), minlength=42)
    bad = [f"{kind_name(k)}: {counts[k]} (need {COPIES[k]})" for k in range(42) if counts[k] != COPIES[k]]
    if bad:
        raise ValueError("a wall must hold every tile of the set exactly once; wrong counts: " + ", ".join(bad))
    return np.asarray(kinds, dtype=np.int32)


def hand_result(buf: np.ndarray, t: int = 0) -> dict:
    """The result of the last finished hand of table ``t``, as a plain dict."""
    view = state.numpy_view(buf, t)
    m = view.m
    winner = int(m[state.WINNER])
    bits = int(m[state.SPECIALS])
    counted = int(m[state.SPECIALS_COUNTED])
    listed = [i for i in range(state.N_SPECIALS) if bits >> i & 1]
    return {
        "hand_no": int(m[state.RES_HAND_NO]),
        "dealer": int(m[state.RES_DEALER]),
        "streak": int(m[state.RES_STREAK]),
        "winner": None if winner < 0 else winner,
        "win_type": None if winner < 0 else state.WIN_TYPE_NAMES[int(m[state.WIN_TYPE])],
        "discarder": None if m[state.DISCARDER] < 0 else int(m[state.DISCARDER]),
        "flower_points": int(m[state.FLOWER_PTS]),
        "gold_points": int(m[state.GOLD_PTS]),
        "specials": [state.SPECIAL_NAMES[i] for i in listed],
        "value": int(m[state.VALUE]),
        "points": [int(x) for x in view.points],
        # docs/presets.md P0: each listed special's value under the preset, and which were paid
        "special_values": {state.SPECIAL_NAMES[i]: int(m[state.RES_SPECIAL_VALUES + i]) for i in listed},
        "specials_counted": [state.SPECIAL_NAMES[i] for i in listed if counted >> i & 1],
    }


def _copy_dict(d: dict) -> dict:
    """A copy of a result or hand-start dict (numbers, strings, None, flat lists and dicts of those)."""
    return {k: v.copy() if isinstance(v, (list, dict)) else v for k, v in d.items()}


class Game:
    """One table: reset from a seed or a scripted wall, then ``step`` the acting seat's actions.

    Examples:
        >>> g = Game(); g.reset(seed=1)
        >>> while not g.done: g.step(int(np.flatnonzero(g.mask)[0]))
    """

    def __init__(self, rules: str | Rules = DEFAULT_RULES, hands_per_game: int = 1):
        hands_per_game = check_hands_per_game(hands_per_game)  # int32 in the state
        self.rules = load_rules(rules)
        self.hands_per_game = hands_per_game
        self.win_table = get_win_table()
        self.buf = state.new_state(1)
        self._bytes = table_bytes(self.buf)
        engine.set_rules(self.buf, 0, self.rules.params)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._seat = -1
        self.seed: int | None = None
        self.decisions: list[tuple[int, int]] = []
        self.results: list[dict] = []
        self.hand_starts: list[dict] = []

    @functools.cached_property
    def _restore_scratch(self) -> np.ndarray:
        """Where a restore keeps the table's own bytes and checks the mask (``snapshot.restore_one``)."""
        return restore_scratch()

    @functools.cached_property
    def view(self) -> state.Table:
        """Named views of the table's fields (``core.state.numpy_view``); built on first use."""
        return state.numpy_view(self.buf, 0)

    # ---- setup -------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, wall=None, dealer: int | None = None, streak: int = 0) -> None:
        """Start a game. ``wall`` scripts the first hand (R3); ``dealer`` None = seeded random (R2)."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(2, np.uint32).view(np.uint64)[0])
        lo, hi = split_seed(seed)
        if dealer is not None and (
            isinstance(dealer, (bool, np.bool_)) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer <= 3
        ):
            raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
        streak = check_streak(streak)  # int32 in the state; the hand value grows with it (R11.4)
        scripted = wall is not None
        if scripted:
            self.view.wall[:] = parse_wall(wall)
        self.seed = int(seed)
        engine.table_reset(
            self.buf,
            0,
            self.win_table,
            lo,
            hi,
            -1 if dealer is None else int(dealer),
            int(streak),
            self.hands_per_game,
            scripted,
        )
        self.decisions = []
        self.results = []
        self.hand_starts = [self._hand_start()]
        self._refresh()

    def _hand_start(self) -> dict:
        m = self.view.m
        return {
            "wall": [_KIND_NAMES[k] for k in self.view.wall.tolist()],
            "dealer": int(m[state.DEALER]),
            "streak": int(m[state.STREAK]),
        }

    def _refresh(self) -> None:
        self._seat = int(engine.table_mask(self.buf, 0, self.win_table, self._mask))

    # ---- for drivers that step the engine themselves (the AEC env) -------------------------
    def adopt_decision(self, seat: int, mask: np.ndarray) -> None:
        """Take ``seat`` (-1: the game is over) and its legal ``mask`` as the current decision.

        For a driver that stepped ``buf`` with its own kernel call (the AEC env's fused step and
        observation); ``mask`` is kept, not copied, and must be the engine's mask for ``seat``.
        """
        self._seat = seat
        self._mask = mask

    def record_hand_start(self) -> None:
        """Append the hand now starting (wall, dealer, streak) to ``hand_starts``."""
        self.hand_starts.append(self._hand_start())

    # ---- the current decision ---------------------------------------------------------------
    @property
    def seat(self) -> int:
        """The seat that must act now (-1 once the game is over)."""
        return self._seat

    @property
    def mask(self) -> np.ndarray:
        """Legal actions of the acting seat, ``int8[62]`` (a copy)."""
        return self._mask.copy()

    @property
    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(self._mask)]

    @property
    def phase(self) -> str:
        return state.PHASE_NAMES[int(self.view.m[state.PHASE])]

    @property
    def done(self) -> bool:
        return self._seat < 0

    def step(self, action: int) -> int:
        """Apply ``action`` for the acting seat; returns the engine's STEP_* code.

        Raises :class:`IllegalActionError` naming the seat, the action and the legal choices.
        """
        if self.done:
            raise IllegalActionError("the game is over; call reset()")
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            raise IllegalActionError(f"seat {self._seat}: action must be an integer, got {action!r}")
        a = int(action)
        if not (0 <= a < NUM_ACTIONS) or not self._mask[a]:
            what = f"action {a} ({action_name(a)})" if 0 <= a < NUM_ACTIONS else f"action {a} (outside 0..61)"
            legal = ", ".join(f"{x} ({action_name(x)})" for x in self.legal_actions)
            raise IllegalActionError(f"seat {self._seat} cannot take {what} in phase '{self.phase}'; legal: {legal}")
        seat = self._seat
        code = int(engine.table_step(self.buf, 0, self.win_table, a))
        if code == engine.STEP_ILLEGAL:  # the mask said legal: an engine bug, never a user error
            raise RuntimeError(f"engine refused action {a} that its mask allowed (seat {seat})")
        self.decisions.append((seat, a))
        if code in (engine.STEP_HAND_OVER, engine.STEP_GAME_OVER):
            self.results.append(self.last_result)
            if code == engine.STEP_HAND_OVER:
                self.record_hand_start()
        self._refresh()
        return code

    def resample(self, seat: int, seed: int, belief=None, candidates: int = 32) -> Game:
        """A new, independent game at this decision point, seen from ``seat`` (the seat to act):
        its public information and ``seat``'s private information are this game's, the hidden
        information (other hands, their concealed kong kinds, the order of the wall and the
        reserve) is drawn uniformly among what ``seat`` could not tell apart, from ``seed``
        and what ``seat`` sees only (``fzmj_env/resample.py``, docs/engine.md). The world's
        ``decisions`` and ``hand_starts`` start empty (they would tell hidden things).

        ``belief``: per relative seat, kind and count weights ``(3, 27, 5)`` (``fzmj_env/resample.py``,
        "worlds weighted by a belief"): ``candidates`` uniform worlds are drawn and one is picked
        with probability proportional to its importance weight (sampling-importance-resampling:
        approximate, exact as ``candidates`` grows). Deterministic for ``seed``."""
        seat, seed = check_seat_seed(seat, seed)
        if belief is not None:
            factors = check_belief_factors(belief)
            if (
                isinstance(candidates, bool)
                or not isinstance(candidates, (int, np.integer))
                or not 1 <= candidates <= 4096
            ):
                raise ValueError(f"candidates must be an integer in 1..4096, got {candidates!r}")
        if self.done:
            raise ValueError("the game is over: there is no decision point to resample")
        if seat != self._seat:
            raise ValueError(
                f"seat {seat} is not the seat to act (seat {self._seat} is): worlds are drawn at its own decisions"
            )
        world = Game(self.rules, self.hands_per_game)
        if belief is None:
            resample_buffer(self.buf, 0, seat, np.array([seed], np.uint64), world.buf, np.array([0]), self.win_table)
        else:
            seeds = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32]).generate_state(int(candidates), np.uint64)
            pool = state.new_state(int(candidates))
            tables = np.arange(int(candidates))
            resample_buffer(self.buf, 0, seat, seeds, pool, tables, self.win_table)
            world.buf[0] = pool[sir_pick(belief_log_weights(pool, tables, seat, factors), seed)]
        world.seed = None  # the world's later hands follow a seed derived from ``seed``
        world.results = list(self.results)
        world._refresh()
        return world

    # ---- copies, saved states, pickles (docs/search.md) ---------------------------------------
    def save_state(self) -> np.ndarray:
        """The table's whole state as one saved state (``uint8[STATE_BYTES]``, ``fzmj_env/snapshot.py``),
        a copy: ``restore_state`` brings the table back to it exactly (the walls of later hands too:
        they come from the seed in the record). A few µs (docs/search.md, "What it costs")."""
        out = np.empty(STATE_BYTES, dtype=np.uint8)
        out[:HEADER_BYTES] = _HEADER
        out[HEADER_BYTES:] = self._bytes[0]
        out[LOGS_BYTES] = np.array((len(self.decisions), len(self.results), len(self.hand_starts)), np.int32).view(
            np.uint8
        )
        return out

    def restore_state(self, saved: np.ndarray) -> None:
        """Put the table back to ``saved`` (from ``save_state`` of a game of the same preset and
        ``hands_per_game``); ``StateError`` (a ``ValueError``) for anything else, the table unchanged.

        ``decisions``, ``results`` and ``hand_starts`` are cut back to their lengths at the save
        (a state of this game's own past, as in a search); a state of a longer game leaves them
        empty (its logs are not in the state)."""
        saved = checked_snapshots(saved, 1, "Game.restore_state", tag=False)  # the kernel reads the tag
        # in place: a driver's mask buffer (the AEC env's) is this same self._mask array
        problem, seat, seed, *logs = restore_one(saved, FORMAT, self._restore_scratch, self.buf, self._bytes,
                                                 self._mask, self.rules.params, self.hands_per_game,
                                                 self.win_table)  # fmt: skip
        if problem == STALE_TAG:
            raise stale_state("Game.restore_state", 0)
        if problem:
            raise refusal(problem, 0, "Game", self.rules)
        self._seat = seat
        self.seed = seed
        for log, n in zip((self.decisions, self.results, self.hand_starts), logs, strict=True):
            del log[n if n <= len(log) else 0 :]

    def clone(self) -> Game:
        """An independent copy that plays on exactly as this game would (``copy.deepcopy`` does the same)."""
        return self.__deepcopy__({})

    def __deepcopy__(self, memo: dict) -> Game:
        new = object.__new__(Game)
        memo[id(self)] = new
        d = self.__dict__.copy()
        d["_bytes"] = self._bytes.copy()  # a copy by bytes: ~10x faster than numpy's copy of the record
        d["buf"] = d["_bytes"].view(state.STATE_DTYPE).reshape(1)
        d.pop("view", None)  # built again when first used
        d.pop("_restore_scratch", None)
        mask = memo.get(id(self._mask))  # a driver's own mask buffer (the AEC env's) stays shared with it
        d["_mask"] = self._mask.copy() if mask is None else mask
        d["decisions"] = list(self.decisions)
        d["results"] = [_copy_dict(r) for r in self.results]
        d["hand_starts"] = [_copy_dict(h) for h in self.hand_starts]
        new.__dict__.update(d)
        return new

    def __getstate__(self) -> dict:
        d = self.__dict__.copy()
        del d["_bytes"], d["win_table"]  # a view of buf, and the shared 4 MB table: rebuilt on load
        d.pop("view", None)
        d.pop("_restore_scratch", None)
        return tag_pickle(d)

    def __setstate__(self, d: dict) -> None:
        d = untag_pickle(d, "Game")
        d["win_table"] = get_win_table()
        fresh = Game(d["rules"], d["hands_per_game"]).buf
        if not np.array_equal(d["buf"].view(np.uint8), fresh.view(np.uint8)):  # a game was dealt: check it
            masks, seats = check_restorable(d["buf"], d["rules"], d["hands_per_game"], d["win_table"], "unpickled Game")
            d["_mask"][:] = masks[0]  # in place: a driver's mask buffer (the AEC env's) is this same array
            d["_seat"] = int(seats[0])
        d["_bytes"] = table_bytes(d["buf"])
        self.__dict__.update(d)

    # ---- results and public state -----------------------------------------------------------
    @property
    def last_result(self) -> dict:
        """Result of the last finished hand (winner, win_type, specials, value, points …)."""
        return hand_result(self.buf, 0)

    @property
    def result(self) -> dict | None:
        """Result of the last finished hand, or None before any hand has finished."""
        return self.results[-1] if self.results else None

    @property
    def scores(self) -> list[int]:
        return [int(x) for x in self.view.scores]

    def hand(self, seat: int) -> np.ndarray:
        """Concealed tile counts of ``seat`` (27 kinds, golds included)."""
        return self.view.hand[seat].copy()

    def hand_str(self, seat: int) -> str:
        return format_tiles(self.view.hand[seat])

    def flowers(self, seat: int) -> list[str]:
        return [kind_name(27 + i) for i in range(15) for _ in range(int(self.view.flowers[seat, i]))]

    def melds(self, seat: int) -> list[dict]:
        out = []
        for j in range(int(self.view.n_melds[seat])):
            t, k, taken, src = (int(x) for x in self.view.meld[seat, j])
            out.append(
                {
                    "type": state.MELD_NAMES[t],
                    "kind": kind_name(k),
                    "taken": None if taken < 0 else kind_name(taken),
                    "from": None if src < 0 else src,
                }
            )
        return out

    def discards(self, seat: int) -> list[str]:
        return [kind_name(int(k)) for k in self.view.disc[seat, : int(self.view.n_disc[seat])]]

    @property
    def gold(self) -> int:
        return int(self.view.m[state.GOLD])

    @property
    def dealer(self) -> int:
        return int(self.view.m[state.DEALER])

    @property
    def streak(self) -> int:
        """Dealer streak of the hand being played (R2)."""
        return int(self.view.m[state.STREAK])

    @property
    def tiles_left(self) -> int:
        return int(engine.table_wall_counts(self.buf, 0)[0])

    @property
    def reserve(self) -> int:
        """Reserve N (R6), as the engine counts it."""
        return int(engine.table_wall_counts(self.buf, 0)[1])

    @property
    def drawable(self) -> int:
        left, reserve = engine.table_wall_counts(self.buf, 0)
        return int(left - reserve)
