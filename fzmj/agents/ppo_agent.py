"""``ppo:PATH``: a policy checkpoint of the PPO trainer, read by ``agents/policy.py``, acting on CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fzmj_env.encode import NUM_CHANNELS

from .base import Agent, AgentSpecError, as_batch

PRETRAINED = Path(__file__).resolve().parent / "pretrained" / "fzmj_pretrained.pt"


def pretrained_path() -> Path:
    """The shipped checkpoint behind the ``pretrained`` spec (``docs/pretrained.md``)."""
    if not PRETRAINED.is_file():
        raise AgentSpecError(f"the pretrained policy is missing from this installation ({PRETRAINED})")
    return PRETRAINED


class PPOAgent(Agent):
    """Loads ``PATH`` through ``fzmj.agents.policy.load_policy(path, device=...)``.

    The policy is a torch module with ``act(obs int8 (N, 99, 27), mask (N, 62),
    deterministic: bool) -> LongTensor (N,)``. ``deterministic=True`` (the default) takes the
    most likely legal action; ``False`` samples (then ``reset(seed)`` seeds torch's generator).
    """

    def __init__(self, path: str | Path, deterministic: bool = True, device: str = "cpu", name: str | None = None):
        p = Path(path)
        if not p.exists():
            raise AgentSpecError(f"no such checkpoint: {str(path)!r}")
        if p.is_dir():
            raise AgentSpecError(f"checkpoint {str(path)!r} is a directory, expected a checkpoint file")
        from .policy import load_policy

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

        obs, mask = as_batch(obs, mask, channels=self.channels)
        with torch.no_grad():
            a = self.policy.act(
                torch.from_numpy(obs).to(self.device),
                torch.from_numpy(mask).to(self.device),
                deterministic=self.deterministic,
            )
        return np.asarray(a.cpu().numpy() if hasattr(a, "cpu") else a, dtype=np.int64).reshape(-1)

    def action_probs(self, obs, mask) -> tuple[np.ndarray, np.ndarray | None]:
        """``(probs (N, 62), value (N,) or None)``: the softmax of the masked logits (0 on illegal
        actions) and the critic's value estimate (None when the critic needs oracle planes)."""
        import torch

        obs, mask = as_batch(obs, mask, channels=self.channels)
        pol = self.policy
        if not (hasattr(pol, "trunk") and hasattr(pol, "masked_logits")):  # a foreign module: its choice only
            probs = np.zeros(mask.shape, dtype=np.float32)
            probs[np.arange(len(mask)), self.act(obs, mask)] = 1.0
            return probs, None
        with torch.no_grad():
            x = pol.prepare(torch.from_numpy(obs).to(self.device))
            hidden = pol.trunk(x)
            probs = torch.softmax(pol.masked_logits(hidden, torch.from_numpy(mask).to(self.device)), dim=-1)
            value = None if getattr(pol, "oracle_critic", False) else pol.value_from(hidden, x, None)
        probs = probs.cpu().numpy().astype(np.float32) * (mask != 0)
        return probs, None if value is None else value.cpu().numpy().astype(np.float32)
