"""Rules files and trainer configs under hostile input: bounds on every rules number, the safe
YAML loader (size limit, aliases, encoding, syntax errors in one line) behind ``--rules`` and
``--config``, and matches at the extreme allowed numbers whose points still sum to zero."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from fzmj_env import Game
from fzmj_env.checks import MAX_HANDS_PER_GAME, MAX_STREAK, short_repr
from fzmj_env.cli import read_yaml_file, read_yaml_text
from fzmj_env.core import state
from fzmj_env.rules import (
    _RESERVE,
    _SCORING,
    MAX_SPECIAL,
    PRESET_DIR,
    WALL_IN_PLAY,
    RulesError,
    _schema,
    load_rules,
)

ROOT = Path(__file__).resolve().parents[1]
INT32_MAX = 2**31 - 1
SCHEMES = {  # scheme -> the shipped preset that plays it
    "lianzhong": "fuzhou-lianzhong",
    "classic": "fuzhou-lianzhong-classic",
    "lianzhong-2": "fuzhou-lianzhong-2",
    "bianfeng": "fuzhou-bianfeng",
    "home": "fuzhou-home",
}


def _preset(name: str) -> dict:
    return yaml.safe_load((PRESET_DIR / f"{name}.yaml").read_text(encoding="utf-8"))


def _write(tmp_path: Path, data, name: str = "my.yaml") -> Path:
    if isinstance(data, dict) and isinstance(data.get("name"), str) and name == "my.yaml":
        name = f"{data['name']}.yaml"  # a rules file is named after its file
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _refused(path, *fragments: str) -> str:
    with pytest.raises(RulesError) as e:
        load_rules(path)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 400, msg
    for f in fragments:
        assert f in msg, msg
    return msg


LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)
)


# ---- bounds --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("preset", "keys", "value", "allowed"),
    [
        ("fuzhou-lianzhong", ("scoring", "base"), 10**9, "0..100"),
        ("fuzhou-lianzhong", ("scoring", "multiplier"), 2**30, "0..64"),
        ("fuzhou-lianzhong", ("scoring", "specials", "golden_pair"), 2**31, f"0..{MAX_SPECIAL}"),
        ("fuzhou-lianzhong", ("scoring", "specials", "golden_pair"), 10**40, f"0..{MAX_SPECIAL}"),
        ("fuzhou-lianzhong", ("scoring", "flower_set_bonus"), 101, "0..100"),
        ("fuzhou-lianzhong", ("scoring", "kong_points", "concealed"), -1, "0..100"),
        ("fuzhou-lianzhong", ("reserve", "base"), WALL_IN_PLAY, f"0..{WALL_IN_PLAY - 1}"),
        ("fuzhou-lianzhong", ("reserve", "base"), 144, f"0..{WALL_IN_PLAY - 1}"),
        ("fuzhou-lianzhong", ("reserve", "exposed_kong"), 1000, f"0..{WALL_IN_PLAY}"),
        ("fuzhou-lianzhong-classic", ("scoring", "specials", "gold_kan"), 10_001, f"0..{MAX_SPECIAL}"),
        ("fuzhou-lianzhong-2", ("scoring", "special_bonus"), 2**31, f"0..{MAX_SPECIAL}"),
        ("fuzhou-lianzhong-2", ("scoring", "base"), 1000, "0..100"),
        ("fuzhou-bianfeng", ("scoring", "loss_cap"), 2**31, "0..1000000000"),
        ("fuzhou-home", ("scoring", "discard_bonus"), 10**6, "0..100"),
        ("fuzhou-home", ("scoring", "swim_multipliers"), [4, 8, 2**30], "0..64"),
    ],
)
def test_a_number_out_of_range_names_its_key_and_range(tmp_path, preset, keys, value, allowed):
    data = _preset(preset)
    node = data
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = value
    key = ".".join(keys)
    _refused(_write(tmp_path, data), key, allowed)


@pytest.mark.parametrize("value", [True, 2.0, "5", None, [5], "x" * 100_000])
def test_a_number_of_the_wrong_type_is_refused_in_one_short_line(tmp_path, value):
    data = _preset("fuzhou-lianzhong")
    data["scoring"]["base"] = value
    _refused(_write(tmp_path, data), "scoring.base", "expected an integer in 0..100")


def test_every_number_of_every_scheme_has_bounds():
    """No key of any scheme is left unbounded (a bare type would accept 2**40)."""

    def leaves(schema, path=""):
        for key, sub in schema.items():
            if isinstance(sub, dict):
                yield from leaves(sub, f"{path}{key}.")
            elif sub is not str:
                yield f"{path}{key}", sub

    for scheme in SCHEMES:
        for key, sub in leaves(_schema(scheme)):
            lo_hi = sub[1] if isinstance(sub, list) else sub
            assert isinstance(lo_hi, tuple) and lo_hi[1] <= INT32_MAX, (scheme, key, sub)


def test_a_rules_file_is_named_after_its_file(tmp_path):
    data = _preset("fuzhou-lianzhong")
    copied = _write(tmp_path, data, "fuzhou-alt.yaml")  # a copy that kept the default's name
    msg = _refused(copied, "fuzhou-alt.yaml", "'fuzhou-lianzhong'", "'fuzhou-alt'", "rename")
    assert msg.startswith("fuzhou-alt.yaml: name ")
    data["name"] = "fuzhou-alt"
    assert load_rules(_write(tmp_path, data, "fuzhou-alt.yaml")).name == "fuzhou-alt"
    assert load_rules(_write(tmp_path, data, "fuzhou-alt.yml")).name == "fuzhou-alt"
    for p in PRESET_DIR.glob("*.yaml"):  # the shipped files too
        assert load_rules(p).name == p.stem


def test_the_shipped_presets_are_inside_the_bounds():
    for name in SCHEMES.values():
        assert load_rules(name).name == name


# ---- the bound derivation (docs/presets.md, "Limits on a rules file") -----------------------------------
def _worst_winner_gain(scheme: str) -> int:
    """An upper bound on one hand's points for the winner (the largest |points| of a hand) with every
    number at its upper bound and the streak at its most: each scheme's formula (docs/presets.md
    P1-P5) evaluated on the largest flower, kong, gold and streak counts a hand can hold."""
    sc = {k: (v[1][1] if isinstance(v, list) else v[1]) for k, v in _SCORING[scheme].items()}
    base, mult = sc["base"], sc["multiplier"]
    s = MAX_STREAK + MAX_HANDS_PER_GAME  # a scripted streak, then one more per hand
    kongs = 5 * 100  # at most 5 kongs (5 melds), each at most 100 points
    fl = 36 + 9 * sc.get("flower_set_bonus", 0)  # every flower; 7 honor sets + 2 single sets
    g = 4  # golds in a hand (4 after robbing the indicator with 3)
    sp_one = MAX_SPECIAL + sc.get("special_bonus", 0)
    sp_all = len(state.SPECIAL_NAMES) * MAX_SPECIAL  # classic adds specials up
    f = fl + kongs + g + s
    if scheme == "lianzhong":
        return 3 * ((f + base) * mult + sp_one)
    if scheme == "classic":
        return 3 * ((f + base) * mult + sp_all) + s
    if scheme == "lianzhong-2":
        return 3 * (f * mult + sp_one) * base + s * base
    if scheme == "bianfeng":
        return 3 * max((sp_one + f * mult) * mult, (base + f) * mult) + s
    swim = sc["swim_multipliers"]
    return 3 * (base + 8 + g + s + kongs + sc["discard_bonus"]) * max(mult, swim)


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_the_bounds_keep_a_hand_inside_int32_and_a_match_inside_int64(scheme):
    worst = _worst_winner_gain(scheme)
    assert worst < INT32_MAX // 4, (scheme, worst)  # tb.points and the value slot are int32
    assert worst * MAX_HANDS_PER_GAME < 2**63 - 1  # tb.scores is int64
    assert np.dtype(dict(state.STATE_DTYPE.fields)["scores"][0]).base == np.int64


def _extreme(scheme: str) -> dict:
    """The shipped preset of ``scheme`` with every scoring number at its upper bound."""
    data = copy.deepcopy(_preset(SCHEMES[scheme]))
    for key, sub in _SCORING[scheme].items():
        data["scoring"][key] = [sub[1][1]] * sub[0] if isinstance(sub, list) else sub[1]
    data["scoring"]["kong_points"] = {"exposed": 100, "concealed": 100}
    data["scoring"]["specials"] = {k: MAX_SPECIAL for k in data["scoring"]["specials"]}
    data["reserve"] = {k: v[0] for k, v in _RESERVE.items()}  # the longest hands: most wins
    data["name"] = f"extreme-{scheme}"
    return data


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_extreme_numbers_still_sum_to_zero(tmp_path, scheme):
    """A match at the largest allowed numbers and streak: every hand's points sum to zero, only the
    winner gains, and the cumulative scores are the exact sums (no wrap in int32 or int64)."""
    game = Game(str(_write(tmp_path, _extreme(scheme))), hands_per_game=24)
    rng = np.random.default_rng(5)
    game.reset(seed=11, streak=MAX_STREAK)
    while not game.done:
        legal = game.legal_actions
        wins = [a for a in legal if a in (state.A_HU, state.A_ROB)]
        game.step(int(wins[0]) if wins else int(rng.choice(legal)))
    totals = [0, 0, 0, 0]
    won = 0
    for r in game.results:
        pts = r["points"]
        assert sum(pts) == 0 and all(abs(p) <= INT32_MAX for p in pts), r
        if r["winner"] is not None:
            won += 1
            assert pts[r["winner"]] > 0 and all(p <= 0 for i, p in enumerate(pts) if i != r["winner"]), r
        totals = [a + b for a, b in zip(totals, pts, strict=True)]
    assert won >= 4, won  # the test exercised real payments
    assert game.scores == totals and sum(game.scores) == 0


# ---- the loader --------------------------------------------------------------------------------------
def test_billion_laughs_fails_fast_in_one_line(tmp_path):
    path = _write(tmp_path, LAUGHS)
    assert path.stat().st_size < 1500
    _refused(path, "aliases (*a) are not allowed", f"{path}:2:")
    with pytest.raises(ValueError, match="aliases"):
        read_yaml_file(path, "config file")


def test_a_syntax_error_is_one_line_with_line_and_column(tmp_path):
    path = _write(tmp_path, "name: x\nscoring: [1, 2\nreserve: 3\n")
    msg = _refused(path)
    assert msg.startswith(f"{path}:3:"), msg
    msg = _refused(_write(tmp_path, "name: x\n  scheme: home\n", "b.yaml"))
    assert ":2:" in msg and "mapping values are not allowed here" in msg


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"name: \xff\xfe\n", "not UTF-8 text (byte 6)"),
        (b"- 1\n- 2\n", "expected a mapping of keys to values, got list"),
        (b"", "expected a mapping of keys to values, got NoneType"),
        (b"name: !!python/object/apply:os.system [echo hi]\n", "could not determine a constructor"),
        (b"a: " + b"9" * 5000 + b"\n", "not valid YAML"),
        (b"a: " + b"[" * 20000 + b"]" * 20000 + b"\n", "nested too deeply"),
        (b"a: 1\n" + b"#" * (1 << 20), "larger than 1048576 bytes"),
    ],
)
def test_a_bad_file_is_one_line(tmp_path, content, fragment):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    _refused(path, fragment)


def test_a_directory_and_a_link_to_dev_zero(tmp_path):
    (tmp_path / "dir.yaml").mkdir()
    _refused(tmp_path / "dir.yaml", "is a directory")
    if os.path.exists("/dev/zero"):
        (tmp_path / "zero.yaml").symlink_to("/dev/zero")
        _refused(tmp_path / "zero.yaml", "larger than")


def test_messages_never_embed_a_huge_value(tmp_path):
    data = _preset("fuzhou-lianzhong")
    data["scoring"]["specials"]["x" * 50_000] = 1
    _refused(_write(tmp_path, data), "unknown key")
    assert len(short_repr(list(range(10**5)))) < 100
    _refused("y" * 100_000, "unknown rule preset")


def test_read_yaml_text_accepts_anchors_without_aliases():
    assert read_yaml_text("a: &x 1\nb: 2\n", "t") == {"a": 1, "b": 2}


# ---- the command lines: fzmj-eval --rules, fzmj-demo --rules, fzmj-train --config ----------------------
def _bad_files(tmp_path: Path) -> tuple[dict[str, tuple[Path, str]], Path]:
    big = _preset("fuzhou-lianzhong")
    big["scoring"]["base"] = 10**9
    files = {
        "laughs": (_write(tmp_path, LAUGHS, "laughs.yaml"), "aliases"),
        "syntax": (_write(tmp_path, "a: [1,\nb: 2\n", "syntax.yaml"), "syntax.yaml:3:1: while parsing a flow sequence"),
        "latin1": (tmp_path / "latin1.yaml", "not UTF-8"),
        "directory": (tmp_path / "dir.yaml", "is a directory"),
        "list": (_write(tmp_path, "[1, 2]\n", "list.yaml"), "expected a mapping"),
    }
    (tmp_path / "latin1.yaml").write_bytes(b"a: \xe9\n")
    (tmp_path / "dir.yaml").mkdir()
    if os.path.exists("/dev/zero"):
        (tmp_path / "zero.yaml").symlink_to("/dev/zero")
        files["dev-zero"] = (tmp_path / "zero.yaml", "larger than")
    return files, _write(tmp_path, big, "big.yaml")


def _one_error_line(capsys, fn, argv, prog: str) -> str:
    with pytest.raises(SystemExit) as e:
        fn(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{prog}: error: ") and len(err[0]) < 500, err
    return err[0]


def test_fzmj_demo_and_fzmj_eval_refuse_bad_rules_files(tmp_path, capsys):
    from fzmj.agents import demo, evaluate

    files, big = _bad_files(tmp_path)
    for path, fragment in [*files.values(), (big, "scoring.base")]:
        assert fragment in _one_error_line(capsys, demo.main, ["--rules", str(path), "--hands", "1"], "fzmj-demo")
        line = _one_error_line(
            capsys, evaluate.main, ["--agents", "random", "--hands", "4", "--rules", str(path)], "fzmj-eval"
        )
        assert fragment in line


def test_fzmj_train_refuses_bad_config_files(tmp_path, capsys, monkeypatch):
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as build

    def no_work(*a, **k):
        raise AssertionError("the run started before its config was checked")

    monkeypatch.setattr(build, "VectorEnv", no_work)
    files, _ = _bad_files(tmp_path)
    for path, fragment in files.values():
        if fragment == "aliases":  # a config file too: the first alias is refused
            fragment = "aliases (*a) are not allowed"
        assert fragment in _one_error_line(capsys, T.main, ["--config", str(path)], "fzmj-train")
    line = _one_error_line(
        capsys, T.main, ["--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", "gamma=*a"], "fzmj-train"
    )
    assert "--set gamma:1:1: aliases" in line
    huge = _write(tmp_path, {"gamma": "z" * 200_000}, "huge.yaml")
    assert "gamma: expected a number" in _one_error_line(capsys, T.main, ["--config", str(huge)], "fzmj-train")
