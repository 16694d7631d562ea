"""Agents for Fuzhou Mahjong: the interface, the baselines and the spec strings that name them.

Spec strings (CLI, configs, :func:`make_agent`) name the agents: the table of the built-in
kinds is ``fzmj.agents.specs.AGENT_SPECS`` (name, syntax, one line of help, builder), the one
place they are listed; ``SPEC_HELP`` and docs/baselines.md's table are made from it.

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
from .specs import AGENT_SPECS, SPEC_HELP, make_agent  # noqa: E402

__all__ = ["Agent", "AgentSpecError", "as_batch", "make_agent", "reset_agent", "AGENT_SPECS", "SPEC_HELP"]
