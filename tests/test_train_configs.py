"""The configs ship inside the package and resolve by name: ``fzmj-train --config ppo_default``
works from any folder (an installed wheel included), a path still reads a file, ``--list-configs``
shows what ships, and a fresh run without ``--config`` is the documented recipe."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fzmj.train.args import Args
from fzmj.train.config import CONFIG_DIR, ConfigError, load_config, resolve_config, shipped_configs
from fzmj.train.ppo_selfplay import DEFAULT_CONFIG, main, parse_args

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["distill_search", "ppo_default", "ppo_gpu", "ppo_oracle", "ppo_oracle_phase2", "ppo_scratch", "ppo_smoke"]


def test_one_source_of_truth():
    # the repository's configs/ is a link to the package's folder, not a copy
    assert (ROOT / "configs").is_symlink()
    assert (ROOT / "configs").resolve() == CONFIG_DIR.resolve()
    assert CONFIG_DIR.parent == Path(__file__).resolve().parents[1] / "fzmj" / "train"


def test_configs_are_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "configs/*.yaml" in data["fzmj.train"]


def test_every_shipped_config_loads_and_says_what_it_is():
    shipped = shipped_configs()
    assert sorted(shipped) == NAMES
    for name, text in shipped.items():
        assert 20 <= len(text) <= 160 and "\n" not in text, (name, text)
        load_config(Args, resolve_config(name))


@pytest.mark.parametrize("spec", ["ppo_smoke", "ppo_smoke.yaml"])
def test_a_name_resolves_from_any_folder(spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_config(spec) == CONFIG_DIR / "ppo_smoke.yaml"
    args, _ = parse_args(["--config", spec])
    assert args.exp_name == "smoke" and args.num_tables == 32


def test_a_path_still_reads_that_file_and_wins_over_a_name(tmp_path, monkeypatch):
    own = tmp_path / "ppo_smoke.yaml"
    own.write_text("exp_name: mine\n")
    assert parse_args(["--config", str(own)])[0].exp_name == "mine"
    monkeypatch.chdir(tmp_path)  # a file of that name in the working folder is the user's
    assert resolve_config("ppo_smoke.yaml") == Path("ppo_smoke.yaml")
    assert parse_args(["--config", "ppo_smoke.yaml"])[0].exp_name == "mine"
    assert parse_args(["--config", str(ROOT / "configs" / "ppo_smoke.yaml")])[0].exp_name == "smoke"


@pytest.mark.parametrize("spec", ["nope", "configs/nope.yaml", "../ppo_default", "sub/ppo_default"])
def test_an_unknown_name_is_one_line_listing_the_names(spec, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="not the name of a shipped config"):
        resolve_config(spec)
    with pytest.raises(SystemExit) as e:
        main(["--config", spec])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ppo_default" in err[0] and err[0].startswith("fzmj-train: error: config file"), err


def test_list_configs_and_help_show_what_ships(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--list-configs"])
    assert e.value.code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == NAMES
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(f"  {name}: " in out for name in NAMES)
    assert "Without --config a fresh run uses ppo_default" in out


def test_no_config_is_the_documented_recipe(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert DEFAULT_CONFIG == "ppo_default"
    plain, _ = parse_args(["--set", "run_name=x"])
    recipe, _ = parse_args(["--config", "ppo_default", "--set", "run_name=x"])
    assert dataclasses.asdict(plain) == dataclasses.asdict(recipe)
    # the recipe, not the dataclass's base values: the warm start, hand features, the KL pull
    assert plain.bc_decisions == 200_000 and plain.hand_features and plain.teacher_coef == 0.1
    assert plain.total_timesteps == 130_000_000 and Args().bc_decisions == 0


def test_the_oracle_recipe_is_the_default_recipe_plus_the_oracle():
    """ppo_oracle (the recipe of `pretrained` v2) differs from ppo_default only in the levers of
    training with what the table hides, the paired curve and the thread counts."""
    base = dataclasses.asdict(load_config(Args, resolve_config("ppo_default")))
    oracle = dataclasses.asdict(load_config(Args, resolve_config("ppo_oracle")))
    diff = {k: oracle[k] for k in base if base[k] != oracle[k]}
    assert diff == {
        "exp_name": "ppo_oracle",
        "oracle_critic": True,
        "oracle_guide": True,
        "bc_teacher": "oracle:defend",
        "eval_paired_every": 976,
        "torch_threads": 1,
    }  # oracle_guide_anneal 0.5, eval_paired_hands 8,000 and env_threads 1 are the defaults, set there to be read


def test_the_second_oracle_phase_is_the_oracle_recipe_going_on_slower():
    """ppo_oracle_phase2 goes on from a guided checkpoint (pretrained:v2, shipped): no clone,
    no KL pull, the oracle never read by the actor, 50 M steps from a lower rate, other walls."""
    first = dataclasses.asdict(load_config(Args, resolve_config("ppo_oracle")))
    second = dataclasses.asdict(load_config(Args, resolve_config("ppo_oracle_phase2")))
    diff = {k: second[k] for k in first if first[k] != second[k]}
    assert diff == {
        "exp_name": "ppo_oracle_phase2",
        "seed": 3,
        "total_timesteps": 50_000_000,
        "learning_rate": 0.00005,
        "oracle_guide_anneal": 0.0,
        "bc_decisions": 0,
        "bc_checkpoint": "pretrained:v2",
        "teacher_coef": 0.0,
        "bc_teacher": "heuristic",  # the defaults: there is no clone to make or to evaluate
        "bc_eval_hands": 400,
        "eval_paired_every": 488,  # a shorter run: its points closer
    }
