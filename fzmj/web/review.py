"""Review mode: what an agent would have played at each decision of one seat of a record.

The record is replayed through the engine; at each decision of the reviewed seat the agent is
given that seat's observation only (``encode_table`` for that seat, R12; observation v3 when the
agent or the belief model reads it, else v2) and the engine's legal mask. Its action
probabilities come from ``agent.action_probs(obs, mask) -> (probs (N, 62), value (N,) or None)``
when it has one (the PPO/pretrained agents), else one-hot of ``agent.act``. All the seat's decisions go to ``action_probs`` in one batch.

A reviewer is someone else's code: whatever it raises, and any answer that is not a
probability per action (non-finite, negative, no mass on a legal action, a wrong shape) or a
legal ``act``, is one :class:`ReviewError` line naming it; only legal actions are ever shown.
"""

from __future__ import annotations

import numpy as np

from fzmj.agents import make_agent, reset_agent
from fzmj.agents.evaluate.play import obs_layouts
from fzmj.agents.evaluate.records import record_observations
from fzmj_env.actions import NUM_ACTIONS, action_name
from fzmj_env.encode import NUM_CHANNELS, V3_CHANNELS
from fzmj_env.record import record_rules
from fzmj_env.seeding import agent_key, keyed_agent_seed

TOP = 5  # actions listed per decision
LARGEST = 10  # disagreements listed in the summary


def observation_planes(*readers) -> int:
    """The planes the pages encode for ``readers`` (agents, user objects inside them, belief models;
    None skipped): v3's 292 when any of them reads observation v3, whose first 99 planes are what a
    v2 reader takes (``as_batch``, the belief's ``check_obs``), else v2's 99. Each reader's layout is
    the evaluator's (``obs_layouts``; make_agent's wrapper of a user object forwards its layout)."""
    layouts = obs_layouts([r for r in readers if r is not None])
    return V3_CHANNELS if "v3" in layouts else NUM_CHANNELS


def _seat_decisions(record: dict, seat: int, planes: int) -> tuple[list[int], np.ndarray, np.ndarray, list[int]]:
    """(decision indices, observations of ``planes`` planes, masks, actions played) of ``seat``, in order:
    the record replayed through the engine and the env's encoder (``record_observations``)."""
    seats, obs, masks = record_observations(record, "v3" if planes == V3_CHANNELS else "v2")
    rows = np.flatnonzero(seats == seat)
    played = [int(record["decisions"][i][1]) for i in rows]
    return rows.tolist(), obs[rows], masks[rows], played


class ReviewError(Exception):
    """The reviewing agent failed or answered something unusable (one line, naming the agent).

    Not a ValueError: the record is fine, the reviewer is not, and callers say so."""


def agent_name(agent) -> str:
    return agent if isinstance(agent, str) else str(getattr(agent, "name", type(agent).__name__))


def _raw_probs(agent, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    # a user object that is not an Agent comes wrapped by make_agent (``.obj``), which keeps only act
    fn = getattr(agent, "action_probs", None) or getattr(getattr(agent, "obj", None), "action_probs", None)
    if fn is not None:
        probs, value = fn(obs, masks)
        probs = np.asarray(probs, dtype=np.float64)
        if probs.size != len(obs) * NUM_ACTIONS:
            raise ReviewError(f"action_probs gave {probs.shape} probabilities, expected ({len(obs)}, {NUM_ACTIONS})")
        probs = probs.reshape(len(obs), NUM_ACTIONS)
        if value is not None:
            value = np.asarray(value, dtype=np.float64)
            if value.size != len(obs):
                raise ReviewError(f"action_probs gave {value.shape} values, expected ({len(obs)},)")
            value = value.reshape(len(obs))
        return probs, value
    probs = np.zeros((len(obs), NUM_ACTIONS))
    for i in range(len(obs)):  # one at a time, in order: an agent may keep state between calls
        out = np.asarray(agent.act(obs[i : i + 1], masks[i : i + 1])).reshape(-1)
        if out.size != 1 or out.dtype.kind not in "iu":
            raise ReviewError(f"act gave {out.tolist()!r}, expected one integer action")
        a = int(out[0])
        if not 0 <= a < NUM_ACTIONS or not masks[i, a]:
            raise ReviewError(f"act suggested action {a}, which is not legal at that decision")
        probs[i, a] = 1.0
    return probs, None


def _probs(agent, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The agent's probabilities of the legal actions (zero elsewhere) and values, checked:
    finite, non-negative, some mass on a legal action, a legal ``act``. Anything the agent
    raises or answers wrong becomes one :class:`ReviewError` line naming the agent."""
    name = agent_name(agent)
    try:
        probs, value = _raw_probs(agent, obs, masks)
    except ReviewError as e:
        raise ReviewError(f"reviewer {name}: {e}") from None
    except Exception as e:  # noqa: BLE001 - any failure of the reviewer's code is the reviewer's
        raise ReviewError(f"reviewer {name} failed: {type(e).__name__}: {e}".replace("\n", " ")) from None
    if not np.isfinite(probs).all():
        raise ReviewError(f"reviewer {name}: action_probs gave a non-finite probability (NaN or inf)")
    if (probs < 0).any():
        raise ReviewError(f"reviewer {name}: action_probs gave a negative probability ({probs.min():.4g})")
    if value is not None and not np.isfinite(value).all():
        raise ReviewError(f"reviewer {name}: action_probs gave a non-finite value (NaN or inf)")
    probs = np.where(masks != 0, probs, 0.0)
    dead = np.flatnonzero(probs.sum(axis=1) <= 0)
    if len(dead):
        raise ReviewError(f"reviewer {name}: action_probs gave no probability to any legal action (decision {dead[0]})")
    return probs, value


def top_actions(p: np.ndarray, mask: np.ndarray, n: int) -> tuple[int, list[int]]:
    """(the best legal action, up to ``n`` legal actions by probability) of checked ``p``."""
    legal = np.flatnonzero(mask)
    best = int(legal[np.argmax(p[legal])])
    order = [int(a) for a in np.argsort(-p, kind="stable")[:n] if mask[a] and p[a] > 0]
    return best, order


def danger_rows(model, obs: np.ndarray, masks: np.ndarray) -> list:
    """Per decision: ``[[kind, P(discarding it deals in)], ...]`` over its legal discards, most
    dangerous first (the belief model's ``danger``, from the seat's observation only); None at a
    decision without a discard (a claim window) or without a model."""
    out: list = [None] * len(obs)
    rows = [i for i in range(len(obs)) if masks[i, :27].any()]
    if model is None or not rows:
        return out
    danger = model.predict(obs[rows])["danger"]
    for j, i in enumerate(rows):
        kinds = np.flatnonzero(masks[i, :27])
        order = kinds[np.argsort(-danger[j, kinds], kind="stable")]
        out[i] = [[int(k), round(float(danger[j, k]), 4)] for k in order]
    return out


def danger_model(spec, rules_name: str):
    """``(model or None, note)``: the belief model of ``spec`` for a record of ``rules_name``;
    ``spec`` None gives no model. A model of another preset gives no danger and says why."""
    if spec is None:
        return None, None
    from fzmj.agents.belief import load_belief

    model = load_belief(spec)  # a missing or bad model: AgentSpecError, one line (a model passes through)
    if model.rules != rules_name:
        return None, f"no danger shown: {model.name} was trained on {model.rules}, this record plays {rules_name}"
    return model, None


def review_record(record: dict, agent, seat: int, belief=None) -> dict:
    """The review of ``seat``'s decisions in ``record`` by ``agent`` (an object or a spec).

    Returns ``{"agent", "seat", "decisions", "agree", "at": {step: {...}}, "largest": [...]}``;
    ``decisions`` and ``agree`` count the decisions with more than one legal action. With
    ``belief`` (a belief spec, ``fzmj/agents/belief.py``), each decision with a discard also
    gets ``danger``: its legal discards with the model's deal-in probability (``danger_rows``).
    """
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= 3:
        raise ValueError(f"the seat to review must be 0..3, got {seat!r}")
    name = agent_name(agent)
    agent = make_agent(agent)
    try:  # a keyed hash of the record's seed: the reviewer cannot turn it back into the walls' seed
        reset_agent(agent, keyed_agent_seed(agent_key(int(record.get("seed", 0))), seat), record_rules(record))
    except Exception as e:  # noqa: BLE001 - the reviewer's code, not the record
        raise ReviewError(f"reviewer {name} failed at reset: {type(e).__name__}: {e}".replace("\n", " ")) from None
    model, note = danger_model(belief, record_rules(record).name)
    steps, obs, masks, played = _seat_decisions(record, seat, observation_planes(agent, model))
    probs, values = _probs(agent, obs, masks) if steps else (np.zeros((0, NUM_ACTIONS)), None)
    danger = danger_rows(model, obs, masks)
    at, gaps = {}, []
    agree = counted = 0
    for j, step in enumerate(steps):
        p = probs[j]
        best, order = top_actions(p, masks[j], TOP)
        if best not in order:
            order.append(best)
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
            "danger": danger[j],
        }
    gaps.sort(key=lambda x: (-x[0], x[1]))
    largest = [[step, round(g, 4), action_name(pl), action_name(b)] for g, step, pl, b in gaps[:LARGEST]]
    return {
        "agent": name,
        "seat": seat,
        "decisions": counted,
        "agree": agree,
        "at": at,
        "largest": largest,
        "danger_model": None if model is None else model.name,
        "danger_note": note,
    }
