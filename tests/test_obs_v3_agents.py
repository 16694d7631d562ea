"""Observation v3 outside the encoder: v2 agents and checkpoints read v3 through its v2 planes and
play exactly as on v2; a v3 policy refuses v2 in one line; the single-seat env and the trainer's
config take ``obs_version``; the host-side ``prepare_host`` equals ``prepare``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fzmj.agents import make_agent
from fzmj.agents.base import as_batch
from fzmj.agents.policy import ActorCritic
from fzmj_env.encode import NUM_CHANNELS, V3_CHANNELS, v2_planes
from fzmj_env.vector import VectorEnv


def _batches(n_steps: int = 40, B: int = 16):
    """(v2 obs, v3 obs, mask) of the same tables along one random game."""
    a, b = VectorEnv(B, seed=9), VectorEnv(B, seed=9, obs_version=3)
    oa, ma, _ = a.reset()
    ob, _, _ = b.reset()
    rng = np.random.default_rng(0)
    for _ in range(n_steps):
        yield oa.copy(), ob.copy(), ma.copy()
        act = (rng.random(ma.shape) * ma).argmax(1)
        oa, ma, *_ = a.step(act)
        ob, *_ = b.step(act)


def test_as_batch_slices_v3_for_v2_agents_and_refuses_v2_for_v3():
    o2, o3, m = next(_batches(3))
    s, _ = as_batch(o3, m)
    assert s.shape == (16, NUM_CHANNELS, 27) and np.array_equal(s, o2) and s.flags.c_contiguous
    assert as_batch(o3, m, channels=V3_CHANNELS)[0].shape == (16, V3_CHANNELS, 27)
    with pytest.raises(ValueError, match="reads observation v3 .* make the env with obs_version=3"):
        as_batch(o2, m, channels=V3_CHANNELS)
    assert np.array_equal(v2_planes(o3), o2)


@pytest.mark.parametrize("spec", ["heuristic", "pretrained"])
def test_v2_agents_play_v3_exactly_as_v2(spec):
    agent = make_agent(spec)
    n = 0
    for o2, o3, m in _batches():
        assert np.array_equal(agent.act(o3, m), agent.act(o2, m))
        n += 1
    assert n == 40


def test_v3_policy_reads_v3_and_refuses_v2():
    torch.manual_seed(0)
    pol = ActorCritic(hidden_sizes=[16], obs_planes=V3_CHANNELS, hand_features=True).eval()
    assert pol.obs_version == "v3" and pol.in_planes == V3_CHANNELS + 18
    o2, o3, m = next(_batches(2))
    a = pol.act(torch.from_numpy(o3), torch.from_numpy(m), deterministic=True)
    assert a.shape == (16,) and bool(torch.from_numpy(m).gather(1, a[:, None]).all())
    with pytest.raises(ValueError, match="292"):
        pol.act(torch.from_numpy(o2), torch.from_numpy(m))
    with pytest.raises(ValueError, match="trained on observation v3"):
        pol.prepare(torch.from_numpy(o2))


@pytest.mark.parametrize("hand_features", [False, True])
def test_prepare_host_equals_prepare(hand_features):
    """The rollout's host-side input is exactly what ``prepare`` made of a tensor (v2 and v3)."""
    pol = ActorCritic(hidden_sizes=[16], hand_features=hand_features)
    for o2, o3, _ in _batches(6):
        for o in (o2, o3):
            host = pol.prepare_host(o)
            assert np.array_equal(np.asarray(host), pol.prepare(torch.from_numpy(o)).numpy())
            assert torch.equal(pol.prepare(torch.from_numpy(np.ascontiguousarray(host))), torch.from_numpy(host))


def test_single_seat_env_emits_v3():
    import gymnasium as gym

    import fzmj_env  # noqa: F401 - registers the env id

    e3 = gym.make("fzmj/SingleSeat-v0", obs_version=3, opponents="heuristic").unwrapped
    e2 = gym.make("fzmj/SingleSeat-v0", opponents="heuristic").unwrapped
    assert e3.observation_space.shape == (V3_CHANNELS, 27) and e3.obs_version == "v3"
    assert e3.metadata["obs_version"] == "v3"
    o3, i3 = e3.reset(seed=5)
    o2, i2 = e2.reset(seed=5)
    for _ in range(30):  # the same game, seen through both layouts
        assert np.array_equal(o3[:NUM_CHANNELS], o2) and o3.shape == (V3_CHANNELS, 27)
        a = int(np.flatnonzero(i2["action_mask"])[0])
        o3, _, t3, _, i3 = e3.step(a)
        o2, _, t2, _, i2 = e2.step(a)
        assert t2 == t3
        if t2:
            o3, i3 = e3.reset()
            o2, i2 = e2.reset()


def test_trainer_config_takes_obs_version():
    from fzmj.train.args import Args
    from fzmj.train.config_checks import network_changes

    args = Args()
    assert args.obs_version == 2
    args.obs_version = 3
    assert network_changes({"obs_planes": NUM_CHANNELS}, args) == ["obs_version=3 (checkpoint: 2)"]
    assert network_changes({"obs_planes": V3_CHANNELS}, args)[:1] != ["obs_version=3 (checkpoint: 2)"]


def test_trainer_trains_on_v3_and_the_checkpoint_plays_in_eval(tmp_path, capsys):
    """``obs_version: 3`` with hand features: the run's checkpoint says v3, loads, plays fzmj-eval
    against v2 agents; resuming it with ``obs_version=2`` is refused in one line."""
    from pathlib import Path

    from fzmj.agents.checkpoint import load_checkpoint
    from fzmj.agents.evaluate import evaluate
    from fzmj.train.ppo_selfplay import main

    smoke = str(Path(__file__).resolve().parents[1] / "configs/ppo_smoke.yaml")
    sets = ["runs_dir=" + str(tmp_path), "run_name=v3", "obs_version=3", "hand_features=true"]
    sets += ["total_timesteps=512", "num_tables=16", "num_steps=16", "eval_every=0", "pool_prob=0"]
    assert main(["--config", smoke] + [x for s in sets for x in ("--set", s)]) == 0
    path = tmp_path / "v3/checkpoints/latest.pt"
    data = load_checkpoint(path)
    assert data["obs_version"] == "v3" and data["obs_planes"] == V3_CHANNELS
    agent = make_agent(f"ppo:{path}")
    assert agent.obs_version == "v3"
    res = evaluate([agent, "heuristic"], hands=8, seed=3, progress=False)
    assert res is not None
    with pytest.raises(SystemExit) as e:
        main(["--resume", str(path), "--set", "obs_version=2"])
    assert e.value.code == 2
    assert "cannot change obs_version=2 (checkpoint: 3)" in capsys.readouterr().err


def test_a_duck_typed_python_agent_declaring_v3_gets_v3_in_eval_and_the_league(tmp_path, monkeypatch):
    """A ``python:`` class that does not subclass Agent and says ``obs_version = "v3"`` is given v3
    by the evaluator (which the league plays through) and the review pages alike: the layout is
    decided in one place (``agent_obs_version``), through make_agent's wrapper. A bogus layout is a
    bad spec."""
    from fzmj.agents import AgentSpecError
    from fzmj.agents.evaluate import evaluate
    from fzmj.agents.evaluate.play import obs_layouts
    from fzmj.web.review import observation_planes

    (tmp_path / "duck_v3_bot.py").write_text(
        "import numpy as np\n"
        "class Duck:\n"
        "    obs_version = 'v3'\n"
        "    shapes = set()\n"
        "    def act(self, obs, mask):\n"
        "        assert obs.shape[1:] == (292, 27), obs.shape\n"
        "        Duck.shapes.add(obs.shape[1:])\n"
        "        return np.argmax(mask, axis=1)\n"
        "class Bogus(Duck):\n"
        "    obs_version = 'v7'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    duck = make_agent("python:duck_v3_bot:Duck")
    assert obs_layouts([duck, make_agent("random")]) == ["v3", "v2"]
    assert observation_planes(duck) == V3_CHANNELS
    res = evaluate([duck, "random"], hands=8, seed=3, progress=False)
    assert res is not None and duck.obj.shapes == {(V3_CHANNELS, 27)}
    with pytest.raises(AgentSpecError, match="obs_version must be 'v2' or 'v3', got 'v7'"):
        make_agent("python:duck_v3_bot:Bogus")
