"""Rollout storage for four-seat self-play, and GAE over each seat's own decisions.

This is where self-play PPO usually goes wrong, so the bookkeeping is spelled out here.

**Chains.** At a table, the seats take turns irregularly (claims, kongs, a seat acting twice in
a row), and a reward reaches every seat at once when a hand ends. PPO's "next step" of a
decision is therefore *the same seat's next decision at the same table*: each (table, seat) is
its own chain of decisions, and GAE runs along that chain, never along the table's step order.

**What is stored.** At each env step every table has one acting seat. If that seat is played by
the learner, its decision (observation, mask, action, log-prob, value) is appended with its
(table, seat) and linked to that chain's previous decision: ``next_idx[prev] = new``.

**Rewards.** Rewards come from ``VectorEnv.step``:

* ``info["pending_reward"][t]`` is what the seat that acts next at table t received since its
  own previous decision: it is added to that previous decision (the chain's last one). A
  reward that arrives while the seat is waiting (another seat wins) is thus credited to the
  decision that preceded it, which is the decision whose consequences it is.
* When a game ends (``done[t]``), ``info["final_reward"][t, s]`` is every seat's reward since
  its last decision: added to each chain's last decision, which is marked **terminal**. The
  table's chains are then cut (``last_idx[t, :] = -1``): the next game starts new chains.
* A reward for a seat with no decision in the chain yet (it had not acted in this game, or it
  is played by an opponent) belongs to no learner decision and is dropped.

**GAE.** Going backwards over the stored decisions (a decision's successor is always stored
after it), with ``V`` the values stored at collection time::

    terminal:            delta = r - V[d];                       A[d] = delta
    successor n stored:  delta = r + gamma * V[n] - V[d];        A[d] = delta + gamma * lam * A[n]
    no successor yet:    the decision is *open* (see below); it is not trained on in this update

where ``A[n]`` counts as 0 when ``n`` is itself open (GAE truncated there, exactly as CleanRL
bootstraps the last step of a rollout with the value of the next observation). Returns are
``A + V``.

**Open decisions and the rollout boundary.** A chain's last decision in a rollout usually has
no successor yet: the seat has not acted again when the rollout stops, and the rewards for
that decision may still be on their way. Such decisions are *carried over*: after the update
they move to the front of the buffer with the rewards credited so far, their chains keep
pointing at them, and they are trained on in the next update, once their successor (or the
game's end) is known. The trainer recomputes their values with the updated critic at the start
of the next rollout, while their log-probs stay those of the policy that chose the action, so
PPO's ratio is the correct importance weight. No decision and no reward is dropped at the
rollout boundary (a checkpoint does not keep them: a resumed run starts without them).

**Duplicate groups** (``train/same_walls.py``) replace GAE: each decision records the game it
belongs to, :meth:`settle` writes the leave-one-out advantage and return of a finished group's
games into their decisions, and only settled decisions are trained on; the others (games still
running, or finished but waiting for their group) are carried over, whole chains included.

Tensors that go through the network (observations, masks, actions, log-probs, values) live on
the training device; the small bookkeeping arrays are numpy on the host.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit


@njit(cache=True)
def gae_chains(rewards, values, next_idx, terminal, gamma, lam, adv, trainable):
    """GAE along the (table, seat) chains (see the module docstring); fills ``adv`` and ``trainable``."""
    n = rewards.shape[0]
    for d in range(n - 1, -1, -1):
        if terminal[d]:
            adv[d] = rewards[d] - values[d]
            trainable[d] = True
        elif next_idx[d] >= 0:
            nx = next_idx[d]
            next_adv = adv[nx] if trainable[nx] else 0.0
            adv[d] = rewards[d] + gamma * values[nx] - values[d] + gamma * lam * next_adv
            trainable[d] = True
        else:
            adv[d] = 0.0
            trainable[d] = False


class SelfPlayBuffer:
    """Decisions of the learner's seats over one rollout, linked per (table, seat).

    Use per env step: :meth:`add` (the learner's decisions before ``env.step``), then
    :meth:`credit` (the step's rewards and game ends). At the end of a rollout:
    :meth:`compute_gae` (advantages, returns and the trainable rows), update, then :meth:`carry_over`.
    """

    def __init__(
        self, num_tables: int, capacity: int, obs_shape, num_actions: int, device="cpu", oracle_shape=None, guided=False
    ):
        self.num_tables = num_tables
        self.capacity = capacity
        self.device = torch.device(device)
        dev = self.device
        self.obs = torch.zeros((capacity, *obs_shape), dtype=torch.int8, device=dev)
        self.oracle = torch.zeros((capacity, *oracle_shape), dtype=torch.int8, device=dev) if oracle_shape else None
        # oracle guiding: whether the actor saw each decision's oracle planes (else zeros)
        self.guide_keep = torch.zeros(capacity, dtype=torch.int8, device=dev) if guided else None
        self.mask = torch.zeros((capacity, num_actions), dtype=torch.int8, device=dev)
        self.actions = torch.zeros(capacity, dtype=torch.long, device=dev)
        self.logprobs = torch.zeros(capacity, dtype=torch.float32, device=dev)
        self.values = torch.zeros(capacity, dtype=torch.float32, device=dev)
        # host-side bookkeeping
        self.table = np.zeros(capacity, dtype=np.int64)
        self.seat = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminal = np.zeros(capacity, dtype=np.bool_)
        self.next_idx = np.full(capacity, -1, dtype=np.int64)
        self.last_idx = np.full((num_tables, 4), -1, dtype=np.int64)  # chain's last decision, -1: none
        self.n = 0
        self.advantages = np.zeros(capacity, dtype=np.float32)
        self.trainable = np.zeros(capacity, dtype=np.bool_)
        # duplicate groups: the game of each decision, and its settled advantage / return
        self.game = np.zeros(capacity, dtype=np.int64)
        self.settled = np.zeros(capacity, dtype=np.bool_)
        self.dup_adv = np.zeros(capacity, dtype=np.float32)
        self.dup_ret = np.zeros(capacity, dtype=np.float32)
        self._settle_game = np.full(num_tables, -1, dtype=np.int64)

    # ---- per step ------------------------------------------------------------------------------
    def add(
        self, tables, seats, obs, mask, actions, logprobs, values, oracle=None, games=None, keep=None
    ) -> np.ndarray:
        """Append one decision per listed table (each table at most once); returns their indices.
        ``games``: the game index of each (duplicate groups only)."""
        tables = np.asarray(tables, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        k = len(tables)
        if self.n + k > self.capacity:
            raise RuntimeError(f"buffer full: {self.n} + {k} > capacity {self.capacity}")
        rows = np.arange(self.n, self.n + k)
        sl = slice(self.n, self.n + k)
        self.obs[sl] = obs
        self.mask[sl] = mask
        self.actions[sl] = actions
        self.logprobs[sl] = logprobs
        self.values[sl] = values
        if self.oracle is not None:
            self.oracle[sl] = oracle
        if self.guide_keep is not None:
            self.guide_keep[sl] = keep
        self.table[sl] = tables
        self.seat[sl] = seats
        self.rewards[sl] = 0.0
        self.terminal[sl] = False
        self.next_idx[sl] = -1
        self.settled[sl] = False
        if games is not None:
            self.game[sl] = games
        prev = self.last_idx[tables, seats]
        has_prev = prev >= 0
        self.next_idx[prev[has_prev]] = rows[has_prev]
        self.last_idx[tables, seats] = rows
        self.n += k
        return rows

    def credit(self, next_seat, pending_reward, done, final_reward) -> None:
        """Credit one env step's rewards to the chains' last decisions (see the module docstring)."""
        next_seat = np.asarray(next_seat, dtype=np.int64)
        done = np.asarray(done, dtype=np.bool_)
        # games that ended: every seat's final reward to its chain's last decision, then cut
        ended = np.flatnonzero(done)
        if len(ended):
            last = self.last_idx[ended]  # (k, 4)
            valid = last >= 0
            self.rewards[last[valid]] += np.asarray(final_reward)[ended][valid]
            self.terminal[last[valid]] = True
            self.last_idx[ended] = -1
        # the rest: the next acting seat's pending reward to its own previous decision
        going = np.flatnonzero(~done)
        last = self.last_idx[going, next_seat[going]]
        valid = last >= 0
        self.rewards[last[valid]] += np.asarray(pending_reward)[going][valid]

    # ---- per rollout -----------------------------------------------------------------------------
    def open_rows(self) -> np.ndarray:
        """Indices of the decisions whose successor is not known yet (no successor, not terminal)."""
        n = self.n
        return np.flatnonzero((self.next_idx[:n] < 0) & ~self.terminal[:n])

    def compute_gae(self, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        """``(advantages, returns, trainable indices)``; tensors on the buffer's device, over all rows."""
        n = self.n
        values = self.values[:n].float().cpu().numpy()
        gae_chains(
            self.rewards[:n],
            values,
            self.next_idx[:n],
            self.terminal[:n],
            np.float32(gamma),
            np.float32(lam),
            self.advantages[:n],
            self.trainable[:n],
        )
        adv = torch.from_numpy(self.advantages[:n].copy()).to(self.device)
        returns = adv + self.values[:n]
        return adv, returns, np.flatnonzero(self.trainable[:n])

    def settle(self, tables, games, adv, ret) -> None:
        """Duplicate groups: the decisions of game ``games[i]`` at ``tables[i]`` get the advantage
        ``adv[i, seat]`` and return ``ret[i, seat]`` of their seat and become trainable."""
        n = self.n
        self._settle_game[tables] = games
        row_of = np.full(self.num_tables, -1, dtype=np.int64)
        row_of[tables] = np.arange(len(tables))
        t = self.table[:n]
        hit = np.flatnonzero((self.game[:n] == self._settle_game[t]) & ~self.settled[:n])
        i, s = row_of[t[hit]], self.seat[hit]
        self.dup_adv[hit] = adv[i, s]
        self.dup_ret[hit] = ret[i, s]
        self.settled[hit] = True
        self._settle_game[tables] = -1

    def settled_batch(self) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        """Duplicate groups' :meth:`compute_gae`: ``(advantages, returns, settled indices)``."""
        n = self.n
        adv = torch.from_numpy(self.dup_adv[:n].copy()).to(self.device)
        ret = torch.from_numpy(self.dup_ret[:n].copy()).to(self.device)
        return adv, ret, np.flatnonzero(self.settled[:n])

    def carry_over(self, keep: np.ndarray | None = None) -> int:
        """Keep only the open decisions (or the rows ``keep``, in order), moved to the front with
        their rewards; returns their count."""
        keep = self.open_rows() if keep is None else np.asarray(keep, dtype=np.int64)
        k = len(keep)
        if k:
            src = torch.as_tensor(keep, device=self.device)
            for t in (self.obs, self.mask, self.actions, self.logprobs, self.values, self.oracle, self.guide_keep):
                if t is not None:
                    t[:k] = t.index_select(0, src)
            for a in (self.table, self.seat, self.rewards, self.game, self.settled, self.dup_adv, self.dup_ret):
                a[:k] = a[keep]
        self.terminal[:k] = False
        self.next_idx[:k] = -1
        # re-point the chains: an open decision is, by definition, its chain's last one (with
        # ``keep``, a chain may keep several rows, in order: it points at the latest)
        self.last_idx[:] = -1
        np.maximum.at(self.last_idx.reshape(-1), self.table[:k] * 4 + self.seat[:k], np.arange(k))
        self.n = k
        return k
