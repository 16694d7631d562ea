"""The torch pieces a run is built on: its device and its optimizer."""

from __future__ import annotations

import torch

from fzmj.agents.base import AgentSpecError
from fzmj.agents.ppo_agent import resolve_device

from .config import ConfigError


def pick_device(name: str) -> torch.device:
    """The torch device of the ``device`` key, picked by the agents' picker
    (:func:`fzmj.agents.ppo_agent.resolve_device`: auto, cpu, cuda, cuda:N); its one-line error,
    word for word, as a ``ConfigError`` when the device is not one or not on this machine."""
    try:
        return torch.device(resolve_device(str(name)))
    except AgentSpecError as e:
        raise ConfigError(str(e)) from None


def make_optimizer(agent: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam (CleanRL's eps), the fused kernel where this torch has it for the device."""
    try:
        return torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5, fused=True)
    except (RuntimeError, TypeError):  # older torch: fused Adam is CUDA-only
        return torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
