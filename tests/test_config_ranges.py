"""Each trainer config key carries its own range (``key(default, lo=..., hi=...)`` on its field,
``fzmj/train/config.py``): a number key without one is refused in one line, a declared range
refuses NaN and out-of-range values, and the older range tables of config_checks.py still work
for a key declared the old way (issue 59)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import pytest

from fzmj.train import config_checks as C
from fzmj.train.args import Args
from fzmj.train.config import ConfigError, Range, field_docs, key, key_range, load_config, unranged_keys


def test_every_number_key_declares_its_range_and_doc():
    assert unranged_keys(Args, C.LEGACY_RANGED) == []
    docs = field_docs(Args)
    assert all(docs.get(f.name) for f in fields(Args)), [f.name for f in fields(Args) if not docs.get(f.name)]


@dataclass
class _Unranged(Args):
    reward_clip: float = 0.0
    """clip each reward (a newcomer's key, declared without a range)"""


@dataclass
class _Ranged(Args):
    reward_clip: float = key(0.0, lo=0, hi=100, doc="clip each reward to [-x, x] (0: off)")


def test_a_number_key_with_no_range_is_one_line():
    assert unranged_keys(_Unranged, C.LEGACY_RANGED) == ["reward_clip"]
    with pytest.raises(ConfigError) as e:
        _Unranged()
    msg = str(e.value)
    assert "\n" not in msg and "'reward_clip'" in msg and "no range" in msg and "key(" in msg


@pytest.mark.parametrize("value", [".nan", ".inf", "-1", "101"])
def test_a_declared_range_refuses_what_it_does_not_allow(value):
    with pytest.raises(ConfigError, match="^reward_clip: expected"):
        load_config(_Ranged, None, [f"reward_clip={value}"])
    assert load_config(_Ranged, None, ["reward_clip=5"]).reward_clip == 5.0
    assert field_docs(_Ranged)["reward_clip"] == "clip each reward to [-x, x] (0: off)"
    assert key_range(next(f for f in fields(_Ranged) if f.name == "reward_clip")) == Range(lo=0, hi=100)


def test_the_old_tables_still_give_a_range(monkeypatch):
    """A key added the old way (a field plus a row of FLOAT_RANGES) is ranged and checked."""
    monkeypatch.setattr(C, "FLOAT_RANGES", {**C.FLOAT_RANGES, "reward_clip": (0.0, True, 100.0)})
    monkeypatch.setattr(C, "LEGACY_RANGED", C.LEGACY_RANGED | {"reward_clip"})
    assert _Unranged().reward_clip == 0.0
    with pytest.raises(ConfigError, match="^reward_clip: expected a finite number"):
        load_config(_Unranged, None, ["reward_clip=.nan"])


@pytest.mark.parametrize(
    "rng, value, words",
    [
        (Range(lo=1), 0, "expected a positive integer"),
        (Range(lo=0), -1, "expected a non-negative integer"),
        (Range(lo=0, hi=10), 11, "expected at most 10"),
        (Range(lo=0, lo_ok=False, hi=1), 0.0, "expected a number in (0, 1]"),
        (Range(lo=0, lo_ok=False), -2.0, "expected a number > 0"),
        (Range(lo=0), math.nan, "expected a finite number"),
        (Range(choices=("a", "b", "c")), "d", "expected a, b or c"),
    ],
)
def test_range_messages(rng, value, words):
    assert rng.problem("k", value).startswith(f"k: {words}")
    assert rng.problem("k", None) is None
