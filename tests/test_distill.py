"""Distillation of the search agent: ``bc_teacher: search`` and the expert-iteration loop
(``algo: distill``, ``train/distill.py``) at a tiny scale: the labels are the search's, the
fitted policy agrees with them more than before, checkpoints load as ``ppo:PATH``, the same
seed gives the same weights, bad configs stop with one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from fzmj.agents import make_agent
from fzmj.agents.checkpoint import load_checkpoint
from fzmj.agents.policy import ActorCritic
from fzmj.train.bc import collect_demonstrations, eval_opponent, search_cost
from fzmj.train.distill import PolicyActor
from fzmj.train.ppo_selfplay import main

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "configs/distill_search.yaml")
SEARCH = "search:heuristic:worlds=4,z=0"  # z=0: deviate on any mean gain, so the labels differ from the blueprint's


class Spy:
    """A teacher that records every (observation, mask) it labelled and its answer."""

    def __init__(self, agent):
        self.agent, self.seen = agent, []

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, obs, mask):
        out = self.agent.act(obs, mask)
        self.seen += [(o.tobytes(), m.tobytes(), int(a)) for o, m, a in zip(obs, mask, out, strict=True)]
        return out


def test_labels_come_from_the_search_on_the_learners_states():
    torch.manual_seed(0)
    learner = ActorCritic(hidden_sizes=(16,))
    spy = Spy(make_agent(SEARCH))
    demos = collect_demonstrations(spy, 200, num_tables=8, seed=3, progress=False, actor=PolicyActor(learner))
    n = len(demos)
    assert n >= 200 and spy.agent.stats["searched"] > 0
    labelled = {(o, m): a for o, m, a in spy.seen}
    for i in range(n):  # every stored label is the search's answer at that very observation
        key = (demos.obs[i].numpy().tobytes(), demos.mask[i].numpy().tobytes())
        assert labelled[key] == int(demos.action[i])
    mask = demos.mask.numpy()
    assert mask[np.arange(n), demos.action.numpy()].all() and mask[np.arange(n), demos.played.numpy()].all()
    # the learner (an untrained network) played its own moves, not the search's
    assert (demos.played != demos.action).float().mean() > 0.3
    # the played actions are the learner's greedy choices
    assert torch.equal(demos.played[:64], learner.act(demos.obs[:64], demos.mask[:64], deterministic=True))


def _run(tmp_path, name, *sets):
    argv = ["--config", CONFIG, "--set", f"runs_dir={tmp_path}", "--set", f"run_name={name}"]
    tiny = [
        "bc_decisions=0",
        "num_tables=8",
        "hidden_sizes=[32]",
        "hand_features=false",
        f"distill_teacher={SEARCH}",
        "distill_iterations=2",
        "distill_decisions=150",
        "bc_epochs=8",
        "bc_batch_size=64",
        "bc_learning_rate=0.003",
        "eval_every=0",
        *sets,
    ]
    for s in tiny:
        argv += ["--set", s]
    return argv


def test_expert_iteration_fits_the_labels_and_saves_loadable_checkpoints(tmp_path, capsys):
    assert main(_run(tmp_path, "a")) == 0
    out = capsys.readouterr().out
    assert "distill: iteration 2/2" in out and "searched" in out
    ckpts = tmp_path / "a" / "checkpoints"
    for it in (1, 2):
        stats = load_checkpoint(ckpts / f"iter_{it:03d}.pt")["distill"]
        assert stats["decisions"] >= 150
        assert stats["agreement_after"] > stats["agreement_before"] + 0.1
    agent = make_agent(f"ppo:{ckpts / 'latest.pt'}")
    from fzmj_env.vector import VectorEnv

    obs, mask, _ = VectorEnv(4, seed=5).reset()
    acts = agent.act(obs, mask)
    assert mask[np.arange(4), acts].all()
    # the same seed, the same run
    assert main(_run(tmp_path, "b", "algo=distill")) == 0
    a, b = load_checkpoint(ckpts / "latest.pt")["model"], load_checkpoint(tmp_path / "b/checkpoints/latest.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    "override, match",
    [
        ("distill_teacher=search:worlds=1", "distill_teacher: bad agent spec 'search:worlds=1': worlds must be >= 2"),
        ("distill_teacher=search:heuristic:budget=3", "distill_teacher: bad agent spec"),
        ("distill_decisions=0", "distill_decisions: expected a positive integer"),
        ("algo=dagger", "algo: expected ppo or distill"),
        ("oracle_critic=true", "oracle_critic"),
    ],
)
def test_bad_distill_config_is_one_line_exit_2(tmp_path, capsys, override, match):
    with pytest.raises(SystemExit) as e:
        main(_run(tmp_path, "bad", override))
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1
    assert not (tmp_path / "bad").exists()


def test_bc_teacher_takes_a_search_spec(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--set", "bc_decisions=100", "--set", "bc_teacher=search:top=1", "--set", f"runs_dir={tmp_path}"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "bc_teacher: bad agent spec 'search:top=1': top must be >= 2" in err and len(err.splitlines()) == 1
    assert eval_opponent("search:random:worlds=8") == "random" and eval_opponent("heuristic") == "heuristic"
    assert "minutes" in search_cost("search:worlds=32", 10_000) and search_cost("heuristic", 10) == ""
    assert "slower" in search_cost("search:random", 10) and "slower" not in search_cost("search", 10)
    # a search teacher warm-starts a PPO run (its clone checked against the search's blueprint)
    argv = [
        "--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", "run_name=w",
        "--set", "bc_decisions=120", "--set", f"bc_teacher={SEARCH}", "--set", "bc_eval_hands=4",
        "--set", "bc_epochs=1", "--set", "eval_every=0", "--set", "total_timesteps=512",
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"bc: teacher {SEARCH!r} searches each decision" in out and "the search's blueprint" in out
    assert load_checkpoint(tmp_path / "w/checkpoints/bc.pt")["bc"]["decisions"] >= 120
