"""The loss of behaviour cloning, shared by the in-memory clone (``bc.py``) and the streamed one
(``bc_stream.py``): masked cross-entropy to the label, and the value head's prediction; one
minibatch's update; a batch's hits on its labels."""

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


def clone_update(policy: ActorCritic, opt, obs, mask, action, ret, oracle, vf_coef: float) -> tuple[float, float]:
    """One minibatch of the clone: masked cross-entropy plus ``vf_coef`` x half the squared error
    of the value on the returns ``ret``, gradients clipped to norm 0.5; ``(CE, value loss)``."""
    ce, value, _ = masked_cross_entropy(policy, obs, mask, action, oracle)
    v_loss = 0.5 * ((value - ret) ** 2).mean()
    loss = ce + vf_coef * v_loss
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    opt.step()
    return ce.item(), v_loss.item()


@torch.no_grad()
def label_hits(policy: ActorCritic, obs, mask, action, oracle=None) -> tuple[int, float]:
    """``(decisions whose argmax is the label, mean CE)`` of one batch (the hold-out's accuracy)."""
    ce, _, logits = masked_cross_entropy(policy, obs, mask, action, oracle)
    return int((logits.argmax(-1) == action).sum()), ce.item()
