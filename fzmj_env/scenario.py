"""Scripted walls for exact scenarios (docs/rules.md R3): tests, replays, tutorials.

:func:`make_wall` places the tiles you name where the deal (R3), the flower rounds (R4) and
the gold flip (R5) will take them, and fills every other position with the rest of the
144-tile set (R1)::

    wall = make_wall(
        dealer=0,
        hands={0: "123456789m12345678p", 1: "1122334455667788s"},  # dealer 17, others 16
        draws="9s 1s",  # head draws after the deal: wall[65], wall[66], ...
        tail="5m",      # tail draws: wall[143], wall[142], ...
    )
    game = Game(); game.reset(seed=0, wall=wall, dealer=0)

Where things go (R3):

* seat ``dealer`` gets wall[0:16] and wall[64] (17 tiles), ``dealer+1`` wall[16:32],
  ``dealer+2`` wall[32:48], ``dealer+3`` wall[48:64];
* ``draws`` are the normal draws from the head, from wall[65] on, in the order they are drawn
  (whoever draws them);
* ``tail`` is every tile taken from the tail, from wall[143] downward, in the order taken:
  first the flower replacements of the deal (R4: round 1 from the dealer in seat order,
  then the later rounds), then the gold flip (R5: flowers flipped go to the dealer; the first
  suit tile is the gold indicator), then in-play flower and kong replacements.

So with no flower in any hand, ``tail[0]`` is the gold indicator.

Flowers in the deal, the easy way. ``flowers={seat: "1z 2f"}`` deals those flowers to the
seat and takes ``hands[seat]`` (or the filler hand, if you leave it out) as the seat's suit
tiles AFTER the flower replacement: the last ``len(flowers)`` of them are put in the tail as
the round-1 replacements (R4 order: from the dealer in seat order), ahead of ``tail``, which
then starts with the gold flip. (Do not mix this with flowers written into ``hands``: then
script the tail yourself.)

Filler. Every position not named gets a tile of what is left of the set:

* the hands you leave out get suit tiles only (never a flower, so the deal's tail use is
  exactly what you scripted);
* the free stretch of the wall between the scripted draws and the scripted tail gets the
  remaining suit tiles at both ends and the remaining flowers in one block inside it. By
  default (``flower_pos=0.5``) the block sits in the middle of the stretch, so the first
  filler tiles drawn from the head and from the tail are suit tiles; ``flower_pos=0`` puts
  the flowers right after the scripted draws, ``flower_pos=1`` right before the scripted
  tail. If you need an exact wall further on, script the tiles (``draws``/``tail``) instead.
* Filler suit tiles are spread over the kinds (1m 4m 7m 1p 4p ... then 2m 5m ...; one copy
  of each kind before the second copy of any), so a filler hand or a run of filler draws is
  unlikely to form melds by accident. ``seed`` shuffles the suit filler and the flowers
  instead (still keeping flowers in their block).

Tiles are given as notation (``"123m 5z 1f"``, R1) or as a list of kind indices / names.
In a list for ``draws`` or ``tail``, ``None`` stands for "any filler suit tile", which lets
you script a tile far down the wall: ``draws=[None] * 20 + ["7p"]`` makes ``7p`` the 21st draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .tiles import COPIES, NUM_KINDS, NUM_SUIT_KINDS, NUM_TILES, kind_name, parse_tile_list

__all__ = ["make_wall", "DEAL_SIZE", "FIRST_DRAW"]

DEAL_SIZE = 65
"""Tiles dealt: 4 blocks of 16 and the dealer's 17th tile (wall[64])."""
FIRST_DRAW = 65
"""Head index of the first draw in play (R3)."""

# Spread order of the suit kinds for filler: 1m 4m 7m 1p 4p 7p 1s 4s 7s 2m 5m 8m ... 9s.
_SPREAD = [s * 9 + r for start in range(3) for s in range(3) for r in range(start, 9, 3)]
_FLOWER_ORDER = list(range(NUM_SUIT_KINDS, NUM_KINDS))  # 1z..7z, 1f..8f


def _tiles(spec, what: str, allow_filler: bool = False) -> list[int]:
    """Kinds of ``spec`` (notation string, or a sequence of kinds / one-tile names).

    With ``allow_filler``, a ``None`` item stands for a filler suit tile (returned as -1).
    """
    if spec is None:
        return []
    if isinstance(spec, str):
        try:
            return parse_tile_list(spec)
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
    out = []
    for i, x in enumerate(spec):
        if x is None and allow_filler:
            out.append(-1)
        elif isinstance(x, str):
            got = parse_tile_list(x)
            if len(got) != 1:
                raise ValueError(f"{what}: item {i} {x!r} is not exactly one tile")
            out.append(got[0])
        elif isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= int(x) < NUM_KINDS:
            out.append(int(x))
        else:
            raise ValueError(f"{what}: item {i} {x!r} is not a tile kind (0..41 or notation)")
    return out


def _by_copies(kinds_in_order: Sequence[int], pool: np.ndarray) -> list[int]:
    """Every tile of ``pool`` (counts), one copy of each kind in the given order per pass."""
    pool = pool.copy()
    out = []
    while pool[list(kinds_in_order)].sum() > 0:
        for k in kinds_in_order:
            if pool[k] > 0:
                out.append(k)
                pool[k] -= 1
    return out


def _seat_arg(seat, what: str) -> int:
    if not isinstance(seat, (int, np.integer)) or isinstance(seat, bool) or not 0 <= seat <= 3:
        raise ValueError(f"{what}: {seat!r} is not a seat 0..3")
    return int(seat)


def _parse_hands(dealer: int, hands: Mapping) -> dict[int, list[int]]:
    """Kinds of each scripted hand: 17 for the dealer, 16 for the others."""
    hand_kinds: dict[int, list[int]] = {}
    for seat, spec in hands.items():
        _seat_arg(seat, "hands")
        kinds = _tiles(spec, f"hand of seat {seat}")
        want = 17 if seat == dealer else 16
        if len(kinds) != want:
            role = "the dealer" if seat == dealer else "a non-dealer"
            raise ValueError(f"hand of seat {seat} ({role}) must hold {want} tiles, got {len(kinds)}")
        hand_kinds[int(seat)] = kinds
    return hand_kinds


def _parse_flowers(dealer: int, flowers: Mapping, hand_kinds: dict[int, list[int]]) -> dict[int, list[int]]:
    """Kinds of the ``flowers=`` of each seat (flowers only, never mixed with flowers in hands)."""
    fl_kinds: dict[int, list[int]] = {}
    for seat, spec in flowers.items():
        _seat_arg(seat, "flowers")
        kinds = _tiles(spec, f"flowers of seat {seat}")
        bad = [kind_name(k) for k in kinds if k < NUM_SUIT_KINDS]
        if bad:
            raise ValueError(f"flowers of seat {seat}: {', '.join(bad)} are not flowers (1z-7z, 1f-8f)")
        if len(kinds) > (17 if seat == dealer else 16):
            raise ValueError(f"flowers of seat {seat}: {len(kinds)} flowers, more than a hand holds")
        if any(k >= NUM_SUIT_KINDS for k in hand_kinds.get(int(seat), [])):
            raise ValueError(
                f"seat {seat}: give its flowers either in flowers= or in its hand (then script the tail), not both"
            )
        if kinds:
            fl_kinds[int(seat)] = kinds
    if fl_kinds and any(k >= NUM_SUIT_KINDS for kinds in hand_kinds.values() for k in kinds):
        raise ValueError(
            "flowers= cannot be mixed with flowers written into hands: the replacement order would be unknown"
        )
    return fl_kinds


def _check_fits(head: list[int], tl: list[int], fl_kinds: dict[int, list[int]]) -> None:
    n_repl = sum(len(k) for k in fl_kinds.values())
    if DEAL_SIZE + len(head) + len(tl) + n_repl > NUM_TILES:
        raise ValueError(
            f"draws ({len(head)}), tail ({len(tl)}) and flower replacements ({n_repl}) do not fit: "
            f"the wall has {NUM_TILES - DEAL_SIZE} tiles after the deal"
        )


def _left_over(hand_kinds, fl_kinds, head: list[int], tl: list[int]) -> np.ndarray:
    """Counts of the set left after everything requested; copy limits checked (R1), naming where
    each kind over its limit was asked for."""
    used = np.zeros(NUM_KINDS, dtype=np.int64)
    where: dict[int, list[str]] = {}
    parts = [(f"hand of seat {s}", k) for s, k in sorted(hand_kinds.items())]
    parts += [(f"flowers of seat {s}", k) for s, k in sorted(fl_kinds.items())]
    parts += [("draws", head), ("tail", tl)]
    for name, kinds in parts:
        kinds = [k for k in kinds if k >= 0]
        for k in kinds:
            used[k] += 1
        for k in sorted(set(kinds)):
            where.setdefault(k, []).append(f"{name}: {kinds.count(k)}")
    over = [k for k in range(NUM_KINDS) if used[k] > COPIES[k]]
    if over:
        msgs = [
            f"{kind_name(k)} requested {used[k]} times ({', '.join(where[k])}), the set has {COPIES[k]}" for k in over
        ]
        raise ValueError("too many copies: " + "; ".join(msgs))
    return COPIES.astype(np.int64) - used


def _filler(pool: np.ndarray, seed: int | None) -> tuple[list[int], list[int]]:
    """(suit filler, flower filler) from the tiles left: spread over the kinds, or shuffled by ``seed``."""
    if seed is None:
        return _by_copies(_SPREAD, pool), _by_copies(_FLOWER_ORDER, pool)
    rng = np.random.default_rng(seed)
    suit_fill = [int(x) for x in rng.permutation(np.repeat(np.arange(NUM_SUIT_KINDS), pool[:NUM_SUIT_KINDS]))]
    flower_fill = [
        int(x) for x in rng.permutation(np.repeat(np.arange(NUM_SUIT_KINDS, NUM_KINDS), pool[NUM_SUIT_KINDS:]))
    ]
    return suit_fill, flower_fill


def _fill_gaps(dealer: int, hand_kinds, head: list[int], tl: list[int], suit_fill: list[int]) -> list[int]:
    """Give the hands left out and the ``None`` draws/tail filler suit tiles (in place); returns the
    suit filler still unused."""
    missing = [s for s in range(4) if s not in hand_kinds]
    need = sum(17 if s == dealer else 16 for s in missing)
    holes = head.count(-1) + tl.count(-1)
    if need + holes > len(suit_fill):
        raise ValueError(
            f"the hands left out (seats {missing}) and the None draws/tail need {need + holes} suit tiles, "
            f"only {len(suit_fill)} are left"
        )
    pos = 0
    for s in missing:
        n = 17 if s == dealer else 16
        hand_kinds[s] = suit_fill[pos : pos + n]
        pos += n
    for seq in (head, tl):  # None in draws / tail: the next filler suit tiles
        for i, k in enumerate(seq):
            if k < 0:
                seq[i] = suit_fill[pos]
                pos += 1
    return suit_fill[pos:]


def _deal_flowers(dealer: int, hand_kinds, fl_kinds) -> list[int]:
    """``flowers=``: deal each seat its flowers (in place); the last suit tiles of its hand become
    its round-1 replacements (R4: from the dealer in seat order), returned in tail order."""
    replacements: list[int] = []
    for i in range(4):
        seat = (dealer + i) % 4
        kinds = fl_kinds.get(seat)
        if kinds:
            suits = hand_kinds[seat]
            n = len(suits) - len(kinds)
            replacements += suits[n:]
            hand_kinds[seat] = kinds + suits[:n]
    return replacements


def _lay_out(dealer, hand_kinds, head, tl, suit_fill, flower_fill, flower_pos: float) -> list[int]:
    """The wall: the deal blocks (R3), the head draws, the tail, and the filler in the free stretch
    between them (suit tiles at both ends, the flowers in one block at ``flower_pos``)."""
    wall = [-1] * NUM_TILES
    for i in range(4):
        seat = (dealer + i) % 4
        wall[16 * i : 16 * i + 16] = hand_kinds[seat][:16]
    wall[64] = hand_kinds[dealer][16]
    for i, k in enumerate(head):
        wall[FIRST_DRAW + i] = k
    for i, k in enumerate(tl):
        wall[NUM_TILES - 1 - i] = k
    lo, hi = FIRST_DRAW + len(head), NUM_TILES - len(tl)  # the free stretch wall[lo:hi]
    assert hi - lo == len(suit_fill) + len(flower_fill)
    n_before = int(round(float(flower_pos) * len(suit_fill)))
    # The tail-side suit filler is listed in tail order (the first one is taken first).
    tail_side = suit_fill[n_before:]
    wall[lo:hi] = suit_fill[:n_before] + flower_fill + tail_side[::-1]
    assert sorted(wall) == sorted(np.repeat(np.arange(NUM_KINDS), COPIES).tolist())
    return wall


def make_wall(
    dealer: int = 0,
    hands: Mapping[int, str | Sequence] | None = None,
    draws: str | Sequence = "",
    tail: str | Sequence = "",
    *,
    flowers: Mapping[int, str | Sequence] | None = None,
    flower_pos: float = 0.5,
    seed: int | None = None,
) -> list[int]:
    """A 144-tile wall (kind indices, wall order) that deals the given scenario (R3).

    ``hands`` maps a seat to its tiles: 17 for the dealer, 16 for the others (flowers
    allowed: they are laid out in the deal, R4). ``draws`` are the head draws after the deal
    in order; ``tail`` the tail draws in order (deal flower replacements, then the gold flip,
    then in-play replacements); a ``None`` item in either list is a filler suit tile.
    ``flowers`` (optional) deals flowers to seats whose ``hands`` entry (or filler hand) is
    then their suit hand after replacement, so ``tail`` starts at the gold flip. Leave
    ``tail`` empty and the gold is a filler tile. See the module docstring for the filler,
    ``flower_pos`` and ``seed``.

    Raises ``ValueError`` naming the problem: a bad seat or hand size, a kind requested more
    times than the set holds (R1), more tiles than the wall has, or too few suit tiles left
    for the hands left out.
    """
    if not isinstance(dealer, (int, np.integer)) or isinstance(dealer, bool) or not 0 <= dealer <= 3:
        raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
    if not 0.0 <= float(flower_pos) <= 1.0:
        raise ValueError(f"flower_pos must be in [0, 1], got {flower_pos!r}")
    hand_kinds = _parse_hands(dealer, dict(hands or {}))
    head = _tiles(draws, "draws", allow_filler=True)
    tl = _tiles(tail, "tail", allow_filler=True)
    fl_kinds = _parse_flowers(dealer, flowers or {}, hand_kinds)
    _check_fits(head, tl, fl_kinds)
    suit_fill, flower_fill = _filler(_left_over(hand_kinds, fl_kinds, head, tl), seed)
    suit_fill = _fill_gaps(dealer, hand_kinds, head, tl, suit_fill)
    tl = _deal_flowers(dealer, hand_kinds, fl_kinds) + tl
    return _lay_out(dealer, hand_kinds, head, tl, suit_fill, flower_fill, flower_pos)
