"""The warm start and the teacher term of PPO (kickstarting).

Warm start (``bc_decisions > 0``): behaviour cloning of ``bc_teacher`` before PPO
(``train/bc.py``), saved as ``checkpoints/bc.pt``; or ``bc_checkpoint``: an earlier clone.

Teacher term (``teacher_coef > 0``), decaying linearly to 0 over the first ``teacher_anneal``
of the run: ``kl`` pulls the learner toward the frozen cloned policy, KL(teacher || learner) on
the learner's states; ``ce`` is the cross-entropy to ``bc_teacher``'s own action on them.
"""

from __future__ import annotations

import copy
from pathlib import Path

import torch

from fzmj.agents.checkpoint import load_checkpoint, load_policy
from fzmj.agents.ppo_agent import checkpoint_file

from .bc import warm_start
from .model import OBS_SHAPE


class Teacher:
    """The teacher term: its coefficient at an update, and its loss on a minibatch."""

    def __init__(self, args, policy=None, agent=None):
        self.coef0, self.anneal, self.mode = args.teacher_coef, args.teacher_anneal, args.teacher_mode
        self.policy, self.agent = policy, agent  # kl: the frozen BC policy; ce: the teacher agent

    def coef(self, update: int, num_updates: int) -> float:
        """``teacher_coef``, decayed linearly to 0 over the first ``teacher_anneal`` of the run."""
        coef = self.coef0
        if self.anneal > 0:
            coef *= max(0.0, 1.0 - (update - 1.0) / (self.anneal * num_updates))
        return coef

    def loss(self, obs: torch.Tensor, mask: torch.Tensor, logp_all: torch.Tensor, oracle=None) -> torch.Tensor:
        """KL(frozen BC policy || learner), or the cross-entropy to the teacher agent's action. An
        oracle-guided BC policy reads every oracle plane: the pull is toward the all-seeing clone."""
        if self.policy is not None:
            t_logp = self.policy.log_probs(obs, mask, oracle if self.policy.oracle_guide else None)
            return (t_logp.exp() * (t_logp - logp_all)).sum(-1).mean()
        t_act = self.agent.act(obs[:, : OBS_SHAPE[0]].contiguous().cpu().numpy(), mask.cpu().numpy())  # base planes
        t_act = torch.as_tensor(t_act, device=logp_all.device).unsqueeze(1)
        return -logp_all.gather(1, t_act).mean()

    def after_broadcast(self, agent) -> None:
        """Ranks other than 0 did not clone: their KL teacher is rank 0's fresh clone, just received."""
        if self.policy is None and self.coef0 > 0 and self.mode == "kl":
            self.policy = copy.deepcopy(agent).eval().requires_grad_(False)


def prepare_teacher(args, agent, writer, ckpt_dir: Path, resume: dict | None, device, main: bool) -> Teacher:
    """Warm-start ``agent`` (a fresh run: clone the teacher on rank 0, or load ``bc_checkpoint``)
    and build the teacher term."""
    policy = teacher_agent = None
    if args.bc_decisions > 0 or args.bc_checkpoint:
        bc_path = checkpoint_file(args.bc_checkpoint) if args.bc_checkpoint else ckpt_dir / "bc.pt"
        if resume is None and args.bc_checkpoint:
            agent.load_state_dict(load_checkpoint(bc_path)["model"])  # the same spec (checked before the start)
        elif resume is None and main:  # clone the teacher, save bc.pt, evaluate it; the other ranks get its weights
            warm_start(agent, args, writer, bc_path)
        if args.teacher_coef > 0 and args.teacher_mode == "kl" and (main or resume is not None):
            policy = load_policy(bc_path, device).requires_grad_(False)
    if args.teacher_coef > 0 and args.teacher_mode == "ce":
        from fzmj.agents import make_agent

        teacher_agent = make_agent(args.bc_teacher)
    return Teacher(args, policy, teacher_agent)
