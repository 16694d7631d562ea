"""R1: tile kinds, notation parsing and printing, glyphs."""

import numpy as np
import pytest

from fzmj_env import format_tiles, kind_index, kind_name, parse_tiles
from fzmj_env.tiles import COPIES, NUM_TILES, full_set, glyphs, kind_glyph, parse_tile_list


def test_r1_kind_indices():
    assert [kind_index(x) for x in ("1m", "9m", "1p", "9p", "1s", "9s", "1z", "7z", "1f", "8f")] == [
        0,
        8,
        9,
        17,
        18,
        26,
        27,
        33,
        34,
        41,
    ]
    assert [kind_name(k) for k in (0, 13, 26, 31, 41)] == ["1m", "5p", "9s", "5z", "8f"]


def test_r1_parse_tiles_counts_over_42_kinds():
    c = parse_tiles("123m5z1f")
    assert c.shape == (42,)
    assert np.flatnonzero(c).tolist() == [0, 1, 2, 31, 34]
    assert parse_tiles("11 22m").tolist()[:2] == [2, 2]  # spaces are ignored
    assert parse_tiles("").sum() == 0


def test_r1_the_set_has_144_tiles():
    assert COPIES.sum() == NUM_TILES == 144
    assert len(full_set()) == 144
    assert (np.bincount(full_set(), minlength=42) == COPIES).all()


@pytest.mark.parametrize(
    "text, message",
    [
        ("12x", "unknown character 'x' at position 2"),
        ("10m", "'0' at position 1"),
        ("123", "no suit letter"),
        ("m", "has no digits before it"),
        ("8z", "rank 8 at position 0 does not exist in suit 'z'"),
        ("9f", "does not exist in suit 'f'"),
        ("11111m", "5 copies of 1m"),
        ("11f", "2 copies of 1f"),
    ],
)
def test_r1_bad_notation_raises_with_what_and_where(text, message):
    with pytest.raises(ValueError, match=message):
        parse_tiles(text)


def test_r1_format_round_trip():
    text = "123m456p789s11m5z1f"
    assert format_tiles(parse_tiles(text)) == "11123m456p789s5z1f"
    assert parse_tile_list("31m") == [2, 0]  # order kept
    assert format_tiles(parse_tiles("99s")[:27]) == "99s"


def test_r1_glyphs():
    assert kind_glyph(0) == "\U0001f007"  # 🀇 1m
    assert glyphs(parse_tiles("1z")) == "\U0001f000"  # 🀀 east
    with pytest.raises(ValueError):
        kind_name(42)
