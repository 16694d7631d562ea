"""Playing a duplicate evaluation: walls and agent seeds, batches of tables stepped together, and
the worker processes that play batches in parallel (same results for any number of workers)."""

from __future__ import annotations

import multiprocessing as mp
import sys
from dataclasses import dataclass, replace

import numpy as np

from fzmj_env.seeding import keyed_agent_seed

from .. import Agent, make_agent, reset_agent
from ..base import agent_obs_version
from ..exec_bot import install_worker_cleanup

_MAX_STEPS = 5000  # a hand takes < 300 decisions; more means an agent or engine bug


class EvalConfigError(ValueError):
    """A bad evaluation setting (number of agents, hands, workers, seed, batch, rules)."""


def wall_seeds(seed: int, walls: int, start: int = 0) -> np.ndarray:
    """Seeds (uint64) of walls ``start .. start + walls - 1``: ``game_seed(seed, w, 0)``."""
    from fzmj_env.seeding import game_seed

    return np.array([int(game_seed(np.uint64(seed), w, 0)) for w in range(start, start + walls)], dtype=np.uint64)


def agent_seed(key: int, batch: int, agent: int, own_seed=0) -> int:
    """Seed of distinct agent ``agent`` in batch ``batch``: a keyed hash (``keyed_agent_seed``) under
    the run's agent key, of (batch, agent, the agent's own seed such as ``random:SEED``), so that
    ``random:1`` and ``random:2`` play different games. One-way: it tells the agent nothing about
    the walls' seed."""
    own = int(own_seed) if isinstance(own_seed, (int, np.integer)) and not isinstance(own_seed, bool) else 0
    return keyed_agent_seed(key, batch, agent, own)


@dataclass
class Setup:
    """What a worker needs to play batches (inherited by forked workers, pickled for spawned ones)."""

    slot_agent: np.ndarray  # (4,) distinct agent index of each slot
    agents: list  # distinct agents (objects) or their specs (built lazily in a worker)
    rules: object  # fzmj_env.rules.Rules
    seed: int  # the walls' seed
    batch: int
    walls: int
    log: bool = False  # keep every table's decisions (for --save-records)
    agent_key: int = 0  # the key of the agents' reset seeds (``agent_seed``), never shown to them


_WORKER_SETUP: Setup | None = None


def _worker_init(setup: Setup) -> None:
    global _WORKER_SETUP
    agents = [a if isinstance(a, Agent) else make_agent(a) for a in setup.agents]
    torch = sys.modules.get("torch")  # one thread per worker process (only if an agent uses torch)
    if torch is not None:
        torch.set_num_threads(1)
    _WORKER_SETUP = replace(setup, agents=agents)
    install_worker_cleanup()  # a terminated or finished worker kills its exec bots' processes


def _worker_play(b: int):
    return (*play_batch(_WORKER_SETUP, b), pop_faults(_WORKER_SETUP.agents))


def pop_faults(agents) -> list:
    """Each agent's fault counts since the last call (agents that report them: ``exec:``), else None."""
    return [a.pop_faults() if callable(getattr(a, "pop_faults", None)) else None for a in agents]


def add_faults(total: list, part: list) -> None:
    for i, f in enumerate(part):
        if f is not None:
            total[i] = {k: (total[i] or {}).get(k, 0) + v for k, v in f.items()}


def obs_layouts(agents) -> list[str]:
    """The observation layout each agent reads: "v3" for a v3 checkpoint or an exec bot that asked
    for it (its hello is read here: the bot starts now if it is not running), else "v2". The env
    gives v3 when any agent reads it; v2 agents read its first 99 planes (the games do not change)."""
    return [agent_obs_version(a) for a in agents]


def tell_rows(agent, tables: np.ndarray, seats: np.ndarray) -> None:
    """Tell an agent that can use them (an exec bot's ``row_context``) the table and seat of each
    row of its next ``act`` call."""
    if hasattr(agent, "row_context"):
        agent.row_context = (tables, seats)


def play_batch(setup: Setup, b: int, progress=None):
    """Play batch ``b`` (walls ``b * wpb ...``): returns (results (jobs, RESULT_WIDTH) int32,
    decisions (one count per distinct agent, int64), log, fell_back).

    ``log`` (only with ``setup.log``): (acting seats, actions, layouts): seats and actions both
    (steps, jobs) int8, seat -1 where the job's game was over, and the observation layout each
    distinct agent read ("v2" or "v3"); otherwise None. ``fell_back`` (jobs,) bool: the hands in which
    an agent's fallback played at least one decision (an ``exec:`` bot that faulted; see
    ``fallback_rows`` in docs/protocol.md): the paired evaluation must not pair those.
    """
    from fzmj_env.vector import RESULT_WIDTH, VectorEnv

    wpb = setup.batch // 4
    w0 = b * wpb
    nw = min(wpb, setup.walls - w0)
    n = 4 * nw
    seeds = np.repeat(wall_seeds(setup.seed, nw, w0), 4)  # job j = 4 * wall + rotation
    rot = np.tile(np.arange(4), nw)
    for i, agent in enumerate(setup.agents):
        reset_agent(agent, agent_seed(setup.agent_key, b, i, getattr(agent, "seed", 0)), setup.rules)
    layouts = obs_layouts(setup.agents)
    env = VectorEnv(n, rules=setup.rules, hands_per_game=1, auto_reset=False, obs_version=3 if "v3" in layouts else 2)
    obs, mask, seat = env.reset(seeds=seeds)
    results = np.zeros((n, RESULT_WIDTH), dtype=np.int32)
    active = np.ones(n, dtype=bool)
    fell_back = np.zeros(n, dtype=bool)
    actions = np.zeros(n, dtype=np.int64)
    slot_agent = setup.slot_agent
    decisions = np.zeros(len(setup.agents), dtype=np.int64)
    steps = 0
    log_seats: list = []
    log_actions: list = []
    while True:
        owner = np.where(active, slot_agent[(seat - rot) % 4], -1)
        actions[~active] = 0  # finished tables (auto_reset=False) ignore their action
        for i, agent in enumerate(setup.agents):
            sel = np.flatnonzero(owner == i)
            if sel.size == 0:
                continue
            tell_rows(agent, 4 * w0 + sel, seat[sel])  # an exec bot: each row says its table (its job) and seat
            if sel.size == n:  # the whole batch (one agent, no idle table): no copy
                a = agent.act(obs, mask)
            else:
                a = agent.act(obs[sel], mask[sel])
            a = np.asarray(a).reshape(-1)
            if a.shape != (sel.size,):
                raise RuntimeError(f"agent {label(agent)} returned {a.shape[0]} actions for {sel.size} observations")
            a = a.astype(np.int64, copy=False)
            ok = (a >= 0) & (a < mask.shape[1])
            ok[ok] = mask[sel[ok], a[ok]] == 1
            if not ok.all():
                t = int(sel[np.flatnonzero(~ok)[0]])
                bad = int(a[np.flatnonzero(~ok)[0]])
                raise RuntimeError(
                    f"agent {label(agent)} chose illegal action {bad} (legal: {np.flatnonzero(mask[t]).tolist()})"
                )
            actions[sel] = a
            decisions[i] += sel.size
            fb = getattr(agent, "fallback_rows", None)  # rows of this call its fallback played
            if fb is not None and len(fb):
                fell_back[sel[fb]] = True
        if setup.log:
            log_seats.append(np.where(active, seat, -1).astype(np.int8))
            log_actions.append(actions.astype(np.int8))
        obs, mask, seat, _, done, info = env.step(actions)
        fin = active & info["hand_over"]
        if fin.any():
            results[fin] = info["results"][fin]
        active &= ~done
        steps += 1
        if not active.any():
            break
        if progress is not None:
            progress(n - int(active.sum()))
        if steps > _MAX_STEPS:
            raise RuntimeError(f"batch {b}: games still running after {_MAX_STEPS} decisions")
    if progress is not None:
        progress(n)
    log = (np.stack(log_seats), np.stack(log_actions), layouts) if setup.log else None
    return results, decisions, log, fell_back


def _keep(keeper, setup: Setup, b: int, results: np.ndarray, log) -> None:
    """Offer batch ``b``'s hands to the record keeper (``--save-records``)."""
    if keeper is None:
        return
    wpb = setup.batch // 4
    nw = min(wpb, setup.walls - b * wpb)
    keeper.add_batch(b * wpb, np.repeat(wall_seeds(setup.seed, nw, b * wpb), 4), results, log)


def label(agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


def _fill_slots(agents) -> list:
    """The 4 slots: 1-4 agents, the last one repeated (``[A, B]`` = A B B B: one against three)."""
    if isinstance(agents, (str, Agent)) or not hasattr(agents, "__len__"):
        raise EvalConfigError("agents must be a list of 1 to 4 agents or specs")
    agents = list(agents)
    if not 1 <= len(agents) <= 4:
        raise EvalConfigError(f"need 1 to 4 agents (4 seats; the last one fills the rest), got {len(agents)}")
    return agents + [agents[-1]] * (4 - len(agents))


def distinct_agents(agents) -> tuple[np.ndarray, list, list[str], list]:
    """Slot -> distinct agent index, the distinct agents (objects), their names, their specs."""
    agents = _fill_slots(agents)
    keys: list = []
    objs: list = []
    specs: list = []
    slot_agent = np.zeros(4, dtype=np.int64)
    for i, a in enumerate(agents):
        key = a.strip() if isinstance(a, str) else id(a)
        if key not in keys:
            keys.append(key)
            objs.append(make_agent(a))  # raises AgentSpecError on a bad spec
            specs.append(a.strip() if isinstance(a, str) else a)
        slot_agent[i] = keys.index(key)
    names: list[str] = []
    for k, o in zip(keys, objs, strict=True):
        base = k if isinstance(k, str) else label(o)
        name = base
        n = 2
        while name in names:
            name = f"{base}#{n}"
            n += 1
        names.append(name)
    return slot_agent, objs, names, specs


def with_ref(setup: Setup, specs: list, paired) -> tuple[Setup, list, str]:
    """The paired run's setup: REF in slot 0, every other slot's agent at its index (so with its
    reset seeds); REF reuses an index when it is one of the agents already. Also REF's specs list and name."""
    key = paired.strip() if isinstance(paired, str) else id(paired)
    keys = [sp if isinstance(sp, str) else id(sp) for sp in specs]
    # agents given as specs start afresh, as in the first run (an exec bot's restarts and its
    # process's state would otherwise carry over); objects are the caller's, reused as they are
    agents = [make_agent(sp) if isinstance(sp, str) else a for a, sp in zip(setup.agents, specs, strict=True)]
    specs = list(specs)
    if key in keys:
        idx = keys.index(key)
    else:
        idx = len(agents)
        agents.append(make_agent(paired))  # raises AgentSpecError on a bad spec, before any play
        specs.append(paired.strip() if isinstance(paired, str) else paired)
    slot_agent = setup.slot_agent.copy()
    slot_agent[0] = idx
    name = paired.strip() if isinstance(paired, str) else label(paired)
    return replace(setup, slot_agent=slot_agent, agents=agents, log=False), specs, name


def default_start_method() -> str:
    """Fork (cheap) unless torch is loaded here: a forked child of a process that ran torch ops may
    hang in its thread pool."""
    return "fork" if "fork" in mp.get_all_start_methods() and "torch" not in sys.modules else "spawn"


def play_all(
    setup: Setup, specs: list, workers: int, start_method, keeper, bar, faults: list, first_batch: int = 0
) -> tuple[np.ndarray, int, np.ndarray]:
    """Every batch of ``setup`` from ``first_batch`` on (a resumed dataset collection skips the
    batches it has), in this process or in ``workers`` processes (same results): the
    job results in wall order, the decisions each distinct agent took (int64 array) and, per job,
    whether a fallback played in it; exec bots' faults are added to ``faults`` (one slot per
    distinct agent)."""
    n_batches = -(-setup.walls // (setup.batch // 4))
    batches = range(first_batch, n_batches)
    parts: list = []
    fell: list = []
    decisions = np.zeros(len(setup.agents), dtype=np.int64)
    if workers == 1:
        for b in batches:
            done_before = bar.n

            def tick(k, base=done_before):
                bar.update(base + k - bar.n)

            res, dec, log, fb = play_batch(setup, b, tick)
            add_faults(faults, pop_faults(setup.agents))
            parts.append(res)
            fell.append(fb)
            decisions += dec
            _keep(keeper, setup, b, res, log)
        return np.concatenate(parts), decisions, np.concatenate(fell)
    remote = replace(setup, agents=list(specs))  # specs are rebuilt in each worker; objects are inherited
    ctx = mp.get_context(start_method or default_start_method())
    pool = ctx.Pool(workers, initializer=_worker_init, initargs=(remote,))
    try:
        for b, (res, dec, log, fb, f) in zip(batches, pool.imap(_worker_play, batches), strict=True):
            add_faults(faults, f)
            parts.append(res)
            fell.append(fb)
            decisions += dec
            _keep(keeper, setup, b, res, log)
            bar.update(len(res))
    except BaseException:
        pool.terminate()  # SIGTERM: the workers' handler (install_worker_cleanup) kills their bots first
        pool.join()
        raise
    pool.close()  # the workers end normally: their exit hook kills their bots
    pool.join()
    return np.concatenate(parts), decisions, np.concatenate(fell)
