"""The torch pieces a run is built on: its device and its optimizer."""

from __future__ import annotations

import torch

from .config import ConfigError


def pick_device(name: str) -> torch.device:
    """The torch device of the ``device`` key; ``ConfigError`` when it is not on this machine."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(
            f"device: {name} asked for, but no CUDA device is available (torch.cuda.is_available() is False)"
        )
    try:
        dev = torch.device(name)
        if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ConfigError(
                f"device: {name} asked for, but this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    except RuntimeError as e:
        raise ConfigError(f"device: {name!r} is not a device ({e})") from None
    return dev


def make_optimizer(agent: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam (CleanRL's eps), the fused kernel where this torch has it for the device."""
    try:
        return torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5, fused=True)
    except (RuntimeError, TypeError):  # older torch: fused Adam is CUDA-only
        return torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
