"""Behaviour cloning and the teacher term: demonstrations, masked CE, the
value head on returns, and the trainer's warm start / teacher logging end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from fzmj.agents.policy import ActorCritic
from fzmj.train.bc import behaviour_clone, collect_demonstrations, holdout_metrics, masked_cross_entropy
from fzmj.train.ppo_selfplay import main
from fzmj_env.encode import NUM_CHANNELS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demos():
    return collect_demonstrations("heuristic", 3000, num_tables=32, seed=1, gamma=1.0, progress=False)


def test_demonstrations_are_teacher_choices_with_hand_returns(demos):
    n = len(demos)
    assert n >= 3000 and demos.obs.shape == (n, NUM_CHANNELS, 27) and demos.mask.shape == (n, 62)
    mask = demos.mask.numpy()
    assert (mask.sum(1) > 1).all()  # forced moves are left out
    assert mask[np.arange(n), demos.action.numpy()].all()  # the teacher's actions are legal
    # gamma = 1 and rewards only at a hand's end: a return is that seat's hand score x 0.02
    points = demos.ret.numpy() / 0.02
    assert np.allclose(points, np.round(points), atol=1e-3) and (points != 0).any()
    # along one (table, seat) chain the return changes only when a new game starts
    t0 = demos.table == demos.table[0]
    chain = demos.ret.numpy()[t0 & (demos.seat == demos.seat[0])]
    assert len(np.unique(chain)) <= len(chain) // 3 + 1


def test_behaviour_cloning_learns_the_teacher_and_never_the_illegal(demos):
    torch.manual_seed(0)
    policy = ActorCritic(hidden_sizes=(64,), hand_features=True)
    logs = []
    held = torch.as_tensor(np.flatnonzero(demos.table == np.unique(demos.table)[0]))
    before = holdout_metrics(policy, demos, held)["accuracy"]
    stats = behaviour_clone(
        policy,
        demos,
        epochs=8,
        batch_size=128,
        lr=3e-3,
        progress=False,
        log=lambda name, value, step: logs.append(name),
    )
    assert {"bc/accuracy", "bc/ce", "bc/value_loss"} <= set(logs)
    # measured 0.64 on these 3,000 decisions (0.94 on the documented run's 200,000)
    assert stats["accuracy"] > 0.55 > before + 0.2 and stats["holdout_decisions"] > 0
    with torch.no_grad():
        _, _, logits = masked_cross_entropy(policy, demos.obs[:200], demos.mask[:200], demos.action[:200])
    probs = torch.softmax(logits, -1)
    assert float(probs[demos.mask[:200] == 0].max()) == 0.0


def _tags(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    ea.Reload()
    return set(ea.Tags()["scalars"])


@pytest.mark.parametrize("mode", ["kl", "ce"])
def test_warm_start_and_teacher_term_in_a_smoke_run(tmp_path, mode, capsys):
    bc = ["--set", "bc_decisions=600", "--set", "bc_eval_hands=8", "--set", "bc_epochs=1"] if mode == "kl" else []
    argv = [
        "--config",
        str(ROOT / "configs/ppo_smoke.yaml"),
        "--set",
        f"runs_dir={tmp_path}",
        "--set",
        "run_name=t",
        "--set",
        "teacher_coef=0.2",
        "--set",
        f"teacher_mode={mode}",
        "--set",
        "hand_features=true",
        "--set",
        "eval_every=0",
        "--set",
        "pool_learner_seats=1",
        *bc,
    ]
    assert main(argv) == 0
    tags = _tags(tmp_path / "t")
    assert {"losses/teacher_loss", "charts/teacher_coef"} <= tags
    if mode == "kl":
        assert {"bc/accuracy", "bc/score_vs_teacher", "bc/ce"} <= tags
        assert (tmp_path / "t" / "checkpoints" / "bc.pt").is_file()
        assert "vs 3x heuristic" in capsys.readouterr().out


def test_kl_teacher_needs_a_bc_policy():
    with pytest.raises(SystemExit) as e:
        main(["--config", "ppo_smoke", "--set", "teacher_coef=0.1", "--set", "teacher_mode=kl"])
    assert e.value.code == 2
