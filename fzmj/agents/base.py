"""The agent interface shared by the baselines, the evaluator and the trainer.

An agent maps a batch of observations (encoder v2; v3 observations are read through their v2
planes, see ``as_batch``) and legal masks to one action per row::

    actions = agent.act(obs, mask)   # obs (N, 99, 27) int8, mask (N, 62) int8 -> (N,) int64

A single observation is a batch of one: ``act(obs[None], mask[None])`` (a 2-D ``obs`` with a
1-D ``mask`` is accepted too and also gives an array of shape ``(1,)``). An agent sees only
the observation (R12): never the state. Legality comes from the mask; an agent must return a
legal action for every row.

``reset(seed=None)`` is called by the evaluator at the start of every batch of games with a
seed derived from the evaluation seed, so a stochastic agent is reproducible; a ``reset`` that
names a ``rules`` parameter is also given the preset played (``reset_agent``). ``name`` labels
the agent in tables and JSON.
"""

from __future__ import annotations

import inspect

import numpy as np

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.checks import check_masks, check_planes
from fzmj_env.encode import NUM_CHANNELS, V3_CHANNELS


class AgentSpecError(ValueError):
    """A bad agent spec: unknown kind, missing checkpoint, unloadable class (one clear message)."""


class Agent:
    """Base class of every agent. Subclasses implement :meth:`act`; :meth:`reset` is optional."""

    name: str = "agent"

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        """Forget any per-game state; a stochastic agent reseeds (``seed=None``: its own seed)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def agent_obs_version(agent) -> str:
    """The observation layout ``agent`` reads, ``"v2"`` or ``"v3"``: its ``obs_version`` attribute
    (``"v3"``, ``3`` or ``"3"`` mean v3; none: v2). The one place every tool decides it (the
    evaluator's and the league's tables, the review pages); make_agent's wrapper of a user object
    that does not subclass :class:`Agent` forwards the object's own attribute."""
    v = getattr(agent, "obs_version", "v2")
    return "v3" if str(v) in ("v3", "3") else "v2"


def as_batch(obs, mask, check_values: bool = True, channels: int = NUM_CHANNELS) -> tuple[np.ndarray, np.ndarray]:
    """``(obs (N, channels, 27) int8, mask (N, 62) int8)``, C-contiguous; a single observation -> N = 1.

    ``channels``: the layout the agent reads, v2 (``NUM_CHANNELS``, every built-in agent) or v3
    (``V3_CHANNELS``, a policy trained on v3). A v2 agent given v3 observations reads their first
    99 planes, which are exactly v2 (docs/observation.md); a v3 agent given v2 is refused.

    The boundary of every agent's ``act``: ``ValueError`` naming what is wrong for
    another shape (e.g. the observation with the oracle planes), a float dtype, values other
    than 0/1, or a mask row with no legal action. Vectorised checks, once per batch.
    ``check_values=False`` skips the scan of the observation's values (not its shape or dtype)
    for an agent whose answer does not depend on them (``random``).
    """
    obs = np.asarray(obs)
    mask = np.asarray(mask)
    if obs.ndim == 2:
        obs = obs[None]
    if mask.ndim == 1:
        mask = mask[None]
    if obs.ndim != 3 or mask.ndim != 2 or obs.shape[0] != mask.shape[0]:
        raise ValueError(
            f"expected obs (N, {channels}, 27) and mask (N, {NUM_ACTIONS}), got {obs.shape} and {mask.shape}"
        )
    if obs.shape[1] == V3_CHANNELS and channels == NUM_CHANNELS:
        obs = obs[:, :NUM_CHANNELS]  # v3 starts with the v2 planes
    elif obs.shape[1] == NUM_CHANNELS and channels == V3_CHANNELS:
        raise ValueError(
            f"this agent reads observation v3 ({V3_CHANNELS} planes), got v2 ({NUM_CHANNELS} planes): "
            "make the env with obs_version=3"
        )
    check_planes("obs", obs, channels, check_values=check_values)
    check_masks("mask", mask, obs.shape[0], NUM_ACTIONS)
    return np.ascontiguousarray(obs, dtype=np.int8), np.ascontiguousarray(mask, dtype=np.int8)


def call_reset(reset, seed, rules=None):
    """``reset(seed=seed)``, or ``reset()`` for a reset that takes no seed; ``rules=rules`` too
    when given and the reset names a ``rules`` parameter."""
    try:
        params = inspect.signature(reset).parameters.values()
    except (TypeError, ValueError):
        params = ()
    kwargs = {}
    if any(p.name == "seed" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        kwargs["seed"] = seed
    if rules is not None and any(p.name == "rules" for p in params):
        kwargs["rules"] = rules
    reset(**kwargs)


def reset_agent(agent, seed: int | None = None, rules=None) -> None:
    """Call ``agent.reset`` with ``seed`` if it takes one (user agents may define ``reset()``),
    and with ``rules``, the preset the coming games are played under (a name, a YAML path or a
    ``Rules``), if it takes them: an agent that plays the rules out (``search``) is told them by
    its caller, never left to guess them from the observation."""
    reset = getattr(agent, "reset", None)
    if reset is not None:
        call_reset(reset, seed, rules)
