"""The trainer's update step: CleanRL's clipped PPO over the rollout's trainable decisions,
plus the teacher term (``train/teacher.py``); gradients averaged over the ranks."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from .run_checks import check_finite_loss, check_finite_weights
from .selfplay_buffer import SelfPlayBuffer


@dataclass
class UpdateResult:
    """What the log step reports of one update (the last minibatch's losses, as CleanRL)."""

    trained: int
    policy_loss: float = 0.0
    value_loss: float = 0.0
    entropy: float = 0.0
    old_approx_kl: float = 0.0
    approx_kl: float = 0.0
    clipfrac: float = 0.0
    teacher_loss: float = 0.0
    explained_variance: float = float("nan")
    carried: int = 0


def ppo_update(
    agent, optimizer, buffer: SelfPlayBuffer, batch: tuple, args, teacher, teacher_coef: float, ranks, update: int
) -> UpdateResult:
    """``update_epochs`` passes of minibatch Adam over ``batch`` = ``(advantages, returns, rows, skip)``."""
    advantages, returns, train_idx, skip = batch
    b_values = buffer.values[: buffer.n]
    n_train = len(train_idx)
    mb_size = max(1, math.ceil(n_train / args.num_minibatches))
    clipfracs, approx_kl, old_approx_kl = [], torch.zeros(()), torch.zeros(())
    parts = dict.fromkeys(("policy", "value", "entropy"), torch.zeros(()))
    teacher_loss = torch.zeros(())
    idx_all = torch.as_tensor(train_idx, device=buffer.device)
    for _epoch in range(0 if skip else args.update_epochs):
        perm = idx_all[torch.randperm(n_train).to(buffer.device)]
        for mb in ranks.minibatches(perm, mb_size, args.num_minibatches):  # the same count on every rank
            loss, parts, ratio, logratio = minibatch_loss(agent, buffer, mb, advantages, returns, b_values, args)
            with torch.no_grad():
                # http://joschu.net/blog/kl-approx.html
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]
            named = {"policy_loss": parts["policy"], "value_loss": parts["value"], "entropy": parts["entropy"]}
            check_finite_loss(loss, update, named)
            if teacher_coef > 0:  # kickstarting: the pull toward the teacher
                teacher_loss = teacher.loss(parts["obs"], parts["mask"], parts["logp_all"], parts["oracle"])
                loss = loss + teacher_coef * teacher_loss

            optimizer.zero_grad()
            loss.backward()
            ranks.all_reduce_grads(agent, len(mb))  # the ranks' mean gradient
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()

        approx_kl = ranks.mean(approx_kl)  # every rank stops its epochs alike
        if args.target_kl is not None and approx_kl > args.target_kl:
            break
    check_finite_weights(agent, update)  # the run stops here, before any save

    y_pred = b_values[idx_all].cpu().numpy() if n_train else np.zeros(1)
    y_true = returns[idx_all].cpu().numpy() if n_train else np.zeros(1)
    var_y = np.var(y_true)
    return UpdateResult(
        trained=n_train,
        policy_loss=parts["policy"].item(),
        value_loss=parts["value"].item(),
        entropy=parts["entropy"].item(),
        old_approx_kl=old_approx_kl.item(),
        approx_kl=approx_kl.item(),
        clipfrac=float(np.mean(clipfracs)) if clipfracs else 0.0,
        teacher_loss=teacher_loss.item(),
        explained_variance=np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y,
    )


def minibatch_loss(agent, buffer: SelfPlayBuffer, mb: torch.Tensor, advantages, returns, b_values, args) -> tuple:
    """CleanRL's PPO loss of one minibatch: ``(loss, parts, ratio, logratio)``; ``parts`` also
    carries the minibatch (``obs``, ``mask``) and the new log-probs of every action (``logp_all``)
    for the teacher term."""
    mb_oracle = buffer.oracle.index_select(0, mb) if buffer.oracle is not None else None
    mb_obs, mb_mask = buffer.obs.index_select(0, mb), buffer.mask.index_select(0, mb)
    mb_guide = None  # oracle guiding: the actor's oracle planes as the rollout dropped them
    if buffer.guide_keep is not None:
        mb_guide = mb_oracle * buffer.guide_keep.index_select(0, mb)[:, None, None]
    _, newlogprob, entropy, newvalue, logp_all = agent.get_action_value_and_logp(
        mb_obs, mb_mask, buffer.actions[mb], oracle=mb_oracle, guide=mb_guide
    )
    logratio = newlogprob - buffer.logprobs[mb]
    ratio = logratio.exp()

    mb_adv = advantages[mb]
    if args.norm_adv and len(mb) > 1:
        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)

    # policy loss
    pg_loss1 = -mb_adv * ratio
    pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()

    # value loss
    if args.clip_vloss:
        v_loss_unclipped = (newvalue - returns[mb]) ** 2
        v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
        v_loss_clipped = (v_clipped - returns[mb]) ** 2
        v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        v_loss = 0.5 * ((newvalue - returns[mb]) ** 2).mean()

    entropy_loss = entropy.mean()
    loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
    parts = {
        "policy": pg_loss,
        "value": v_loss,
        "entropy": entropy_loss,
        "logp_all": logp_all,
        "obs": mb_obs,
        "mask": mb_mask,
        "oracle": mb_oracle,
    }
    return loss, parts, ratio, logratio
