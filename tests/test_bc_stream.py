"""The warm start streamed from a dataset (``bc_stream``, train/bc_stream.py): the same rows as the
in-memory clone (labels, returns), a clone that learns, memory bounded by the loader's buffer and
the prefetch queue, and bad input refused in one line."""

from __future__ import annotations

import re
import threading
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

pytest.importorskip("pyarrow")

import fzmj.data.loader as loader  # noqa: E402
from fzmj.agents.policy import ActorCritic  # noqa: E402
from fzmj.data import DatasetError, collect, open_dataset  # noqa: E402
from fzmj.train.bc_dataset import dataset_demonstrations  # noqa: E402
from fzmj.train.bc_stream import _prepare, game_split, prefetched, stream_clone  # noqa: E402
from fzmj.train.ppo_selfplay import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "dataset-tiny"


@pytest.fixture(scope="module")
def three_groups(tmp_path_factory):
    """A dataset of three row groups (512 + 512 + 16 hands) in one shard."""
    folder = tmp_path_factory.mktemp("stream") / "heuristic"
    collect(folder, ["heuristic"], 1040, seed=5, batch=1040, progress=False, log=lambda *_: 0)
    return folder


def _args(folder, **kw) -> SimpleNamespace:
    base = dict(
        bc_dataset=str(folder), rules="fuzhou-lianzhong", bc_decisions=1 << 30, bc_teacher="heuristic",
        obs_version=2, reward_scale=0.02, gamma=0.9, bc_batch_size=64, bc_epochs=1, bc_learning_rate=1e-3,
        vf_coef=0.5, seed=3,
    )  # fmt: skip
    return SimpleNamespace(**{**base, **kw})


def test_streamed_rows_equal_the_in_memory_ones(three_groups):
    """Per row group, the teacher's labels and the returns are those of ``bc_dataset`` in memory."""
    args = _args(three_groups, bc_teacher="oracle:defend")
    mem = dataset_demonstrations(str(three_groups), 1 << 30, args, oracle=False)
    prep = partial(_prepare, lo=0, hi=1 << 62, teacher="oracle:defend", scale=0.02, gamma=0.9, oracle=False)
    rows = open_dataset(three_groups).batches(
        1 << 20, only_choices=True, privileged=True, shuffle=False, per_group=prep
    )
    got = next(iter(rows))
    order = np.lexsort((got["step"], got["game"]))  # the in-memory path's order: game by game, in play
    assert len(order) == len(mem["action"]) > 20_000
    assert np.array_equal(got["game"][order], mem["table"])
    assert np.array_equal(got["action"][order], mem["action"].numpy())
    assert np.array_equal(got["obs"][order], mem["obs"].numpy())
    assert np.allclose(got["ret"][order], mem["ret"].numpy())
    assert (got["action"] != mem["played"].numpy()[np.argsort(order)]).any()  # the teacher relabelled


def test_the_split_holds_out_whole_games_first(three_groups):
    data = open_dataset(three_groups)
    split = game_split(data, 1 << 30, 0.05, progress=False)
    assert split["first"] < split["cut"] <= split["last"] and split["held_groups"] == [0]
    assert split["train_groups"] == [0, 1, 2] and split["played"] == len(data) > split["train_played"] > 0
    small = game_split(data, 3000, 0.5, progress=False)  # whole games up to 3,000 decisions played
    assert small["played"] <= 3000 and small["train_groups"] == [0]


def test_a_streamed_clone_learns(three_groups, capsys):
    """On ~4,000 recorded decisions (whole games): the loss falls, the held-out accuracy beats chance."""
    torch.manual_seed(0)
    policy = ActorCritic(hidden_sizes=(64,), hand_features=True)
    args = _args(three_groups, bc_decisions=4000, bc_epochs=3, bc_learning_rate=3e-3)
    stats = stream_clone(policy, args, holdout=0.2)
    held = open_dataset(three_groups).batches(4000, only_choices=True, shuffle=False)
    mask = next(iter(held))["mask"]
    chance = float(np.mean(1.0 / mask.sum(1)))
    assert stats["accuracy"] > chance + 0.2, (stats, chance)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "done:" in ln]
    ce = [float(re.search(r"ce ([\d.]+)", ln).group(1)) for ln in lines]
    assert len(ce) == 3 and ce[-1] < ce[0]
    assert 0 <= stats["data_wait"] <= 1 and stats["decisions_per_s"] > 0
    assert 0 < stats["first_batches_s"] < stats["fit_seconds"]
    assert stats["train_decisions"] + stats["holdout_decisions"] <= 4000


def test_the_prefetch_runs_at_most_its_depth_ahead():
    made = []

    def source():
        for i in range(20):
            made.append(i)
            yield i

    got = []
    for item, waited in prefetched(source(), depth=3):
        time.sleep(0.01)  # a slow consumer: the producer fills the queue, then blocks
        assert len(made) - len(got) <= 3 + 2  # the queue, the item in hand, the one being put
        got.append(item)
        assert waited >= 0
    assert got == list(range(20))


def test_the_loader_holds_at_most_its_buffer_of_row_groups(three_groups, monkeypatch):
    """The mixer's buffer, the finishing thread's queue (a buffer) and the replay thread's (two),
    each thread with one row group in hand: 2 x buffer_groups + 4 row groups replayed and not yet
    used, however many the dataset holds and however slow the caller."""
    data = open_dataset(three_groups)
    one = loader._replay_group(data.groups[0], data.rules, data.slots, loader.ReadOptions(only_choices=True))
    data.groups = [data.groups[0]] * 40
    reads = []
    monkeypatch.setattr(loader, "_replay_group", lambda *a: reads.append(1) or dict(one))
    batches = data.batches(8, buffer_groups=2, only_choices=True)
    first = next(batches)
    time.sleep(0.5)  # the threads fill their queues, then block
    assert len(first["action"]) == 8 and len(reads) <= 2 * 2 + 4
    batches.close()


def test_read_ahead_keeps_the_order_raises_the_error_and_stops_when_closed():
    assert list(loader.read_ahead(iter(range(100)), 3)) == list(range(100))

    def broken():
        yield 1
        raise DatasetError("row group 3: damaged")

    with pytest.raises(DatasetError, match="damaged"):
        list(loader.read_ahead(broken(), 2))
    made = []
    items = loader.read_ahead((made.append(i) or i for i in range(1000)), 2)
    assert next(items) == 0
    items.close()
    time.sleep(0.5)  # the thread sees the stop within its 0.1 s put timeout
    assert len(made) <= 5
    assert not [t for t in threading.enumerate() if t.name == "fzmj-read-ahead"]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="depth must be an integer >= 1"):
            next(loader.read_ahead(iter(range(3)), bad))


def test_the_batch_kernels_release_the_gil():
    """The loader's threads overlap the update only because these kernels run without the GIL."""
    from fzmj.agents.heuristic import heuristic_kernel, heuristic_kernel_parallel
    from fzmj_env import vector
    from fzmj_env.features import feature_planes_batch, feature_planes_parallel

    kernels = (heuristic_kernel, heuristic_kernel_parallel, feature_planes_batch, feature_planes_parallel)
    kernels += (vector._step_range, vector._step_parallel, vector._step_list, vector._reset_all, vector._reset_list)
    assert all(k.targetoptions.get("nogil") for k in kernels)


def test_a_loader_error_reaches_the_clone():
    def broken():
        yield 1
        raise DatasetError("row group 3: damaged")

    with pytest.raises(DatasetError, match="damaged"):
        list(prefetched(broken()))


def test_bc_decisions_above_the_dataset_takes_it_all_and_says_so(capsys):
    split = game_split(open_dataset(TINY), 10**9, 0.05)
    assert split["played"] == 602  # every seat's decisions are recorded in the tiny dataset
    assert "bc_decisions 1,000,000,000 >= the 602 decisions played in the dataset" in capsys.readouterr().out
    with pytest.raises(DatasetError, match="keep one game"):
        game_split(open_dataset(TINY), 1, 0.05)


def _argv(tmp_path, *extra):
    return [
        "--config", str(ROOT / "configs/ppo_smoke.yaml"), "--set", f"runs_dir={tmp_path}", "--set", "run_name=t",
        "--set", "eval_every=0", *extra,
    ]  # fmt: skip


def test_a_smoke_run_streams_its_warm_start(tmp_path, capsys):
    argv = _argv(tmp_path, "--set", f"bc_dataset={TINY}", "--set", "bc_stream=true", "--set", "bc_decisions=100000")
    assert main([*argv, "--set", "bc_eval_hands=8", "--set", "bc_epochs=1", "--set", "bc_teacher=oracle:defend"]) == 0
    assert (tmp_path / "t" / "checkpoints" / "bc.pt").is_file()
    out = capsys.readouterr().out
    assert "bc stream: epoch 1/1 done" in out and f"of the dataset {TINY} (streamed), accuracy" in out


@pytest.mark.parametrize(
    "extra", [[], ["--set", f"bc_dataset={TINY}", "--set", "bc_decisions=500", "--set", "bc_dagger_rounds=1"]]
)
def test_bc_stream_without_a_dataset_to_stream_is_refused(tmp_path, capsys, extra):
    with pytest.raises(SystemExit) as e:
        main(_argv(tmp_path, "--set", "bc_stream=true", "--set", "bc_decisions=500", *extra))
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "bc_stream" in err[0] and "needs bc_dataset" in err[0]


def test_a_streamed_dataset_is_not_held_in_memory(tmp_path, capsys):
    """The memory check counts what the in-memory clone holds; a streamed one holds a few row groups."""
    big = ["--set", f"bc_dataset={TINY}", "--set", "bc_decisions=40_000_000_000"]
    with pytest.raises(SystemExit) as e:
        main(_argv(tmp_path, *big))
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "(bc_stream=true streams a bc_dataset instead)" in err[0]
    from fzmj.train.config_checks import memory_problems
    from fzmj.train.ppo_selfplay import parse_args

    args, _ = parse_args(_argv(tmp_path, *big, "--set", "bc_stream=true"))
    assert memory_problems(args) == []


class _Pool:
    """``apply_async`` run at once; counts the jobs submitted and not yet taken."""

    def __init__(self):
        self.out = 0
        self.most = 0

    def apply_async(self, fn, args):
        self.out += 1
        self.most = max(self.most, self.out)
        pool = self

        class Result:
            def get(self):
                pool.out -= 1
                return fn(*args)

        return Result()


def test_the_loaders_workers_run_at_most_two_row_groups_ahead_each():
    """``Pool.imap`` would submit every row group at once: a slow clone would hold them all."""
    pool = _Pool()
    got = list(loader.bounded_imap(pool, lambda x: x * 2, range(50), ahead=2))
    assert got == [2 * x for x in range(50)] and pool.most == 2


def test_a_replay_worker_gives_the_same_clone(three_groups, monkeypatch):
    """The row groups replayed in a worker process (machines of more than four cores) or by the
    loader's threads: the same batches, so the same weights."""
    import fzmj.train.bc_stream as bc_stream

    weights = []
    for workers in (0, 1):
        monkeypatch.setattr(bc_stream, "replay_workers", lambda w=workers: w)
        torch.manual_seed(0)
        policy = ActorCritic(hidden_sizes=(32,), hand_features=True)
        stream_clone(policy, _args(three_groups, bc_decisions=3000), progress=False)
        weights.append(torch.cat([p.detach().flatten() for p in policy.parameters()]))
    assert torch.equal(weights[0], weights[1])


def test_the_learning_rate_decays_to_a_tenth_over_the_games_taken(three_groups, monkeypatch):
    """One epoch over part of a dataset: the schedule counts the games taken, not the dataset."""
    import fzmj.train.bc_stream as bc_stream

    rates = []
    real = bc_stream._step
    monkeypatch.setattr(
        bc_stream, "_step", lambda p, opt, *a: rates.append(opt.param_groups[0]["lr"]) or real(p, opt, *a)
    )
    policy = ActorCritic(hidden_sizes=(32,), hand_features=True)
    stream_clone(policy, _args(three_groups, bc_decisions=6000, bc_batch_size=256), progress=False)
    assert rates[0] == 1e-3 and 1e-4 <= rates[-1] < 1.5e-4, rates[-1]
