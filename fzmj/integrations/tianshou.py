"""Tianshou: ``SingleSeatEnv`` with the observation keys Tianshou's policies read.

Tianshou's discrete policies (``DQN`` and its relatives) mask actions with ``batch.obs.mask``
and feed ``batch.obs.obs`` to the network, so :func:`make_env` gives a ``SingleSeatEnv`` whose
observation is ``Dict(obs=Box float32 (2673,), mask=Box int8 (62,))``. Infos are numbers and
fixed-shape arrays only (``SingleSeatEnv``'s info), which Tianshou's replay buffers store.
Tianshou itself is not a dependency of fzmj: ``pip install tianshou`` (tested: 2.0.1).

For self-play over the four seats through Tianshou's own ``PettingZooEnv``, use
``fzmj_env.env(obs_dtype="float32", flatten=True, info="numeric")``: the default ``info``
(``result`` dicts) is what breaks its buffer.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from fzmj_env.checks import check_obs_version
from fzmj_env.encode import obs_channels

from .gymnasium import SingleSeatEnv

__all__ = ["TianshouAgent", "TianshouObservation", "make_env"]


class TianshouObservation(gymnasium.ObservationWrapper):
    """``{"observation", "action_mask"}`` -> ``{"obs", "mask"}`` (the names Tianshou reads)."""

    def __init__(self, env: SingleSeatEnv):
        super().__init__(env)
        inner = env.observation_space
        if not isinstance(inner, spaces.Dict):
            raise ValueError("TianshouObservation needs a SingleSeatEnv made with mask_in_obs=True")
        self.observation_space = spaces.Dict({"obs": inner["observation"], "mask": inner["action_mask"]})

    def observation(self, observation: dict) -> dict:
        return {"obs": observation["observation"], "mask": observation["action_mask"]}

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()


def make_env(**kwargs) -> TianshouObservation:
    """A ``SingleSeatEnv(**kwargs)`` (float32, flat, mask in the observation) for Tianshou;
    ``obs_version=3`` gives the v3 planes (then ``TianshouAgent(policy, obs_version=3)``)."""
    kwargs = {"obs_dtype": "float32", "flatten": True, **kwargs, "mask_in_obs": True}
    return TianshouObservation(SingleSeatEnv(**kwargs))


class TianshouAgent:
    """A Tianshou policy as an ``agents.Agent`` (duck-typed: ``act(obs, mask)``) for ``fzmj-eval``'s library call.

    The policy sees what :func:`make_env` gives it: ``obs`` float32 flat planes, ``mask`` int8.
    """

    def __init__(self, policy, name: str = "tianshou", obs_version: int | str = 2):
        self.policy = policy
        self.name = name
        self.obs_version = check_obs_version(obs_version)  # the layout the policy was trained on
        self._channels = obs_channels(self.obs_version)

    def act(self, obs, mask) -> np.ndarray:
        import torch
        from tianshou.data import Batch

        from fzmj.agents import as_batch

        obs, mask = as_batch(obs, mask, channels=self._channels)
        batch = Batch(obs=Batch(obs=obs.reshape(len(obs), -1).astype(np.float32), mask=mask), info=Batch())
        was_training = self.policy.training
        self.policy.eval()
        with torch.no_grad():
            out = self.policy(batch)
        self.policy.train(was_training)
        return np.asarray(out.act, dtype=np.int64).reshape(-1)
