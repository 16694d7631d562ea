"""Tests of fzmj_env.core.hand.win_split: one decomposition of a winning hand into its sets and
pair (R9.1), golds wild (R5), for the win screen. It must exist exactly when ``is_win`` says
the hand wins, and its sets must be valid and use exactly the hand's tiles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fzmj_env as F
from fzmj_env.core.hand import get_win_table, is_win, is_win_batch, special_shapes, win_split, win_split_counts
from fzmj_env.tiles import kind_index, kind_name

HSET = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_split(counts: np.ndarray, gold: int, split: dict) -> None:
    """The sets are valid runs / triplets / one pair and use exactly the hand's tiles."""
    physical = np.zeros(27, np.int64)
    melds = split["sets"]
    assert len(melds) * 3 + 2 == counts.sum()
    for x in [*melds, split["pair"]]:
        t = x["tiles"]
        assert all(0 <= k < 27 for k in t)
        if x["type"] == "run":
            assert len(t) == 3 and t[0] % 9 <= 6 and t[1] == t[0] + 1 and t[2] == t[0] + 2
        elif x["type"] == "triplet":
            assert len(t) == 3 and t[0] == t[1] == t[2]
        else:
            assert x["type"] == "pair" and x is split["pair"] and len(t) == 2 and t[0] == t[1]
        assert sorted(set(x["golds"])) == x["golds"] and all(0 <= p < len(t) for p in x["golds"])
        for p, k in enumerate(t):
            physical[gold if p in x["golds"] else k] += 1
    assert (physical == counts).all(), (physical, counts)
    # a tile of the gold kind is always a gold (R5): no position holds one as a plain tile
    assert sum(len(x["golds"]) for x in [*melds, split["pair"]]) == counts[gold]


def _random_winning(rng: np.random.Generator, n_melds: int) -> np.ndarray:
    """A winning shape built from random melds and a pair, with some tiles turned into golds."""
    c = np.zeros(27, np.int64)
    while True:
        c[:] = 0
        for _ in range(n_melds):
            k = int(rng.integers(27))
            if rng.random() < 0.5 and k % 9 <= 6:
                c[k : k + 3] += 1
            else:
                c[k] += 3
        c[int(rng.integers(27))] += 2
        if c.max() <= 4:
            return c


def _gold_swap(rng: np.random.Generator, c: np.ndarray, gold: int, n: int) -> np.ndarray:
    """Replace up to ``n`` random non-gold tiles by golds (the hand stays a win)."""
    c = c.copy()
    for _ in range(n):
        if c[gold] >= 4:
            break
        tiles = [k for k in range(27) if c[k] and k != gold]
        if not tiles:
            break
        k = tiles[int(rng.integers(len(tiles)))]
        c[k] -= 1
        c[gold] += 1
    return c


def _random_hand(rng: np.random.Generator, n: int) -> np.ndarray:
    while True:
        c = np.bincount(rng.integers(0, 27, n), minlength=27).astype(np.int64)
        if c.max() <= 4:
            return c


def test_split_exists_iff_is_win_seeded():
    """Many seeded hands of every size 2..17: winning shapes with golds swapped in, and random
    hands (mostly not wins); a split exists exactly when the engine's batch check says win."""
    rng = np.random.default_rng(2024)
    table = get_win_table()
    hands, golds = [], []
    for i in range(6000):
        n_melds = i % 6
        gold = int(rng.integers(27))
        if i % 3 == 2:
            c = _random_hand(rng, 3 * n_melds + 2)
        else:
            c = _gold_swap(rng, _random_winning(rng, n_melds), gold, int(rng.integers(0, 5)))
            if i % 3 == 1 and c.sum() > 2:  # near misses: move one tile
                src = [k for k in range(27) if c[k]]
                k = src[int(rng.integers(len(src)))]
                d = int(rng.integers(27))
                if c[d] < 4:
                    c[k] -= 1
                    c[d] += 1
        hands.append(c)
        golds.append(gold)
    wins = is_win_batch(np.array(hands, np.int8), np.array(golds))
    assert 0.2 < wins.mean() < 0.9  # both outcomes are well represented
    for c, gold, w in zip(hands, golds, wins, strict=True):
        split = win_split_counts(table, c, gold)
        assert (split is not None) == bool(w), (c, gold)
        if split is not None:
            _check_split(c, gold, split)
            shapes = special_shapes(_notation(c), kind_name(gold))
            if "golden_dragon" in shapes:
                assert split["shape"] == "golden_dragon"
                assert {"type": "triplet", "tiles": [gold] * 3, "golds": [0, 1, 2]} in split["sets"]
            elif "golden_pair" in shapes:
                assert split["shape"] == "golden_pair"
                assert split["pair"] == {"type": "pair", "tiles": [gold, gold], "golds": [0, 1]}
            else:
                assert split["shape"] == "standard"


def _notation(c) -> str:
    return "".join(kind_name(k) for k in range(27) for _ in range(int(c[k])))


@HSET
@given(
    st.lists(st.integers(0, 26), min_size=2, max_size=17).filter(lambda t: len(t) % 3 == 2),
    st.integers(0, 26),
)
def test_split_exists_iff_is_win_hypothesis(tiles, gold):
    c = np.bincount(np.array(tiles), minlength=27).astype(np.int64)
    if c.max() > 4:
        return
    split = win_split(_notation(c), gold)
    assert (split is not None) == is_win(_notation(c), gold)
    if split is not None:
        as_kinds = {
            "shape": split["shape"],
            "sets": [dict(x, tiles=[kind_index(t) for t in x["tiles"]]) for x in split["sets"]],
            "pair": dict(split["pair"], tiles=[kind_index(t) for t in split["pair"]["tiles"]]),
        }
        _check_split(c, gold, as_kinds)


def test_split_examples_and_the_choice_rule():
    # the docstring's example: the gold 1p is the second 2p of the pair
    s = F.win_split("123456789m12p", "1p")
    assert s["pair"] == {"type": "pair", "tiles": ["2p", "2p"], "golds": [1]}
    assert [x["tiles"] for x in s["sets"]] == [["1m", "2m", "3m"], ["4m", "5m", "6m"], ["7m", "8m", "9m"]]
    # a run whose gold would sit past 9 is read as 7 8 9
    s = F.win_split("89m55p1s", "1s")
    assert s["sets"] == [{"type": "run", "tiles": ["7m", "8m", "9m"], "golds": [0]}]
    assert s["pair"] == {"type": "pair", "tiles": ["5p", "5p"], "golds": []}
    # 金雀: two golds pair even when a real pair would do as well
    s = F.win_split("123m456m789m123p5s5s", "5s")
    assert s["shape"] == "golden_pair" and s["pair"]["golds"] == [0, 1]
    # 金龙: the three golds are their own triplet
    s = F.win_split("123m456m789m11p555s", "5s")
    assert s["shape"] == "golden_dragon"
    assert {"type": "triplet", "tiles": ["5s"] * 3, "golds": [0, 1, 2]} in s["sets"]
    # the pair goes to the lowest suit among the cheapest: 11m rather than 11p
    s = F.win_split("11m111p", "9s")
    assert s["pair"]["tiles"] == ["1m", "1m"]
    # the same input gives the same split (deterministic)
    assert F.win_split("1112345678999m1p", "1p") == F.win_split("1112345678999m1p", "1p")


def test_three_golds_without_the_shape_has_no_split():
    # 三金倒 (R11.3) wins on a self-draw whatever the shape; R9.1 has no split for this hand
    hand = "159m159p26s5s5s5s"
    assert not is_win(hand, "5s")
    assert win_split(hand, "5s") is None


@pytest.mark.parametrize(
    "hand, gold, msg",
    [
        ("123m4", "1m", "unknown|suit|notation|digit"),
        ("1234m", "1m", "3n\\+2"),
        ("11111m", "1p", "copies"),
        ("11m", "1z", "not a suit kind"),
        ("11m", 27, "not a suit kind"),
        ("11m", True, "gold must be"),
        (np.zeros(5), "1m", "length 27"),
    ],
)
def test_bad_input_is_one_clear_line(hand, gold, msg):
    with pytest.raises(ValueError, match=msg):
        win_split(hand, gold)
