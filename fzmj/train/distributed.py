"""``fzmj-train`` across processes, GPUs and machines, on ``torch.distributed`` launched by torchrun.

CleanRL's multi-GPU PPO applied to self-play: every rank runs the whole trainer on its own
``VectorEnv`` (its own ``num_tables`` tables, seeded by rank), its own rollouts, per-seat GAE
and minibatches. After each minibatch's backward pass the gradients are averaged over the ranks
(one all-reduce of one flat buffer, weighted by the ranks' minibatch sizes), so every rank takes
the same optimizer step from the same weights and stays bit-identical to the others. Rank 0
alone writes TensorBoard and checkpoints and runs the evaluations; the step counter (and so SPS
and ``total_timesteps``) counts the env steps of all ranks: the global batch is
``world_size x num_tables x num_steps``.

A plain process (no torchrun, or torchrun with a world of one) never initialises
``torch.distributed``: every helper below is then a no-op returning its input, and the run is
exactly the single-process run (``tests/test_distributed.py`` pins it).

The trainer sees all of this through one object, :class:`Ranks` (``Ranks()`` in a plain process:
every method returns its input or does nothing); ``docs/training.md`` ("Scaling out") has the commands.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import importlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import numpy as np
import torch
import torch.distributed as dist

ROOT = Path(__file__).resolve().parents[1]
DUMP_ENV = "FZMJ_DIST_DUMP_DIR"  # tests: every rank writes its final weights there (rank<r>.pt)

_device = torch.device("cpu")  # where collective tensors live: cpu for gloo, this rank's GPU for nccl
_timeout_s = 600.0
_FORWARDED = (signal.SIGINT, signal.SIGTERM)


class RankLostError(SystemExit):
    """A collective failed or timed out: another rank died, hangs or cannot be reached."""


# ---- who am I -------------------------------------------------------------------------------------
def enabled() -> bool:
    """True when this process is one rank of several (torch.distributed is initialised)."""
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    return dist.get_rank() if enabled() else 0


def world_size() -> int:
    return dist.get_world_size() if enabled() else 1


def is_main() -> bool:
    """Rank 0 (or a plain process): the one that logs, evaluates and writes checkpoints."""
    return rank() == 0


def local_world_size() -> int:
    """Ranks on this machine (torchrun's ``--nproc_per_node``)."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", "1")) if enabled() else 1


def _launched_world() -> int:
    return int(os.environ.get("WORLD_SIZE", "1")) if "RANK" in os.environ else 1


# ---- launching --------------------------------------------------------------------------------------
def launch(argv: list[str] | None) -> int | None:
    """``fzmj-train --nproc N ...``: run the same command as N ranks on this machine through torchrun.

    Returns torchrun's exit code, or None when ``--nproc`` is not on the command line.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    n, rest = None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--nproc" or a.startswith("--nproc="):
            if a == "--nproc":
                if i + 1 >= len(argv):
                    _usage_error("--nproc expects a number of processes")
                value, i = argv[i + 1], i + 2
            else:
                value, i = a.split("=", 1)[1], i + 1
            if not value.isdigit() or int(value) < 1:
                _usage_error(f"--nproc expects a positive integer, got {value!r}")
            n = int(value)
            continue
        rest.append(a)
        i += 1
    if n is None:
        return None
    if "RANK" in os.environ:
        _usage_error("--nproc launches torchrun itself; under torchrun use its --nproc_per_node instead")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}"]
    cmd += ["-m", "fzmj.train.ppo_selfplay", *rest]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    print("fzmj-train: " + " ".join(cmd[1:]), flush=True)
    proc = subprocess.Popen(cmd, env=env)
    # a signal for this launcher (kill, a job scheduler) is for the ranks: torchrun passes it on
    forward = {sig: signal.signal(sig, lambda signum, _frame: proc.send_signal(signum)) for sig in _FORWARDED}
    try:
        return proc.wait()
    finally:
        for sig, handler in forward.items():
            signal.signal(sig, handler)


def _usage_error(message: str) -> NoReturn:
    print(f"fzmj-train: error: {message}", file=sys.stderr)
    raise SystemExit(2)


# ---- setup ----------------------------------------------------------------------------------------
def setup(args) -> None:
    """Join the torchrun group (a no-op in a plain process or a world of one).

    gloo on CPU, nccl on CUDA (one GPU per rank: ``LOCAL_RANK``). Checks that every rank runs the
    same code with the same config, and silences stdout on ranks other than 0 (stderr stays).
    """
    global _device, _timeout_s
    if _launched_world() <= 1 or enabled():
        return
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = args.device.startswith("cuda") or (args.device == "auto" and torch.cuda.is_available())
    if cuda:
        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: no CUDA device is available (torch.cuda.is_available() is False)")
        if local_rank >= torch.cuda.device_count():
            raise SystemExit(
                f"fzmj-train: local rank {local_rank} has no GPU: {torch.cuda.device_count()} GPU(s) on this "
                f"machine for {os.environ.get('LOCAL_WORLD_SIZE')} ranks (one GPU per rank)"
            )
        torch.cuda.set_device(local_rank)
        _device = torch.device("cuda", local_rank)
    _timeout_s = float(args.dist_timeout)
    # torch.optim's first optimizer imports torch._dynamo, and an import made while a group exists
    # keeps references to it: destroy_process_group then leaves gloo's threads running into the
    # interpreter's exit, where they sometimes abort the process ("terminate called without an
    # active exception") after the run has finished. Imported before the group, nothing holds it.
    importlib.import_module("torch._dynamo")

    dist.init_process_group(backend="nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=_timeout_s))
    if not is_main():
        # one console: rank 0's (the others' errors and warnings still reach stderr)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    _check_same_run(args)
    print(
        f"distributed: {world_size()} ranks ({dist.get_backend()}), {local_world_size()} on this machine; "
        f"global batch {world_size()} x {args.num_tables} tables x {args.num_steps} steps = "
        f"{world_size() * args.num_tables * args.num_steps:,} env steps/update",
        flush=True,
    )


def _code_digest() -> str:
    """The trainer's and the engine's sources: every rank must run the same code."""
    h = hashlib.sha256()
    for pkg in ("fzmj_env", "agents", "train"):
        for path in sorted((ROOT / pkg).rglob("*")):
            if path.suffix in (".py", ".yaml") and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _check_same_run(args) -> None:
    mine = {"code": _code_digest(), "config": dataclasses.asdict(args)}
    everyone = [None] * world_size()
    _collective("all_gather_object", dist.all_gather_object, everyone, mine)
    ref = everyone[0]
    for r, other in enumerate(everyone):
        if other["code"] != ref["code"]:
            raise SystemExit(f"fzmj-train: rank {r} runs different code than rank 0 (fzmj_env/, agents/, train/)")
        keys = sorted(k for k in ref["config"] if ref["config"][k] != other["config"].get(k))
        if keys:
            raise SystemExit(f"fzmj-train: rank {r}'s config differs from rank 0's in: {', '.join(keys)}")


# ---- per-rank resources ---------------------------------------------------------------------------
def rank_seed(seed: int) -> int:
    """``seed`` on rank 0 (seeded as a single process is), an independent seed on each other rank."""
    if rank() == 0:
        return seed
    return int(np.random.SeedSequence([seed, rank()]).generate_state(1, np.uint64)[0] >> 1)


def reseed(np_rng: np.random.Generator, seed: int, update: int) -> None:
    """After a resume, which restores rank 0's generator states on every rank: ranks > 0 draw
    their own torch and numpy streams again (seeded by seed, rank and the update)."""
    if rank() == 0:
        return
    s = rank_seed(int(np.random.SeedSequence([seed, update]).generate_state(1, np.uint64)[0] >> 1))
    torch.manual_seed(s)
    np_rng.bit_generator.state = np.random.default_rng(s).bit_generator.state


def rank_device(device: torch.device) -> torch.device:
    """This rank's GPU under nccl; ``device`` unchanged otherwise."""
    return _device if enabled() and _device.type == "cuda" else device


def share_cores(torch_threads: int, env_threads_setting: int, env_threads: int) -> int:
    """Split the machine's cores between its ranks where the config says "all" (0).

    ``torch_threads: 0`` becomes this rank's share of the cores; returns the env threads
    (``env_threads: 0`` capped at the share). A plain process: ``env_threads`` unchanged.
    """
    if not enabled():
        return env_threads
    share = max(1, len(os.sched_getaffinity(0)) // local_world_size())
    if torch_threads == 0:
        torch.set_num_threads(share)
    return min(env_threads, share) if env_threads_setting == 0 else env_threads


def start_update(resume: dict, global_step: int, batch_size: int, default: int) -> int:
    """The update to resume at: ``default`` unless the checkpoint was written by another world size,
    where the global batch differs: then the update the step counter has reached."""
    if resume.get("world_size", 1) == world_size():
        return default
    return global_step // batch_size + 1


# ---- collectives -------------------------------------------------------------------------------------
def _collective(name: str, fn, *a, **kw):
    """Run a collective; a failure or a timeout (another rank died or hangs) stops this rank clearly."""
    try:
        return fn(*a, **kw)
    except (RuntimeError, ValueError) as e:  # DistBackendError and gloo's connection errors are RuntimeErrors
        detail = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise RankLostError(
            f"fzmj-train rank {rank()}/{world_size()}: lost contact with the other ranks in {name} "
            f"(a rank died or did not answer within dist_timeout={_timeout_s:g}s): {detail}\n"
            "fzmj-train: stopping; the last checkpoint written by rank 0 stays loadable (--resume it)."
        ) from None


def broadcast_object(obj):
    """Rank 0's ``obj`` on every rank (a picklable object)."""
    if not enabled():
        return obj
    box = [obj]
    _collective("broadcast_object_list", dist.broadcast_object_list, box, src=0)
    return box[0]


def broadcast_module(module: torch.nn.Module) -> None:
    """Rank 0's parameters and buffers into ``module`` on every rank."""
    if not enabled():
        return
    with torch.no_grad():
        for t in list(module.parameters()) + list(module.buffers()):
            buf = t.data.to(_device)
            _collective("broadcast", dist.broadcast, buf, src=0)
            t.data.copy_(buf)


def minibatches(perm: torch.Tensor, mb_size: int, num_minibatches: int) -> Iterator[torch.Tensor]:
    """The minibatches of one epoch over ``perm`` (a shuffled index).

    A plain process: slices of ``mb_size`` (as CleanRL). Several ranks: exactly ``num_minibatches``
    on every rank, whatever its own batch size, since each minibatch ends in a collective; a rank
    with fewer decisions than minibatches reuses some (wrapping around its shuffled batch).
    """
    n = len(perm)
    if not enabled():
        for start in range(0, n, mb_size):
            yield perm[start : start + mb_size]
        return
    if n == 0:
        raise RuntimeError(
            f"fzmj-train rank {rank()}: no decision to train on in this rollout; raise num_tables or num_steps"
        )
    if n < num_minibatches:
        perm = perm.repeat(-(-num_minibatches // n))[:num_minibatches]
    yield from torch.tensor_split(perm, num_minibatches)


def all_reduce_grads(module: torch.nn.Module, weight: int) -> None:
    """Average the gradients over the ranks, rank r's weighted by its minibatch size ``weight``.

    The result is the gradient of the mean loss over the union of the ranks' minibatches (up to
    each rank normalising its own advantages), identical on every rank.
    """
    if not enabled():
        return
    params = [p for p in module.parameters() if p.requires_grad]
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads] + [torch.ones(1, device=grads[0].device)]).to(_device)
    flat.mul_(float(weight))
    _collective("all_reduce (gradients)", dist.all_reduce, flat)
    flat = flat[:-1].div_(flat[-1]).to(params[0].device)
    offset = 0
    for p in params:
        k = p.numel()
        g = flat[offset : offset + k].view_as(p)
        if p.grad is None:
            p.grad = g.clone()
        else:
            p.grad.copy_(g)
        offset += k


def mean(value: torch.Tensor) -> torch.Tensor:
    """The mean of a scalar tensor over the ranks (e.g. approx_kl, so every rank stops its epochs alike)."""
    if not enabled():
        return value
    buf = value.detach().reshape(1).float().to(_device)
    _collective("all_reduce (mean)", dist.all_reduce, buf)
    return (buf / world_size()).reshape(()).to(value.device)


def all_positive(n: int) -> bool:
    """Whether every rank has ``n`` > 0 (e.g. decisions to train on: with duplicate groups a rank
    may have settled no group yet, and then no rank updates, so their collectives stay paired)."""
    if not enabled():
        return n > 0
    buf = torch.tensor([float(n)], device=_device)
    _collective("all_reduce (min)", dist.all_reduce, buf, op=dist.ReduceOp.MIN)
    return bool(buf.item() > 0)


def sum_counters(obj) -> None:
    """Sum the numeric attributes of ``obj`` (e.g. the hand statistics of a logging window) over the ranks."""
    if not enabled():
        return
    numbers = (int, float, np.integer, np.floating)
    names = [k for k, v in vars(obj).items() if isinstance(v, numbers) and not isinstance(v, (bool, np.bool_))]
    buf = torch.tensor([float(getattr(obj, k)) for k in names], dtype=torch.float64, device=_device)
    _collective("all_reduce (statistics)", dist.all_reduce, buf)
    for k, v in zip(names, buf.tolist(), strict=True):
        setattr(obj, k, type(getattr(obj, k))(v))


def _digest(modules: list[torch.nn.Module]) -> str:
    h = hashlib.sha256()
    for m in modules:
        for name, t in m.state_dict().items():
            h.update(name.encode() + t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def check_in_sync(modules: list[torch.nn.Module]) -> None:
    """Fail loudly if any rank's weights (learner and pool snapshots) differ from rank 0's."""
    if not enabled():
        return
    everyone = [None] * world_size()
    _collective("all_gather_object", dist.all_gather_object, everyone, _digest(modules))
    differ = [r for r, d in enumerate(everyone) if d != everyone[0]]
    if differ:
        raise RuntimeError(f"fzmj-train: ranks {differ} hold different weights than rank 0 (a bug: please report it)")


class NullWriter:
    """TensorBoard's ``SummaryWriter`` on ranks other than 0: every call does nothing."""

    def __getattr__(self, name):
        return lambda *a, **kw: None


def finish(agent: torch.nn.Module, optimizer: torch.optim.Optimizer, pool=None) -> None:
    """End of the run: check that every rank holds the same weights, wait for all, leave the group."""
    snapshots = list(pool.snapshots) if pool is not None else []
    dump = os.environ.get(DUMP_ENV)
    if dump:
        state = {
            "rank": rank(),
            "world_size": world_size(),
            "model": agent.state_dict(),
            "optimizer": optimizer.state_dict(),
            "pool": [p.state_dict() for p in snapshots],
        }
        Path(dump).mkdir(parents=True, exist_ok=True)
        torch.save(state, Path(dump) / f"rank{rank()}.pt")
    if not enabled():
        return
    check_in_sync([agent, *snapshots])
    rank_at_finish = rank()
    print(f"distributed: all {world_size()} ranks finished with identical weights", flush=True)
    barrier()
    dist.destroy_process_group()
    if dump:  # tests: the threads left once the group is gone (gloo's must have ended)
        (Path(dump) / f"rank{rank_at_finish}.threads").write_text("\n".join(_native_threads()))


def _native_threads() -> list[str]:
    """The names of this process's threads (Linux's /proc; empty elsewhere)."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return []
    return sorted((t / "comm").read_text().strip() for t in tasks.iterdir())


def barrier() -> None:
    """Wait for every rank, at most dist_timeout (gloo names the ranks that did not arrive)."""
    if not enabled():
        return
    if dist.get_backend() == "gloo":
        _collective("barrier", dist.monitored_barrier, timeout=datetime.timedelta(seconds=_timeout_s))
    else:
        _collective("barrier", dist.barrier)


class Ranks:
    """The trainer's one handle on the other ranks (this module's helpers, bound together).

    Made by :func:`join` after :func:`setup`. In a plain process (a world of one) every method
    returns its input or does nothing, so the trainer's code reads as the single-process trainer.
    """

    def __init__(self):
        self.rank, self.size = rank(), world_size()
        self.main = self.rank == 0  # rank 0 logs, evaluates and writes checkpoints

    rank_seed = staticmethod(rank_seed)
    reseed = staticmethod(reseed)
    device = staticmethod(rank_device)
    share_cores = staticmethod(share_cores)
    start_update = staticmethod(start_update)
    broadcast_object = staticmethod(broadcast_object)
    broadcast_module = staticmethod(broadcast_module)
    minibatches = staticmethod(minibatches)
    all_reduce_grads = staticmethod(all_reduce_grads)
    mean = staticmethod(mean)
    all_positive = staticmethod(all_positive)
    sum_counters = staticmethod(sum_counters)
    check_in_sync = staticmethod(check_in_sync)
    finish = staticmethod(finish)

    def writer(self, run_dir, purge_step: int | None):
        """TensorBoard's ``SummaryWriter`` on rank 0, a :class:`NullWriter` elsewhere."""
        if not self.main:
            return NullWriter()
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(str(run_dir), purge_step=purge_step)


def join(args) -> Ranks:
    """Join the torchrun group when launched by torchrun (:func:`setup`); this process's :class:`Ranks`."""
    setup(args)
    return Ranks()
