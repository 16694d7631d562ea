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

It is written to a temporary file and renamed, so an interrupted save never leaves half a file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import torch
from fzmj.agents.policy import (  # noqa: F401 (re-exported)
    FORMAT,
    VERSION,
    ActorCritic,
    load_checkpoint,
    load_policy,
    unreadable_checkpoint,
)

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
        "obs_version": OBS_VERSION,
        "obs_planes": NUM_CHANNELS,
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
            torch.save(data, f)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; a checkpoint is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
