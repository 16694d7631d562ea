"""Checkpoints of the self-play trainer, and :func:`load_policy` for agents and the evaluator.

A checkpoint is one ``torch.save`` file of plain data (loadable with ``weights_only=True``)::

    format        "fzmj-ppo"          version   1
    obs_version   "v1"                policy_spec   ActorCritic's constructor arguments
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
import pickle
import tempfile
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint_guard import check_policy_checkpoint
from fzmj_env.encode import OBS_VERSION

from .model import ActorCritic, build_policy

FORMAT = "fzmj-ppo"
VERSION = 1


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
    if bad:  # never replace a good checkpoint by a poisoned one (issue 10)
        raise ValueError(f"refusing to save {path}: non-finite weights in {', '.join(bad[:3])}")
    # a unique temporary name: two writers never share it (issue 10); removed if the write fails
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


def unreadable_checkpoint(path, err: Exception) -> str:
    """One line for a file torch cannot load as plain data (torch's own text runs to several
    lines and suggests ``weights_only=False``, which must never be done with a file from elsewhere)."""
    if isinstance(err, pickle.UnpicklingError) and "weights only" in str(err).lower():
        why = "it holds Python objects besides tensors and plain data, which are never loaded"
    else:
        why = (str(err).strip().splitlines() or [type(err).__name__])[0][:160]
    return f"{path} is not a readable fzmj checkpoint: {why}"


def load_checkpoint(path: str | Path, map_location="cpu") -> dict:
    """The checkpoint's dict; ``FileNotFoundError`` / ``ValueError`` with the path when unusable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # a truncated file, not a torch file, ... (one line of ours, issue 10)
        raise ValueError(unreadable_checkpoint(path, e)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not an fzmj PPO checkpoint (format {FORMAT!r})")
    if data.get("version", 0) > VERSION:
        raise ValueError(f"{path}: checkpoint version {data['version']} is newer than this code ({VERSION})")
    if data.get("obs_version") != OBS_VERSION:
        raise ValueError(
            f"{path}: trained on observations {data.get('obs_version')!r}, this env encodes {OBS_VERSION!r}"
        )
    check_policy_checkpoint(data, build_policy, str(path))  # spec vs weight shapes, finite weights (issue 10)
    return data


def load_policy(path: str | Path, device: str | torch.device = "cpu") -> ActorCritic:
    """The policy of a checkpoint, on ``device``, in eval mode: ``policy.act(obs, mask, deterministic)``."""
    data = load_checkpoint(path, map_location=device)
    policy = build_policy(data["policy_spec"])
    policy.load_state_dict(data["model"])
    return policy.to(device).eval()
