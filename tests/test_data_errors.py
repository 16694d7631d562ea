"""Bad input to the datasets (fzmj/data/): each is one clear line (``DatasetError``; exit 2 from
``fzmj-data``), never a batch, and finished shards are never lost."""

from __future__ import annotations

import errno
import json
import shutil

import numpy as np
import pytest

pytest.importorskip("pyarrow")

from fzmj.data import DatasetError, collect, open_dataset  # noqa: E402
from fzmj.data import collector as collect_module  # noqa: E402
from fzmj.data.cli import main  # noqa: E402
from fzmj.data.format import content_digest, dataset_digest, file_sha256  # noqa: E402
from fzmj.data.shards import read_row_group, to_parquet_bytes  # noqa: E402
from fzmj_env.rules import load_rules  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data") / "d"
    collect(folder, ["heuristic"], 32, seed=4, batch=16, batches_per_shard=1, progress=False, log=lambda *_: 0)
    return folder


@pytest.fixture
def ds(made, tmp_path):
    shutil.copytree(made, tmp_path / "d")
    return tmp_path / "d"


def manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def save(folder, m):
    (folder / "manifest.json").write_text(json.dumps(m))


def refused(capsys, folder, match: str) -> None:
    """``fzmj-data verify`` says it in one line and exits 2; the library raises ``DatasetError``."""
    with pytest.raises(SystemExit) as e:
        main(["verify", str(folder)])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and match in err[0], err
    with pytest.raises(DatasetError, match=match):
        open_dataset(folder).decisions()


def test_a_good_dataset_verifies(ds, capsys):
    assert main(["verify", str(ds)]) == 0
    assert "decisions replayed" in capsys.readouterr().out


def test_a_truncated_shard(ds, capsys):
    shard = ds / "shard-00001.parquet"
    shard.write_bytes(shard.read_bytes()[:-100])
    refused(capsys, ds, "truncated or edited")


def test_an_edited_shard(ds, capsys):
    shard = ds / "shard-00000.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    refused(capsys, ds, "sha256 differs")


def _forge(ds, edit) -> None:
    """Rewrite shard 0 with ``edit`` applied to its hands, its manifest entry and digest made to match
    (a forger who also fixes the checksums): the replay itself must catch it."""
    shard = ds / "shard-00000.parquet"
    hands = {k: v.copy() for k, v in read_row_group(shard, 0).items()}
    edit(hands)
    shard.write_bytes(to_parquet_bytes(hands))
    m = manifest(ds)
    m["shards"][0].update(bytes=shard.stat().st_size, sha256=file_sha256(shard), content_sha256=content_digest(hands))
    m["digest"] = dataset_digest(m)
    save(ds, m)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda h: h["actions"].__setitem__(0, 61), "decision 0"),  # an action the engine refuses
        (lambda h: h["seats"].__setitem__(0, (h["seats"][0] + 1) % 4), "engine says seat"),
        (lambda h: h["points"].__setitem__((0, 0), h["points"][0, 0] + 1), "stored points"),
        (lambda h: h["wall_seed"].__setitem__(0, h["wall_seed"][0] + np.uint64(1)), "game 0"),
    ],
)
def test_a_forged_shard_with_matching_checksums(ds, capsys, edit, match):
    _forge(ds, edit)
    refused(capsys, ds, match)


def test_a_file_that_is_not_a_dataset(ds, tmp_path, capsys):
    (tmp_path / "x.txt").write_text("hello")
    refused(capsys, tmp_path / "x.txt", "not a dataset folder")
    (tmp_path / "empty").mkdir()
    refused(capsys, tmp_path / "empty", "no manifest.json")
    (ds / "manifest.json").write_text("[1, 2")
    refused(capsys, ds, "not a dataset manifest")


def test_a_shard_that_is_not_parquet(ds, capsys):
    shard = ds / "shard-00000.parquet"
    shard.write_bytes(b"not parquet at all")
    m = manifest(ds)
    m["shards"][0].update(bytes=shard.stat().st_size, sha256=file_sha256(shard))
    save(ds, m)
    refused(capsys, ds, "not a readable Parquet shard")


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("schema_version", 99, "schema version 99"),
        ("fzmj_version", "999.0.0", "newer than this fzmj"),
        ("format", "something", "not an fzmj dataset manifest"),
    ],
)
def test_a_version_it_cannot_read(ds, capsys, key, value, match):
    m = manifest(ds)
    m[key] = value
    save(ds, m)
    refused(capsys, ds, match)


def test_more_rows_claimed_than_held(ds, capsys):
    m = manifest(ds)
    m["shards"][1]["hands"] += 16
    save(ds, m)
    refused(capsys, ds, "the manifest claims")


def test_more_decisions_claimed_than_held(ds, capsys):
    m = manifest(ds)
    m["counts"]["recorded_decisions"] += 1
    save(ds, m)
    refused(capsys, ds, "claims")


def test_another_preset(ds):
    d = open_dataset(ds)
    d.check_rules(load_rules("fuzhou-lianzhong"))
    with pytest.raises(DatasetError, match="collected on preset 'fuzhou-lianzhong'.*plays 'fuzhou-home'"):
        d.check_rules(load_rules("fuzhou-home"))


def test_a_full_disk_keeps_the_finished_shards(tmp_path, monkeypatch, capsys):
    real = collect_module.write_atomic
    calls = []

    def full(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(collect_module, "write_atomic", full)
    argv = ["collect", "--agents", "heuristic", "--hands", "48", "--batch", "16", "--batches-per-shard", "1"]
    with pytest.raises(SystemExit) as e:
        main([*argv, "--out", str(tmp_path / "d"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "the disk is full" in err[0] and "shards 0-0 are kept" in err[0]
    assert [s["file"] for s in manifest(tmp_path / "d")["shards"]] == ["shard-00000.parquet"]
    monkeypatch.setattr(collect_module, "write_atomic", real)
    assert main([*argv, "--out", str(tmp_path / "d"), "--no-progress"]) == 0  # the same command resumes
    assert len(open_dataset(tmp_path / "d").manifest["shards"]) == 3


def test_a_disk_too_small_is_refused_before_play(tmp_path, monkeypatch):
    monkeypatch.setattr(collect_module.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(1, 1, 10))
    with pytest.raises(DatasetError, match="MB needed"):
        collect(tmp_path / "d", ["heuristic"], 4000, progress=False, log=lambda *_: 0)
    assert not (tmp_path / "d").exists()


def test_a_folder_of_other_settings_is_not_resumed(made, capsys):
    with pytest.raises(SystemExit) as e:
        main(["collect", "--agents", "random", "--hands", "32", "--out", str(made), "--no-progress"])
    assert e.value.code == 2 and "other settings" in capsys.readouterr().err
