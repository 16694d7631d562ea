"""Review mode: what an agent would have played at each decision of one seat of a record.

The record is replayed through the engine; at each decision of the reviewed seat the agent is
given that seat's observation only (``encode_table`` for that seat, R12) and the engine's legal
mask. Its action probabilities come from ``agent.action_probs(obs, mask) -> (probs (N, 62),
value (N,) or None)`` when it has one (the PPO/pretrained agents), else one-hot of
``agent.act``. All the seat's decisions go to ``action_probs`` in one batch.
"""

from __future__ import annotations

import numpy as np

from fzmj.agents import make_agent, reset_agent
from fzmj_env.actions import NUM_ACTIONS, action_name
from fzmj_env.encode import NUM_CHANNELS, encode_table
from fzmj_env.game import Game
from fzmj_env.record import replay
from fzmj_env.seeding import agent_key, keyed_agent_seed

TOP = 5  # actions listed per decision
LARGEST = 10  # disagreements listed in the summary


def _seat_decisions(record: dict, seat: int) -> tuple[list[int], np.ndarray, np.ndarray, list[int]]:
    """(decision indices, observations, masks, actions played) of ``seat``, in order."""
    rules = replay(record).rules  # the record replays exactly, or RecordError
    h0 = record["hands"][0]
    g = Game(rules, hands_per_game=len(record["hands"]))
    g.reset(seed=record["seed"], wall=h0["wall"], dealer=h0["dealer"], streak=h0["streak"])
    steps, obs, masks, played = [], [], [], []
    o = np.zeros((NUM_CHANNELS, 27), dtype=np.int8)
    for i, (s, a) in enumerate(record["decisions"]):
        if s == seat:
            encode_table(g.buf, 0, seat, o)
            steps.append(i)
            obs.append(o.copy())
            masks.append(g.mask.copy())
            played.append(int(a))
        g.step(int(a))
    if not steps:
        return [], np.zeros((0, NUM_CHANNELS, 27), np.int8), np.zeros((0, NUM_ACTIONS), np.int8), []
    return steps, np.stack(obs), np.stack(masks), played


def _probs(agent, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    fn = getattr(agent, "action_probs", None)
    if fn is not None:
        probs, value = fn(obs, masks)
        probs = np.asarray(probs, dtype=np.float64).reshape(len(obs), NUM_ACTIONS)
        return probs, None if value is None else np.asarray(value, dtype=np.float64).reshape(len(obs))
    probs = np.zeros((len(obs), NUM_ACTIONS))
    for i in range(len(obs)):  # one at a time, in order: an agent may keep state between calls
        a = int(np.asarray(agent.act(obs[i : i + 1], masks[i : i + 1])).reshape(-1)[0])
        probs[i, a] = 1.0
    return probs, None


def review_record(record: dict, agent, seat: int) -> dict:
    """The review of ``seat``'s decisions in ``record`` by ``agent`` (an object or a spec).

    Returns ``{"agent", "seat", "decisions", "agree", "at": {step: {...}}, "largest": [...]}``;
    ``decisions`` and ``agree`` count the decisions with more than one legal action.
    """
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= 3:
        raise ValueError(f"the seat to review must be 0..3, got {seat!r}")
    name = agent if isinstance(agent, str) else str(getattr(agent, "name", type(agent).__name__))
    agent = make_agent(agent)
    # a keyed hash of the record's seed: the reviewer cannot turn it back into the walls' seed
    reset_agent(agent, keyed_agent_seed(agent_key(int(record.get("seed", 0))), seat))
    steps, obs, masks, played = _seat_decisions(record, seat)
    probs, values = _probs(agent, obs, masks) if steps else (np.zeros((0, NUM_ACTIONS)), None)
    at, gaps = {}, []
    agree = counted = 0
    for j, step in enumerate(steps):
        p = np.where(masks[j] != 0, probs[j], 0.0)
        best = int(np.argmax(p))
        order = [int(a) for a in np.argsort(-p, kind="stable")[:TOP] if p[a] > 0 or a == best]
        if played[j] not in order:
            order.append(played[j])
        ok = best == played[j]
        if int(masks[j].sum()) > 1:
            counted += 1
            agree += ok
            if not ok:
                gaps.append((float(p[best] - p[played[j]]), step, played[j], best))
        at[step] = {
            "played": played[j],
            "best": best,
            "best_name": action_name(best),
            "agree": ok,
            "top": [[a, round(float(p[a]), 4), action_name(a)] for a in order],
            "value": None if values is None else round(float(values[j]), 4),
        }
    gaps.sort(key=lambda x: (-x[0], x[1]))
    largest = [[step, round(g, 4), action_name(pl), action_name(b)] for g, step, pl, b in gaps[:LARGEST]]
    return {"agent": name, "seat": seat, "decisions": counted, "agree": agree, "at": at, "largest": largest}
