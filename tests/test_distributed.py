"""fzmj-train on torch.distributed: CPU/gloo ranks launched by torchrun, as in CI.

* a plain single-process run is unchanged: its final weights match those of the code before
  distributed support (``tests/data/plain_run_golden.json``);
* two ranks (``fzmj-train --nproc 2``): the run completes, every rank ends with the same
  weights, optimizer state and pool snapshots, one event file, a checkpoint usable as ``ppo:PATH``;
* two "nodes" on 127.0.0.1 (two torchrun launches, c10d rendezvous): same completion, and the
  very same weights as the one-machine run (same seed and world size: the same run);
* ``--resume`` across world sizes (2 ranks -> 1 process, 1 process -> 2 ranks);
* a killed rank stops the other with a clear message; the last checkpoint still loads.

Every subprocess runs in its own session with a timeout and is killed as a group at the end,
so no test can hang; every launch gets its own port (torchrun --standalone picks a free one).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from fzmj.agents.checkpoint import load_checkpoint, load_policy
from fzmj.train import distributed
from fzmj.train.ppo_selfplay import main

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs/ppo_smoke.yaml")
GOLDEN = ROOT / "tests/data/plain_run_golden.json"
GOLDEN_OVERRIDES = ["eval_every=0", "total_timesteps=1536", "torch_threads=1", "env_threads=1", "seed=7"]
# 3 updates of 2 ranks x 32 tables x 16 steps; checkpoints every update, evaluations at 2 and 3
TWO_RANK_OVERRIDES = ["total_timesteps=3072", "save_every=1", "torch_threads=1", "env_threads=1", "eval_hands=8"]
TIMEOUT = 240  # seconds for one launch (about 15 s on 2 free cores)


def _sets(overrides: list[str]) -> list[str]:
    return sum((["--set", o] for o in overrides), [])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(dump: Path | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    env.pop("RANK", None)
    if dump is not None:
        env[distributed.DUMP_ENV] = str(dump)
    return env


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
    )


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``, its process group and its descendants (torchrun starts each rank in a
    session of its own, so a rank is not in torchrun's group)."""
    family = _descendants(proc.pid)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in family:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _descendants(pid: int) -> list[int]:
    return [d for c in _children(pid) for d in [c, *_descendants(c)]]


def _wait(procs: list[subprocess.Popen], timeout: float) -> list[int]:
    """Exit codes of ``procs``; kills them all (process groups) past ``timeout``."""
    deadline = time.monotonic() + timeout
    try:
        return [p.wait(timeout=max(0.1, deadline - time.monotonic())) for p in procs]
    except subprocess.TimeoutExpired:
        pytest.fail(f"a distributed run did not finish within {timeout} s")
    finally:
        for p in procs:
            _kill(p)


def _torchrun_node(node: int, port: int, run_id: str, argv: list[str]) -> list[str]:
    """One "node" of a two-node run on this machine: one rank, c10d rendezvous on 127.0.0.1:port
    (the documented multi-machine command; c10d assigns the global ranks, --node_rank is informative)."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank", str(node)]
    launcher += ["--nproc_per_node", "1"]
    launcher += ["--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{port}", "--rdzv_id", run_id]
    return launcher + ["-m", "fzmj.train.ppo_selfplay", *argv]


def _dumps(folder: Path) -> list[dict]:
    return [torch.load(folder / f"rank{r}.pt", weights_only=True) for r in range(2)]


def _assert_same_state(a: dict, b: dict) -> None:
    assert a["model"].keys() == b["model"].keys()
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    assert len(a["pool"]) == len(b["pool"])
    for pa, pb in zip(a["pool"], b["pool"], strict=True):
        assert all(torch.equal(pa[k], pb[k]) for k in pa)
    sa, sb = a["optimizer"]["state"], b["optimizer"]["state"]
    assert sa.keys() == sb.keys()
    for i in sa:
        assert all(torch.equal(torch.as_tensor(sa[i][k]), torch.as_tensor(sb[i][k])) for k in sa[i])


# ---- a plain process is the single-process trainer, exactly ---------------------------------------
def plain_run_fingerprint(runs: Path) -> dict:
    """Counters and per-tensor sums of the final checkpoint of a tiny plain run (GOLDEN_OVERRIDES)."""
    threads = torch.get_num_threads()
    try:
        argv = ["--config", SMOKE] + _sets([f"runs_dir={runs}", "run_name=golden", *GOLDEN_OVERRIDES])
        assert main(argv) == 0
    finally:
        torch.set_num_threads(threads)
    data = load_checkpoint(runs / "golden/checkpoints/latest.pt")
    tensors = {f"model.{k}": v for k, v in data["model"].items()}
    for i, sd in enumerate(data.get("pool", [])):
        tensors.update({f"pool{i}.{k}": v for k, v in sd.items()})
    h = hashlib.sha256()
    for k in sorted(tensors):
        h.update(tensors[k].contiguous().numpy().tobytes())
    return {
        "update": data["update"],
        "global_step": data["global_step"],
        "sha256": h.hexdigest(),
        "sums": {k: [float(v.double().sum()), float(v.double().abs().sum())] for k, v in sorted(tensors.items())},
    }


def test_plain_run_matches_the_code_before_distributed_support(tmp_path):
    """Same seed, same games, same updates: the final weights are those of commit cf34259's trainer.

    Compared through per-tensor sums and sums of magnitudes, to 1e-4 relative: the last bits may
    differ on a CPU of another SIMD width (fastmath kernels), while a different game, seed or
    minibatch moves the weights by far more (twelve Adam steps of about 2.5e-4 each). On the
    machine that wrote the file the sha256 of the weights is identical too.
    """
    golden = json.loads(GOLDEN.read_text())
    got = plain_run_fingerprint(tmp_path)
    assert (got["update"], got["global_step"]) == (golden["update"], golden["global_step"]) == (3, 1536)
    assert got["sums"].keys() == golden["sums"].keys()
    for k, (s, a) in golden["sums"].items():
        np.testing.assert_allclose(got["sums"][k], [s, a], rtol=1e-4, atol=1e-6, err_msg=k)


def test_helpers_are_no_ops_in_a_plain_process():
    assert not distributed.enabled() and distributed.world_size() == 1 and distributed.is_main()
    assert distributed.rank_seed(123) == 123
    perm = torch.randperm(10)
    assert [m.tolist() for m in distributed.minibatches(perm, 3, 4)] == [perm[i : i + 3].tolist() for i in (0, 3, 6, 9)]
    assert distributed.share_cores(0, 0, 7) == 7
    assert distributed.start_update({}, 1024, 512, 9) == 9  # a checkpoint of one process (or older)
    assert distributed.launch(["--config", "x.yaml"]) is None


def test_the_trainers_ranks_object_does_nothing_in_a_plain_process(tmp_path):
    """The trainer sees the other ranks only through ``Ranks``; a plain process's returns its inputs."""
    ranks = distributed.Ranks()
    assert (ranks.rank, ranks.size, ranks.main) == (0, 1, True)
    perm = torch.randperm(7)
    assert [m.tolist() for m in ranks.minibatches(perm, 3, 2)] == [
        perm[:3].tolist(),
        perm[3:6].tolist(),
        perm[6:].tolist(),
    ]
    value = torch.tensor(0.5)
    assert ranks.mean(value) is value and ranks.all_positive(1) and not ranks.all_positive(0)
    assert ranks.rank_seed(9) == 9 and ranks.broadcast_object("x") == "x"
    assert ranks.start_update({}, 1024, 512, 5) == 5 and ranks.share_cores(0, 0, 3) == 3
    counters = SimpleNamespace(hands=2)
    ranks.sum_counters(counters)
    assert counters.hands == 2
    writer = ranks.writer(tmp_path, purge_step=None)
    assert type(writer).__name__ == "SummaryWriter"
    writer.close()


def test_collective_helpers_in_a_world_of_one():
    """The distributed code paths, in a one-rank gloo group (in-process): a world of one changes nothing."""
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert distributed.enabled() and distributed.world_size() == 1
        perm = torch.randperm(3)
        chunks = list(distributed.minibatches(perm, 1, 5))  # fewer decisions than minibatches: reused
        assert len(chunks) == 5 and all(len(c) == 1 for c in chunks)
        assert len(list(distributed.minibatches(torch.randperm(10), 3, 4))) == 4
        with pytest.raises(RuntimeError, match="no decision to train on"):
            list(distributed.minibatches(perm[:0], 1, 2))
        net = torch.nn.Linear(3, 2)
        net(torch.randn(5, 3)).sum().backward()
        before = [p.grad.clone() for p in net.parameters()]
        distributed.all_reduce_grads(net, 5)
        for b, p in zip(before, net.parameters(), strict=True):
            torch.testing.assert_close(p.grad, b)
        assert distributed.mean(torch.tensor(0.25)).item() == 0.25

        c = SimpleNamespace(hands=3, points=np.int64(-7), rate=0.5, flag=True)
        distributed.sum_counters(c)
        assert (c.hands, c.points, c.rate, c.flag) == (3, -7, 0.5, True) and isinstance(c.hands, int)
        assert distributed.start_update({"world_size": 2}, 1024, 512, 9) == 3  # batch changed: from the steps
        assert distributed.start_update({"world_size": 1}, 1024, 512, 9) == 9
        distributed.check_in_sync([net])
        assert distributed.broadcast_object("run") == "run"
    finally:
        dist.destroy_process_group()


def test_ranks_other_than_0_reseed_after_a_resume(monkeypatch):
    """A resume restores rank 0's generator states on every rank; the others then draw their own."""
    rng = np.random.default_rng(5)
    distributed.reseed(rng, 1, 7)  # rank 0: untouched
    assert rng.bit_generator.state == np.random.default_rng(5).bit_generator.state
    monkeypatch.setattr(distributed, "rank", lambda: 1)
    assert distributed.rank_seed(123) != 123
    draws = []
    for _ in range(2):
        rng = np.random.default_rng(5)
        distributed.reseed(rng, 1, 7)
        draws.append((rng.random(), torch.rand(1).item()))
    assert draws[0] == draws[1]  # deterministic for a seed, a rank and an update
    assert draws[0][0] != np.random.default_rng(5).random()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--nproc", "0"], "positive integer"),
        (["--nproc"], "expects a number"),
        (["--nproc=two"], "positive integer"),
    ],
)
def test_nproc_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_nproc_under_torchrun_is_an_error(monkeypatch, capsys):
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(SystemExit) as e:
        distributed.launch(["--nproc", "2"])
    assert e.value.code == 2 and "--nproc_per_node" in capsys.readouterr().err


def test_dist_timeout_is_checked(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--set", "dist_timeout=0"])
    assert e.value.code == 2 and "dist_timeout" in capsys.readouterr().err


# ---- two ranks on one machine: fzmj-train --nproc 2 ------------------------------------------------
@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """``fzmj-train --nproc 2`` on the smoke config (3 updates, gloo); its run dir, dumps and output."""
    tmp = tmp_path_factory.mktemp("two_ranks")
    argv = ["--nproc", "2", "--config", SMOKE] + _sets([f"runs_dir={tmp}", "run_name=r2", *TWO_RANK_OVERRIDES])
    log = tmp / "out.log"
    proc = _start([sys.executable, "-m", "fzmj.train.ppo_selfplay", *argv], _env(tmp / "dump"), log)
    (rc,) = _wait([proc], TIMEOUT)
    out = log.read_text()
    assert rc == 0, out[-3000:]
    return {"run": tmp / "r2", "dump": tmp / "dump", "out": out}


def test_two_ranks_end_with_identical_weights_optimizer_and_pool(two_ranks):
    r0, r1 = _dumps(two_ranks["dump"])
    assert (r0["rank"], r1["rank"], r0["world_size"]) == (0, 1, 2)
    assert len(r0["pool"]) == 2  # pool_size 2, a snapshot every update
    _assert_same_state(r0, r1)
    assert "distributed: all 2 ranks finished with identical weights" in two_ranks["out"]
    assert "distributed: 2 ranks (gloo)" in two_ranks["out"]


def test_two_ranks_log_once_and_count_the_steps_of_both(two_ranks):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = two_ranks["run"]
    assert len(list(run.glob("events.out.tfevents.*"))) == 1  # rank 0 alone writes events
    ea = EventAccumulator(str(run), size_guidance={"scalars": 0})
    ea.Reload()
    assert [e.step for e in ea.Scalars("charts/SPS")] == [1024, 2048, 3072]  # 2 ranks x 32 x 16 per update
    assert [e.step for e in ea.Scalars("eval/score_vs_heuristic")] == [2048, 3072]
    out = two_ranks["out"]
    assert out.count("update 3/3 | step 3,072") == 1  # one console: rank 0's
    assert out.count("done: 3,072 steps") == 1


def test_leaving_the_group_ends_gloos_threads(two_ranks):
    """destroy_process_group must free the group: gloo's threads left running into the
    interpreter's exit sometimes aborted a finished run (SIGABRT, exit -6, on a loaded CI)."""
    for r in range(2):
        threads = (two_ranks["dump"] / f"rank{r}.threads").read_text().split()
        assert threads and not [t for t in threads if "gloo" in t], threads


def test_two_rank_checkpoint_loads_as_ppo_path(two_ranks):
    from fzmj.agents import make_agent
    from fzmj_env.vector import VectorEnv

    ckpt = two_ranks["run"] / "checkpoints/latest.pt"
    data = load_checkpoint(ckpt)
    assert (data["update"], data["global_step"], data["world_size"]) == (3, 3072, 2)
    r0, _ = _dumps(two_ranks["dump"])
    assert all(torch.equal(data["model"][k], r0["model"][k]) for k in data["model"])
    agent = make_agent(f"ppo:{ckpt}")
    env = VectorEnv(8, seed=5)
    obs, mask, _ = env.reset()
    actions = np.asarray(agent.act(obs, mask))
    assert (mask[np.arange(8), actions] == 1).all()


# ---- two "machines": two torchrun launches on 127.0.0.1 ---------------------------------------------
def test_two_nodes_on_localhost_give_the_same_run(two_ranks, tmp_path):
    """--nnodes 2, c10d rendezvous: completes, identical weights on both ranks, and the very same
    weights as the one-machine two-rank run (same seed, same world size)."""
    port = _free_port()
    argv = ["--config", SMOKE] + _sets([f"runs_dir={tmp_path}", "run_name=n2", *TWO_RANK_OVERRIDES])
    env = _env(tmp_path / "dump")
    nodes = [_start(_torchrun_node(i, port, "nodes", argv), env, tmp_path / f"node{i}.log") for i in range(2)]
    rcs = _wait(nodes, TIMEOUT)
    logs = [(tmp_path / f"node{i}.log").read_text() for i in range(2)]
    assert rcs == [0, 0], "\n".join(log[-2000:] for log in logs)
    r0, r1 = _dumps(tmp_path / "dump")
    _assert_same_state(r0, r1)
    _assert_same_state(r0, _dumps(two_ranks["dump"])[0])
    assert load_checkpoint(tmp_path / "n2/checkpoints/latest.pt")["global_step"] == 3072


def test_ranks_with_different_configs_refuse_to_start(tmp_path):
    port = _free_port()
    nodes = []
    for i in range(2):
        argv = ["--config", SMOKE] + _sets([f"runs_dir={tmp_path}", f"num_tables={32 + 8 * i}"])
        nodes.append(_start(_torchrun_node(i, port, "mismatch", argv), _env(), tmp_path / f"node{i}.log"))
    rcs = _wait(nodes, TIMEOUT)
    logs = "".join((tmp_path / f"node{i}.log").read_text() for i in range(2))
    assert rcs[0] != 0 and rcs[1] != 0
    assert "config differs from rank 0's in: num_tables" in logs, logs[-3000:]


# ---- resume across world sizes ---------------------------------------------------------------------
def test_a_two_rank_checkpoint_resumes_in_one_process(two_ranks, tmp_path, capsys):
    """Saved by 2 ranks at step 1,024 (update 1 of 3); one process (512 steps/update) goes on at
    update 3 of 6, the update its step counter has reached."""
    shutil.copytree(two_ranks["run"], tmp_path / "r1")  # a resume continues in its own run folder
    ckpt = tmp_path / "r1/checkpoints/update_000001.pt"
    threads = torch.get_num_threads()
    try:
        rc = main(["--resume", str(ckpt)] + _sets(["eval_every=0"]))
    finally:
        torch.set_num_threads(threads)
    assert rc == 0
    out = capsys.readouterr().out
    assert "update 3/6 | step 1,536" in out and "update 2/" not in out
    data = load_checkpoint(tmp_path / "r1/checkpoints/latest.pt")
    assert (data["update"], data["global_step"], data["world_size"]) == (6, 3072, 1)


def test_a_one_process_checkpoint_resumes_on_two_ranks(tmp_path):
    threads = torch.get_num_threads()
    try:
        argv = ["--config", SMOKE] + _sets([f"runs_dir={tmp_path}", "run_name=p1", *GOLDEN_OVERRIDES])
        assert main(argv + ["--set", "total_timesteps=1024"]) == 0  # 2 updates of 512, world 1
    finally:
        torch.set_num_threads(threads)
    ckpt = tmp_path / "p1/checkpoints/latest.pt"
    assert load_checkpoint(ckpt)["world_size"] == 1
    argv = ["--nproc", "2", "--resume", str(ckpt)] + _sets(["total_timesteps=3072", "eval_every=0"])  # continues in p1
    proc = _start(
        [sys.executable, "-m", "fzmj.train.ppo_selfplay", *argv], _env(tmp_path / "dump"), tmp_path / "p2.log"
    )
    (rc,) = _wait([proc], TIMEOUT)
    out = (tmp_path / "p2.log").read_text()
    assert rc == 0, out[-3000:]
    assert "update 2/3 | step 2,048" in out and "update 3/3 | step 3,072" in out
    _assert_same_state(*_dumps(tmp_path / "dump"))
    data = load_checkpoint(tmp_path / "p1/checkpoints/latest.pt")
    assert (data["update"], data["global_step"], data["world_size"]) == (3, 3072, 2)


# ---- faults -------------------------------------------------------------------------------------------
def test_a_killed_rank_stops_the_other_with_a_clear_message(tmp_path):
    """Node 1's rank is killed mid-run: node 0's rank stops at its next collective with a one-line
    reason, its torchrun exits non-zero, and the last checkpoint still loads (c10d decides which
    node's rank is rank 0, so either may be the one that wrote it)."""
    port = _free_port()
    overrides = [f"runs_dir={tmp_path}", "run_name=f", "total_timesteps=100_000_000", "eval_every=0", "save_every=1"]
    argv = ["--config", SMOKE] + _sets(overrides + ["torch_threads=1"])
    nodes = [_start(_torchrun_node(i, port, "fault", argv), _env(), tmp_path / f"node{i}.log") for i in range(2)]
    try:
        deadline = time.monotonic() + TIMEOUT
        latest = tmp_path / "f/checkpoints/latest.pt"
        while not latest.exists():
            assert time.monotonic() < deadline, "no checkpoint written"
            assert all(n.poll() is None for n in nodes), (tmp_path / "node0.log").read_text()[-2000:]
            time.sleep(0.2)
        workers = _children(nodes[1].pid)
        assert len(workers) == 1
        os.kill(workers[0], signal.SIGKILL)
        killed = time.monotonic()
        rc0 = nodes[0].wait(timeout=60)  # gloo sees the closed connection at once; dist_timeout bounds a hang
        stopped = time.monotonic() - killed
    finally:
        for n in nodes:
            _kill(n)
    log = (tmp_path / "node0.log").read_text()
    assert rc0 != 0 and stopped < 60
    assert re.search(r"fzmj-train rank [01]/2: lost contact with the other ranks in \S+", log), log[-3000:]
    policy = load_policy(latest)
    assert load_checkpoint(latest)["world_size"] == 2 and policy is not None


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_stopping_the_nproc_launcher_stops_its_ranks(tmp_path):
    """SIGTERM to ``fzmj-train --nproc 2`` (a job scheduler, kill) reaches torchrun and its ranks."""
    argv = ["--nproc", "2", "--config", SMOKE]
    argv += _sets([f"runs_dir={tmp_path}", "run_name=t", "total_timesteps=100_000_000", "eval_every=0"])
    log = tmp_path / "out.log"
    proc = _start([sys.executable, "-m", "fzmj.train.ppo_selfplay", *argv], _env(), log)
    try:
        deadline = time.monotonic() + TIMEOUT
        while "update 1/" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.2)
        family = _descendants(proc.pid)
        assert len(family) == 3  # torchrun and its two ranks
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) != 0
        deadline = time.monotonic() + 60
        while any(_alive(pid) for pid in family):
            assert time.monotonic() < deadline, "a rank outlived its launcher"
            time.sleep(0.2)
    finally:
        _kill(proc)


if __name__ == "__main__":  # regenerate the golden file (only for a change meant to alter the default games)
    import tempfile

    if sys.argv[1:] != ["--write-golden"]:
        raise SystemExit("usage: python tests/test_distributed.py --write-golden")
    with tempfile.TemporaryDirectory() as d:
        fp = plain_run_fingerprint(Path(d))
    note = json.loads(GOLDEN.read_text()).get("note", "")
    GOLDEN.write_text(json.dumps({"note": note, **fp}, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
