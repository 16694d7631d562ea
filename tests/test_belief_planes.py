"""Belief planes as a policy input (fzmj/agents/belief_net.py ``belief_planes``, ActorCritic's
``belief_planes``): the thermometer codes exactly, the frozen belief inside the policy and its
checkpoint, the checks before a run, and a short training run that plays."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from fzmj.agents.belief import load_belief
from fzmj.agents.belief_net import (
    BELIEF_NUM_PLANES,
    DANGER_LEVELS,
    WIN_ON_LEVELS,
    BeliefNet,
    belief_planes,
)
from fzmj.agents.checkpoint import load_checkpoint, load_policy, save_checkpoint
from fzmj.agents.policy import ActorCritic
from fzmj.train.ppo_selfplay import main
from fzmj_env import VectorEnv

ROOT = Path(__file__).resolve().parent.parent


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def constant_belief(ready, win_on) -> BeliefNet:
    """A belief whose every prediction is the given one, whatever it reads (zero weights, biases set)."""
    net = BeliefNet(4, [8])
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.ready.bias.copy_(torch.tensor([logit(p) for p in ready]))
        net.win_on.bias.copy_(torch.tensor([[logit(p) for p in seat] for seat in win_on]).flatten())
    return net


def test_the_planes_are_the_thermometer_codes_of_the_predictions():
    win_on = np.full((3, 27), 0.001)
    win_on[0, 3] = 0.15  # 下家 waits on kind 3 (4m) with 15%
    win_on[2, 20] = 0.35  # 上家 on kind 20 with 35%
    net = constant_belief([0.5, 0.0001, 0.99], win_on)
    planes = belief_planes(net, torch.zeros(2, 6, 27, dtype=torch.int8)).numpy()
    assert planes.shape == (2, BELIEF_NUM_PLANES, 27) and planes.dtype == np.int8
    assert BELIEF_NUM_PLANES == len(DANGER_LEVELS) + 3 + 3 * len(WIN_ON_LEVELS) == 14
    p = planes[0]
    danger = 1 - np.prod(1 - win_on, axis=0)
    for i, level in enumerate(DANGER_LEVELS):
        assert (p[i] == (danger >= level)).all(), level
    assert p[:5, 3].tolist() == [1, 1, 1, 0, 0] and p[:5, 20].tolist() == [1, 1, 1, 1, 0]
    assert p[:5, 0].sum() == 0  # 0.003: below every level
    ready = p[5:8]
    assert ready[0].tolist() == [1] * 14 + [0] * 13  # P = 0.5: columns j with (j + 0.5) / 27 <= 0.5
    assert ready[1].sum() == 0 and ready[2].sum() == 27
    wins = p[8:].reshape(3, 2, 27)
    assert wins[0, :, 3].tolist() == [1, 0] and wins[2, :, 20].tolist() == [1, 1]
    assert wins.sum() == 3
    assert (planes[0] == planes[1]).all()


def shipped_policy(hidden=(32, 32), obs_planes=292) -> ActorCritic:
    belief = load_belief("belief").net
    pol = ActorCritic("mlp", list(hidden), obs_planes=obs_planes, hand_features=True, belief_planes=True,
                      belief_spec=belief.spec)  # fmt: skip
    pol.belief.load_state_dict(belief.state_dict())
    return pol


def mid_hand_observations(n=16, steps=40):
    env = VectorEnv(n, seed=3, obs_version=3)
    obs, mask, _ = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask = env.step(actions)[:2]
    return obs, mask


def test_a_policy_reads_the_belief_of_its_own_observation_and_keeps_it_frozen(tmp_path):
    pol = shipped_policy()
    obs, mask = mid_hand_observations()
    x = pol.prepare(torch.from_numpy(pol.prepare_host(obs)))
    assert x.shape == (len(obs), 292 + 18 + BELIEF_NUM_PLANES, 27)
    assert pol.host_planes == 310 and pol.in_planes == 324
    want = belief_planes(load_belief("belief").net, torch.tensor(obs))  # a copy of the read-only buffer
    assert torch.equal(x[:, -BELIEF_NUM_PLANES:], want)
    assert want.sum() > 0  # forty steps in, some seat looks dangerous
    assert torch.equal(pol.prepare(x), x)  # prepared input passes

    # a PPO-like step changes the policy's weights, never the belief's
    before = {k: v.clone() for k, v in pol.belief.state_dict().items()}
    opt = torch.optim.Adam(pol.parameters(), lr=0.1)
    _, logp, ent, value = pol.get_action_and_value(x, torch.tensor(mask))
    (-(logp.mean() + ent.mean()) + value.pow(2).mean()).backward()
    opt.step()
    assert all(torch.equal(before[k], v) for k, v in pol.belief.state_dict().items())

    # the checkpoint carries the belief: a loaded policy acts exactly as the saved one
    path = save_checkpoint(tmp_path / "p.pt", pol, None, {}, 1, 1)
    data = load_checkpoint(path)
    assert data["bp_version"] == "bp1" and data["policy_spec"]["belief_planes"] is True
    back = load_policy(path)
    assert torch.equal(back.prepare(torch.tensor(obs)), pol.prepare(torch.tensor(obs)))
    torch.manual_seed(0)
    a = back.act(obs, mask)
    torch.manual_seed(0)
    assert torch.equal(a, pol.act(obs, mask))

    data["bp_version"] = "bp0"
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(ValueError, match="belief planes 'bp0', this code makes 'bp1'"):
        load_checkpoint(tmp_path / "old.pt")


def test_bad_belief_settings_are_refused():
    spec = load_belief("belief").net.spec
    with pytest.raises(ValueError, match="needs belief_spec"):
        ActorCritic(belief_planes=True)
    with pytest.raises(ValueError, match="belief_planes is false"):
        ActorCritic(belief_spec=spec)
    with pytest.raises(ValueError, match="reads 99 planes, the observation has 97"):
        ActorCritic(obs_planes=97, belief_planes=True, belief_spec=spec)
    # a policy without them keeps the spec of every earlier checkpoint
    assert "belief_planes" not in ActorCritic().spec


def test_a_run_with_a_missing_or_foreign_belief_is_refused_before_it_starts(tmp_path, capsys):
    base = [
        "--config",
        str(ROOT / "configs/ppo_smoke.yaml"),
        "--set",
        f"runs_dir={tmp_path}",
        "--set",
        "belief_planes=true",
    ]
    for sets, why in (
        ([f"belief_model=belief:{tmp_path / 'nope.pt'}"], "belief_model: bad belief spec .* no such file"),
        (["rules=fuzhou-home"], "belief_model: belief: trained on preset fuzhou-lianzhong, not fuzhou-home"),
    ):
        with pytest.raises(SystemExit) as e:
            main(base + sum((["--set", s] for s in sets), []))
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and re.search(why, err[0]), err
    assert not any(tmp_path.iterdir())  # nothing written


def test_a_short_run_with_belief_planes_trains_and_plays(tmp_path):
    rc = main(
        ["--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", "run_name=bp",
         "--set", "belief_planes=true", "--set", "obs_version=3", "--set", "hand_features=true",
         "--set", "pool_prob=0", "--set", "eval_every=0"]
    )  # fmt: skip
    assert rc == 0
    ckpt = tmp_path / "bp" / "checkpoints" / "latest.pt"
    pol = load_policy(ckpt)
    shipped = load_belief("belief").net.state_dict()
    assert all(torch.equal(shipped[k], v) for k, v in pol.belief.state_dict().items())  # frozen through PPO
    from fzmj.agents.evaluate import main as fzmj_eval

    assert fzmj_eval(["--agents", f"ppo:{ckpt}", "heuristic", "--hands", "8", "--no-progress"]) in (0, None)

    # --resume rebuilds the network from the checkpoint's own belief spec (whatever belief_model
    # says now), and refuses to drop the planes
    mid = tmp_path / "bp" / "checkpoints" / "update_000002.pt"
    resume = ["--resume", str(mid), "--set", "eval_every=0"]
    with pytest.raises(SystemExit) as e:
        main(resume + ["--set", "belief_planes=false"])
    assert e.value.code == 2
    assert main(resume) == 0
    assert load_checkpoint(ckpt)["global_step"] == 2048
    shipped_again = load_policy(ckpt).belief.state_dict()
    assert all(torch.equal(shipped[k], v) for k, v in shipped_again.items())
