"""raw tracebacks and wrong exit codes where one clear line is promised.

Exit codes (docs/reference.md, "Errors"): 0 ok, 2 a usage or input error (one ``prog: error: ...`` line,
before any work), 1 the run failed (one line too), 130 interrupted.
"""

from __future__ import annotations

import errno
import json
import os
import signal
from pathlib import Path

import pytest
import torch
from full_disk import fill_disk

from fzmj.agents.checkpoint import load_checkpoint, save_checkpoint
from fzmj.train.model import ActorCritic
from fzmj_env.record import RecordError, load_record, make_record, save_record

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--config", str(ROOT / "configs/ppo_smoke.yaml"),
    "--set", "num_tables=8", "--set", "num_steps=8", "--set", "total_timesteps=64",
    "--set", "hidden_sizes=[8]", "--set", "pool_prob=0", "--set", "eval_every=0",
]  # fmt: skip


def _usage_error(capsys, fn, argv, prog: str) -> str:
    """Run a CLI expecting exit 2 with exactly one ``prog: error:`` line on stderr; return it."""
    with pytest.raises(SystemExit) as e:
        fn(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{prog}: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


# ---- fzmj-eval -------------------------------------------------------------------------------------
@pytest.fixture
def fzmj_eval(monkeypatch):
    """fzmj-eval whose evaluation must never start (outputs are checked before the work)."""
    from fzmj.agents import evaluate

    def no_work(*a, **k):
        raise AssertionError("the evaluation ran before its outputs were checked")

    monkeypatch.setattr(evaluate, "evaluate", no_work)
    return evaluate.main


def test_eval_out_is_a_directory(fzmj_eval, capsys, tmp_path):
    line = _usage_error(capsys, fzmj_eval, ["--agents", "random", "--out", str(tmp_path)], "fzmj-eval")
    assert "is a directory" in line
    line = _usage_error(capsys, fzmj_eval, ["--agents", "random", "--out", ""], "fzmj-eval")
    assert "expected a file name" in line


def test_eval_out_unwritable(fzmj_eval, capsys, tmp_path, monkeypatch):
    a_file = tmp_path / "file"
    a_file.write_text("")
    line = _usage_error(capsys, fzmj_eval, ["--agents", "random", "--out", str(a_file / "r.json")], "fzmj-eval")
    assert "does not exist" in line
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.geteuid() == 0:  # root may write anywhere: pretend the OS said no for this folder
        import fzmj_env.checks as V

        real = V.os.access
        monkeypatch.setattr(V.os, "access", lambda p, mode: False if Path(p) == ro else real(p, mode))
    line = _usage_error(capsys, fzmj_eval, ["--agents", "random", "--out", str(ro / "r.json")], "fzmj-eval")
    assert "not writable" in line


@pytest.mark.parametrize("name", ["x.xyz", "plot", "plot.json"])
def test_eval_plot_with_an_unknown_extension(fzmj_eval, capsys, tmp_path, name):
    line = _usage_error(capsys, fzmj_eval, ["--agents", "random", "--plot", str(tmp_path / name)], "fzmj-eval")
    assert "unsupported file type" in line and ".png" in line


@pytest.mark.parametrize(
    ("argv", "match"),
    [(["--hands", str(10**15)], "hands=1000000000000000 needs about"), (["--batch", str(2**40)], "batch must be")],
)
def test_eval_sizes_this_machine_cannot_hold_are_usage_errors(capsys, argv, match):
    from fzmj.agents.evaluate import main

    line = _usage_error(capsys, main, ["--agents", "random", "--no-progress", *argv], "fzmj-eval")
    assert match in line


@pytest.mark.parametrize("spec", ["random:-5", "random:18446744073709551616", "random:x"])
def test_eval_bad_random_seed_is_exit_2(capsys, spec):
    from fzmj.agents.evaluate import main

    _usage_error(capsys, main, ["--agents", spec, "--hands", "4", "--no-progress"], "fzmj-eval")


def test_random_agent_refuses_a_negative_seed():
    from fzmj.agents.random_agent import RandomAgent

    with pytest.raises(ValueError, match="seed"):
        RandomAgent(-5)
    with pytest.raises(ValueError, match="seed"):
        RandomAgent(0).reset(seed=-1)


def test_eval_write_failure_after_the_work_is_one_line(monkeypatch, capsys, tmp_path):
    from fzmj.agents import evaluate

    fill_disk(monkeypatch)
    rc = evaluate.main(["--agents", "random", "--hands", "4", "--no-progress", "--out", str(tmp_path / "r.json")])
    assert rc == 1
    err = capsys.readouterr().err.strip().splitlines()
    why = "No space left on device; nothing was written under that name"
    assert err == [f"fzmj-eval: error: cannot write {tmp_path / 'r.json'}: {why}"]
    assert not (tmp_path / "r.json").exists()


# ---- unloadable checkpoints: one line of ours ------------------------------------------------------
class Evil:  # an object torch's weights_only loader refuses
    pass


@pytest.mark.parametrize("kind", ["text", "empty", "truncated", "object", "not_a_dict"])
def test_unloadable_checkpoint_is_one_line_of_ours(tmp_path, capsys, kind):
    from fzmj.agents.evaluate import main

    path = tmp_path / f"{kind}.pt"
    if kind == "text":
        path.write_text("hello")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        good = save_checkpoint(tmp_path / "good.pt", ActorCritic("mlp", [8]))
        path.write_bytes(good.read_bytes()[:1000])
    elif kind == "object":
        torch.save({"format": "fzmj-ppo", "x": Evil()}, path)
    else:
        torch.save([1, 2, 3], path)
    with pytest.raises(ValueError) as e:
        load_checkpoint(path)
    assert "\n" not in str(e.value) and "weights_only" not in str(e.value)
    line = _usage_error(capsys, main, ["--agents", f"ppo:{path}", "--hands", "4", "--no-progress"], "fzmj-eval")
    assert "weights_only" not in line and str(path) in line


# ---- fzmj-demo ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv", [["--seed", "-1"], ["--seed", str(2**64)], ["--hands", "0"], ["--hands", str(2**31)], ["--seed", "x"]]
)
def test_demo_bad_arguments(capsys, argv):
    from fzmj.agents.demo import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "fzmj-demo: error:" in err


# ---- fzmj-train --------------------------------------------------------------------------------------
@pytest.fixture
def fzmj_train(monkeypatch):
    """fzmj-train whose env must never be built (every error here comes before the work)."""
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as B

    def no_work(*a, **k):
        raise AssertionError("the run started before its input was checked")

    monkeypatch.setattr(B, "VectorEnv", no_work)
    return T.main


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ("seed=1180591620717411303424", "seed: expected at most"),  # 2**70
        ("num_tables=1000000000000", "num_tables: expected at most"),
        ("hands_per_game=2147483648", "hands_per_game: expected at most"),
        ("num_tables=4000000", "rollout buffer needs about"),
        ("hidden_sizes=[100000000]", "hidden_sizes"),
        ("run_name=../../x", "run_name"),
        ("obs_version=7", "obs_version: expected 2 or 3, got 7"),  # an integer choice: no join over ints
    ],
)
def test_train_out_of_range_values_are_usage_errors(fzmj_train, capsys, tmp_path, override, match):
    line = _usage_error(capsys, fzmj_train, TINY + ["--set", f"runs_dir={tmp_path}", "--set", override], "fzmj-train")
    assert match in line


def test_an_integer_choice_out_of_range_in_a_yaml_file_or_a_checkpoint_config(tmp_path):
    """obs_version: 7 in a YAML file, or in a checkpoint's stored config, is named as such (it was
    a TypeError of str.join, 'sequence item 0: expected str instance', blamed on the file)."""
    from fzmj.train.config import ConfigError, from_dict, load_config
    from fzmj.train.ppo_selfplay import Args

    cfg = tmp_path / "c.yaml"
    cfg.write_text("obs_version: 7\n")
    for load in (lambda: load_config(Args, cfg), lambda: from_dict(Args, {"obs_version": 7}, where="checkpoint")):
        with pytest.raises(ConfigError, match="obs_version: expected 2 or 3, got 7") as e:
            load()
        assert "sequence item" not in str(e.value)


def test_train_bad_pool_paths(fzmj_train, capsys, tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_text("not a checkpoint")
    for path, what in [(junk, "not a readable fzmj checkpoint"), (tmp_path / "none.pt", "no such checkpoint")]:
        line = _usage_error(
            capsys, fzmj_train, TINY + ["--set", "pool_prob=0.5", "--set", f"pool_paths=['{path}']"], "fzmj-train"
        )
        assert "pool_paths[0]" in line and what in line


def test_train_device_cuda_without_a_gpu(fzmj_train, capsys):
    device = "cuda:99" if torch.cuda.is_available() else "cuda"
    line = _usage_error(capsys, fzmj_train, TINY + ["--device", device], "fzmj-train")
    assert "device" in line and "CUDA" in line


def test_train_unwritable_output_folder_is_refused_before_any_work(fzmj_train, capsys, tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("")
    rc = fzmj_train(TINY + ["--set", f"runs_dir={a_file}", "--set", "run_name=r"])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fzmj-train: error: cannot write to run folder")


def _ckpt_for_resume(tmp_path: Path) -> Path:
    import dataclasses

    from fzmj.train.config import load_config
    from fzmj.train.ppo_selfplay import Args

    args = load_config(Args, ROOT / "configs/ppo_smoke.yaml", ["hidden_sizes=[8]"])
    return save_checkpoint(
        tmp_path / "run" / "checkpoints" / "latest.pt",
        ActorCritic("mlp", [8]),
        config=dataclasses.asdict(args),
        update=1,
    )


@pytest.mark.parametrize("override", ["hidden_sizes=[64]", "network=resnet", "oracle_critic=true"])
def test_train_resume_with_a_new_network_shape(fzmj_train, capsys, tmp_path, override):
    ckpt = _ckpt_for_resume(tmp_path)
    line = _usage_error(capsys, fzmj_train, ["--resume", str(ckpt), "--set", override], "fzmj-train")
    assert "--resume keeps the checkpoint's network" in line and override.split("=")[0] in line


def test_train_full_disk_is_one_line_exit_1(monkeypatch, capsys, tmp_path):
    import fzmj.train.checkpoint as C
    import fzmj.train.ppo_selfplay as T

    def full_disk(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(C, "save_checkpoint", full_disk)
    rc = T.main(TINY + ["--set", f"runs_dir={tmp_path}", "--set", "run_name=full"])
    assert rc == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write a checkpoint" in err[0] and "No space left on device" in err[0]


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_train_ctrl_c_or_sigterm_saves_a_checkpoint_and_exits_cleanly(monkeypatch, capsys, tmp_path, sig, code):
    """SIGINT (Ctrl-C) or SIGTERM (kill, a job scheduler) during the rollout: the run saves the last
    finished update's weights and exits 128 + the signal; both handlers found before are put back."""
    import fzmj.train.ppo_selfplay as T
    import fzmj.train.run_setup as B

    real = B.VectorEnv
    calls = {"n": 0}

    class InterruptedEnv(real):
        def step(self, actions):
            calls["n"] += 1
            if calls["n"] == 12:  # in the second update's rollout (8 steps per update)
                os.kill(os.getpid(), sig)
            return super().step(actions)

    monkeypatch.setattr(B, "VectorEnv", InterruptedEnv)
    # not always Python's defaults (a shell may ignore SIGINT, pytest may hold SIGTERM)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    rc = T.main(TINY + ["--set", f"runs_dir={tmp_path}", "--set", "run_name=stop", "--set", "total_timesteps=1024"])
    assert rc == code
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "saving a checkpoint" in out and "stopped:" in out and "--resume" in out
    data = load_checkpoint(tmp_path / "stop/checkpoints/latest.pt")
    assert data["update"] == 1 and data["global_step"] == 64
    assert {s: signal.getsignal(s) for s in before} == before  # the handlers found before the run, restored


def test_a_failed_run_puts_the_signal_handlers_back(monkeypatch, capsys, tmp_path):
    """A run that stops on an error (here a full disk at its first checkpoint) leaves no handler of
    its own behind: SIGTERM would otherwise be swallowed for the rest of the process."""
    import fzmj.train.checkpoint as C
    import fzmj.train.ppo_selfplay as T

    def full_disk(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(C, "save_checkpoint", full_disk)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    assert T.main(TINY + ["--set", f"runs_dir={tmp_path}", "--set", "run_name=fail"]) == 1
    assert {s: signal.getsignal(s) for s in before} == before


# ---- load_record --------------------------------------------------------------------------------------
def _record(tmp_path) -> dict:
    from fzmj_env import Game

    g = Game()
    g.reset(seed=3)
    while not g.done:
        g.step(g.legal_actions[0])
    save_record(make_record(g), tmp_path / "good.json")
    return json.loads((tmp_path / "good.json").read_text())


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"\xff\xfe{not utf8", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"{", "not valid JSON"),
        (b"[]", "JSON object"),
    ],
)
def test_load_record_bad_bytes(tmp_path, content, match):
    (tmp_path / "r.json").write_bytes(content)
    with pytest.raises(RecordError, match=match):
        load_record(tmp_path / "r.json")


def test_load_record_missing_file_and_directory(tmp_path):
    with pytest.raises(RecordError, match="no such record file"):
        load_record(tmp_path / "missing.json")
    with pytest.raises(RecordError, match="is a directory"):
        load_record(tmp_path)


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("decisions", None, "decisions must be a list"),
        ("decisions", [[0, "x"]], "decision 0"),
        ("hands", [1], "hand 0 must be an object"),
        ("seed", -1, "seed"),
        ("seed", 2**64, "seed"),
        ("hands_per_game", 2**31, "hands_per_game"),
        ("scores", None, "scores"),
    ],
)
def test_load_record_bad_fields(tmp_path, key, value, match):
    rec = _record(tmp_path)
    rec[key] = value
    (tmp_path / "r.json").write_text(json.dumps(rec))
    with pytest.raises(RecordError, match=match):
        load_record(tmp_path / "r.json")


def test_load_record_good_file_still_loads(tmp_path):
    from fzmj_env import replay

    _record(tmp_path)
    replay(load_record(tmp_path / "good.json"))


def test_sigterm_to_a_real_run_saves_and_it_resumes(tmp_path):
    """What a job scheduler or ``kill`` does: SIGTERM to a running ``fzmj-train`` process. It saves
    the last finished update, exits 143, and ``--resume`` goes on from there."""
    import subprocess
    import sys
    import time

    sets = [f"runs_dir={tmp_path}", "run_name=t", "total_timesteps=100_000_000", "eval_every=0"]
    argv = [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--config", "ppo_smoke", "--no-progress"]
    argv += [a for s in sets for a in ("--set", s)]
    log = tmp_path / "out.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while "update 1/" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 143, log.read_text()[-2000:]
    finally:
        proc.kill()
    text = log.read_text()
    assert "SIGTERM; saving a checkpoint" in text and "stopped:" in text and "Traceback" not in text
    latest = tmp_path / "t/checkpoints/latest.pt"
    ckpt = load_checkpoint(latest)
    update, batch = ckpt["update"], ckpt["config"]["num_tables"] * ckpt["config"]["num_steps"]
    assert update >= 1
    more = f"total_timesteps={(update + 1) * batch}"  # one update more
    resumed = subprocess.run(
        [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--resume", str(latest), "--set", more, "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"update {update + 1}/{update + 1} " in resumed.stdout and load_checkpoint(latest)["update"] == update + 1
