"""The in-run paired curve and the checkpoint it picks (docs/training.md, "Picking a checkpoint").

* The paired point plays its hands on several reserved wall seeds (2**63 + i), which no training
  wall comes from: every base seed of the trainer's tables and demonstrations is below 2**63.
* ``best.pt`` is the checkpoint of the highest point, written atomically with its figure, CI,
  hands, seeds, update and step, a line in ``train.log`` and a TensorBoard scalar.
* Bad input, one clear line each and nothing lost: ``--resume`` of a best.pt, ``--resume`` with
  a config of another recipe or network, a full disk while writing best.pt or a checkpoint.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from fzmj.agents import make_agent
from fzmj.agents.checkpoint import load_checkpoint, save_checkpoint
from fzmj.train import best as B
from fzmj.train import evaluation as E
from fzmj.train.args import Args
from fzmj.train.model import ActorCritic
from fzmj.train.ppo_selfplay import main

SMOKE = ["--config", "ppo_smoke", "--no-progress"]


def _sets(tmp_path: Path, name: str, *more: str) -> list[str]:
    sets = [
        f"runs_dir={tmp_path}",
        f"run_name={name}",
        "eval_every=0",
        "total_timesteps=1536",
        "eval_paired_seeds=2",
        *more,
    ]
    return [a for s in sets for a in ("--set", s)]


def _fake_points(monkeypatch, means: list[float]) -> None:
    """The paired evaluation replaced by the given figures, one per point (no hands played)."""
    it = iter(means)

    def point(self, spec):
        m = next(it)
        return {"mean": m, "ci95": [m - 1.0, m + 1.0], "hands": 16, "seeds": E.paired_seeds(2)}

    monkeypatch.setattr(E.Evaluator, "paired_point", point)


def _usage_error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: ") and "Traceback" not in err[0], err
    return err[0]


def test_the_paired_point_plays_reserved_seeds_and_best_pt_keeps_its_highest(tmp_path, capsys):
    """A real run: three points on two reserved seeds; best.pt is the first highest one, loadable as
    an agent, with its record; the log and TensorBoard say so."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    sets = _sets(tmp_path, "r", "eval_paired_every=1", "eval_paired_hands=16", "eval_paired_seeds=2")
    assert main(SMOKE + sets) == 0
    run = tmp_path / "r"
    rows = [json.loads(line) for line in (run / "paired.jsonl").read_text().splitlines()]
    assert [r["update"] for r in rows] == [1, 2, 3]
    assert all(r["seeds"] == [2**63, 2**63 + 1] and r["hands"] == 16 for r in rows)
    top = max(rows, key=lambda r: r["mean"])  # the first of equal maxima
    data = load_checkpoint(run / "checkpoints" / "best.pt")
    record = data["best"]
    assert record["update"] == top["update"] == data["update"] and record["mean"] == top["mean"]
    assert record["ci95"] == top["ci95"] and record["seeds"] == top["seeds"] and record["hands"] == 16
    assert data["optimizer"] is None  # a pick to play, not a point to resume from
    assert f"best.pt: update {top['update']} " in (run / "train.log").read_text()
    ea = EventAccumulator(str(run), size_guidance={"scalars": 0})
    ea.Reload()
    assert ea.Scalars("eval/best_paired_vs_heuristic")[-1].value == pytest.approx(top["mean"])
    assert make_agent(f"ppo:{run / 'checkpoints' / 'best.pt'}") is not None


def test_best_pt_moves_only_up(tmp_path, monkeypatch):
    """best.pt follows the running maximum; a tie keeps the earlier checkpoint."""
    _fake_points(monkeypatch, [0.5, 0.2, 0.5])
    assert main(SMOKE + _sets(tmp_path, "a", "eval_paired_every=1", "eval_paired_hands=16")) == 0
    assert load_checkpoint(tmp_path / "a/checkpoints/best.pt")["best"]["update"] == 1
    assert not list((tmp_path / "a/checkpoints").glob("best_*"))


def test_real_paired_points_leave_training_as_it_was(tmp_path):
    """The real evaluation (whose agents reset torch's seed) between updates changes nothing in
    the training: the same weights as a run without it."""
    base = ["pool_prob=0", "total_timesteps=1024"]
    assert main(SMOKE + _sets(tmp_path, "a", *base, "eval_paired_every=1", "eval_paired_hands=32")) == 0
    assert main(SMOKE + _sets(tmp_path, "b", *base)) == 0
    wa = load_checkpoint(tmp_path / "a/checkpoints/latest.pt")["model"]
    wb = load_checkpoint(tmp_path / "b/checkpoints/latest.pt")["model"]
    assert all((wa[k] == wb[k]).all() for k in wa)


def test_no_training_wall_comes_from_the_reserved_seeds(tmp_path, monkeypatch):
    """With the largest seed, the tables' and the demonstrations' base seeds stay below 2**63;
    the paired points' are at 2**63 and above."""
    import fzmj.train.bc as bc
    import fzmj.train.run_setup as rs

    seen: list[int] = []
    for module in (rs, bc):
        real = module.VectorEnv

        class Recording(real):
            def __init__(self, *a, _real=real, **k):
                seen.append(int(k["seed"]))
                _real.__init__(self, *a, **k)

        monkeypatch.setattr(module, "VectorEnv", Recording)
    _fake_points(monkeypatch, [0.0, 0.0, 0.0])
    more = ["seed=18446744073709551615", "bc_decisions=64", "bc_eval_hands=0", "eval_paired_every=1"]
    assert main(SMOKE + _sets(tmp_path, "s", "eval_paired_hands=16", "duplicate_group=2", "pool_prob=0", *more)) == 0
    assert len(seen) >= 2 and all(s < 2**63 for s in seen), seen
    assert min(E.paired_seeds(E.MAX_PAIRED_SEEDS)) == 2**63 and E.CONFIRM_SEEDS >= 2**63 + E.MAX_PAIRED_SEEDS


def test_the_paired_hands_split_evenly_over_the_seeds():
    from fzmj.train.config import ConfigError

    with pytest.raises(ConfigError, match="multiple of 4 x eval_paired_seeds = 12"):
        Args(eval_paired_hands=2000, eval_paired_seeds=3)
    with pytest.raises(ConfigError, match="at least 16"):
        Args(eval_paired_hands=8, eval_paired_seeds=2)
    with pytest.raises(ConfigError, match="eval_paired_seeds: expected at most"):
        Args(eval_paired_seeds=E.MAX_PAIRED_SEEDS + 1, eval_paired_hands=8 * (E.MAX_PAIRED_SEEDS + 1))
    assert E.pooled([{"mean": 1.0, "ci95": [0.0, 2.0], "hands": 8}, {"mean": 3.0, "ci95": [2.0, 4.0], "hands": 8}]) == {
        "mean": 2.0, "ci95": [2.0 - 2**0.5 / 2, 2.0 + 2**0.5 / 2], "hands": 16,
    }  # fmt: skip


# ---- bad input: one clear line, nothing lost ----------------------------------------------------------
@pytest.fixture
def run_with_best(tmp_path, monkeypatch):
    _fake_points(monkeypatch, [0.3, 0.9, 0.1])
    assert main(SMOKE + _sets(tmp_path, "r", "eval_paired_every=1", "eval_paired_hands=16")) == 0
    return tmp_path / "r" / "checkpoints"


def test_resume_of_a_best_pt_is_refused(run_with_best, capsys):
    before = {p.name: p.read_bytes() for p in run_with_best.iterdir()}
    line = _usage_error(capsys, ["--resume", str(run_with_best / "best.pt")])
    assert "is a run's best.pt" in line and "update 2" in line and "latest.pt" in line and "bc_checkpoint=" in line
    assert {p.name: p.read_bytes() for p in run_with_best.iterdir()} == before


@pytest.mark.parametrize(
    ("config", "what"),
    [("ppo_default", "num_tables: 32 in the checkpoint, 256 in the file"), ("ppo_oracle", "num_tables")],
)
def test_resume_with_the_config_of_another_recipe_is_refused(run_with_best, capsys, config, what):
    before = {p.name: p.read_bytes() for p in run_with_best.iterdir()}
    line = _usage_error(capsys, ["--config", config, "--resume", str(run_with_best / "latest.pt")])
    assert "the checkpoint's recipe differs from" in line and what in line and "--set key=value" in line
    assert {p.name: p.read_bytes() for p in run_with_best.iterdir()} == before


def test_resume_with_its_own_recipe_file_passes_and_another_network_is_refused(run_with_best, capsys):
    """The checkpoint's own config file (its changes given again with --set) passes; another
    network through --set is the network's line."""
    from fzmj.train.ppo_selfplay import parse_args

    own = ["--config", "ppo_smoke", "--resume", str(run_with_best / "latest.pt"), "--set", "total_timesteps=1536"]
    args, ckpt = parse_args(own)
    assert ckpt["update"] == 3 and args.total_timesteps == 1536
    line = _usage_error(capsys, [*own, "--set", "network=resnet"])
    assert "--resume keeps the checkpoint's network" in line and "network='resnet'" in line


def test_resume_of_a_run_folder_copied_without_its_clone_is_one_line(tmp_path, capsys):
    """The KL pull reads the run's bc.pt: a copy of the run folder without it stops at the parse."""
    assert main(SMOKE + _sets(tmp_path, "c", "bc_decisions=64", "bc_eval_hands=0", "teacher_coef=0.1")) == 0
    (tmp_path / "c" / "checkpoints" / "bc.pt").unlink()
    capsys.readouterr()
    assert main(["--resume", str(tmp_path / "c" / "checkpoints" / "update_000002.pt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: --resume: the run's KL pull reads its clone")
    assert "teacher_coef=0" in err[0]


def test_a_full_disk_while_writing_best_pt_keeps_the_earlier_one(tmp_path, monkeypatch, capsys):
    """The second point is higher; writing its best.pt fails with ENOSPC: exit 1, one line; the
    earlier best.pt, the checkpoints and the curve are intact."""
    _fake_points(monkeypatch, [0.3, 0.9, 0.1])
    real, calls = B.save_checkpoint, {"n": 0}

    def full_on_second(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*a, **k)

    monkeypatch.setattr(B, "save_checkpoint", full_on_second)
    assert main(SMOKE + _sets(tmp_path, "f", "eval_paired_every=1", "eval_paired_hands=16")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "best.pt: No space left on device (the earlier best.pt is kept)" in err[0], err
    ckpts = tmp_path / "f" / "checkpoints"
    assert load_checkpoint(ckpts / "best.pt")["best"]["update"] == 1
    assert load_checkpoint(ckpts / "latest.pt")["update"] == 2
    assert len((tmp_path / "f" / "paired.jsonl").read_text().splitlines()) == 2
    assert not [p for p in ckpts.iterdir() if p.suffix == ".tmp"]


def test_a_full_disk_mid_run_keeps_the_last_good_checkpoint(tmp_path, monkeypatch, capsys):
    """The disk fills at the second update's checkpoint: exit 1, one line; latest.pt is update 1's."""
    import fzmj.agents.checkpoint as C

    real = C.os.replace

    def full_at_update_2(src, dst):
        if Path(dst).name == "update_000002.pt":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(C.os, "replace", full_at_update_2)
    assert main(SMOKE + _sets(tmp_path, "g", "save_every=1")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "the run stopped" in err[0], err
    ckpts = tmp_path / "g" / "checkpoints"
    assert load_checkpoint(ckpts / "latest.pt")["update"] == 1
    assert sorted(p.name for p in ckpts.iterdir()) == ["latest.pt", "update_000001.pt"]


def test_a_full_disk_while_writing_the_log_stops_in_one_line(tmp_path, monkeypatch, capsys):
    """train.log's second line meets a full disk: exit 1, one line naming the last good checkpoint."""
    import builtins

    import fzmj.train.metrics as M

    lines = {"n": 0}

    def full_open(path, mode="r", *a, **k):
        if Path(path).name == "train.log" and mode == "a":
            lines["n"] += 1
            if lines["n"] == 2:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return builtins.open(path, mode, *a, **k)

    monkeypatch.setattr(M, "open", full_open, raising=False)
    assert main(SMOKE + _sets(tmp_path, "h", "save_every=1")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device; the run stopped, its last good checkpoint is" in err[0], err
    assert load_checkpoint(tmp_path / "h" / "checkpoints" / "latest.pt")["update"] == 2


# ---- a resumed run's pick ---------------------------------------------------------------------------
class _Writer:
    def add_scalar(self, *a):
        pass


def _best_file(ckpts: Path, update: int, run_name: str, mean: float = 1.0) -> Path:
    record = {"mean": mean, "ci95": [0.0, 2.0], "hands": 16, "seeds": [2**63], "update": update, "global_step": 8}
    policy = ActorCritic("mlp", [8])
    return save_checkpoint(ckpts / "best.pt", policy, config={"run_name": run_name, "seed": 1}, best=record)


def test_a_resumed_run_keeps_its_own_earlier_pick(tmp_path):
    args = Args(run_name="r", eval_paired_every=2)
    _best_file(tmp_path, 4, "r")
    keeper = B.BestKeeper(tmp_path, args, ActorCritic("mlp", [8]), _Writer(), None, resumed_update=6)
    assert keeper.record["update"] == 4 and keeper.points == 3


@pytest.mark.parametrize(("update", "run_name", "why"), [(8, "r", "beyond"), (4, "other", "of another run")])
def test_a_best_pt_that_is_not_this_runs_pick_is_moved_aside(tmp_path, capsys, update, run_name, why):
    args = Args(run_name="r", eval_paired_every=2)
    before = _best_file(tmp_path, update, run_name).read_bytes()
    keeper = B.BestKeeper(tmp_path, args, ActorCritic("mlp", [8]), _Writer(), tmp_path / "log", resumed_update=6)
    assert keeper.record is None and not (tmp_path / "best.pt").exists()
    assert (tmp_path / f"best_from_update_{update}.pt").read_bytes() == before
    assert why in capsys.readouterr().out and why in (tmp_path / "log").read_text()
