"""Stable-Baselines3 / sb3-contrib: train on ``SingleSeatEnv``, evaluate with ``fzmj-eval``.

``SingleSeatEnv`` already is what SB3 needs (a ``gymnasium.Env`` with ``action_masks()`` for
sb3-contrib's ``MaskablePPO``); :func:`make_vec_env` builds SB3's vectorised form of it, and
:class:`SB3Agent` turns a trained model into an ``agents.Agent`` so that
``fzmj.agents.evaluate.evaluate`` (``fzmj-eval``'s library call) plays it in the duplicate format.
SB3 is not a dependency of fzmj: ``pip install fzmj[sb3]`` (tested: 2.9.2).
"""

from __future__ import annotations

import numpy as np

from fzmj.agents import Agent, as_batch

from .gymnasium import SingleSeatEnv

__all__ = ["SB3Agent", "make_vec_env"]


def make_vec_env(n_envs: int = 4, seed: int = 0, **kwargs):
    """SB3's ``DummyVecEnv`` of ``n_envs`` ``SingleSeatEnv(**kwargs)`` (float32, flat by default)."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env

    kwargs = {"obs_dtype": "float32", "flatten": True, **kwargs}
    return sb3_make_vec_env(SingleSeatEnv, n_envs=n_envs, seed=seed, env_kwargs=kwargs)


class SB3Agent(Agent):
    """An SB3 model as an ``agents.Agent``: v1 observations in, the model's actions out.

    ``flatten`` / ``obs_dtype`` must match what the model was trained on. A ``MaskablePPO``
    model is given the legal mask; any other model's illegal choice is replaced by the first
    legal action (counted in ``illegal_replaced``, so an evaluation can report it).
    """

    def __init__(
        self, model, name: str = "sb3", flatten: bool = True, obs_dtype: str = "float32", deterministic: bool = True
    ):
        self.model = model
        self.name = name
        self.flatten = flatten
        self.dtype = np.dtype(obs_dtype)
        self.deterministic = deterministic
        self.maskable = "action_masks" in _predict_params(model)
        self.illegal_replaced = 0

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = as_batch(obs, mask)
        x = obs.reshape(len(obs), -1) if self.flatten else obs
        x = x.astype(self.dtype)
        if self.maskable:
            a, _ = self.model.predict(x, action_masks=mask != 0, deterministic=self.deterministic)
        else:
            a, _ = self.model.predict(x, deterministic=self.deterministic)
        a = np.asarray(a, dtype=np.int64).reshape(-1)
        bad = mask[np.arange(len(a)), a] == 0
        if bad.any():
            self.illegal_replaced += int(bad.sum())
            a[bad] = mask[bad].argmax(1)
        return a


def _predict_params(model) -> set:
    import inspect

    return set(inspect.signature(model.predict).parameters)
