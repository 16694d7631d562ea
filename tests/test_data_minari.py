"""The Minari export (fzmj/data/minari_export.py): single-seat episodes that ``minari.load_dataset``
opens, each what the seat saw and did, ending on the hand's points."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("pyarrow")
minari = pytest.importorskip("minari")

from fzmj.data import DatasetError, collect, open_dataset  # noqa: E402
from fzmj.data.minari_export import to_minari  # noqa: E402


@pytest.mark.parametrize("data_format", ["hdf5", "arrow"])
def test_episodes_load_back_as_the_seats_saw_them(tmp_path, monkeypatch, data_format):
    pytest.importorskip({"hdf5": "h5py", "arrow": "pyarrow"}[data_format])
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    collect(tmp_path / "d", ["heuristic"], 16, seed=6, batch=16, progress=False, log=lambda *_: 0)
    rows = open_dataset(tmp_path / "d").decisions()
    to_minari(tmp_path / "d", "fzmj/test-heuristic-v0", reward_scale=0.5, data_format=data_format)
    ds = minari.load_dataset("fzmj/test-heuristic-v0")
    assert ds.storage.FORMAT == data_format  # the storage asked for
    pairs = sorted({(int(g), int(s)) for g, s in zip(rows["game"], rows["seat"], strict=True)})
    assert ds.total_episodes == len(pairs) and ds.total_steps == len(rows["action"])
    for (game, seat), ep in zip(pairs, ds.iterate_episodes(), strict=True):
        mine = np.flatnonzero((rows["game"] == game) & (rows["seat"] == seat))
        mine = mine[np.argsort(rows["step"][mine])]
        assert np.array_equal(ep.observations["observation"][:-1], rows["obs"][mine])
        assert np.array_equal(ep.observations["action_mask"][:-1], rows["mask"][mine])
        assert np.array_equal(ep.actions, rows["action"][mine])
        assert ep.rewards[-1] == 0.5 * rows["ret"][mine[-1]] and not ep.rewards[:-1].any()
        assert ep.terminations[-1] and not ep.terminations[:-1].any() and not ep.truncations.any()
    env = ds.recover_environment()  # fzmj/SingleSeat-v0 with the mask in the observation
    obs, _ = env.reset(seed=1)
    assert set(obs) == {"observation", "action_mask"} and env.observation_space == ds.observation_space


def test_an_unknown_storage_is_one_line(tmp_path):
    with pytest.raises(DatasetError, match="data_format: 'hdf5' or 'arrow', got 'csv'"):
        to_minari(tmp_path / "d", "fzmj/x-v0", data_format="csv")


def test_a_missing_storage_library_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)  # as if minari[hdf5] were not installed
    with pytest.raises(DatasetError, match=r"needs minari\[hdf5\]: pip install \"fzmj\[minari\]\""):
        to_minari(tmp_path / "d", "fzmj/x-v0")
