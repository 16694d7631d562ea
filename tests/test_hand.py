"""Tests of fzmj_env.core.hand: win shape (R9.1), golds (R5), 金雀 / 金龙 (R11.3), 闲金 (R9.5),
waits and shanten, against a brute-force checker written here independently of the tables."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fzmj_env.core import hand
from fzmj_env.core.hand import (
    get_shanten_table,
    get_win_table,
    is_win,
    is_win_batch,
    shanten,
    special_shapes,
    waits,
)
from fzmj_env.tiles import kind_name, parse_tiles

HSET = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# =====================================================================================
# Brute force, independent of the tables: try every meld / pair decomposition, golds wild
# =====================================================================================


def _lowest(c):
    for i, x in enumerate(c):
        if x:
            return i
    return -1


@cache
def bf_complete(c: tuple, g: int, pair: bool) -> bool:
    """Can the real tiles ``c`` (27 counts, any size) plus exactly ``g`` golds be split into
    melds (+ one pair if ``pair``)? Golds stand for any suit tile."""
    if g < 0:
        return False
    i = _lowest(c)
    if i < 0:  # only golds left: gold triplets (+ a gold pair)
        return (g >= 2 and (g - 2) % 3 == 0) if pair else g % 3 == 0
    lst = list(c)
    # a triplet of kind i with r real copies
    for r in range(1, min(3, c[i]) + 1):
        lst[i] -= r
        if bf_complete(tuple(lst), g - (3 - r), pair):
            return True
        lst[i] += r
    # the pair holds kind i
    if pair:
        for r in range(1, min(2, c[i]) + 1):
            lst[i] -= r
            if bf_complete(tuple(lst), g - (2 - r), False):
                return True
            lst[i] += r
    # a run of the suit through i: slots below i are golds (i is the lowest real tile),
    # slots above i are a real tile or a gold
    base = 9 * (i // 9)
    for start in (i - 2, i - 1, i):
        if start < base or start + 2 > base + 8:
            continue
        above = [x for x in range(start, start + 3) if x > i]
        below = i - start
        for mask in range(1 << len(above)):
            use = [above[j] for j in range(len(above)) if mask >> j & 1]
            if any(lst[x] == 0 for x in use):
                continue
            golds = below + len(above) - len(use)
            lst[i] -= 1
            for x in use:
                lst[x] -= 1
            ok = bf_complete(tuple(lst), g - golds, pair)
            lst[i] += 1
            for x in use:
                lst[x] += 1
            if ok:
                return True
    return False


def split(counts, gold):
    c = [int(x) for x in counts[:27]]
    g = c[gold]
    c[gold] = 0
    return tuple(c), g


def bf_win(counts, gold) -> bool:
    c, g = split(counts, gold)
    return bf_complete(c, g, True)


def bf_golden_pair(counts, gold) -> bool:
    c, g = split(counts, gold)
    return g >= 2 and bf_complete(c, g - 2, False)


def bf_golden_dragon(counts, gold) -> bool:
    """3 golds form their own triplet; any 4th gold (only after 抢金) fills the rest."""
    c, g = split(counts, gold)
    return g >= 3 and bf_complete(c, g - 3, True)


def bf_waits(counts, gold) -> list[str]:
    """Kinds whose addition wins; a 5th copy of a kind is allowed (no cap)."""
    out = []
    for k in range(27):
        c = [int(x) for x in counts[:27]]
        c[k] += 1
        if bf_win(c, gold):
            out.append(kind_name(k))
    return out


@cache
def bf_missing(c: tuple, m: int, p: int) -> int:
    """Fewest missing tiles to make m melds + p pairs from a subset of the real tiles c."""
    i = _lowest(c)
    if i < 0:
        return 3 * m + 2 * p
    lst = list(c)
    lst[i] -= 1
    best = bf_missing(tuple(lst), m, p)  # one copy of i unused
    lst[i] += 1
    if m:
        for r in range(1, min(3, c[i]) + 1):
            lst[i] -= r
            best = min(best, 3 - r + bf_missing(tuple(lst), m - 1, p))
            lst[i] += r
        base = 9 * (i // 9)
        for start in (i - 2, i - 1, i):
            if start < base or start + 2 > base + 8:
                continue
            above = [x for x in range(start, start + 3) if x > i]
            for mask in range(1 << len(above)):
                use = [above[j] for j in range(len(above)) if mask >> j & 1]
                if any(lst[x] == 0 for x in use):
                    continue
                lst[i] -= 1
                for x in use:
                    lst[x] -= 1
                best = min(best, 2 - len(use) + bf_missing(tuple(lst), m - 1, p))
                lst[i] += 1
                for x in use:
                    lst[x] += 1
    if p:
        for r in range(1, min(2, c[i]) + 1):
            lst[i] -= r
            best = min(best, 2 - r + bf_missing(tuple(lst), m, 0))
            lst[i] += r
    return best


def bf_shanten(counts, gold) -> int:
    c, g = split(counts, gold)
    n = int(sum(counts[:27]))
    return max(bf_missing(c, n // 3, 1) - g, 0) - 1


# =====================================================================================
# Random hands
# =====================================================================================

SIZES = (2, 5, 8, 11, 14, 17)


def random_winning(rng, n_melds, gold, n_golds):
    """n_melds melds + a pair (every kind <= 4), then up to n_golds tiles turned into golds
    (at most 4 of the gold kind); returns 3n+2 counts."""
    while True:
        c = np.zeros(27, np.int64)
        for _ in range(n_melds):
            s = rng.integers(3)
            if rng.random() < 0.55:
                i = rng.integers(7)
                c[9 * s + i : 9 * s + i + 3] += 1
            else:
                c[9 * s + rng.integers(9)] += 3
        c[rng.integers(27)] += 2
        if c.max() <= 4:
            break
    for _ in range(n_golds):
        if c[gold] >= 4:
            break
        nz = [k for k in range(27) if c[k] and k != gold]
        if not nz:
            break
        c[rng.choice(nz)] -= 1
        c[gold] += 1
    return c


def random_hand(rng, n_tiles, concentrated):
    """n_tiles random suit tiles, <= 4 a kind; ``concentrated`` draws from few kinds so that
    melds, 4-copy kinds and wins are common."""
    if concentrated:
        s = rng.integers(3)
        lo = 9 * s + rng.integers(0, 5)
        kinds = list(range(lo, lo + 5)) + list(rng.integers(0, 27, size=3))
    else:
        kinds = list(range(27))
    pool = np.repeat(np.array(kinds), 4)
    c = np.zeros(27, np.int64)
    for k in rng.permutation(pool):
        if c.sum() == n_tiles:
            break
        if c[k] < 4:
            c[k] += 1
    return c


def hand_mix(rng, n_hands, sizes=SIZES, remainder=2):
    """(counts, gold) pairs: winning hands with 0-4 golds, the same with a tile swapped or
    removed, and random hands; tile counts 3n+remainder for n in sizes."""
    out = []
    for j in range(n_hands):
        size = sizes[j % len(sizes)]
        n_melds = (size - 2) // 3
        gold = int(rng.integers(27))
        kind = j % 4
        if kind == 0:
            c = random_winning(rng, n_melds, gold, int(rng.integers(0, 5)))
        elif kind == 1:  # winning, then one tile changed
            c = random_winning(rng, n_melds, gold, int(rng.integers(0, 4)))
            nz = np.flatnonzero(c)
            c[rng.choice(nz)] -= 1
            k = int(rng.integers(27))
            if c[k] < 4:
                c[k] += 1
            else:
                c[rng.choice(np.flatnonzero(c < 4))] += 1
        else:
            c = random_hand(rng, size, concentrated=kind == 2)
            if rng.random() < 0.5:  # sprinkle golds
                for _ in range(int(rng.integers(1, 4))):
                    nz = [k for k in range(27) if c[k] and k != gold]
                    if c[gold] < 4 and nz:
                        c[rng.choice(nz)] -= 1
                        c[gold] += 1
        if remainder == 1:
            c[rng.choice(np.flatnonzero(c))] -= 1
        assert c.sum() % 3 == remainder and c.min() >= 0 and c.max() <= 4
        out.append((c, gold))
    return out


@st.composite
def st_hand(draw, remainder):
    """Hypothesis: a 3n+remainder hand (n = 0..5) built as melds + pair (maybe with a tile
    changed or dropped) or drawn from a small window of kinds, with 0-4 golds."""
    n = draw(st.integers(0, 5))
    gold = draw(st.integers(0, 26))
    c = np.zeros(27, np.int64)
    groups = draw(
        st.lists(
            st.tuples(st.sampled_from(("run", "trip")), st.integers(0, 2), st.integers(0, 8)),
            min_size=n,
            max_size=n,
        )
    )
    for kind, s, i in groups:
        if kind == "run":
            i = min(i, 6)
            c[9 * s + i : 9 * s + i + 3] += 1
        else:
            c[9 * s + i] += 3
    c[draw(st.integers(0, 26))] += 2
    # keep copies <= 4 by moving extras to free kinds
    for k in range(27):
        while c[k] > 4:
            c[k] -= 1
            c[int(np.flatnonzero(c < 4)[0])] += 1
    n_change = draw(st.integers(0, 2))
    for _ in range(n_change):
        src = draw(st.sampled_from(sorted(np.flatnonzero(c).tolist())))
        dst = draw(st.sampled_from(sorted(np.flatnonzero(c < 4).tolist())))
        c[src] -= 1
        c[dst] += 1
    for _ in range(draw(st.integers(0, 4))):
        nz = [k for k in range(27) if c[k] and k != gold]
        if c[gold] < 4 and nz:
            c[draw(st.sampled_from(nz))] -= 1
            c[gold] += 1
    if remainder == 1:
        c[draw(st.sampled_from(sorted(np.flatnonzero(c).tolist())))] -= 1
    return c, gold


# =====================================================================================
# Tables
# =====================================================================================


def test_tables_shapes_and_dtypes():
    wt, stb = get_win_table(), get_shanten_table()
    assert wt.shape == (5**9, 2) and wt.dtype == np.int8
    assert stb.shape == (5**9, 6, 2) and stb.dtype == np.int8
    assert get_win_table() is wt  # cached accessor
    assert not wt.flags.writeable


def test_r9_1_win_table_invariants():
    wt = get_win_table().astype(np.int64)
    a, b = wt[:, 0], wt[:, 1]
    assert a.min() >= 0 and b.min() >= 0
    assert np.all(b <= a + 2)  # the pair can always be two golds
    assert np.all(a <= b + 1)  # a pair plus one gold is a triplet
    assert wt[0, 0] == 0 and wt[0, 1] == 2


def _key_counts(key):
    return [key // 5**i % 5 for i in range(9)]


def test_r9_1_win_table_matches_brute_force_on_random_keys():
    rng = np.random.default_rng(1)
    wt = get_win_table()
    keys = list(rng.integers(0, 5**9, size=150)) + [1, 2, 4, 5**8, 3 * 5**8, 5**9 - 1]
    for key in keys:
        c9 = _key_counts(int(key))
        c = tuple(c9 + [0] * 18)
        n = sum(c9)
        for col, pair in ((0, False), (1, True)):
            # smallest gold count that completes the suit
            g = next(g for g in range(0, 40) if bf_complete(c, g, pair))
            assert wt[key, col] == g, (c9, col)
            assert (n + g) % 3 == (2 if pair else 0)


def test_shanten_table_matches_brute_force_on_random_keys():
    rng = np.random.default_rng(2)
    stb = get_shanten_table()
    for key in list(rng.integers(0, 5**9, size=60)) + [0, 1, 5**9 - 1]:
        c = tuple(_key_counts(int(key)) + [0] * 18)
        for m in range(6):
            for p in range(2):
                assert stb[key, m, p] == bf_missing(c, m, p), (c[:9], m, p)


# =====================================================================================
# R9.1 win shape, against the brute force
# =====================================================================================


def test_r9_1_is_win_matches_brute_force_random_mix():
    rng = np.random.default_rng(12345)
    hands = hand_mix(rng, 3000)
    n_win = 0
    for c, gold in hands:
        expect = bf_win(c, gold)
        n_win += expect
        assert is_win(c, gold) == expect, (c.tolist(), gold)
    assert 600 < n_win < 2400  # the mix really mixes


@HSET
@given(st_hand(remainder=2))
def test_r9_1_is_win_matches_brute_force_hypothesis(hg):
    c, gold = hg
    assert is_win(c, gold) == bf_win(c, gold)


def test_r9_1_is_win_batch_matches_scalar_and_brute_force():
    rng = np.random.default_rng(7)
    hands = hand_mix(rng, 2000)
    counts = np.array([c for c, _ in hands], dtype=np.int8)
    golds = np.array([g for _, g in hands], dtype=np.int64)
    got = is_win_batch(counts, golds)
    assert got.dtype == np.bool_ and got.shape == (len(hands),)
    expect = np.array([bf_win(c, g) for c, g in hands])
    assert np.array_equal(got, expect)
    # other integer dtypes are converted
    assert np.array_equal(is_win_batch(counts.astype(np.int64), golds.astype(np.int32)), expect)
    # a non-contiguous view is copied, not misread
    big = np.zeros((len(hands), 30), np.int8)
    big[:, :27] = counts
    assert np.array_equal(is_win_batch(big[:, :27], golds), expect)
    assert is_win_batch(np.zeros((0, 27), np.int8), np.zeros(0, np.int64)).shape == (0,)


def test_r9_1_batch_kernel_direct_call():
    c = np.zeros((2, 27), np.int8)
    c[0] = parse_tiles("123456789m11p123s")[:27]
    c[1] = parse_tiles("123456789m12p123s")[:27]
    out = np.zeros(2, np.bool_)
    hand.is_win_batch_kernel(get_win_table(), c, np.array([26, 26]), out)
    assert out.tolist() == [True, False]
    hand.is_win_batch_kernel(get_win_table(), c, np.array([9, 9]), out)  # 1p gold
    assert out.tolist() == [True, True]


def test_batch_key_word_trick_matches_plain_loop():
    rng = np.random.default_rng(3)
    flat = rng.integers(0, 5, size=27 * 200).astype(np.int8)
    for b in range(0, 27 * 200 - 9, 9):
        assert hand._key9_word(flat, b) == hand._key9_loop(flat, b) == sum(int(flat[b + i]) * 5**i for i in range(9))


def test_r9_1_hand_picked_wins_without_golds():
    assert is_win("123456789m11p123s", "9s")  # 9s gold, none held
    assert is_win("11m", "3s")  # a lone pair
    assert not is_win("12m", "3s")
    assert is_win("111222333m44455p", "3s")  # triplets (or runs) + pair
    assert is_win("11122233344455m", "3s")
    assert not is_win("123m456p789s124m11p", "5s")
    assert is_win("123m456p789s123m11p", "5s")
    assert not is_win("891m456p11s", "5s")  # 891 does not wrap around
    assert not is_win("89m1p456p11s", "5s")  # nor across suits
    assert not is_win("135m246p11s", "5s")


def test_r9_1_hand_picked_wins_with_golds():
    assert is_win("12m", "1m")  # gold 1m pairs the 2m
    assert is_win("123m456p789s1m5s", "5s")  # 1m + gold pair
    assert is_win("123m456p789s1m7m555s", "5s")  # 11m pair, 23m+g, 7m+gg
    assert is_win("123m456p789s1m4m7m55s", "5s")  # 11m pair, 234m, 7m+gg
    assert not is_win("123m456p789s1m7m4p55s", "5s")
    assert is_win("13m11p5p", "5p")  # 1m gold 3m is a run (the gold is 2m)
    assert is_win("89m11p5p", "5p")  # gold 7m + 89m
    assert not is_win("19m11p5p", "5p")


def test_r5_gold_stands_for_any_tile_even_a_fifth_copy():
    # four 1m held and a gold: 111m + (1m, gold) as the pair, i.e. a fifth "1m"
    assert is_win("1111m5p", "5p")
    assert is_win("1111m2222m3333m4m5p", "5p")  # 123 123 123 234 + (1m, gold)
    assert waits("1111m", "5p") == ["1m", "5p"]  # 11111m = 111 + 11: a 5th copy is waited on
    assert waits("1111m", "1m") == [kind_name(k) for k in range(27)]  # four golds


def test_r5_pure_gold_hands():
    assert is_win("55m", "5m")
    assert special_shapes("55m", "5m") == {"golden_pair"}
    assert is_win("5555m1p", "5m")
    # 4 golds (only after 抢金): 555m is the dragon triplet, 5m + 1p the pair
    assert special_shapes("5555m1p", "5m") == {"golden_pair", "golden_dragon"}
    assert special_shapes("555m11p", "5m") == {"golden_pair", "golden_dragon"}
    assert special_shapes("5m", "5m") == {"idle_gold"}  # a lone gold waits on everything
    assert shanten("55m", "5m") == -1
    assert shanten("5m", "5m") == 0


def test_r11_3_golden_pair_hand_picked():
    assert special_shapes("123m456p789s111m55s", "5s") == {"golden_pair"}
    # 12m + gold = run, two golds the pair: 金雀 with 3 golds but not 金龙
    assert special_shapes("123m456p789s12m555s", "5s") == {"golden_pair"}
    # wins with 3 golds, but no decomposition frees two golds for the pair
    assert is_win("123m456p789s1m7m555s", "5s")
    assert special_shapes("123m456p789s1m7m555s", "5s") == set()
    # one gold cannot be a gold pair
    assert special_shapes("123m456p789s1m5s", "5s") == set()
    # a losing hand has no specials
    assert special_shapes("123m456p789s1m7m4p55s", "5s") == set()


def test_r11_3_golden_dragon_hand_picked():
    tiles = "123m456p789s11m555s"  # the other tiles win alone; the 3 golds are a triplet
    assert special_shapes(tiles, "5s") == {"golden_pair", "golden_dragon"}
    assert special_shapes("123m456p789s11m1p55s", "5s") == set()  # golds needed for 1p
    assert special_shapes("123m456p789s12m555s", "5s") == {"golden_pair"}  # golds needed


def test_r11_3_every_golden_dragon_is_a_golden_pair():
    rng = np.random.default_rng(99)
    wt = get_win_table()
    n_dragon = 0
    for _ in range(3000):
        gold = int(rng.integers(27))
        c = random_winning(rng, int(rng.integers(0, 5)), gold, 0)
        if c[gold]:
            continue
        c[gold] = 3  # add three golds: 3n+2 stays 3n+2
        if c.sum() > 17:
            continue
        dragon = hand.is_golden_dragon_counts(wt, c, gold)
        assert dragon  # the non-gold part is a win by construction
        n_dragon += 1
        assert hand.is_golden_pair_counts(wt, c, gold)
        assert bf_golden_pair(c, gold) and bf_golden_dragon(c, gold)
    assert n_dragon > 500


def test_r11_3_specials_match_brute_force():
    rng = np.random.default_rng(4242)
    seen = {"golden_pair": 0, "golden_dragon": 0}
    for c, gold in hand_mix(rng, 2000):
        got = special_shapes(c, gold)
        expect = set()
        if bf_golden_pair(c, gold):
            expect.add("golden_pair")
        if bf_golden_dragon(c, gold):
            expect.add("golden_dragon")
        assert got == expect, (c.tolist(), gold)
        if expect:
            assert bf_win(c, gold)
        for name in expect:
            seen[name] += 1
        if "golden_dragon" in got:
            assert "golden_pair" in got
    assert seen["golden_pair"] > 50 and seen["golden_dragon"] > 5


# =====================================================================================
# Waits and 闲金 (R9.5)
# =====================================================================================


def test_r9_1_waits_nine_gates_with_a_non_m_gold():
    assert waits("1112345678999m", "5p") == [f"{i}m" for i in range(1, 10)] + ["5p"]
    assert waits("1112345678999m", 13) == waits("1112345678999m", "5p")


def test_r9_1_waits_hand_picked():
    assert waits("123m456p789s12m11p", "5s") == ["3m", "5s"]
    assert waits("123m456p789s13m11p", "5s") == ["2m", "5s"]
    assert waits("789m456p789s1m", "5s") == ["1m", "5s"]  # single wait on the pair
    assert waits("123m456p789s1m", "5s") == ["1m", "4m", "5s"]  # 1m pair or 11m + 234m
    assert waits("123m456p1m4m7m9s", "5s") == []  # 10 tiles, not ready
    assert waits("1111222m", "5p") == ["1m", "3m", "5p"]


def test_r9_1_waits_match_brute_force():
    rng = np.random.default_rng(31337)
    hands = hand_mix(rng, 800, remainder=1)
    n_ready = 0
    n_four = 0
    for c, gold in hands:
        expect = bf_waits(c, gold)
        assert waits(c, gold) == expect, (c.tolist(), gold)
        n_ready += bool(expect)
        n_four += bool(expect) and any(c[k] == 4 and kind_name(k) in expect for k in range(27) if k != gold)
    assert n_ready > 150
    assert n_four > 3  # the uncapped 5th-copy path is exercised


@HSET
@given(st_hand(remainder=1))
def test_r9_1_waits_match_brute_force_hypothesis(hg):
    c, gold = hg
    assert waits(c, gold) == bf_waits(c, gold)


def test_r9_5_idle_gold_hand_picked():
    tiles = "123456789m123456p1s"  # 5 melds + 1 gold: wins on every kind
    assert waits(tiles, "1s") == [kind_name(k) for k in range(27)]
    assert special_shapes(tiles, "1s") == {"idle_gold"}
    assert special_shapes("123456789m123456p2s", "1s") == set()  # a plain single wait
    assert special_shapes("123456789m12345p55s", "5s") == {"idle_gold"}  # 123p 45p+g, X+g
    assert special_shapes("1111m", "1m") == {"idle_gold"}


def test_r9_5_idle_gold_matches_brute_force():
    rng = np.random.default_rng(5)
    wt = get_win_table()
    n_idle = 0
    for j in range(800):
        gold = int(rng.integers(27))
        if j % 2:  # melds + one gold (+ maybe more golds): the typical idle-gold hand
            c = random_winning(rng, int(rng.integers(0, 6)), gold, int(rng.integers(0, 3)))
            c[rng.choice(np.flatnonzero(c))] -= 1
        else:
            c, gold = hand_mix(rng, 1, remainder=1)[0]
        expect = len(bf_waits(c, gold)) == 27
        assert hand.is_idle_gold_counts(wt, c, gold) == expect, (c.tolist(), gold)
        assert ("idle_gold" in special_shapes(c, gold)) == expect
        n_idle += expect
    assert n_idle > 25


def test_wait_mask_kernel_returns_count_and_fills_mask():
    wt = get_win_table()
    c = parse_tiles("1112345678999m")[:27]
    out = np.full(27, 7, np.int8)
    n = hand.wait_mask_counts(wt, c, 13, out)
    assert n == 10 and out.sum() == 10 and set(np.unique(out)) <= {0, 1}


# =====================================================================================
# Shanten
# =====================================================================================


def test_shanten_hand_picked():
    assert shanten("123456789m11p123s", "9s") == -1
    assert shanten("123m456p789s12m11p", "5s") == 0
    assert shanten("1m", "9s") == 0
    assert shanten("1m4m7m1p4p7p1s4s7s2m5m8m2p5p", "9s") == 4
    assert shanten("123456789m123456p1s", "1s") == 0  # idle gold is ready
    assert shanten("123m456p789s1m7m555s", "5s") == -1
    assert shanten("123m456p789s1m7m4p55s", "5s") == 0


def test_shanten_matches_brute_force():
    rng = np.random.default_rng(77)
    for rem in (1, 2):
        for c, gold in hand_mix(rng, 250, remainder=rem):
            assert shanten(c, gold) == bf_shanten(c, gold), (c.tolist(), gold)


def test_shanten_minus_one_iff_win_and_zero_iff_ready():
    rng = np.random.default_rng(2024)
    st_tab = get_shanten_table()
    wt = get_win_table()
    for c, gold in hand_mix(rng, 2000, remainder=2):
        s = hand.shanten_counts(st_tab, c, gold)
        assert (s == -1) == hand.is_win_counts(wt, c, gold)
        assert s >= -1
    out = np.zeros(27, np.int8)
    for c, gold in hand_mix(rng, 2000, remainder=1):
        s = hand.shanten_counts(st_tab, c, gold)
        assert (s == 0) == (hand.wait_mask_counts(wt, c, gold, out) > 0)
        assert s >= 0


@HSET
@given(st_hand(remainder=2))
def test_shanten_property_3n2(hg):
    c, gold = hg
    s = shanten(c, gold)
    assert (s == -1) == is_win(c, gold)
    if s >= 0:  # a discard keeps the best partial hand: shanten(h) = min over discards
        best = min(shanten(c - np.eye(27, dtype=np.int64)[k], gold) for k in range(27) if c[k])
        assert best == s


@HSET
@given(st_hand(remainder=1))
def test_shanten_property_3n1(hg):
    c, gold = hg
    s = shanten(c, gold)
    assert (s == 0) == bool(waits(c, gold))
    adds = [shanten(c + np.eye(27, dtype=np.int64)[k], gold) for k in range(27) if c[k] < 4]
    assert min(adds) >= s - 1  # one draw improves by at most one
    if c.max() < 4:  # every kind can be added: the best draw improves by exactly one
        assert min(adds) == s - 1


# =====================================================================================
# Validation (ValueError with a clear message)
# =====================================================================================


def test_validation_tile_counts():
    with pytest.raises(ValueError, match="3n\\+2"):
        is_win("123m456p789s1m", "5s")  # 10 tiles
    with pytest.raises(ValueError, match="3n\\+1"):
        waits("123m456p789s11m", "5s")  # 11 tiles
    with pytest.raises(ValueError, match="3n\\+1 or 3n\\+2"):
        special_shapes("123m456p789s", "5s")  # 9 tiles: 3n
    with pytest.raises(ValueError, match="3n\\+1 or 3n\\+2"):
        shanten("123m", "5s")
    with pytest.raises(ValueError, match="3n\\+2"):
        is_win("", "5s")  # 0 tiles
    with pytest.raises(ValueError, match="at most 17"):
        shanten("111122223333m44445555p", "9s")  # 20 tiles


def test_validation_flowers_and_honors_in_a_hand():
    with pytest.raises(ValueError, match="flowers/honors.*1z"):
        is_win("123m456p789s11m11z", "5s")
    with pytest.raises(ValueError, match="flowers/honors.*1f"):
        waits("123m456p789s1m1f", "5s")
    full = parse_tiles("123m456p789s11m")
    assert is_win(full, "5s")  # the 42-kind counts of parse_tiles are accepted
    full[34] = 1
    with pytest.raises(ValueError, match="flowers/honors"):
        is_win(full, "5s")


def test_validation_copies_and_negative_counts():
    c = np.zeros(27, np.int64)
    c[0] = 5
    with pytest.raises(ValueError, match="5 copies of 1m"):
        is_win(c, "5s")
    with pytest.raises(ValueError):
        is_win("11111m", "5s")  # parse_tiles rejects it
    c = parse_tiles("123m456p789s11m")[:27].copy()
    c[5] = -1
    c[6] += 1
    with pytest.raises(ValueError, match="negative"):
        is_win(c, "5s")


def test_validation_gold():
    for bad in (27, -1, 41, "5z", "1f", True, 3.0, None):
        with pytest.raises(ValueError):
            is_win("11m", bad)
    with pytest.raises(ValueError, match="suit kind"):
        is_win("11m", 30)
    assert is_win("11m", np.int16(3))
    with pytest.raises(ValueError):
        is_win("11m", "5q")


def test_validation_array_shape_and_dtype():
    with pytest.raises(ValueError, match="length 27"):
        is_win(np.zeros(26, np.int64), 0)
    with pytest.raises(ValueError, match="length 27"):
        is_win(np.zeros((2, 27), np.int64), 0)
    with pytest.raises(ValueError, match="integers"):
        is_win(np.full(27, 0.5), 0)
    c = np.zeros(27, np.float64)
    c[0] = 2
    assert is_win(c, 5)  # integral floats are fine
    assert is_win([2] + [0] * 26, 5)  # a list works too


def test_validation_batch_shapes_and_rows():
    with pytest.raises(ValueError, match="\\(B, 27\\)"):
        is_win_batch(np.zeros((3, 26), np.int8), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="gold"):
        is_win_batch(np.zeros((3, 27), np.int8), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="integer"):
        is_win_batch(np.zeros((3, 27)), np.zeros(3, np.int64))
    # every row is checked: a 3n hand is refused, not answered
    with pytest.raises(ValueError, match="3n\\+2"):
        is_win_batch(np.zeros((1, 27), np.int8), np.zeros(1, np.int64))


def test_r11_3_golden_dragon_with_a_robbed_fourth_gold():
    """After 抢金 a hand can hold 4 golds (R10): 3 form the dragon triplet, the 4th fills a meld."""
    # golds 5s x4; other tiles 123m 456m 789p 11p + 99s: 99s + 1 gold = 999s, 3 golds triplet
    tiles = "123m456m789p11p99s5555s"
    assert special_shapes(tiles, "5s") >= {"golden_pair", "golden_dragon"}
