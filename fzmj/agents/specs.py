"""Agent specs: the strings that name agents (CLI, configs) and :func:`make_agent`, which builds them.

:data:`AGENT_SPECS` is the one table of the built-in kinds: each row's name (the spec's first
word, or two for a variant), its syntax, one line of help and the builder it calls. Everything
that lists the agents reads it: :data:`SPEC_HELP` (the ``--help`` of every command that takes an
agent spec) and the table of docs/baselines.md (written by the docs build,
``docs/hooks/agent_specs.py``). Adding a built-in agent is its module, one row here and its test.
Each kind's module is imported when a spec of that kind is made, so naming ``random`` never loads
torch or compiles the heuristic.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass

from fzmj_env.checks import MAX_SEED

from .base import Agent, AgentSpecError, call_reset


@dataclass(frozen=True)
class AgentKind:
    """One row of :data:`AGENT_SPECS`.

    ``name``: what a spec starts with (``heuristic:defend`` matches ``heuristic:defend:risk=1``;
    the longest name that matches wins). ``syntax``: the spec's form for the docs table;
    ``usage``: its full form for ``--help`` (default: ``syntax``). ``help``: one line for the
    docs table. ``build``: ``"module:callable"``, imported when such a spec is made; the
    callable gets the whole spec string, or nothing when the syntax is the bare name (a kind
    without options: ``NAME:anything`` is then refused)."""

    name: str
    syntax: str
    help: str
    build: str
    usage: str = ""

    def make(self, spec: str) -> Agent:
        module, _, attr = self.build.partition(":")
        builder = getattr(importlib.import_module(module), attr)
        return builder() if self.syntax == self.name else builder(spec)


AGENT_SPECS = (
    AgentKind(
        "random",
        "random[:SEED]",
        "uniform over the legal actions, seeded numpy `Generator`",
        "fzmj.agents.specs:random_agent",
    ),
    AgentKind("heuristic", "heuristic", "the rule-based baseline below", "fzmj.agents.heuristic:HeuristicAgent"),
    AgentKind(
        "heuristic:defend",
        "heuristic:defend[:...]",
        "the heuristic folding by expected value against a danger estimate (public, or a belief model); below",
        "fzmj.agents.specs:defend_agent",
        usage="heuristic:defend[:risk=X,margin=M,slack=N,gain=G,pace=P,base=B,belief=SPEC]",
    ),
    AgentKind(
        "heuristic:patient",
        "heuristic:patient[:goal=jinque|selfdraw|golds]",
        "the heuristic declining some wins to wait for bigger ones; below",
        "fzmj.agents.specs:patient_agent",
    ),
    AgentKind(
        "pretrained",
        "pretrained[:vN]",
        "the newest shipped policy (v2, oracle-guided; `pretrained:v1` the one before; `docs/pretrained.md`), "
        "greedy, CPU",
        "fzmj.agents.specs:pretrained_agent",
    ),
    AgentKind(
        "ppo",
        "ppo:PATH",
        "a PPO trainer checkpoint (`fzmj.agents.checkpoint.load_policy`), greedy actions, CPU",
        "fzmj.agents.specs:ppo_agent",
    ),
    AgentKind(
        "python",
        "python:module:Class",
        "your class, built with no arguments; it needs `act(obs, mask)` (subclass `fzmj.agents.Agent` to get "
        "`reset` and `name`)",
        "fzmj.agents.specs:python_agent",
    ),
    AgentKind(
        "search",
        "search[:BLUEPRINT][:key=value,...]",
        "rollouts of a blueprint (`heuristic` by default) on worlds drawn from the seat's view; see below",
        "fzmj.agents.specs:search_agent",
        usage="search[:BLUEPRINT][:worlds=M,top=K,z=Z,where=all|claims|turns,late=D,belief=F,sir=F,model=NAME,"
        "wins=0|1,seed=S]",
    ),
    AgentKind(
        "exec",
        "exec:[OPTIONS:]COMMAND",
        "a program in any language, run as a subprocess speaking JSON lines: [`docs/protocol.md`](protocol.md) "
        "(time limit, fallback, fault counts)",
        "fzmj.agents.exec_bot:ExecAgent",
        usage="exec:[timeout=S:batch=N:fallback=random|heuristic:restarts=N:start=S:]COMMAND",
    ),
)


def check_spec_table(table) -> dict[str, AgentKind]:
    """The table by name; ``ValueError`` (one line) for a duplicate name."""
    out: dict[str, AgentKind] = {}
    for kind in table:
        if kind.name in out:
            raise ValueError(f"AGENT_SPECS: duplicate agent name {kind.name!r} (each row names one kind)")
        out[kind.name] = kind
    return out


_KINDS = check_spec_table(AGENT_SPECS)


def _one_of(forms: list[str]) -> str:
    return ", ".join(forms[:-1]) + " or " + forms[-1] if len(forms) > 1 else forms[0]


def spec_help(table=AGENT_SPECS) -> str:
    """Every kind's full form, for ``--help``: ``a, b, ... or z``."""
    return _one_of([k.usage or k.syntax for k in table])


def spec_table_markdown(table=AGENT_SPECS) -> str:
    """The Markdown table of the kinds (docs/baselines.md; ``|`` inside a cell escaped)."""
    rows = ["| `{}` | {} |".format(k.syntax.replace("|", "\\|"), k.help) for k in table]
    return "\n".join(["| spec | agent |", "| --- | --- |", *rows])


SPEC_HELP = spec_help()


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


def python_agent(spec: str) -> Agent:
    """``python:module:Class``: the user's class, built with no arguments."""
    target = spec.partition(":")[2]
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


def random_agent(spec: str) -> Agent:
    """``random`` or ``random:SEED``."""
    from .random_agent import RandomAgent

    _, sep, arg = spec.partition(":")
    if not sep:
        return RandomAgent()
    try:
        seed = int(arg)
    except ValueError:
        raise AgentSpecError(f"bad agent spec {spec!r}: random:SEED needs an integer seed") from None
    if not 0 <= seed <= MAX_SEED:
        raise AgentSpecError(f"bad agent spec {spec!r}: the seed must be in 0..2**64-1")
    return RandomAgent(seed=seed, name=spec)


def defend_agent(spec: str) -> Agent:
    """``heuristic:defend[:OPTIONS]``."""
    from .defend import DefendAgent, parse_defend_options

    opts = parse_defend_options(spec, spec.removeprefix("heuristic:defend").removeprefix(":"))
    base = opts.pop("base", "heuristic")
    return DefendAgent(name=spec, base=None if base == "heuristic" else make_agent(base), **opts)


def patient_agent(spec: str) -> Agent:
    """``heuristic:patient[:goal=G]``."""
    from .heuristic import PATIENT_GOALS, PatientAgent

    rest = spec.removeprefix("heuristic:patient").removeprefix(":")
    key, eq, goal = rest.partition("=")
    if rest and (key != "goal" or not eq or goal not in PATIENT_GOALS):
        raise AgentSpecError(f"bad agent spec {spec!r}: expected heuristic:patient[:goal={'|'.join(PATIENT_GOALS)}]")
    return PatientAgent(goal or "jinque", name=spec)


def pretrained_agent(spec: str) -> Agent:
    """``pretrained`` or ``pretrained:vN``: a shipped policy."""
    from .ppo_agent import PPOAgent, checkpoint_file

    return PPOAgent(checkpoint_file(spec), name=spec)


def ppo_agent(spec: str) -> Agent:
    """``ppo:PATH``: a trainer checkpoint."""
    path = spec.partition(":")[2]
    if not path:
        raise AgentSpecError(f"bad agent spec {spec!r}: expected ppo:PATH")
    from .ppo_agent import PPOAgent

    return PPOAgent(path, name=spec)


def search_agent(spec: str) -> Agent:
    """``search[:BLUEPRINT][:key=value,...]``."""
    from .search import SearchAgent, parse_search_spec

    blueprint, opts = parse_search_spec(spec)
    return SearchAgent(make_agent(blueprint), name=spec, **opts)


def kind_of(spec: str) -> AgentKind | None:
    """The row of :data:`AGENT_SPECS` a spec string names: the longest name it starts with."""
    parts = spec.split(":")
    for n in range(len(parts), 0, -1):
        kind = _KINDS.get(":".join(parts[:n]))
        if kind is not None:
            return kind
    return None


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
    kind = kind_of(s)
    if kind is None:
        raise AgentSpecError(f"unknown agent spec {spec!r}: expected {SPEC_HELP}")
    if kind.syntax == kind.name and s != kind.name:  # a kind without options, given some
        first = kind.name.partition(":")[0]
        forms = [k.syntax for k in _KINDS.values() if k.name.partition(":")[0] == first]
        raise AgentSpecError(f"bad agent spec {spec!r}: expected {_one_of(forms)}")
    return kind.make(s)
