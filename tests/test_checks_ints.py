"""integers that wrap where Python meets the engine's int32/int16 state.

``hands_per_game`` is 1..10,000 and a scripted ``streak`` 0..10,000 everywhere (Game, env,
VectorEnv, fzmj-demo, records, the trainer's config): with these bounds a game's int32 scores
cannot wrap (see ``fzmj_env/checks.py``). The table count and seeds are bounded too.
"""

from __future__ import annotations

import numpy as np
import pytest

import fzmj_env as F
from fzmj.train.config import ConfigError, load_config
from fzmj.train.ppo_selfplay import Args
from fzmj_env.checks import MAX_HANDS_PER_GAME, MAX_STREAK, MAX_TABLES, check_int

WRAPPING_HANDS = [2**31, 2**31 - 1, 2**32 + 1, MAX_HANDS_PER_GAME + 1, 0, -1]


@pytest.mark.parametrize("hands", WRAPPING_HANDS)
def test_hands_per_game_is_bounded_everywhere(hands):
    """The issue's example: 2**31 wrapped in int32 and the game ended after one hand."""
    for make in (
        lambda: F.Game(hands_per_game=hands),
        lambda: F.env(hands_per_game=hands),
        lambda: F.VectorEnv(2, hands_per_game=hands),
    ):
        with pytest.raises(ValueError, match="hands_per_game must be an integer in 1..10000"):
            make()
    with pytest.raises(ConfigError, match="hands_per_game"):
        load_config(Args, None, [f"hands_per_game={hands}"])


@pytest.mark.parametrize("hands", [2.0, "3", True, None, np.float64(2)])
def test_hands_per_game_must_be_an_integer(hands):
    with pytest.raises(ValueError, match="hands_per_game must be an integer"):
        F.Game(hands_per_game=hands)


def test_the_largest_allowed_values_work():
    g = F.Game(hands_per_game=MAX_HANDS_PER_GAME)
    g.reset(seed=1, streak=MAX_STREAK)
    assert g.streak == MAX_STREAK
    F.VectorEnv(1, hands_per_game=np.int64(MAX_HANDS_PER_GAME)).reset()


@pytest.mark.parametrize("streak", [10**12, 2**31 - 1, 2**31, 2**15, MAX_STREAK + 1, -1])
def test_streak_is_bounded(streak):
    """The issue's examples: streak 10**12 gave a negative hand value, 2**31-1 gave 18."""
    g = F.Game()
    with pytest.raises(ValueError, match="streak must be an integer in 0..10000"):
        g.reset(seed=0, streak=streak)
    e = F.env()
    with pytest.raises(ValueError, match="streak"):
        e.reset(seed=0, options={"streak": streak})


@pytest.mark.parametrize("streak", [True, 1.5, "2"])
def test_streak_must_be_an_integer(streak):
    with pytest.raises(ValueError, match="streak must be an integer"):
        F.Game().reset(seed=0, streak=streak)


def test_a_large_streak_gives_the_rule_value():
    """R11.4: V = (flower + gold + streak + 5) x 2 + special: at the largest streak a won hand is worth at least 2 x (streak + 5)."""
    rng = np.random.default_rng(5)
    for seed in range(40):
        g = F.Game()
        g.reset(seed=seed, streak=MAX_STREAK)
        while not g.done:  # random play that always takes a win (hu 59, rob the gold 60)
            legal = g.legal_actions
            g.step(60 if 60 in legal else 59 if 59 in legal else int(rng.choice(legal)))
        r = g.result
        if r["winner"] is not None:
            assert r["value"] >= 2 * (MAX_STREAK + 5)
            assert max(r["points"]) > 0 and sum(r["points"]) == 0
            return
    pytest.fail("no won hand in 40 random games")


def test_dealer_is_a_seat():
    for dealer in (4, -1, True, 2**40, 1.0):
        with pytest.raises(ValueError, match="dealer"):
            F.Game().reset(seed=0, dealer=dealer)


@pytest.mark.parametrize("n", [10**12, MAX_TABLES + 1, 0, -3, True, 2.0])
def test_vector_env_table_count_is_bounded_before_any_allocation(n):
    """num_tables=10**12 used to reach numpy's allocator."""
    with pytest.raises(ValueError, match="num_tables"):
        F.VectorEnv(n)


def test_vector_env_refuses_what_this_machine_cannot_hold(monkeypatch):
    import fzmj_env.checks as V

    monkeypatch.setattr(V, "physical_memory", lambda: 10_000_000)  # a 10 MB machine
    with pytest.raises(ValueError, match="num_tables=4096 needs about"):
        F.VectorEnv(4096)


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_seeds_are_64_bit(seed):
    with pytest.raises(ValueError, match="seed"):
        F.Game().reset(seed=seed)
    with pytest.raises(ValueError, match="seed"):
        F.VectorEnv(2, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        F.env().reset(seed=seed)


def test_check_int():
    assert check_int("x", np.int16(3), 0, 5) == 3
    for bad in (True, 3.0, "3", None):
        with pytest.raises(ValueError, match="x must be an integer"):
            check_int("x", bad, 0)
    with pytest.raises(ValueError, match=r"x must be an integer in 0..5, got 6"):
        check_int("x", 6, 0, 5)
