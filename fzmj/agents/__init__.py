"""Agents for Fuzhou Mahjong: the interface, the baselines and the spec strings that name them.

Spec strings (CLI, configs, :func:`make_agent`):

| spec | agent |
| --- | --- |
| ``random`` (``random:SEED``) | uniform over the legal actions, seeded |
| ``heuristic`` | the rule-based baseline (``agents/heuristic.py``) |
| ``heuristic:defend[:...]`` | the heuristic folding by expected value on a danger estimate (``agents/defend.py``) |
| ``heuristic:patient[:goal=G]`` | the heuristic declining some wins for bigger ones (jinque, selfdraw, golds) |
| ``pretrained`` | the shipped policy of the documented CPU run (``agents/pretrained/``, ``docs/pretrained.md``) |
| ``ppo:PATH`` | a PPO trainer checkpoint, loaded by ``fzmj.agents.checkpoint.load_policy`` |
| ``python:module:Class`` | your own class, built with no arguments (``module`` importable, or a file in the working directory) |
| ``exec:[OPTIONS:]COMMAND`` | a program in any language speaking JSON lines (``agents/exec_bot.py``, ``docs/protocol.md``) |
| ``search[:BLUEPRINT][:key=value,...]`` | rollouts of a blueprint on worlds drawn from the seat's view (``agents/search.py``: worlds, top, z, where, late, belief, wins, seed) |

Evaluation: ``fzmj.agents.evaluate.evaluate`` (library) and the ``fzmj-eval`` command.
"""

from __future__ import annotations

if __name__ != "fzmj.agents":  # the repository's top-level `agents` is a link for browsing, not a second name
    raise ImportError(f"import fzmj.agents, not {__name__}: one package, one name (docs/layers.md)")

import fzmj_env
from fzmj_env._numba_cache import clear_stale_cache

# heuristic.py and policy.py hold cached kernels that call the engine's (see fzmj_env/_numba_cache.py)
clear_stale_cache(__path__[0], depends_on=tuple(fzmj_env.__path__))

from .base import Agent, AgentSpecError, as_batch, reset_agent  # noqa: E402  (after the cache check)
from .specs import SPEC_HELP, make_agent  # noqa: E402

__all__ = ["Agent", "AgentSpecError", "as_batch", "make_agent", "reset_agent", "SPEC_HELP"]
