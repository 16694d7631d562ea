"""Agent specs: the strings that name agents (CLI, configs) and :func:`make_agent`, which builds them.

The table of specs is in ``fzmj/agents/__init__.py``. Each kind's module is imported when a
spec of that kind is made, so naming ``random`` never loads torch or compiles the heuristic.
"""

from __future__ import annotations

import importlib
import os
import sys

from fzmj_env.checks import MAX_SEED

from .base import Agent, AgentSpecError, call_reset

SPEC_HELP = (
    "random, random:SEED, heuristic, heuristic:defend[:risk=X,margin=M,slack=N,gain=G,pace=P,base=B,belief=SPEC], "
    "heuristic:patient[:goal=jinque|selfdraw|golds], pretrained[:vN], ppo:PATH, python:module:Class, "
    "search[:BLUEPRINT][:worlds=M,top=K,z=Z,where=all|claims|turns,late=D,belief=F,sir=F,model=NAME,wins=0|1,seed=S] or "
    "exec:[timeout=S:batch=N:fallback=random|heuristic:restarts=N:start=S:]COMMAND"
)


class _DuckAgent(Agent):
    """Wraps a user object that has ``act(obs, mask)`` but does not derive from :class:`Agent`."""

    def __init__(self, obj, name: str):
        self.obj = obj
        self.name = str(getattr(obj, "name", None) or name)

    def act(self, obs, mask):
        return self.obj.act(obs, mask)

    @property
    def obs_version(self):
        """The user object's own layout (``"v3"``: the evaluator's tables give it v3)."""
        return getattr(self.obj, "obs_version", "v2")

    def reset(self, seed=None, rules=None):
        reset = getattr(self.obj, "reset", None)
        if reset is not None:
            call_reset(reset, seed, rules)


def _load_python_class(spec: str, target: str) -> Agent:
    module_name, sep, class_name = target.rpartition(":")
    if not sep or not module_name or not class_name:
        raise AgentSpecError(f"bad agent spec {spec!r}: expected python:module:Class")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)  # a module file in the working directory
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise AgentSpecError(f"bad agent spec {spec!r}: cannot import module {module_name!r} ({e})") from e
    cls = getattr(module, class_name, None)
    if cls is None:
        raise AgentSpecError(f"bad agent spec {spec!r}: module {module_name!r} has no attribute {class_name!r}")
    try:
        obj = cls()
    except Exception as e:  # noqa: BLE001
        raise AgentSpecError(f"bad agent spec {spec!r}: {class_name}() failed: {type(e).__name__}: {e}") from e
    if not callable(getattr(obj, "act", None)):
        raise AgentSpecError(f"bad agent spec {spec!r}: {class_name} has no act(obs, mask) method")
    layout = getattr(obj, "obs_version", "v2")
    if str(layout) not in ("v2", "2", "v3", "3"):
        raise AgentSpecError(f"bad agent spec {spec!r}: {class_name}.obs_version must be 'v2' or 'v3', got {layout!r}")
    if isinstance(obj, Agent):
        if type(obj).name is Agent.name and "name" not in vars(obj):
            obj.name = spec
        return obj
    return _DuckAgent(obj, spec)


def _heuristic_variant(spec: str, arg: str) -> Agent:
    """``heuristic:defend[:OPTIONS]`` or ``heuristic:patient[:goal=G]``."""
    variant, _, rest = arg.partition(":")
    if variant == "defend":
        from .defend import DefendAgent, parse_defend_options

        opts = parse_defend_options(spec, rest)
        base = opts.pop("base", "heuristic")
        return DefendAgent(name=spec, base=None if base == "heuristic" else make_agent(base), **opts)
    if variant == "patient":
        from .heuristic import PATIENT_GOALS, PatientAgent

        key, eq, goal = rest.partition("=")
        if rest and (key != "goal" or not eq or goal not in PATIENT_GOALS):
            raise AgentSpecError(
                f"bad agent spec {spec!r}: expected heuristic:patient[:goal={'|'.join(PATIENT_GOALS)}]"
            )
        return PatientAgent(goal or "jinque", name=spec)
    raise AgentSpecError(
        f"bad agent spec {spec!r}: expected heuristic, heuristic:defend[:...] or heuristic:patient[:...]"
    )


def make_agent(spec) -> Agent:
    """The agent named by ``spec`` (an :class:`Agent` is returned as it is).

    Raises :class:`AgentSpecError` (a ``ValueError``) with one clear line for an unknown spec,
    a missing checkpoint or a class that cannot be loaded.
    """
    if isinstance(spec, Agent):
        return spec
    if not isinstance(spec, str):
        if callable(getattr(spec, "act", None)):
            return _DuckAgent(spec, type(spec).__name__)
        raise AgentSpecError(f"an agent must be a spec string ({SPEC_HELP}) or an Agent, got {spec!r}")
    s = spec.strip()
    kind, sep, arg = s.partition(":")
    if kind == "random":
        from .random_agent import RandomAgent

        if not sep:
            return RandomAgent()
        try:
            seed = int(arg)
        except ValueError:
            raise AgentSpecError(f"bad agent spec {spec!r}: random:SEED needs an integer seed") from None
        if not 0 <= seed <= MAX_SEED:
            raise AgentSpecError(f"bad agent spec {spec!r}: the seed must be in 0..2**64-1")
        return RandomAgent(seed=seed, name=s)
    if kind == "heuristic" and not sep:
        from .heuristic import HeuristicAgent

        return HeuristicAgent()
    if kind == "heuristic":
        return _heuristic_variant(s, arg)
    if kind == "pretrained":
        from .ppo_agent import PPOAgent, checkpoint_file

        return PPOAgent(checkpoint_file(s), name=s)
    if kind == "ppo":
        if not arg:
            raise AgentSpecError(f"bad agent spec {spec!r}: expected ppo:PATH")
        from .ppo_agent import PPOAgent

        return PPOAgent(arg, name=s)
    if kind == "search":
        from .search import SearchAgent, parse_search_spec

        blueprint, opts = parse_search_spec(s)
        return SearchAgent(make_agent(blueprint), name=s, **opts)
    if kind == "python":
        return _load_python_class(s, arg)
    if kind == "exec":
        from .exec_bot import ExecAgent

        return ExecAgent(s)
    raise AgentSpecError(f"unknown agent spec {spec!r}: expected {SPEC_HELP}")
