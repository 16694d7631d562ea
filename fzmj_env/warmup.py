"""``fzmj-warmup`` (or ``python -m fzmj_env.warmup``): compile the Numba kernels ahead of use.

The first use of the engine in a fresh Numba cache compiles its kernels (tens of seconds);
later processes load them from the on-disk cache (``fzmj_env/_numba_cache.py`` says where it
lives: ``$NUMBA_CACHE_DIR`` or the installed package's ``__pycache__``, shared by every process
of the install). Run this once where the cache will live, e.g. as a Dockerfile step
(``RUN fzmj-warmup``) or a CI step before the tests, and the first step of every later process
starts warm.

Each target runs the code path it names once (a short game), which compiles (or loads) every
kernel that path calls, and builds the hand tables if they are missing:

    fzmj-warmup                 # the default targets: hand aec vector gym oracle features,
                                #   and policy train (the networks' and the trainer's kernels,
                                #   registered by the layers above: pyproject's fzmj.warmup)
    fzmj-warmup gym             # just what gym.make("fzmj/SingleSeat-v0") needs
    fzmj-warmup --all           # also the multi-threaded kernels (VectorEnv step, hand features,
                                #   the heuristic's batch kernel)
    fzmj-warmup --check         # exit 1 if anything had to compile (is the cache warm?)
    fzmj-warmup --jobs auto     # the targets split over one process per CPU
    fzmj-warmup --host          # compile for this CPU even where the wheel's generic kernels
                                #   would load (docs/engine.md, "Kernels in the wheel")

Exit codes: 0 done, 1 a target failed (or ``--check`` found a cold cache), 2 bad arguments.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import _numba_cache, _shipped_kernels
from .cli import OneLineParser

__all__ = ["TARGETS", "DEFAULT_TARGETS", "all_targets", "default_targets", "warmup", "main"]


def _warm_hand() -> None:
    """The hand API (win, waits, specials, shanten, the batch win check) and both hand tables."""
    from .core import hand

    hand.is_win("123456789m111p22s", "5s")
    hand.waits("123456789m11p22s", "5s")
    hand.special_shapes("123456789m111p22s", "5s")
    hand.flush_specials("123456789m11122m", "5s")
    hand.swims("123456789m1122m", "2m")
    hand.shanten("123456789m111p22s", "5s")
    counts = np.zeros((1, 27), np.int8)
    counts[0, 0] = 2  # a pair: the smallest winning hand
    hand.is_win_batch(counts, np.array([5]))


def _warm_aec() -> None:
    """``fzmj_env.env()`` (the PettingZoo AEC env): one game; and one hand of the Python driver
    ``Game`` (game records, replays, the play page), whose step kernel is its own."""
    from .aec import env
    from .game import Game

    g = Game(hands_per_game=1)
    g.reset(seed=0)
    saved = g.save_state()  # and the check of a restored table (snapshot.py, core/validate.py)
    while not g.done:
        g.step(g.legal_actions[0])
    assert g.drawable >= 0  # the wall counts (tiles_left, reserve, drawable)
    g.restore_state(saved)
    e = env()
    e.reset(seed=0)
    for _agent in e.agent_iter(max_iter=2000):
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


def _warm_vector(num_threads: int = 1) -> None:
    """:class:`fzmj_env.VectorEnv`: reset, step and step_tables over two tables."""
    from .vector import VectorEnv

    v = VectorEnv(2, seed=0, num_threads=num_threads)
    _, mask, _ = v.reset()
    for _ in range(4):
        _, mask, _, _, _, _ = v.step(mask.argmax(axis=1))
    v.step_tables(np.array([0]), mask[:1].argmax(axis=1))
    v.restore_tables([1], v.save_tables([0]))
    v.restore_tables(0, v.save_tables(1))  # one table given as an int: its own kernel


def _warm_gym() -> None:
    """``gym.make("fzmj/SingleSeat-v0")`` (heuristic opponents): reset and a few steps. The env
    lives a layer up (``fzmj.integrations``); it is reached through Gymnasium's registry."""
    import gymnasium as gym

    e = gym.make("fzmj/SingleSeat-v0")
    _, info = e.reset(seed=0)
    for _ in range(8):
        _, _, term, trunc, info = e.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            _, info = e.reset()


def _warm_threads() -> None:
    """The multi-threaded kernels (``num_threads=2``): the VectorEnv step, and the hand-feature
    planes split over the env's threads (the trainer's rollout); the heuristic's threaded kernel
    comes from ``fzmj.agents`` (``_warmers_above``)."""
    from .features import PARALLEL_MIN_ROWS, with_hand_features
    from .vector import VectorEnv

    _warm_vector(num_threads=2)
    obs, _, _ = VectorEnv(2 * PARALLEL_MIN_ROWS, seed=0).reset()
    with_hand_features(obs, threads=2)


def _warm_oracle() -> None:
    """The oracle planes: ``VectorEnv(oracle=True)`` (the trainer's oracle critic) and the AEC
    env's ``oracle=True``. Compiled only where asked for (``fzmj_env/observe.py``)."""
    from .aec import env
    from .vector import VectorEnv

    v = VectorEnv(2, seed=0, oracle=True)
    _, mask, _ = v.reset()
    for _ in range(4):
        _, mask, _, _, _, _ = v.step(mask.argmax(axis=1))
    v.step_tables(np.array([0]), mask[:1].argmax(axis=1))
    e = env(oracle=True)
    e.reset(seed=0)
    e.last()


def synthetic_batch(rows: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``(obs, mask)`` of ``rows`` made-up v2 turns (14 tiles in hand, a gold, any discard legal):
    the types the envs give, without running the engine, so the kernels that only read an
    observation (hand features, the heuristic) compile apart from the engine's, e.g. in another
    process (:func:`warm_in_processes`)."""
    obs = np.zeros((rows, 99, 27), np.int8)
    obs[:, 0, :14] = 1  # one of each of 1m..9m, 1p..5p
    obs[:, 4, 26] = 1  # the gold: 9s
    obs[:, 95, 0] = obs[:, 95, 6] = 1  # a turn, this seat to act
    mask = np.zeros((rows, 62), np.int8)
    mask[:, :14] = 1
    return obs, mask


def _warm_features() -> None:
    """The hand-feature planes a policy with ``hand_features`` computes (``fzmj_env/features.py``)."""
    from .features import feature_planes, with_hand_features

    obs = synthetic_batch()[0]
    with_hand_features(obs)  # the policies' input
    feature_planes(obs)  # the planes alone (another output layout): the teachers' and the trainer's


TARGETS = {
    "hand": _warm_hand,
    "aec": _warm_aec,
    "vector": _warm_vector,
    "gym": _warm_gym,
    "oracle": _warm_oracle,
    "features": _warm_features,
    "threads": _warm_threads,
}
DEFAULT_TARGETS = ("hand", "aec", "vector", "gym", "oracle", "features")


def _targets_above() -> list[str]:
    """The targets only the layers above define (``policy``, ``train``: their kernels, nothing of
    this layer's), in the order registered; the names shared with ``TARGETS`` only add to those."""
    from importlib.metadata import entry_points

    names = [ep.name for ep in entry_points(group="fzmj.warmup")]
    return [n for n in dict.fromkeys(names) if n not in TARGETS]


def all_targets() -> list[str]:
    """Every target: this layer's, then those of the layers above (``fzmj-warmup --all``)."""
    return [*TARGETS, *_targets_above()]


def default_targets() -> list[str]:
    """``fzmj-warmup`` without arguments: all but ``threads`` (the multi-threaded kernels)."""
    return [*DEFAULT_TARGETS, *_targets_above()]


def _warmers_above(target: str) -> list:
    """The warm-up functions the packages above this layer register for ``target`` (the
    ``fzmj.warmup`` entry points of the installed distribution: ``threads`` adds the heuristic's
    threaded kernel in ``fzmj.agents``), found by name so that this layer never imports them."""
    from importlib.metadata import entry_points

    return [ep.load() for ep in entry_points(group="fzmj.warmup") if ep.name == target]


def _dirs_above(targets: list[str]) -> set[str]:
    """The Numba cache folders of the modules whose warm-up functions ``targets`` reach above
    this layer (``threads``: the heuristic's, under ``fzmj/agents``)."""
    folders = {Path(inspect.getfile(fn)).resolve().parent for t in targets for fn in _warmers_above(t)}
    found = (_numba_cache.numba_cache_dir(f) for f in folders)
    return {str(d) for d in found if d is not None}


class _CompileCounter:
    """Counts (and times) the kernel versions of our packages that actually compile."""

    def __init__(self):
        from numba.core import event

        self.count = 0
        counter = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                func = getattr(ev.data.get("dispatcher"), "py_func", None)
                if (getattr(func, "__module__", "") or "").startswith(("fzmj_env", "fzmj.")):
                    counter.count += 1

            def on_end(self, ev):
                pass

        self.listener = _Listener()
        event.register("numba:compile", self.listener)

    def close(self):
        from numba.core import event

        event.unregister("numba:compile", self.listener)


def warmup(targets=None, out=None) -> list[dict]:
    """Run each target once; one dict per target: ``target``, ``seconds``, ``compiled`` (kernel
    versions compiled, 0 when everything came from the cache). Raises ``ValueError`` for an
    unknown target; prints one line per target to ``out`` if given."""
    known = all_targets()
    targets = default_targets() if targets is None else list(targets)
    unknown = [t for t in targets if t not in known]
    if unknown:
        raise ValueError(f"unknown warm-up target {unknown[0]!r}; choose from {', '.join(known)}")
    _numba_cache._notice["shown"] = True  # this command reports for itself
    counter = _CompileCounter()
    rows = []
    try:
        for name in targets:
            before, t0 = counter.count, time.perf_counter()
            if name in TARGETS:
                TARGETS[name]()
            for warm_above in _warmers_above(name):
                warm_above()
            rows.append({"target": name, "seconds": time.perf_counter() - t0, "compiled": counter.count - before})
            if out is not None:
                r = rows[-1]
                print(f"  {name:8s} {r['seconds']:6.1f} s  {r['compiled']:3d} kernel versions compiled", file=out)
    finally:
        counter.close()
    return rows


def warm_in_processes(groups: list[list[str]], host: bool = False) -> None:
    """Warm each group of targets in a child process of its own, all at once, into the shared
    cache; returns when all are done. Groups whose kernels do not overlap compile in parallel
    (``fzmj-warmup --jobs``, the trainer's first run); overlapping ones compile twice. Raises
    ``RuntimeError`` with the child's last stderr line if one fails."""
    cmd = [sys.executable, "-m", "fzmj_env.warmup", "--quiet", *(["--host"] if host else [])]
    children = [
        subprocess.Popen([*cmd, *g], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for g in groups if g
    ]
    errors = [(child.communicate()[1] or "").strip().splitlines() for child in children]
    for child, err in zip(children, errors, strict=True):
        if child.returncode:
            raise RuntimeError(
                f"fzmj-warmup {' '.join(child.args[len(cmd) :])}: {err[-1] if err else child.returncode}"
            )


def _split(targets: list[str], jobs: int) -> list[list[str]]:
    """``targets`` over ``jobs`` groups: ``hand`` first in the first (the others load its tables)."""
    return [targets[i::jobs] for i in range(max(1, min(jobs, len(targets))))]


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="fzmj-warmup",
        description="Compile fzmj's Numba kernels (and build the hand tables) ahead of use: "
        "run once in a Dockerfile or CI step, and later processes start warm.",
    )
    parser.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help=f"what to warm: {', '.join(all_targets())} (default: all but threads)",
    )
    parser.add_argument("--all", action="store_true", help="every target, the multi-threaded kernels included")
    parser.add_argument("--check", action="store_true", help="exit 1 if any kernel had to compile (the cache was cold)")
    parser.add_argument(
        "--jobs",
        metavar="N",
        default="1",
        help="compile in N processes at once (auto: one per CPU); the targets are split over them",
    )
    parser.add_argument("--quiet", action="store_true", help="print errors only")
    parser.add_argument(
        "--host",
        action="store_true",
        help="compile for this CPU into the host cache, not loading the generic kernels shipped with the wheel",
    )
    args = parser.parse_args(argv)
    if args.host:
        _shipped_kernels.compile_for_this_cpu()
    if args.all and args.targets:
        parser.error("give targets or --all, not both")
    targets = all_targets() if args.all else (args.targets or default_targets())
    bad = [t for t in targets if t not in all_targets()]
    if bad:
        parser.error(f"unknown target {bad[0]!r} (choose from {', '.join(all_targets())})")
    if args.jobs == "auto":
        jobs = os.cpu_count() or 1
    else:
        jobs = int(args.jobs) if args.jobs.isdigit() else 0
    if jobs < 1:
        parser.error(f"--jobs: a positive whole number or auto, got {args.jobs!r}")
    out = None if args.quiet else sys.stdout
    dirs = sorted(
        {str(d) for d in _numba_cache.numba_cache_dirs(Path(__file__).resolve().parent)} | _dirs_above(targets)
    )
    if out:
        print(
            f"fzmj-warmup: Numba cache in {', '.join(dirs) or '(none: nothing writable, kernels will not be cached)'}"
        )
    t0 = time.perf_counter()
    try:
        if jobs > 1 and len(targets) > 1 and not args.check:  # the children compile; the rows below load
            groups = _split(targets, jobs)
            warm_in_processes(groups, host=args.host)
            if out:
                print(f"  {len(groups)} processes compiled in {time.perf_counter() - t0:.1f} s", file=out)
        rows = warmup(targets, out=out)
    except Exception as exc:  # a failed target: one line, exit 1
        print(f"fzmj-warmup: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    n = sum(r["compiled"] for r in rows)
    if out:
        print(f"fzmj-warmup: {n} kernel versions compiled in {time.perf_counter() - t0:.1f} s ({len(rows)} targets)")
    if args.check and n:
        print(f"fzmj-warmup: error: the cache was not warm ({n} kernel versions compiled)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
