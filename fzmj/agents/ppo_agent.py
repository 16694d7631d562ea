"""``ppo:PATH``: a policy checkpoint of the PPO trainer, read by ``fzmj/agents/checkpoint.py``.

It acts on the CPU unless told otherwise: ``PPOAgent(..., device=...)``, or for agents made from
spec strings (``ppo:PATH``, ``pretrained``, a ``search`` blueprint) the ``FZMJ_DEVICE``
environment variable (``auto``, ``cpu``, ``cuda``, ``cuda:N``), which ``fzmj-eval --device`` sets
for itself and its worker processes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fzmj_env.encode import NUM_CHANNELS

from .base import Agent, AgentSpecError, as_batch

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
# The shipped policies by version (docs/pretrained.md): ``pretrained`` plays the newest,
# ``pretrained:vN`` a named one, whose weights never change once shipped.
PRETRAINED_VERSIONS = {"v1": "fzmj_pretrained_v1.pt", "v2": "fzmj_pretrained_v2.pt"}
PRETRAINED_LATEST = "v2"


DEVICE_ENV = "FZMJ_DEVICE"


def resolve_device(name: str | None = None) -> str:
    """The torch device named ``name`` (default: ``$FZMJ_DEVICE``, else ``cpu``): ``auto`` is CUDA
    when torch sees a GPU, else the CPU. :class:`AgentSpecError` (one line) for a device that is
    not there or not a device. The one device picker: the trainer's ``device`` key comes here too
    (``fzmj.train.torch_setup.pick_device``, the same messages as a ``ConfigError``)."""
    name = (os.environ.get(DEVICE_ENV) or "cpu") if name is None else str(name)
    if name == "cpu":
        return name
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind, _, index = name.partition(":")
    if kind != "cuda" or (index and not index.isdigit()):
        raise AgentSpecError(f"device must be auto, cpu, cuda or cuda:N, got {name!r}")
    if not torch.cuda.is_available():
        raise AgentSpecError(f"device {name!r}: no CUDA device is available (torch.cuda.is_available() is False)")
    if index and int(index) >= torch.cuda.device_count():
        raise AgentSpecError(f"device {name!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return name


def pretrained_path(version: str | None = None) -> Path:
    """The shipped checkpoint behind ``pretrained`` (``version`` None: the newest) or
    ``pretrained:VERSION`` (``docs/pretrained.md``); one-line :class:`AgentSpecError` for an
    unknown version or a missing file."""
    name = PRETRAINED_VERSIONS.get(PRETRAINED_LATEST if version is None else version)
    if name is None:
        known = ", ".join(f"pretrained:{v}" for v in PRETRAINED_VERSIONS)
        raise AgentSpecError(f"unknown pretrained version {version!r}: the shipped ones are {known}")
    path = PRETRAINED_DIR / name
    if not path.is_file():
        raise AgentSpecError(f"the pretrained policy is missing from this installation ({path})")
    return path


def checkpoint_file(value: str) -> Path:
    """A checkpoint named in a config or an agent spec: ``pretrained`` / ``pretrained:vN`` is the
    shipped file (:func:`pretrained_path`; ``pretrained:`` with no version is an unknown one),
    anything else a path (not checked here)."""
    kind, sep, version = value.partition(":")
    if kind == "pretrained":
        return pretrained_path(version if sep else None)
    return Path(value)


class PPOAgent(Agent):
    """Loads ``PATH`` through ``fzmj.agents.checkpoint.load_policy(path, device=...)``; ``device``
    None: :func:`resolve_device` (``$FZMJ_DEVICE``, else the CPU).

    The policy is a torch module with ``act(obs int8 (N, 99, 27), mask (N, 62),
    deterministic: bool) -> LongTensor (N,)``. ``deterministic=True`` (the default) takes the
    most likely legal action; ``False`` samples (then ``reset(seed)`` seeds torch's generator).
    """

    def __init__(
        self, path: str | Path, deterministic: bool = True, device: str | None = None, name: str | None = None
    ):
        device = resolve_device(device)
        p = Path(path)
        if not p.exists():
            raise AgentSpecError(f"no such checkpoint: {str(path)!r}")
        if p.is_dir():
            raise AgentSpecError(f"checkpoint {str(path)!r} is a directory, expected a checkpoint file")
        from .checkpoint import load_policy

        try:
            policy = load_policy(str(p), device=device)
        except Exception as e:  # noqa: BLE001 - any loader failure is a bad checkpoint to the user
            raise AgentSpecError(f"cannot load PPO checkpoint {str(path)!r}: {type(e).__name__}: {e}") from e
        if hasattr(policy, "eval"):
            policy.eval()
        self.policy = policy
        # the observation layout it reads: v2 (99 planes) or v3; as_batch slices v2 out of v3
        self.channels = int(getattr(policy, "obs_planes", NUM_CHANNELS))
        self.obs_version = getattr(policy, "obs_version", "v2")
        self.path = str(path)
        self.device = device
        self.deterministic = bool(deterministic)
        self.name = name or f"ppo:{path}"

    def reset(self, seed: int | None = None) -> None:
        if seed is not None and not self.deterministic:
            import torch

            torch.manual_seed(int(seed) % (2**63))

    def act(self, obs, mask) -> np.ndarray:
        import torch

        from .policy import to_tensor

        obs, mask = as_batch(obs, mask, channels=self.channels)
        with torch.no_grad():
            a = self.policy.act(
                to_tensor(obs, self.device),
                to_tensor(mask, self.device),
                deterministic=self.deterministic,
            )
        return np.asarray(a.cpu().numpy() if hasattr(a, "cpu") else a, dtype=np.int64).reshape(-1)

    def action_probs(self, obs, mask) -> tuple[np.ndarray, np.ndarray | None]:
        """``(probs (N, 62), value (N,) or None)``: the softmax of the masked logits (0 on illegal
        actions) and the critic's value estimate (None when the critic needs oracle planes)."""
        import torch

        from .policy import to_tensor

        obs, mask = as_batch(obs, mask, channels=self.channels)
        pol = self.policy
        if not (hasattr(pol, "trunk") and hasattr(pol, "masked_logits")):  # a foreign module: its choice only
            probs = np.zeros(mask.shape, dtype=np.float32)
            probs[np.arange(len(mask)), self.act(obs, mask)] = 1.0
            return probs, None
        with torch.no_grad():
            x = pol.prepare(to_tensor(obs, self.device))
            hidden = pol.trunk(pol.actor_input(x, None))  # an oracle-guided actor plays on zeros
            probs = torch.softmax(pol.masked_logits(hidden, to_tensor(mask, self.device)), dim=-1)
            value = None if getattr(pol, "oracle_critic", False) else pol.value_from(hidden, x, None)
        probs = probs.cpu().numpy().astype(np.float32) * (mask != 0)
        return probs, None if value is None else value.cpu().numpy().astype(np.float32)
