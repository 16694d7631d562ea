"""The belief network's ``seq`` arch (a 1-D convolution over each seat's v3 discards in order,
beside the MLP): built from its spec, saved and loaded, output shapes, reads the observation
only; and the MLP spec (the shipped model's) unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_belief import SMALL
from test_encode import random_states, scramble_hidden
from test_encode_v3 import obs3

from fzmj.agents.belief import load_belief
from fzmj.agents.belief_net import SEQ_FEATURES, BeliefNet, SeqDiscards, build_belief_net, check_spec
from fzmj.train import belief as B


@pytest.fixture(scope="module")
def seq_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("belief_seq")
    m = B.train(B.BeliefArgs(run_name="s", runs_dir=str(root), obs_version="v3", arch="seq", **SMALL))
    return root / "s", m


def _v3(n=6, seed=2):
    """v3 observations of the seat to act, some way into random hands (so there are discards)."""
    out = [obs3(game, game.seat) for game, i in random_states(2, seed=seed) if i >= 20 and i % 5 == 0]
    return np.stack(out[:n])


def test_the_spec_builds_checks_and_keeps_the_mlp_spec_as_it_was():
    net = build_belief_net({"num_channels": 292, "hidden": [16], "arch": "seq", "seq_channels": 4, "seq_width": 8})
    assert isinstance(net.seq, SeqDiscards) and net.spec["arch"] == "seq"
    assert BeliefNet(99, [16]).spec == {"num_channels": 99, "hidden": [16]}  # what the shipped file holds
    assert BeliefNet(99, [16]).seq is None
    for bad, msg in (
        ({"num_channels": 99, "hidden": [16], "arch": "seq", "seq_channels": 4, "seq_width": 8}, "v3 discard"),
        ({"num_channels": 292, "hidden": [16], "arch": "rnn"}, "arch must be one of"),
        ({"num_channels": 292, "hidden": [16], "seq_channels": 4}, "for arch 'seq' only"),
        ({"num_channels": 292, "hidden": [16], "arch": "seq", "seq_channels": 0, "seq_width": 8}, "seq_channels"),
        ({"num_channels": 292, "hidden": [16], "arch": "seq", "seq_channels": 4}, "seq_width"),
    ):
        with pytest.raises(ValueError, match=msg):
            check_spec(bad)
    with pytest.raises(B.BeliefConfigError, match="arch seq reads"):
        B.check_args(B.BeliefArgs(arch="seq", obs_version="v2"))
    with pytest.raises(B.BeliefConfigError, match="arch"):
        B.check_args(B.BeliefArgs(arch="lstm"))


def test_the_discard_features_are_each_seats_discards_in_order():
    obs = _v3()
    f = SeqDiscards.features(torch.from_numpy(obs.copy()))
    assert f.shape == (len(obs), 4, SEQ_FEATURES, 24)
    for i in range(len(obs)):
        for r in range(4):
            block = obs[i, 99 + 47 * r : 99 + 47 * (r + 1)]
            n_disc = int(block[:24].sum())
            assert np.array_equal(f[i, r, :27].numpy().T, block[:24])  # kinds, position by position
            assert f[i, r, 27 + 3 :, n_disc:].sum() == 0  # no time past the last discard
    assert f[:, :, :27].sum() > 0  # the hands have discards


def test_a_seq_run_saves_loads_and_predicts_shapes(seq_run, tmp_path):
    folder, m = seq_run
    assert np.isfinite(m["danger_auc"]) and np.isfinite(m["danger_logloss"])
    ck = torch.load(folder / "checkpoints" / "model.pt", weights_only=True)
    assert ck["belief_spec"]["arch"] == "seq" and ck["obs_version"] == "v3"
    model = load_belief(f"belief:{folder / 'checkpoints' / 'model.pt'}")
    assert model.net.spec == ck["belief_spec"]
    obs = _v3(n=4)
    out = model.predict(obs)
    assert out["concealed_dist"].shape == (4, 3, 27, 5) and out["danger"].shape == (4, 27)
    assert out["ready"].shape == (4, 3) and out["win_on"].shape == (4, 3, 27)
    assert np.allclose(out["concealed_dist"].sum(-1), 1, atol=1e-5)
    # the round trip: a fresh net loaded from the file predicts the same
    net = build_belief_net(ck["belief_spec"])
    net.load_state_dict(ck["model"])
    again = net.probabilities(torch.from_numpy(obs.copy()))["danger"].numpy()
    assert np.allclose(again, out["danger"], atol=1e-6)
    # and the discard order matters to it: the same planes with two seats' sequences swapped differ
    swapped = obs.copy()
    swapped[:, 99 + 47 : 99 + 94], swapped[:, 99 + 94 : 99 + 141] = (
        obs[:, 99 + 94 : 99 + 141],
        obs[:, 99 + 47 : 99 + 94],
    )
    assert not np.allclose(model.predict(swapped)["danger"], out["danger"])


def test_a_seq_prediction_reads_the_observation_only(seq_run):
    """Scrambling what the seat may not see (the other hands, the wall: ``scramble_hidden``)
    changes neither its v3 observation nor the seq model's prediction, while the true hands
    (the labels) do change."""
    folder, _ = seq_run
    model = load_belief(f"belief:{folder / 'checkpoints' / 'model.pt'}")
    rng = np.random.default_rng(3)
    checked = 0
    for game, i in random_states(2, seed=5):
        if i % 6 or i < 12:
            continue
        me = game.seat
        before = obs3(game, me)
        p = model.predict(before[None])
        other = scramble_hidden(game, me, rng)
        assert not np.array_equal(other["hand"][0], game.buf["hand"][0])
        after = obs3(game, me, other)
        assert np.array_equal(after, before)
        q = model.predict(after[None])
        for k in p:
            assert np.array_equal(p[k], q[k]), k
        checked += 1
    assert checked >= 3
