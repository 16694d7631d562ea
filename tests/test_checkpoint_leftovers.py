"""What a killed or failing checkpoint write leaves: temporaries removed at the next start or
resume (ours only), a full disk named in one line, Ctrl-C with whatever SIGINT handler was there."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from fzmj.agents.checkpoint import load_checkpoint, save_checkpoint
from fzmj.train.checkpoint import CheckpointWriteError, Saver, remove_stale_temporaries
from fzmj.train.model import ActorCritic

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--config", str(ROOT / "configs/ppo_smoke.yaml"),
    "--set", "num_tables=8", "--set", "num_steps=8", "--set", "total_timesteps=64",
    "--set", "hidden_sizes=[8]", "--set", "pool_prob=0", "--set", "eval_every=0",
]  # fmt: skip
OURS = ["latest.pt.abcd1234.tmp", "update_000002.pt.x_y9z0k1.tmp", "bc.pt.qwertyui.tmp"]
NOT_OURS = ["notes.tmp", "keep.pt", "update_000001.pt", "latest.pt.short.tmp", "mine.pt.ABCDEFGH.tmp", "x.tmp.pt"]


def _leftovers(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in OURS + NOT_OURS:
        (folder / name).write_bytes(b"\0" * 1000)


def test_only_our_temporaries_are_removed(tmp_path):
    _leftovers(tmp_path)
    (tmp_path / "dir.pt.abcdefgh.tmp").mkdir()  # a folder of that name is not ours
    removed = remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in removed) == sorted(OURS)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*NOT_OURS, "dir.pt.abcdefgh.tmp"])
    assert remove_stale_temporaries(tmp_path / "missing") == []


def test_the_cleanup_pattern_is_the_one_save_checkpoint_writes(tmp_path, monkeypatch):
    import fzmj.agents.checkpoint as W
    import fzmj.train.checkpoint as C

    policy = ActorCritic("mlp", [8])
    names = []
    real = W.tempfile.mkstemp

    def spy(*a, **k):
        fd, name = real(*a, **k)
        names.append(Path(name).name)
        return fd, name

    monkeypatch.setattr(W.tempfile, "mkstemp", spy)
    save_checkpoint(tmp_path / "latest.pt", policy)
    assert C._TEMPORARY.fullmatch(names[0])  # the pattern the cleanup looks for is the one we write


def test_resume_removes_a_killed_runs_temporaries(tmp_path, monkeypatch):
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as B

    def no_work(*a, **k):
        raise RuntimeError("stop here: the run folder is ready")

    monkeypatch.setattr(B, "VectorEnv", no_work)
    run = tmp_path / "runs" / "r"
    with pytest.raises(RuntimeError, match="stop here"):
        T.main(TINY + ["--set", f"runs_dir={tmp_path / 'runs'}", "--set", "run_name=r"])
    from fzmj.train.config import load_config
    from fzmj.train.torch_setup import make_optimizer

    args = load_config(T.Args, None, ["hidden_sizes=[8]", "pool_prob=0"])
    policy = ActorCritic("mlp", [8])
    import dataclasses

    ckpt = save_checkpoint(
        run / "checkpoints" / "latest.pt",
        policy,
        optimizer=make_optimizer(policy, 1e-3),
        config=dataclasses.asdict(args),
        update=1,
        global_step=64,
    )
    _leftovers(run / "checkpoints")
    with pytest.raises(RuntimeError, match="stop here"):
        T.main(["--resume", str(ckpt)])
    left = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert not set(OURS) & set(left) and set(NOT_OURS) <= set(left)


def test_a_full_disk_is_named_not_a_torch_message(tmp_path, monkeypatch):
    import fzmj.agents.checkpoint as C

    real_fdopen = C.os.fdopen

    def full(fd, mode):  # the temporary's descriptor, writing to a device that is always full
        os.close(fd)
        return real_fdopen(os.open("/dev/full", os.O_WRONLY), mode)

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    monkeypatch.setattr(C.os, "fdopen", full)
    policy = ActorCritic("mlp", [64, 64])
    with pytest.raises(OSError) as e:
        save_checkpoint(tmp_path / "latest.pt", policy)
    assert e.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []  # the temporary is gone too

    from types import SimpleNamespace

    from fzmj.train.args import Args
    from fzmj.train.opponents import NoOpponents

    ranks = SimpleNamespace(main=True, size=1, check_in_sync=lambda m: None)
    saver = Saver(tmp_path, Args(), policy, None, NoOpponents(1), None, ranks)
    with pytest.raises(CheckpointWriteError) as e:
        saver.save(1, 64)
    assert str(e.value) == f"cannot write a checkpoint to {tmp_path}: No space left on device"


@pytest.mark.parametrize("handler", [signal.SIG_IGN, "python"], ids=["shell-ignores-sigint", "python-default"])
def test_ctrl_c_restores_the_handler_found_before_the_run(tmp_path, monkeypatch, capsys, handler):
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as B

    real = B.VectorEnv
    calls = {"n": 0}

    class InterruptedEnv(real):
        def step(self, actions):
            calls["n"] += 1
            if calls["n"] == 4:
                os.kill(os.getpid(), signal.SIGINT)
            return super().step(actions)

    monkeypatch.setattr(B, "VectorEnv", InterruptedEnv)
    before = signal.signal(signal.SIGINT, signal.default_int_handler if handler == "python" else handler)
    try:
        rc = T.main(TINY + ["--set", f"runs_dir={tmp_path}", "--set", "run_name=c"])
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)
    assert rc == 130 and "stopped:" in capsys.readouterr().out
    assert after is (signal.default_int_handler if handler == "python" else handler)
    assert load_checkpoint(tmp_path / "c/checkpoints/latest.pt")["update"] == 0
