"""Training with what the table hides (docs/training.md): the oracle planes' waits, the oracle
critic fitted by behaviour cloning, the all-seeing teacher ``oracle:defend``, and that nothing a
policy plays with reads the hidden state (R12)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from fzmj.agents import make_agent
from fzmj.agents.base import AgentSpecError
from fzmj.agents.checkpoint import load_policy, save_checkpoint
from fzmj.agents.policy import ORACLE_V1_CHANNELS, ActorCritic, build_policy
from fzmj.agents.ppo_agent import PRETRAINED_VERSIONS, pretrained_path
from fzmj.train.args import Args
from fzmj.train.bc import behaviour_clone, collect_demonstrations
from fzmj.train.config import load_config, resolve_config
from fzmj.train.oracle_teacher import OracleDefender, oracle_danger
from fzmj.train.ppo_selfplay import main
from fzmj_env import Game, encode
from fzmj_env.core import state
from fzmj_env.core.hand import get_win_table, wait_mask_counts

ROOT = Path(__file__).resolve().parents[1]


def _states(n_games: int, seed: int):
    """Games stopped at many decision points (random legal play)."""
    rng = np.random.default_rng(seed)
    for g in range(n_games):
        game = Game()
        game.reset(seed=seed * 100 + g)
        i = 0
        while not game.done:
            yield game, i
            game.step(int(rng.choice(game.legal_actions)))
            i += 1


def _obs(game: Game, seat: int) -> np.ndarray:
    out = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
    encode.encode_table(game.buf, 0, seat, out)
    return out


def _oracle(game: Game, seat: int) -> np.ndarray:
    out = np.zeros((encode.ORACLE_CHANNELS, 27), np.int8)
    encode.oracle_table(game.buf, 0, seat, out)
    return out


def test_oracle_waits_and_wins_on_are_the_engines_win_test():
    """``r*_waits``: the kinds completing a 3n+1 hand; ``r*_wins_on``: those less 过水, the gold
    and everything after a thrown gold (R9). Both empty for a hand of 3n+2."""
    wt, waits = get_win_table(), np.zeros(27, np.int8)
    ready = won_on = 0
    for game, _ in _states(8, seed=3):
        v = game.view
        gold = int(v.m[state.GOLD])
        for me in range(4):
            o = _oracle(game, me)
            for r in range(1, 4):
                s = (me + r) % 4
                hand = v.hand[s].astype(np.int64)
                want_w = np.zeros(27, bool)
                if hand.sum() % 3 == 1:
                    wait_mask_counts(wt, hand, gold, waits)
                    want_w = waits > 0
                want_on = want_w & (v.passed[s] == 0) & (np.arange(27) != gold) & (v.gold_thrown[s] == 0)
                assert np.array_equal(o[encode.O_WAITS + r - 1] > 0, want_w)
                assert np.array_equal(o[encode.O_WINS_ON + r - 1] > 0, want_on)
                ready += want_w.any()
                won_on += want_on.any()
    assert ready > 20 and won_on > 10  # the test saw ready hands


def test_actor_never_reads_the_oracle_in_training_or_from_a_checkpoint(tmp_path):
    """Worlds that the acting seat cannot tell apart (``Game.resample``) give the same actor
    logits with an oracle critic, through the PPO path and through a loaded checkpoint; the
    critic's value does move (it reads the oracle)."""
    torch.manual_seed(0)
    policy = ActorCritic(hidden_sizes=(32,), hand_features=True, oracle_critic=True)
    path = save_checkpoint(tmp_path / "p.pt", policy, config={})
    loaded = load_policy(path)
    checked = moved = 0
    for game, i in _states(3, seed=8):
        if i % 9 or game.done:
            continue
        seat = game.seat
        world = game.resample(seat, seed=i)
        obs = torch.from_numpy(np.stack([_obs(game, seat), _obs(world, seat)]))
        assert torch.equal(obs[0], obs[1])
        mask = torch.from_numpy(np.stack([game.mask, world.mask]))
        oracle = torch.from_numpy(np.stack([_oracle(game, seat), _oracle(world, seat)]))
        with torch.no_grad():
            _, _, _, value, logp = policy.get_action_value_and_logp(obs, mask, torch.zeros(2, dtype=torch.long), oracle)
            for net in (policy, loaded):
                assert torch.equal(net.act(obs, mask, deterministic=True)[0], net.act(obs, mask, deterministic=True)[1])
        assert torch.equal(logp[0], logp[1])
        checked += 1
        moved += not torch.equal(oracle[0], oracle[1]) and bool(value[0] != value[1])
    assert checked >= 10 and moved >= 5


def test_behaviour_cloning_fits_the_oracle_critic():
    demos = collect_demonstrations("heuristic", 1500, num_tables=16, seed=2, progress=False, oracle=True)
    assert demos.oracle.shape == (len(demos), encode.ORACLE_CHANNELS, 27)
    torch.manual_seed(0)
    policy = ActorCritic(hidden_sizes=(32,), oracle_critic=True)
    stats = behaviour_clone(policy, demos, epochs=4, batch_size=128, lr=3e-3, progress=False)
    assert stats["value_loss"] < 0.5 and stats["accuracy"] > 0.2
    no_oracle = collect_demonstrations("heuristic", 200, num_tables=8, seed=2, progress=False)
    with pytest.raises(ValueError, match="oracle planes"):
        behaviour_clone(policy, no_oracle, epochs=1, progress=False)


def test_the_oracle_teacher_labels_from_the_oracle_and_is_no_agent():
    """``oracle:defend`` moves the heuristic's discard only where the oracle says it deals in, to
    a safe legal one; no agent spec, CLI or bot can name it."""
    teacher = OracleDefender()
    demos = collect_demonstrations(teacher, 2000, num_tables=16, seed=4, progress=False)
    assert demos.oracle is not None and teacher.changed > 0
    danger = oracle_danger(demos.oracle.numpy())
    rows = np.arange(len(demos))
    turn = demos.obs.numpy()[:, encode.P_PHASE, encode.PC_CLAIM] == 0
    labelled = demos.action.numpy()
    discards = turn & (labelled < 27)
    dealt = discards & danger[rows, np.minimum(labelled, 26)]
    assert dealt.sum() <= teacher.stuck  # a dangerous label only where no safe discard was left
    assert demos.mask.numpy()[rows, labelled].all()
    with pytest.raises(AgentSpecError):
        make_agent("oracle:defend")
    with pytest.raises(ValueError, match="oracle planes"):
        teacher.act(demos.obs[:2].numpy(), demos.mask[:2].numpy(), None)


def test_an_oracle_v1_critic_still_plays_and_refuses_to_resume(tmp_path):
    """A checkpoint saved before the waits planes (37 oracle planes, no ``oracle_channels``)."""
    old = ActorCritic(hidden_sizes=(16,), oracle_critic=True, oracle_channels=ORACLE_V1_CHANNELS)
    spec = {k: v for k, v in old.spec.items() if k != "oracle_channels"}
    assert build_policy(spec).oracle_channels == ORACLE_V1_CHANNELS
    path = save_checkpoint(tmp_path / "old.pt", old, config={})
    data = torch.load(path, weights_only=False)
    data["policy_spec"] = spec
    torch.save(data, path)
    agent = make_agent(f"ppo:{path}")
    game = Game()
    game.reset(seed=1)
    assert game.mask[int(agent.act(_obs(game, game.seat)[None], game.mask[None])[0])]
    with pytest.raises(SystemExit) as e:
        main(["--resume", str(path), "--set", f"runs_dir={tmp_path}"])
    assert e.value.code == 2


@pytest.mark.parametrize(
    "sets, words",
    [
        (["bc_dagger_rounds=1", "bc_decisions=0"], "bc_dagger_rounds"),
        (["bc_teacher=oracle:defend", "teacher_coef=0.1", "teacher_mode=ce"], "teacher_mode"),
        (["eval_paired_hands=10"], "eval_paired_hands"),
        (["eval_paired_every=-1"], "eval_paired_every"),
    ],
)
def test_bad_oracle_settings_are_one_line(sets, words, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--config", "ppo_smoke", *[a for s in sets for a in ("--set", s)]])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_smoke_run_with_the_oracle_teacher_critic_and_paired_curve(tmp_path):
    """Every lever at smoke size: DAgger from ``oracle:defend``, the oracle critic, oracle guiding
    with the KL pull toward the all-seeing clone, the paired evaluation in TensorBoard and in
    ``paired.jsonl``; the policy checkpoint plays as ``ppo:PATH`` on the observation alone."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    sets = [
        f"runs_dir={tmp_path}",
        "run_name=o",
        "bc_decisions=600",
        "bc_epochs=1",
        "bc_eval_hands=8",
        "bc_teacher=oracle:defend",
        "bc_dagger_rounds=1",
        "oracle_critic=true",
        "oracle_guide=true",
        "teacher_coef=0.1",
        "eval_every=0",
        "eval_paired_every=4",
        "eval_paired_hands=8",
        "eval_paired_seeds=1",
    ]
    assert main(["--config", "ppo_smoke", *[a for s in sets for a in ("--set", s)]]) == 0
    run = tmp_path / "o"
    rows = [json.loads(line) for line in (run / "paired.jsonl").read_text().splitlines()]
    assert [r["update"] for r in rows] == [4] and rows[0]["hands"] == 8
    ea = EventAccumulator(str(run), size_guidance={"scalars": 0})
    ea.Reload()
    assert {"eval/paired_vs_heuristic", "eval/paired_vs_heuristic_ci_low", "charts/oracle_guide_keep"} <= set(
        ea.Tags()["scalars"]
    )
    agent = make_agent(f"ppo:{run / 'checkpoints' / 'latest.pt'}")
    game = Game()
    game.reset(seed=3)
    assert game.mask[int(agent.act(_obs(game, game.seat)[None], game.mask[None])[0])]


@pytest.mark.parametrize("trunk", [{}, {"network": "resnet", "res_channels": 8, "res_blocks": 1}])
def test_an_oracle_guided_actor_reads_the_oracle_in_training_and_never_at_play(tmp_path, trunk):
    """Oracle guiding: the actor's logits move with the oracle planes it is given (training), and
    every play-time path (``act``, ``ppo:PATH``'s probabilities) gives it zeros: worlds the seat
    cannot tell apart get the same play. The MLP reads the oracle planes flattened after the
    observation's, the resnet as more channels over the 27 kinds."""
    torch.manual_seed(1)
    policy = ActorCritic(hidden_sizes=(32,), oracle_critic=True, oracle_guide=True, **trunk)
    if trunk:  # the second conv of a block starts at zero: make the blocks read something
        for b in policy.trunk.blocks:
            torch.nn.init.normal_(b.conv2.weight, std=0.1)
    with pytest.raises(ValueError, match="oracle_guide"):
        ActorCritic(hidden_sizes=(32,), oracle_guide=True)  # no critic: refused
    path = save_checkpoint(tmp_path / "g.pt", policy, config={})
    agent = make_agent(f"ppo:{path}")
    assert load_policy(path).oracle_guide
    guided = same_play = 0
    for game, i in _states(3, seed=5):
        if i % 9:
            continue
        seat = game.seat
        world = game.resample(seat, seed=i)
        obs = torch.from_numpy(np.stack([_obs(game, seat), _obs(world, seat)]))
        mask = torch.from_numpy(np.stack([game.mask, world.mask]))
        oracle = torch.from_numpy(np.stack([_oracle(game, seat), _oracle(world, seat)]))
        with torch.no_grad():
            *_, logp = policy.get_action_value_and_logp(obs, mask, torch.zeros(2, dtype=torch.long), oracle, oracle)
            play = policy.log_probs(obs, mask)  # no guide: zeros
        guided += not torch.equal(oracle[0], oracle[1]) and not torch.equal(logp[0], logp[1])
        assert torch.equal(play[0], play[1])
        probs, _ = agent.action_probs(obs.numpy(), mask.numpy())
        assert np.array_equal(probs[0], probs[1])
        same_play += 1
    assert guided >= 5 and same_play >= 10


def test_oracle_guiding_settings_are_checked(capsys):
    for sets, words in ((["oracle_guide=true"], "needs oracle_critic"), (["oracle_guide=true", "oracle_critic=true",
                        "oracle_guide_anneal=0"], "oracle_guide_anneal")):  # fmt: skip
        with pytest.raises(SystemExit) as e:
            main(["--config", "ppo_smoke", *[a for s in sets for a in ("--set", s)]])
        assert e.value.code == 2 and words in capsys.readouterr().err


def test_the_oracle_fades_over_its_share_of_the_run_and_anneal_0_never_reads_it():
    from fzmj.train.ppo_selfplay import guide_keep

    # a guided run: kept at update 1, half at a quarter of the run, gone from its midpoint on
    assert [guide_keep(u, 100, 0.5) for u in (1, 26, 51, 52, 100)] == [1.0, 0.5, 0.0, 0.0, 0.0]
    # a run going on from a guided checkpoint: never, from its first update
    assert [guide_keep(u, 100, 0.0) for u in (1, 2, 100)] == [0.0, 0.0, 0.0]


def test_anneal_0_is_accepted_only_when_going_on_from_a_checkpoint():
    from fzmj.train.config_checks import dependency_problems

    args = load_config(Args, resolve_config("ppo_oracle_phase2"))  # bc_checkpoint: pretrained:v2
    assert args.bc_checkpoint == "pretrained:v2" and not dependency_problems(args)
    for named in (str(pretrained_path("v2")), "pretrained"):
        args.bc_checkpoint = named
        assert not dependency_problems(args)
    args.bc_checkpoint = ""
    problems = dependency_problems(args)
    assert any("oracle_guide_anneal" in p and "bc_checkpoint" in p for p in problems), problems
    for bad in ("pretrained:v9", "pretrained:"):  # as the agent spec reads them: unknown versions
        args.bc_checkpoint = bad
        assert any(p.startswith("bc_checkpoint: unknown pretrained version") for p in dependency_problems(args))


def test_a_second_phase_goes_on_from_the_shipped_weights_without_the_oracle(tmp_path):
    """ppo_oracle_phase2 at smoke size: the run starts from pretrained:v2's policy and critic (a
    learning rate of 1e-12 leaves them as loaded) and its actor's oracle input is never kept."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    sets = [f"runs_dir={tmp_path}", "run_name=p2", "num_tables=8", "num_steps=16", "total_timesteps=256",
            "learning_rate=1e-12", "eval_every=0", "eval_paired_every=0", "save_every=1"]  # fmt: skip
    assert main(["--config", "ppo_oracle_phase2", *[a for s in sets for a in ("--set", s)]]) == 0
    run = tmp_path / "p2"
    shipped = torch.load(pretrained_path("v2"), map_location="cpu", weights_only=False)["model"]
    trained = torch.load(run / "checkpoints" / "latest.pt", map_location="cpu", weights_only=False)["model"]
    assert shipped.keys() == trained.keys()
    assert all(torch.allclose(shipped[k].float(), trained[k].float(), atol=1e-6) for k in shipped)
    ea = EventAccumulator(str(run), size_guidance={"scalars": 0})
    ea.Reload()
    assert [e.value for e in ea.Scalars("charts/oracle_guide_keep")] == [0.0, 0.0]


@pytest.mark.parametrize("version", sorted(PRETRAINED_VERSIONS))
def test_every_shipped_pretrained_plays_from_its_seat_alone(version):
    """Each shipped ``pretrained:vN`` (an oracle-guided one too): worlds the seat cannot tell apart
    get the same action probabilities, and a guided actor's play equals its logits with the
    oracle planes zeroed (never the true ones)."""
    agent = make_agent(f"pretrained:{version}")
    net = load_policy(pretrained_path(version))
    checked = 0
    for game, i in _states(2, seed=11):
        if i % 7:
            continue
        seat = game.seat
        world = game.resample(seat, seed=i)
        obs = np.stack([_obs(game, seat), _obs(world, seat)])
        mask = np.stack([game.mask, world.mask])
        probs, _ = agent.action_probs(obs, mask)
        assert np.array_equal(probs[0], probs[1])
        if net.oracle_guide:
            oracle = torch.from_numpy(np.stack([_oracle(game, seat), _oracle(world, seat)]))
            zeros = torch.zeros_like(oracle)
            o, m = torch.tensor(obs), torch.tensor(mask)
            assert torch.equal(net.log_probs(o, m), net.log_probs(o, m, zeros))
        checked += 1
    assert checked >= 10
