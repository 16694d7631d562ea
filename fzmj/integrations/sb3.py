"""Stable-Baselines3 / sb3-contrib: train on ``SingleSeatEnv``, evaluate with ``fzmj-eval``.

``SingleSeatEnv`` already is what SB3 needs (a ``gymnasium.Env`` with ``action_masks()`` for
sb3-contrib's ``MaskablePPO``); :func:`make_vec_env` builds SB3's vectorised form of it, and
:class:`SB3Agent` turns a trained model into an ``agents.Agent`` so that
``fzmj.agents.evaluate.evaluate`` (``fzmj-eval``'s library call) plays it in the duplicate format.
SB3 is not a dependency of fzmj: ``pip install fzmj[sb3]`` (tested: 2.9.2).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from fzmj.agents import Agent, as_batch
from fzmj_env.actions import substitute_action
from fzmj_env.encode import NUM_COLUMNS, OBS_VERSIONS

from .gymnasium import SingleSeatEnv

__all__ = ["SB3Agent", "make_vec_env"]

# the observation shapes a SingleSeatEnv gives, flat or as planes, per layout (v2, v3)
_SHAPES = {
    shape: (version, channels)
    for version, channels in OBS_VERSIONS.items()
    for shape in ((channels * NUM_COLUMNS,), (channels, NUM_COLUMNS))
}


def make_vec_env(n_envs: int = 4, seed: int = 0, **kwargs):
    """SB3's ``DummyVecEnv`` of ``n_envs`` ``SingleSeatEnv(**kwargs)`` (float32, flat by default)."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env

    kwargs = {"obs_dtype": "float32", "flatten": True, **kwargs}
    return sb3_make_vec_env(SingleSeatEnv, n_envs=n_envs, seed=seed, env_kwargs=kwargs)


class SB3Agent(Agent):
    """An SB3 model as an ``agents.Agent``: v1 observations in, the model's actions out.

    The model's observation space says what it was trained on, and the agent feeds it that:
    ``Box`` ``(2673,)`` or ``(99, 27)`` in its dtype (v3: ``(7884,)`` or ``(292, 27)``), or the ``Dict(observation, action_mask)`` of
    ``mask_in_obs=True``. ``flatten`` / ``obs_dtype`` (default ``None``: from the model) may be
    given to check it; a mismatch is a ``ValueError``. A ``MaskablePPO`` model is given the legal
    mask; any other model's illegal choice is replaced by ``fzmj_env.actions.substitute_action``
    (as ``illegal_action="substitute"`` does in training), counted in ``illegal_replaced``.
    """

    def __init__(self, model, name: str = "sb3", flatten=None, obs_dtype=None, deterministic: bool = True):
        self.model = model
        self.name = name
        space = getattr(model, "observation_space", None)
        self.dict_obs = isinstance(space, spaces.Dict)
        box = space["observation"] if self.dict_obs else space
        if not isinstance(box, spaces.Box) or box.shape not in _SHAPES:
            raise ValueError(f"SB3Agent needs a model trained on SingleSeatEnv observations, got {space}")
        self.obs_version, self.channels = _SHAPES[box.shape]  # v2 or v3 (SingleSeatEnv(obs_version=3))
        self.flatten = len(box.shape) == 1
        self.dtype = np.dtype(box.dtype)
        if flatten is not None and flatten != self.flatten:
            raise ValueError(f"flatten={flatten!r} but the model's observations have shape {box.shape}")
        if obs_dtype is not None and np.dtype(obs_dtype) != self.dtype:
            raise ValueError(f"obs_dtype={obs_dtype!r} but the model's observations are {self.dtype}")
        self.deterministic = deterministic
        self.maskable = "action_masks" in _predict_params(model)
        self.illegal_replaced = 0

    def act(self, obs, mask) -> np.ndarray:
        obs, mask = as_batch(obs, mask, channels=self.channels)
        x = obs.reshape(len(obs), -1) if self.flatten else obs
        x = x.astype(self.dtype)
        if self.dict_obs:
            x = {"observation": x, "action_mask": mask}
        if self.maskable:
            a, _ = self.model.predict(x, action_masks=mask != 0, deterministic=self.deterministic)
        else:
            a, _ = self.model.predict(x, deterministic=self.deterministic)
        a = np.asarray(a, dtype=np.int64).reshape(-1)
        bad = mask[np.arange(len(a)), a] == 0
        if bad.any():
            self.illegal_replaced += int(bad.sum())
            for i in np.flatnonzero(bad):
                a[i] = substitute_action(mask[i])
        return a


def _predict_params(model) -> set:
    import inspect

    return set(inspect.signature(model.predict).parameters)
