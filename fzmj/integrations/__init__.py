"""Adapters for the RL libraries researchers already use (they sit above ``agents/``).

* :mod:`fzmj.integrations.gymnasium`: ``SingleSeatEnv`` (a ``gymnasium.Env``: one learning
  seat against three agents given as specs) and ``SingleSeatVectorEnv`` (Gymnasium's
  ``VectorEnv`` API over :class:`fzmj_env.VectorEnv`, many tables per call). Registered as
  ``fzmj/SingleSeat-v0``; works with Stable-Baselines3 / sb3-contrib ``MaskablePPO`` and Tianshou.
* :mod:`fzmj.integrations.rllib`: a turn-based ``MultiAgentEnv`` for Ray RLlib
  (``pip install fzmj[rllib]``).

Nothing in the env core imports this package: ``import fzmj_env`` stays light.
"""

from .gymnasium import SingleSeatEnv, SingleSeatVectorEnv

__all__ = ["SingleSeatEnv", "SingleSeatVectorEnv"]
