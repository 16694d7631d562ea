"""A run's checkpoints: when they are written (:class:`Saver`), the generator states they carry,
and the temporaries a killed run left behind. The format itself, its writer and its reader
belong to ``fzmj.agents.checkpoint``.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
from pathlib import Path

import numpy as np
import torch

from fzmj.agents.checkpoint import save_checkpoint


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
