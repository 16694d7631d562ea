"""The all-seeing teacher: a labeller for training that reads the hidden state, never an agent.

``oracle:defend`` (the ``bc_teacher`` of a config, docs/training.md "Training with what the table
hides") is the *clairvoyant defender* of ``benchmarks/studies/defence_ceiling.py``: the heuristic, except
that it reads the other seats' hands in the oracle planes (``fzmj_env/encode.py``, ``r*_wins_on``:
the kinds each seat may win on if discarded now, R9) and, when the heuristic's discard would deal
in, discards a safe tile instead: the safe one among the lowest-shanten discards with the most
acceptance, else among the lowest-shanten discards, else (``slack``) among those one shanten
worse. Against three heuristics it scores about +3.5 points a hand (docs/results_log.md).

Behaviour cloning distils it onto a public student (``train/bc.py``): the student reads its own
seat's observation only, so it learns which discards the teacher avoids *given what the table
shows*. The teacher is no agent spec: ``make_agent("oracle:defend")`` fails, and no evaluation,
bot or page can play it.
"""

from __future__ import annotations

import numpy as np

from fzmj_env.encode import O_WINS_ON, P_PHASE, PC_CLAIM
from fzmj_env.features import HF_DISC_ACC_MAX, HF_DISC_BEST, HF_DISC_NEXT, feature_planes

ORACLE_TEACHERS = ("oracle:defend",)
"""The ``bc_teacher`` specs that read the oracle planes (training only)."""


def oracle_danger(oracle: np.ndarray) -> np.ndarray:
    """``(N, 27)`` bools: discarding the kind now would deal in (some other seat may win on it)."""
    return (oracle[:, O_WINS_ON : O_WINS_ON + 3] > 0).any(axis=1)


def defend(actions, rows, obs, mask, danger, slack: bool = True) -> tuple[int, int]:
    """Replace the dangerous discards at ``rows`` in place (``danger``: ``(N, 27)`` bools per row of
    ``obs``); returns (discards changed, dangerous discards without a safe replacement)."""
    turn = rows[(actions[rows] < 27) & (obs[rows, P_PHASE, PC_CLAIM] == 0)]
    turn = turn[danger[turn, actions[turn]]]
    if not len(turn):
        return 0, 0
    changed = stuck = 0
    planes = feature_planes(obs[turn])
    for j, t in enumerate(turn):
        for plane in (HF_DISC_ACC_MAX, HF_DISC_BEST) + ((HF_DISC_NEXT,) if slack else ()):
            safe = np.flatnonzero((planes[j, plane] > 0) & (mask[t, :27] > 0) & ~danger[t])
            if len(safe):
                actions[t] = safe[0]
                changed += 1
                break
        else:
            stuck += 1
    return changed, stuck


class OracleDefender:
    """``oracle:defend``: ``act(obs, mask, oracle)`` (the oracle planes of the same rows)."""

    name = "oracle:defend"
    reads_oracle = True

    def __init__(self, slack: bool = True):
        from fzmj.agents import make_agent

        self.heuristic, self.slack = make_agent("heuristic"), slack
        self.changed = self.stuck = 0

    def reset(self, seed=None) -> None:
        self.heuristic.reset(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray, oracle: np.ndarray) -> np.ndarray:
        if oracle is None or len(oracle) != len(obs):
            raise ValueError(
                "oracle:defend labels with the oracle planes of the same rows (an env made with oracle=True)"
            )
        actions = np.array(self.heuristic.act(obs, mask), dtype=np.int64)
        c, s = defend(actions, np.arange(len(obs)), obs, mask, oracle_danger(oracle), self.slack)
        self.changed, self.stuck = self.changed + c, self.stuck + s
        return actions


def make_teacher(spec: str):
    """The labeller named by ``bc_teacher``: an oracle teacher, or any agent spec (``make_agent``)."""
    if spec in ORACLE_TEACHERS:
        return OracleDefender()
    from fzmj.agents import make_agent

    return make_agent(spec)


def reads_oracle(teacher) -> bool:
    return bool(getattr(teacher, "reads_oracle", False))
