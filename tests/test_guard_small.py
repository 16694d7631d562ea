"""Small guards: the exec identity hashes files in chunks, mistyped checkpoint fields are one-line
ValueErrors, every agent spec of a training config is checked used or not, and a YAML file with
a duplicate key is refused naming the key and both lines."""

from __future__ import annotations

import hashlib
import json
import sys
import tracemalloc
from pathlib import Path

import pytest
import torch

from fzmj.agents.checkpoint import load_policy
from fzmj.agents.exec_bot import exec_identity, parse_exec_spec
from fzmj_env.cli import read_yaml_file, read_yaml_text

ROOT = Path(__file__).resolve().parents[1]


# ---- the exec identity ------------------------------------------------------------------------------
def test_exec_identity_streams_a_large_file_and_keeps_its_value(tmp_path):
    weights = tmp_path / "weights.bin"
    with open(weights, "wb") as f:
        f.truncate(64 << 20)  # 64 MiB of zeros (sparse: cheap to make, read like any file)
    (tmp_path / "bot.py").write_text("print('hi')\n")
    spec = f"exec:{sys.executable} {tmp_path / 'bot.py'} {weights}"
    tracemalloc.start()
    ident = exec_identity(spec)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak / 2**20:.0f} MiB"
    p = parse_exec_spec(spec)  # the value is the one reading each file whole gave (caches stay valid)
    h = hashlib.sha256(json.dumps([p.argv, sorted(p.options.items())]).encode())
    h.update((tmp_path / "bot.py").read_bytes())
    h.update(weights.read_bytes())
    assert ident == f"exec:sha256={h.hexdigest()}"


# ---- checkpoint fields ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from fzmj.agents.checkpoint import save_checkpoint
    from fzmj.train.model import ActorCritic

    path = tmp_path_factory.mktemp("ckpt") / "tiny.pt"
    save_checkpoint(path, ActorCritic("mlp", [8]))
    return path


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("version", "abc", "version must be an integer, got 'abc'"),
        ("version", 1.5, "version must be an integer"),
        ("version", True, "version must be an integer"),
        ("version", [1], "version must be an integer"),
        ("obs_planes", [99], "obs_planes must be an integer, got [99]"),
        ("hf_planes", {"a": 1}, "hf_planes must be an integer"),
        ("hf_version", 3, "hf_version must be a string or null"),
        ("obs_version", 2, "obs_version must be a string"),
        ("update", "7", "update must be an integer"),
        ("policy_spec", [1, 2], "policy_spec must be a dict"),
        ("policy_spec.obs_planes", [99], "policy_spec.obs_planes must be an integer"),
        ("policy_spec.hand_features", "yes", "policy_spec.hand_features must be true or false"),
        ("policy_spec.oracle_critic", 1, "policy_spec.oracle_critic must be true or false"),
        ("version", "9" * 4000, "version must be an integer"),
    ],
)
def test_mistyped_checkpoint_fields_are_one_line_value_errors(checkpoint, tmp_path, field, value, words):
    data = torch.load(checkpoint, weights_only=True)
    if field.startswith("policy_spec."):
        data["policy_spec"][field.split(".", 1)[1]] = value
    else:
        data[field] = value
    bad = tmp_path / "bad.pt"
    torch.save(data, bad)
    with pytest.raises(ValueError) as e:
        load_policy(bad)
    msg = str(e.value)
    assert words in msg and str(bad) in msg and "\n" not in msg and len(msg) < 400


def test_a_well_typed_checkpoint_still_loads(checkpoint):
    assert load_policy(checkpoint) is not None


# ---- agent specs of a training config ---------------------------------------------------------------
SMOKE = str(ROOT / "configs/ppo_smoke.yaml")
TINY = [
    "--config", SMOKE,
    "--set", "num_tables=8", "--set", "num_steps=8", "--set", "total_timesteps=64",
    "--set", "hidden_sizes=[8]", "--set", "pool_prob=0", "--set", "eval_every=0",
]  # fmt: skip


@pytest.fixture
def fzmj_train(monkeypatch):
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as B

    def no_work(*a, **k):
        raise AssertionError("the run started before its input was checked")

    monkeypatch.setattr(B, "VectorEnv", no_work)
    return T.main


def _usage_error(capsys, fn, argv) -> str:
    with pytest.raises(SystemExit) as e:
        fn(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: "), err
    return err[0]


@pytest.mark.parametrize("key", ["bc_teacher", "pool_target", "distill_teacher"])
def test_an_unused_agent_spec_is_checked_too(fzmj_train, capsys, tmp_path, key):
    runs = tmp_path / "runs"
    argv = TINY + ["--set", f"runs_dir={runs}", "--set", f"{key}=nope"]  # cloning, the pool, distill: all off
    assert f"{key}: unknown agent spec 'nope'" in _usage_error(capsys, fzmj_train, argv)
    assert not runs.exists()


# ---- duplicate YAML keys ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("lr: 1\nseed: 2\nlr: 3\n", "3:1: duplicate key 'lr' (lines 1 and 3)"),
        ("net:\n  hidden: 1\n  hidden: 2\n", "3:3: duplicate key 'hidden' (lines 2 and 3)"),
        ("{a: 1, a: 2}\n", "duplicate key 'a' (line 1)"),
        ("a: 1\n'a': 2\n", "duplicate key 'a' (lines 1 and 2)"),
        ("1: x\n1.0: y\n", "duplicate key 1.0 (lines 1 and 2)"),
        ("- {k: 1}\n- {k: 2, k: 3}\n", "duplicate key 'k' (line 2)"),
    ],
)
def test_a_duplicate_yaml_key_is_refused_naming_it_and_both_lines(text, words):
    with pytest.raises(ValueError) as e:
        read_yaml_text(text, "cfg.yaml")
    assert str(e.value) == f"cfg.yaml:{words}" or words in str(e.value)
    assert "\n" not in str(e.value)


def test_distinct_keys_and_shipped_files_still_read():
    assert read_yaml_text("a: 1\nb: {a: 2}\nc: [{a: 1}, {a: 2}]\n", "x") == {
        "a": 1,
        "b": {"a": 2},
        "c": [{"a": 1}, {"a": 2}],
    }
    for path in [*(ROOT / "configs").glob("*.yaml"), *(ROOT / "fzmj_env/rules").glob("*.yaml")]:
        assert isinstance(read_yaml_file(path, "file"), dict)


def test_a_config_and_a_rules_file_with_a_duplicate_key_are_refused(fzmj_train, capsys, tmp_path):
    from fzmj_env.rules import RulesError, load_rules

    cfg = tmp_path / "c.yaml"
    cfg.write_text((ROOT / "configs/ppo_smoke.yaml").read_text() + "\nseed: 5\nseed: 6\n")
    line = _usage_error(capsys, fzmj_train, ["--config", str(cfg)])
    assert "duplicate key 'seed'" in line and str(cfg) in line
    src = (ROOT / "fzmj_env/rules/fuzhou-lianzhong.yaml").read_text()
    key = next(x.split(":")[0] for x in src.splitlines() if x and x[0].isalpha() and ":" in x)
    rules = tmp_path / "r.yaml"
    rules.write_text(src + f"\n{key}: 1\n")
    with pytest.raises(RulesError, match=f"duplicate key '{key}'"):
        load_rules(str(rules))
