"""The trainer's rollout step: T env steps of every table of a ``VectorEnv``.

At each step the policy is evaluated once for the tables whose acting seat is the learner's
(their decisions go into the :class:`SelfPlayBuffer`), the opponents act at the others, the env
steps, the step's rewards are credited to each seat's chain, and tables whose game ended get
their next game (and its seats' controllers). Which tables play and who deals their next game
is the advantage strategy's business (``train/advantages.py``).
"""

from __future__ import annotations

import numpy as np
import torch

from fzmj.agents.policy import to_tensor

from .advantages import GAE
from .metrics import HandStats
from .opponents import LEARNER, NoOpponents, OpponentPool
from .selfplay_buffer import SelfPlayBuffer


class Rollout:
    """The tables' current observations and the per-step work of collecting decisions."""

    def __init__(
        self,
        env,
        games: GAE,
        pool: OpponentPool | NoOpponents,
        buffer: SelfPlayBuffer,
        stats: HandStats,
        device: torch.device,
        steps_per_table_step: int,
        args,
    ):
        """``args``: the run's config (``Args``); a key the rollout reads is ``self.args.KEY``, so
        a new one needs no threading through run_setup.py."""
        self.env, self.games, self.pool, self.buffer, self.stats = env, games, pool, buffer, stats
        self.args = args
        self.device = device
        self.steps_per_table_step = steps_per_table_step  # env steps counted per table step: the world size
        self.all_tables = np.arange(env.num_tables)
        self.actions = np.zeros(env.num_tables, dtype=np.int64)
        self.obs, self.mask, self.seat = env.reset(seeds=games.first_seeds())
        self.oracle = (
            env.oracle_planes if args.oracle_critic else None
        )  # reset() returns no oracle; step() puts it in info
        self.guide_keep = 0.0  # oracle guiding: the chance that the actor sees a decision's oracle planes
        pool.assign(self.all_tables, group=games.group)

    def refresh_values(self, agent) -> None:
        """The decisions carried over from the last rollout get values from the updated critic."""
        buf = self.buffer
        if buf.n:
            with torch.no_grad():
                o = buf.oracle[: buf.n] if buf.oracle is not None else None
                buf.values[: buf.n] = agent.get_value(buf.obs[: buf.n], o)

    def collect(self, agent, num_steps: int, stop) -> int:
        """Up to ``num_steps`` env steps of every playing table (fewer when ``stop.requested``);
        returns the env steps taken, over all ranks."""
        steps = 0
        for _ in range(num_steps):
            if stop.requested:
                break
            live = self.games.live(self.all_tables)
            steps += len(live) * self.steps_per_table_step
            self.step(agent, live)
        return steps

    def step(self, agent, live: np.ndarray) -> None:
        """One env step of the ``live`` tables."""
        games, pool, buffer = self.games, self.pool, self.buffer
        obs, mask, seat, actions = self.obs, self.mask, self.seat, self.actions
        ctrl = pool.controller[self.all_tables, seat]
        games.mark_idle(ctrl)
        rows = np.flatnonzero(ctrl == LEARNER)
        every = len(rows) == len(self.all_tables)  # all tables are the learner's: no gather needed
        if len(rows):
            # the network's input is made on the host (hand features in Numba) and sent once
            obs_d = to_tensor(agent.prepare_host(obs if every else obs[rows], self.env.num_threads), self.device)
            mask_d = to_tensor(mask if every else mask[rows], self.device)
            oracle_d = torch.from_numpy(self.oracle[rows]).to(self.device) if self.oracle is not None else None
            keep = guide = None
            if agent.oracle_guide:  # each decision's oracle planes reach the actor with chance guide_keep
                keep = (torch.rand(len(rows)) < self.guide_keep).to(torch.int8).to(self.device)
                guide = oracle_d * keep[:, None, None]
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(obs_d, mask_d, oracle=oracle_d, guide=guide)
            buffer.add(rows, seat[rows], obs_d, mask_d, action, logprob, value, oracle_d, games.games(rows), keep)
            actions[rows] = action.cpu().numpy()
        pool.act(ctrl, obs, mask, actions)

        obs, mask, seat, rewards, done, info = games.step(self.env, actions, live)
        self.oracle = info.get("oracle")
        buffer.credit(seat, info["pending_reward"], done, info["final_reward"])
        if info["hand_over"].any():
            self.stats.record(info, pool.controller)  # before the ended games' seats are redrawn
        tables, dealt = games.next_games(self.env, done, info, buffer)
        if dealt is not None:
            obs, mask, seat = dealt
        if len(tables):
            pool.assign(tables, group=games.group)
        self.obs, self.mask, self.seat = obs, mask, seat
