"""Datasets of recorded play (fzmj/data/, docs/data.md): what the loader replays is what the env
gave at each decision, bit for bit (v2, v3, the hand features, on every preset); the same command
writes the same dataset; a killed collection resumes into the same dataset."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from fzmj.agents import make_agent  # noqa: E402
from fzmj.agents.base import Agent  # noqa: E402
from fzmj.data import DatasetError, collect, open_dataset  # noqa: E402
from fzmj.data import collector as collect_module  # noqa: E402
from fzmj.data.cli import main  # noqa: E402
from fzmj_env.features import with_hand_features  # noqa: E402
from fzmj_env.rules import available_rules  # noqa: E402


class Recorder(Agent):
    """The heuristic, keeping a copy of every observation and mask it was given."""

    def __init__(self, obs_version: str):
        self.inner = make_agent("heuristic")
        self.name = "recorder"
        self.obs_version = obs_version
        self.obs: list = []
        self.mask: list = []

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act(self, obs, mask):
        self.obs.append(np.array(obs))
        self.mask.append(np.array(mask))
        return self.inner.act(obs[:, :99], mask)


def quiet(*_):
    pass


@pytest.mark.parametrize("version", ["v2", "v3"])
@pytest.mark.parametrize("preset", available_rules())
def test_the_replay_gives_what_the_env_gave(tmp_path, preset, version):
    """One batch, one shard, one row group: the loader's order (decision 0 of every hand, then 1,
    ...) is the order the agent was asked in, so the rows compare one to one."""
    rec = Recorder(version)
    collect(tmp_path / "d", [rec], 64, rules=preset, seed=3, batch=64, progress=False, log=quiet)
    got = open_dataset(tmp_path / "d").decisions(version)
    env_obs, env_mask = np.concatenate(rec.obs), np.concatenate(rec.mask)
    assert len(got["action"]) == len(env_obs) > 0
    assert np.array_equal(got["obs"], env_obs)
    assert np.array_equal(got["mask"], env_mask)
    assert (got["mask"][np.arange(len(got["action"])), got["action"]] == 1).all()
    hf = open_dataset(tmp_path / "d").decisions(version, hand_features=True)["obs"]
    assert np.array_equal(hf, with_hand_features(env_obs))


def test_only_choices_while_replaying_is_the_filter_afterwards(tmp_path):
    """``replay_hands(only_choices=True)`` picks the rows as it copies them: the same rows, in the
    same order, as filtering the whole replay by its masks. (The batched engine plays a decision
    with one legal action itself, so a collected dataset records few or none: the filter is kept for
    datasets written otherwise.)"""
    from fzmj.data.replay import replay_hands
    from fzmj.data.shards import read_row_group

    collect(tmp_path / "d", ["heuristic"], 32, seed=9, batch=32, progress=False, log=quiet)
    d = open_dataset(tmp_path / "d")
    path, g, _ = d.groups[0]
    whole = replay_hands(read_row_group(path, g), d.rules, privileged=True)
    keep = whole["mask"].sum(1) > 1
    assert keep.any()
    picked = replay_hands(read_row_group(path, g), d.rules, privileged=True, only_choices=True)
    assert picked.keys() == whole.keys()
    for key, v in whole.items():
        assert np.array_equal(picked[key], v[keep]), key


def test_privileged_and_ids(tmp_path):
    collect(tmp_path / "d", ["heuristic"], 16, seed=5, batch=16, slots=[0], progress=False, log=quiet)
    d = open_dataset(tmp_path / "d")
    got = d.decisions(privileged=True)
    assert got["privileged_oracle"].shape[1:] != got["obs"].shape[1:] and got["privileged_oracle"].any()
    assert (got["slot"] == 0).all() and len(got["action"]) == d.num_decisions
    assert np.array_equal(got["seat"], (got["game"] % 4).astype(np.int8))  # slot 0 sits at seat = rotation
    assert np.array_equal(got["ret"], got["points"][np.arange(len(got["ret"])), got["seat"]])
    assert (got["points"].sum(1) == 0).all() or got["points"].any()


def test_same_command_same_digest_and_resume(tmp_path, capsys):
    args = ["collect", "--agents", "heuristic", "random", "--hands", "96", "--batch", "32", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "a"), "--batches-per-shard", "1"]) == 0
    first = capsys.readouterr().out.strip().splitlines()[-1]
    assert main([*args, "--out", str(tmp_path / "b"), "--batches-per-shard", "1", "--workers", "2"]) == 0
    second = capsys.readouterr().out.strip().splitlines()[-1]
    assert first.split("digest ")[1] == second.split("digest ")[1]
    assert open_dataset(tmp_path / "a").num_decisions > 0


def test_a_killed_run_resumes_into_the_same_dataset(tmp_path, monkeypatch):
    kw = dict(seed=2, batch=16, batches_per_shard=1, progress=False, log=quiet)
    whole = collect(tmp_path / "whole", ["heuristic"], 64, **kw)
    real = collect_module.ShardWriter._write_shard
    calls = []

    def dies_at_the_third_shard(self, hands):
        calls.append(1)
        if len(calls) == 3:
            (self.folder / "shard-00002.parquet.tmp").write_bytes(b"half a shard")  # killed mid-write
            raise KeyboardInterrupt
        real(self, hands)

    monkeypatch.setattr(collect_module.ShardWriter, "_write_shard", dies_at_the_third_shard)
    with pytest.raises(KeyboardInterrupt):
        collect(tmp_path / "cut", ["heuristic"], 64, **kw)
    with pytest.raises(DatasetError, match="unfinished"):
        open_dataset(tmp_path / "cut")
    monkeypatch.setattr(collect_module.ShardWriter, "_write_shard", real)
    again = collect(tmp_path / "cut", ["heuristic"], 64, **kw)
    assert again["digest"] == whole["digest"] and len(again["shards"]) == 4
    assert not list((tmp_path / "cut").glob("*.tmp"))


def test_batches_shuffle_across_groups_and_cover_every_decision(tmp_path):
    collect(tmp_path / "d", ["heuristic"], 64, seed=1, batch=16, batches_per_shard=1, progress=False, log=quiet)
    d = open_dataset(tmp_path / "d")
    key = lambda b: set(zip(b["game"].tolist(), b["step"].tolist(), strict=True))  # noqa: E731
    plain = [key(b) for b in d.batches(100, shuffle=False)]
    mixed = list(d.batches(100, seed=7, workers=2, buffer_groups=2))
    assert set().union(*plain) == set().union(*map(key, mixed)) and len(set().union(*plain)) == d.num_decisions
    assert key(mixed[0]) != plain[0]
    again = list(d.batches(100, seed=7, buffer_groups=2))  # workers change nothing
    assert all(np.array_equal(a["obs"], b["obs"]) for a, b in zip(mixed, again, strict=True))
    torch_batch = next(d.batches(32, torch=True, only_choices=True))
    assert torch_batch["obs"].dtype.is_floating_point is False and (torch_batch["mask"].sum(1) > 1).all()


def test_the_acting_agents_distribution_where_it_has_one(tmp_path):
    """``pretrained`` has one (recomputed from the rebuilt observation: its argmax is the action it
    played), ``heuristic`` has none (zeros, ``has_probs`` false)."""
    collect(tmp_path / "d", ["pretrained", "heuristic"], 16, seed=1, batch=16, slots=[0, 1], progress=False, log=quiet)
    got = open_dataset(tmp_path / "d").decisions(distribution=True)
    has = got["has_probs"]
    assert has.any() and (~has).any() and np.array_equal(has, got["slot"] == 0)
    probs = got["probs"][has]
    assert np.allclose(probs.sum(1), 1, atol=1e-5) and (probs[got["mask"][has] == 0] == 0).all()
    assert np.array_equal(probs.argmax(1), got["action"][has])
    assert not got["probs"][~has].any()
