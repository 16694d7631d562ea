"""The loss of behaviour cloning, shared by the in-memory clone (``bc.py``) and the streamed one
(``bc_stream.py``): masked cross-entropy to the label, and the value head's prediction."""

from __future__ import annotations

import torch
import torch.nn as nn

from fzmj.agents.policy import ActorCritic


def masked_cross_entropy(
    policy: ActorCritic, obs, mask, action, oracle=None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(mean CE to action, value (N,), logits (N, 62))`` with illegal actions masked out; the
    value of an oracle critic reads ``oracle``, the logits only for an oracle-guided actor."""
    obs = policy.prepare(obs)  # hand-feature planes appended unless already there
    hidden = policy.trunk(policy.actor_input(obs, oracle))  # an oracle-guided actor clones with every oracle plane
    logits = policy.masked_logits(hidden, mask)
    ce = nn.functional.cross_entropy(logits, action)
    value = policy.value_from(hidden, obs, oracle)
    return ce, value, logits
