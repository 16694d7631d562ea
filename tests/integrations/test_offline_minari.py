"""Offline RL from a dataset (``examples/offline_minari.py``): ``heuristic`` games collected by
``fzmj.data``, exported to Minari, loaded with ``minari.load_dataset``, learned by TorchRL's
discrete CQL and evaluated paired against ``random`` and ``heuristic``. Needs ``minari`` (with
h5py), ``torchrl`` and ``pyarrow`` (``pip install "fzmj[data,minari,torchrl]"``; CI installs them)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="torchrl not installed (pip install fzmj[torchrl])")
pytest.importorskip("minari", reason="minari not installed (pip install fzmj[minari])")
pytest.importorskip("h5py", reason="h5py not installed (pip install fzmj[minari])")
pytest.importorskip("pyarrow", reason="pyarrow not installed (pip install fzmj[data])")

CQL = re.compile(r"CQL term ([\d.]+) over the first tenth of the steps, ([\d.]+) over the last")
PAIRED = re.compile(r"paired with heuristic: [+-][\d.]+ \[[+-][\d.]+, [+-][\d.]+\] .*\((\d+) paired hands\)")
EPISODES = re.compile(r"Minari: \S+: ([\d,]+) episodes, ([\d,]+) steps")


ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))


def test_transitions_follow_each_episode(tmp_path, monkeypatch):
    """The example's glue: every Minari step becomes one transition whose next observation is the
    episode's next one, the reward and the end on the last step only, every action legal."""
    import minari
    import torch
    from offline_minari import masked_q_network, transitions

    from fzmj.data.minari_export import to_minari

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    to_minari(ROOT / "tests" / "data" / "dataset-tiny", "fzmj/tiny-v0", reward_scale=0.1)
    ds = minari.load_dataset("fzmj/tiny-v0")
    td = transitions(ds)
    assert len(td) == ds.total_steps
    at = 0
    for ep in ds.iterate_episodes():
        n = len(ep.actions)
        part = td[at : at + n]
        obs = ep.observations
        assert np.array_equal(part["observation", "observation"].numpy(), obs["observation"][:-1])
        assert np.array_equal(part["next", "observation", "observation"].numpy(), obs["observation"][1:])
        assert np.array_equal(part["next", "observation", "action_mask"].numpy(), obs["action_mask"][1:])
        assert part["next", "terminated"].squeeze(-1).tolist() == [False] * (n - 1) + [True]
        assert np.allclose(part["next", "reward"].squeeze(-1).numpy(), ep.rewards)
        at += n
    assert at == len(td)
    chosen = td["observation", "action_mask"].gather(1, td["action"].unsqueeze(1))
    assert (chosen == 1).all()  # the mask of each step allows its action
    q = masked_q_network(torch.nn.Linear(td["observation", "observation"][0].numel(), 62))(
        td["observation", "observation"], td["observation", "action_mask"]
    )
    legal = td["observation", "action_mask"].bool()
    assert (q[~legal] == torch.finfo(q.dtype).min).all() and (q[legal] > -1e6).all()


def test_offline_example_runs(run_example):
    run_example("offline_minari.py", "--hands", "40", "--steps", "20", "--eval-hands", "16")


def test_offline_example_learns_at_its_ci_size(learns):
    # seed 0 here: CQL term 1.730 -> 0.901, signal +2.62 [+0.99, +4.25] over 800 paired hands; seeds 1 and 2:
    # +2.68 [+0.70, +4.65] and +2.61 [+0.86, +4.36]; about 33 CPU s (docs/data.md, "Offline RL example")
    out = learns("offline_minari.py", "--hands", "1000", "--steps", "600", "--eval-hands", "800", "--seed", "0")
    episodes, steps = (int(x.replace(",", "")) for x in EPISODES.search(out).groups())
    assert 4 * 1000 * 0.9 < episodes <= 4 * 1000 and steps > episodes  # one episode per seat and hand
    first, last = map(float, CQL.search(out).groups())
    assert last < 0.7 * first, out[-2000:]  # the conservative term (a clone's cross-entropy) fell
    assert PAIRED.search(out).group(1) == "800", out[-2000:]  # the same hands with the teacher in its seat
