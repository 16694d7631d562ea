"""Tile kinds, text notation and glyphs (docs/rules.md R1).

Kind index, used everywhere (arrays included):
  0–8 = 1m–9m, 9–17 = 1p–9p, 18–26 = 1s–9s, 27–33 = 1z–7z (honors, all flowers in Fuzhou),
  34–41 = 1f–8f (春夏秋冬梅兰竹菊). Hands only ever hold kinds 0–26.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

NUM_KINDS = 42
NUM_SUIT_KINDS = 27
NUM_TILES = 144
FIRST_FLOWER = 27  # every kind >= 27 is a flower (R1)

# Letter -> (first kind, number of ranks, copies of each kind)
SUITS = {"m": (0, 9, 4), "p": (9, 9, 4), "s": (18, 9, 4), "z": (27, 7, 4), "f": (34, 8, 1)}
_LETTER_OF_KIND = ["m"] * 9 + ["p"] * 9 + ["s"] * 9 + ["z"] * 7 + ["f"] * 8
_RANK_OF_KIND = list(range(1, 10)) * 3 + list(range(1, 8)) + list(range(1, 9))

COPIES = np.array([4] * 34 + [1] * 8, dtype=np.int64)
"""How many copies of each kind the 144-tile set holds."""

_NUMERALS = "一二三四五六七八九"
GLYPHS = (
    [f"{_NUMERALS[i]}万" for i in range(9)]
    + [f"{_NUMERALS[i]}饼" for i in range(9)]
    + [f"{_NUMERALS[i]}条" for i in range(9)]
    + list("东南西北白发中")
    + list("春夏秋冬梅兰竹菊")
)
"""A two-character (or one-character) CJK label per kind, for rendering."""

# Unicode mahjong block: 1m..9m = U+1F007.., 1s..9s = U+1F010.., 1p..9p = U+1F019..
_UNICODE_BASE = {"m": 0x1F007, "s": 0x1F010, "p": 0x1F019}
_HONOR_UNICODE = [0x1F000, 0x1F001, 0x1F002, 0x1F003, 0x1F006, 0x1F005, 0x1F004]  # 东南西北白发中
_FLOWER_UNICODE = [0x1F026, 0x1F027, 0x1F028, 0x1F029, 0x1F022, 0x1F023, 0x1F025, 0x1F024]


def kind_name(kind: int) -> str:
    """Notation of one kind, e.g. ``kind_name(4) == "5m"``."""
    if not 0 <= int(kind) < NUM_KINDS:
        raise ValueError(f"tile kind {kind} is outside 0..{NUM_KINDS - 1}")
    return f"{_RANK_OF_KIND[kind]}{_LETTER_OF_KIND[kind]}"


def kind_glyph(kind: int) -> str:
    """The Unicode mahjong-tile character of a kind (e.g. 🀋 for 5m)."""
    name = kind_name(kind)
    rank, letter = int(name[0]), name[1]
    if letter in _UNICODE_BASE:
        return chr(_UNICODE_BASE[letter] + rank - 1)
    if letter == "z":
        return chr(_HONOR_UNICODE[rank - 1])
    return chr(_FLOWER_UNICODE[rank - 1])


def parse_tile_list(text: str) -> list[int]:
    """Parse notation into a list of kinds in the order written: ``"13m2p" -> [0, 2, 10]``.

    Digits are followed by their suit letter; spaces are ignored. Raises ``ValueError`` naming
    the bad character and its position (an unknown character, a ``0``, a rank the suit lacks,
    or digits with no suit letter after them). Copy limits are not checked here.
    """
    if not isinstance(text, str):
        raise TypeError(f"tile notation must be a str, got {type(text).__name__}")
    kinds: list[int] = []
    pending: list[tuple[int, int]] = []  # (rank, position) waiting for their suit letter
    for pos, ch in enumerate(text):
        if ch.isspace():
            continue
        if ch.isdigit() and ch.isascii():
            if ch == "0":
                raise ValueError(f"bad tile notation {text!r}: '0' at position {pos} (ranks are 1-9)")
            pending.append((int(ch), pos))
        elif ch in SUITS:
            if not pending:
                raise ValueError(
                    f"bad tile notation {text!r}: suit letter {ch!r} at position {pos} has no digits before it"
                )
            first, ranks, _ = SUITS[ch]
            for rank, rpos in pending:
                if rank > ranks:
                    raise ValueError(
                        f"bad tile notation {text!r}: rank {rank} at position {rpos} does not exist in suit {ch!r} (1-{ranks})"
                    )
                kinds.append(first + rank - 1)
            pending = []
        else:
            raise ValueError(f"bad tile notation {text!r}: unknown character {ch!r} at position {pos}")
    if pending:
        raise ValueError(
            f"bad tile notation {text!r}: digits at position {pending[0][1]} have no suit letter after them"
        )
    return kinds


def parse_tiles(text: str) -> np.ndarray:
    """Parse notation into counts over the 42 kinds (``int64``, shape ``(42,)``).

    ``parse_tiles("123m5z1f")`` has ones at kinds 0, 1, 2, 31 and 34. Raises ``ValueError``
    on bad text or on more copies of a kind than the set holds (R1).
    """
    counts = np.zeros(NUM_KINDS, dtype=np.int64)
    for k in parse_tile_list(text):
        counts[k] += 1
    check_copies(counts, what=repr(text))
    return counts


def check_copies(counts: np.ndarray, what: str = "tiles") -> None:
    """Raise ``ValueError`` if any count is negative or exceeds the copies of its kind."""
    counts = np.asarray(counts)
    n = len(counts)
    for k in range(n):
        if counts[k] < 0:
            raise ValueError(f"{what}: negative count {counts[k]} of {kind_name(k)}")
        if counts[k] > COPIES[k]:
            raise ValueError(f"{what}: {counts[k]} copies of {kind_name(k)}, but the set has only {COPIES[k]}")


def kind_index(tile: str | int) -> int:
    """One kind from notation (``"5m" -> 4``) or pass an int kind through, validated."""
    if isinstance(tile, (int, np.integer)):
        if not 0 <= int(tile) < NUM_KINDS:
            raise ValueError(f"tile kind {tile} is outside 0..{NUM_KINDS - 1}")
        return int(tile)
    kinds = parse_tile_list(tile)
    if len(kinds) != 1:
        raise ValueError(f"expected exactly one tile, got {len(kinds)} in {tile!r}")
    return kinds[0]


def format_tiles(counts: Iterable[int]) -> str:
    """Counts over kinds (length 27, 34 or 42) to compact notation, e.g. ``"123m5z"``."""
    counts = np.asarray(list(counts) if not isinstance(counts, np.ndarray) else counts)
    parts = []
    for letter, (first, ranks, _) in SUITS.items():
        digits = "".join(str(r + 1) * int(counts[first + r]) for r in range(ranks) if first + r < len(counts))
        if digits:
            parts.append(digits + letter)
    return "".join(parts)


def format_tile_list(kinds: Iterable[int]) -> str:
    """A sequence of kinds to notation in the given order, one tile per group: ``"1m 5z 2p"``."""
    return " ".join(kind_name(int(k)) for k in kinds)


def glyphs(counts: Iterable[int]) -> str:
    """Counts over kinds to a string of Unicode tile characters, in kind order."""
    counts = np.asarray(list(counts) if not isinstance(counts, np.ndarray) else counts)
    return "".join(kind_glyph(k) * int(counts[k]) for k in range(len(counts)))


def full_set() -> np.ndarray:
    """The 144 tiles as a sorted array of kinds (R1)."""
    return np.repeat(np.arange(NUM_KINDS), COPIES).astype(np.int8)
