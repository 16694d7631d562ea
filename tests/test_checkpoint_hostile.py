"""Poisoned checkpoints (issue 58): finite but absurd weights, a zip bomb under an extra key,
complex weights. Each is refused when loaded, in one line naming the file; fzmj-eval exits 2."""

from __future__ import annotations

import warnings
import zipfile

import pytest
import torch

from fzmj.agents.checkpoint import load_checkpoint, load_policy, save_checkpoint
from fzmj.train.model import ActorCritic


def _usage_error(capsys, argv) -> str:
    from fzmj.agents.evaluate import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _policy() -> ActorCritic:
    torch.manual_seed(0)
    return ActorCritic("mlp", [16])


@pytest.mark.parametrize("where", ["trunk", "actor"])
def test_finite_but_absurd_weights_are_refused_at_load(tmp_path, capsys, where):
    pol = _policy()
    with torch.no_grad():
        if where == "trunk":  # a first layer of 3e38: the hidden layer overflows to inf
            next(pol.trunk.parameters()).fill_(3e38)
        else:  # an actor of 3e38: every logit overflows, inf - inf in the softmax
            pol.actor.weight.fill_(3e38)
            pol.actor.bias.fill_(3e38)
    path = save_checkpoint(tmp_path / f"{where}.pt", pol)
    with pytest.raises(ValueError, match="no finite action distribution on real observations") as e:
        load_policy(path)
    assert str(path) in str(e.value)
    line = _usage_error(capsys, ["--agents", f"ppo:{path}", "--hands", "4", "--no-progress"])
    assert "no finite action distribution" in line and str(path) in line


def test_a_sound_policy_loads(tmp_path):
    path = save_checkpoint(tmp_path / "ok.pt", _policy())
    assert load_policy(path).obs_planes == _policy().obs_planes


def test_a_compressed_entry_is_refused_before_loading(tmp_path, monkeypatch):
    """A 2.4 GB tensor of zeros deflates to a few MB; here 64 MB to 64 KB, the same shape of file."""
    good = save_checkpoint(tmp_path / "good.pt", _policy())
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bomb, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info), compress_type=zipfile.ZIP_STORED)
        prefix = src.infolist()[0].filename.split("/")[0]
        dst.writestr(f"{prefix}/data/9999", bytes(64 << 20), compress_type=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 2 << 20

    def no_load(*a, **k):
        raise AssertionError("torch.load ran on a zip bomb")

    monkeypatch.setattr(torch, "load", no_load)
    with pytest.raises(ValueError, match=r"data/9999 is compressed .* refused before loading") as e:
        load_checkpoint(bomb)
    assert str(bomb) in str(e.value) and "\n" not in str(e.value)


def test_complex_weights_are_refused_without_a_torch_warning(tmp_path, capsys):
    pol = _policy()
    path = save_checkpoint(tmp_path / "c.pt", pol)
    data = torch.load(path, weights_only=True)
    data["model"]["actor.weight"] = data["model"]["actor.weight"].to(torch.complex64)
    torch.save(data, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's "Casting complex values to real" would fail here
        with pytest.raises(ValueError, match=r"complex-valued weights in actor.weight \(torch.complex64\)"):
            load_policy(path)
    line = _usage_error(capsys, ["--agents", f"ppo:{path}", "--hands", "4", "--no-progress"])
    assert "complex-valued" in line and "UserWarning" not in line
