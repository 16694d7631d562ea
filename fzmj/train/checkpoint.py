"""Checkpoints of the self-play trainer: the writer (the reader, ``load_checkpoint`` and
``load_policy``, lives in ``agents/policy.py`` so that agents never import ``train/``).

A checkpoint is one ``torch.save`` file of plain data (loadable with ``weights_only=True``)::

    format        "fzmj-ppo"          version   1
    obs_version   "v1"                policy_spec   ActorCritic's constructor arguments
    obs_planes    99 (base planes)    hf_version    "hf1" with hand features, else None
    hf_planes     18 with hand features, else 0
    model         the policy's state_dict
    optimizer     the optimizer's state_dict
    config        the training config (a dict of the Args fields)
    update, global_step
    rng           torch / CUDA / numpy generator states
    pool          the opponent pool's snapshots (state_dicts), when the pool is used

It is written to a temporary file (``<name>.<8 random characters>.tmp`` in the same folder) and
renamed, so an interrupted save never leaves half a file; a run that starts or resumes removes
the temporaries a killed run left in its ``checkpoints/`` folder (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import torch

from fzmj.agents.policy import (  # noqa: F401 (re-exported)
    FORMAT,
    VERSION,
    ActorCritic,
    load_policy,
    unreadable_checkpoint,
)
from fzmj.agents.policy import load_checkpoint as _load_checkpoint
from fzmj_env.encode import NUM_CHANNELS, OBS_VERSION
from fzmj_env.features import HF_NUM_PLANES, HF_VERSION


def rng_state(np_rng: np.random.Generator | None = None) -> dict:
    """Torch (CPU and CUDA) and numpy generator states, as plain data."""
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    if np_rng is not None:
        state["numpy"] = np_rng.bit_generator.state
    return state


def set_rng_state(state: dict, np_rng: np.random.Generator | None = None) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    if np_rng is not None and "numpy" in state:
        np_rng.bit_generator.state = state["numpy"]


def save_checkpoint(
    path: str | Path,
    policy: ActorCritic,
    optimizer=None,
    config: dict | None = None,
    update: int = 0,
    global_step: int = 0,
    rng: dict | None = None,
    **extra,
) -> Path:
    """Write a checkpoint atomically; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "version": VERSION,
        "obs_version": getattr(policy, "obs_version", OBS_VERSION),
        "obs_planes": int(policy.spec.get("obs_planes", NUM_CHANNELS)),
        "hf_version": HF_VERSION if policy.spec.get("hand_features") else None,
        "hf_planes": HF_NUM_PLANES if policy.spec.get("hand_features") else 0,
        "policy_spec": dict(policy.spec),
        "model": {k: v.detach().cpu() for k, v in policy.state_dict().items()},
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "config": dict(config or {}),
        "update": int(update),
        "global_step": int(global_step),
        "rng": rng or {},
        **extra,
    }
    bad = [k for k, v in data["model"].items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:  # never replace a good checkpoint by a poisoned one
        raise ValueError(f"refusing to save {path}: non-finite weights in {', '.join(bad[:3])}")
    # a unique temporary name: two writers never share it; removed if the write fails
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            out = _Writes(f)
            try:
                torch.save(data, out)
            except RuntimeError:  # torch hides the OS error (ENOSPC, EIO) behind its own message
                if out.error is not None:
                    raise out.error from None
                raise
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; a checkpoint is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class _Writes:
    """A file for ``torch.save`` that remembers the OS error of a failed write."""

    def __init__(self, f):
        self.f, self.error = f, None

    def write(self, b) -> int:
        try:
            return self.f.write(b)
        except OSError as e:
            self.error = e
            raise

    def flush(self) -> None:
        self.f.flush()


# the temporaries of save_checkpoint: <name>.pt.<mkstemp's 8 characters>.tmp
_TEMPORARY = re.compile(r"[\w.+=@-]+\.pt\.[a-z0-9_]{8}\.tmp")


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove the temporary files an interrupted :func:`save_checkpoint` left in ``folder``
    (only names of that pattern; call it while holding the run folder's lock); returns them."""
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for p in folder.iterdir():
        if _TEMPORARY.fullmatch(p.name) and p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def load_checkpoint(path: str | Path, map_location="cpu") -> dict:
    """``fzmj.agents.policy.load_checkpoint``, with a mistyped field in a crafted or damaged file
    reported as a one-line ``ValueError`` too (never a ``TypeError`` from deep inside)."""
    try:
        return _load_checkpoint(path, map_location=map_location)
    except FileNotFoundError:
        raise
    except ValueError as e:
        if str(path) in str(e):  # already our one line, naming the file
            raise
        why = (str(e).strip().splitlines() or [type(e).__name__])[0][:160]
        raise ValueError(
            f"{path} is not a usable fzmj checkpoint: a field has the wrong type or value ({why})"
        ) from None
    except (TypeError, AttributeError, KeyError, IndexError, RuntimeError, OverflowError) as e:
        why = (str(e).strip().splitlines() or [type(e).__name__])[0][:160]
        raise ValueError(
            f"{path} is not a usable fzmj checkpoint: a field has the wrong type or shape ({why})"
        ) from None


class CheckpointWriteError(RuntimeError):
    """A checkpoint could not be written (a full disk, a folder gone): the run stops."""


class Saver:
    """The trainer's checkpoints: ``update_NNNNNN.pt`` and ``latest.pt`` in ``ckpt_dir``, written
    by rank 0 once every rank's weights are checked identical and finite."""

    def __init__(self, ckpt_dir: Path, args, agent, optimizer, pool, np_rng, ranks):
        self.dir, self.args, self.agent, self.optimizer = ckpt_dir, args, agent, optimizer
        self.pool, self.np_rng, self.ranks = pool, np_rng, ranks
        self.latest: Path | None = None

    def save(self, update: int, global_step: int) -> Path:
        from .run_checks import check_finite_weights

        self.ranks.check_in_sync([self.agent, *self.pool.snapshots])
        if not self.ranks.main:
            self.latest = self.dir / "latest.pt"
            return self.latest
        pool = self.pool.state_dicts()
        extra = {"pool": pool} if pool is not None else {}
        extra["world_size"] = self.ranks.size  # a resume adapts to another world size
        state = dict(
            policy=self.agent,
            optimizer=self.optimizer,
            config=dataclasses.asdict(self.args),
            update=update,
            global_step=global_step,
            rng=rng_state(self.np_rng),
            **extra,
        )
        check_finite_weights(self.agent, update)  # never save a poisoned checkpoint over a good one
        try:
            save_checkpoint(self.dir / f"update_{update:06d}.pt", **state)
            self.latest = save_checkpoint(self.dir / "latest.pt", **state)
        except OSError as e:
            why = os.strerror(e.errno) if e.errno == errno.ENOSPC else (e.strerror or str(e).splitlines()[0])
            raise CheckpointWriteError(f"cannot write a checkpoint to {self.dir}: {why}") from None
        except RuntimeError as e:
            raise CheckpointWriteError(f"cannot write a checkpoint to {self.dir}: {str(e).splitlines()[0]}") from None
        return self.latest


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
