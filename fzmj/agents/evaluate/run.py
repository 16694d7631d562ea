"""``evaluate()``: the library entry point of a duplicate evaluation (the format and the statistics
are described in ``fzmj/agents/evaluate/__init__.py``)."""

from __future__ import annotations

import sys
import time

import numpy as np

from fzmj_env.atomic import WriteError
from fzmj_env.checks import MAX_TABLES, check_int, check_memory, check_seed
from fzmj_env.cli import check_output_dir
from fzmj_env.rules import DEFAULT_RULES
from fzmj_env.seeding import agent_key, draw_seed

from .play import EvalConfigError, Setup, distinct_agents, play_all, with_ref
from .stats import aggregate, paired_stats

DEFAULT_BATCH = 512  # tables stepped together = 128 walls x 4 rotations


RESULT_VERSION = 1


def _check_settings(hands, workers, seed, batch, max_records) -> tuple[int, int, int, int]:
    """The integer settings through the one validator (a bad one is an :class:`EvalConfigError`)."""
    try:
        out = (check_int("hands", hands, 1), check_int("workers", workers, 1), check_seed(seed, "seed"))
        batch = check_int("batch", batch, 4, MAX_TABLES)
        if batch % 4:
            raise ValueError(f"batch must be a positive multiple of 4, got {batch}")
        if max_records is not None:
            check_int("max_records", max_records, 1)
    except ValueError as e:
        raise EvalConfigError(str(e)) from None
    return (*out, batch)


def _load_rules(rules):
    from fzmj_env.rules import load_rules

    try:
        return load_rules(rules)  # parsed once, shared by every batch's env
    except Exception as e:  # noqa: BLE001
        raise EvalConfigError(f"unknown rules {rules!r}: {e}") from e


def _result(setup: Setup, names: list[str], hands: int, results: np.ndarray, timing: dict, total: int):
    """The results dict (``results.json``) and the raw arrays of the plots."""
    stats, raw = aggregate(results, setup.walls, setup.slot_agent, names)
    elapsed = timing["elapsed_s"]
    out = {
        "version": RESULT_VERSION,
        "format": "duplicate: every wall played once per seat rotation (4 hands per wall)",
        "seed": setup.seed,
        "agent_seed": setup.agent_key,
        "seed_source": timing["seed_source"],
        "reproduce": f"--seed {setup.seed} --agent-seed {setup.agent_key}",
        "hands": 4 * setup.walls,
        "hands_requested": hands,
        "walls": setup.walls,
        "rules": setup.rules.name,
        "batch": setup.batch,
        "slots": [names[setup.slot_agent[i]] for i in range(4)],
        **stats,
        "timing": {
            "elapsed_s": elapsed,
            "hands_per_s": total / elapsed if elapsed > 0 else None,
            "decisions": timing["decisions"],
            "workers": timing["workers"],
        },
    }
    return out, raw


def _agent_key(seed: int, agent_seed) -> int:
    """The agents' key: ``agent_seed`` checked, or one derived from ``seed`` (one-way)."""
    try:
        return agent_key(seed) if agent_seed is None else check_seed(agent_seed, "agent_seed")
    except ValueError as e:
        raise EvalConfigError(str(e)) from None


def _add_ref_faults(paired: dict, names: list[str], faults: list) -> None:
    """The REF run's exec faults (the pairing's opponents) into the paired results."""
    if any(f is not None for f in faults):
        paired["bot_faults"] = {names[i]: f for i, f in enumerate(faults) if f is not None}


def close_made(objs: list, specs: list) -> None:
    """Close the agents this run made from spec strings (an agent object given is the caller's)."""
    for obj, spec in zip(objs, specs, strict=False):
        if isinstance(spec, str) and callable(getattr(obj, "close", None)):
            obj.close()


def evaluate(
    agents: list,
    hands: int,
    seed: int | None = None,
    workers: int = 1,
    progress: bool = True,
    *,
    rules: str = DEFAULT_RULES,
    batch: int = DEFAULT_BATCH,
    start_method: str | None = None,
    save_records: str | None = None,
    max_records: int | None = None,
    paired=None,
    agent_seed: int | None = None,
    _raw: bool = False,
) -> dict:
    """Play ``hands`` hands in the duplicate format and return the statistics (``results.json``).

    ``agents``: 4 agents or spec strings, one per slot (equal specs are one agent, pooled);
    with fewer, the last one fills the remaining slots (``[A, B]`` = A against three B).
    ``hands`` is rounded up to a multiple of 4. ``workers`` > 1 plays batches in that many
    processes (same results). ``batch``: tables per batch (a multiple of 4). ``start_method``
    of the worker processes: default "fork" (cheap), or "spawn" once torch is imported here
    (a forked child of a process that ran torch ops may hang in its thread pool); then the
    agents passed as objects must be picklable.

    ``save_records``: a directory to write game records into (created if missing): the worst
    and best hands of each agent, at most ``max_records`` (default 2 per agent; more keep the
    2nd, 3rd ... worst and best too). Their paths are listed under ``"records"``. The folder is
    created and probed before the play (``EvalConfigError`` if it cannot be written); a write
    that fails after the play (a full disk) keeps the results and names the file under
    ``"records_error"``.

    ``paired``: an agent or spec REF; every hand is played again with REF in slot 0 and the
    result gains ``"paired"`` (see the module docstring).

    ``seed``: the walls' seed; None (the default) draws a secret one (64 bits from the operating
    system), which the agents never see and the results report afterwards. ``agent_seed``: the key
    of the agents' reset seeds (a keyed hash of batch and agent, which reveals neither key nor
    walls); None derives it from ``seed`` (one-way), so ``seed`` alone replays the run. The results
    report both (``"seed"``, ``"agent_seed"``, ``"reproduce"``).
    """
    # Long for its keyword arguments and their documentation: the body is the run's plain sequence
    # (settings, agents, setup, play, statistics), the work is in play_all and the helpers above
    source = "given" if seed is not None else "drawn"
    hands, workers, seed, batch = _check_settings(
        hands, workers, draw_seed() if seed is None else seed, batch, max_records
    )
    key = _agent_key(seed, agent_seed)
    rules_obj = _load_rules(rules)
    slot_agent, objs, names, specs = distinct_agents(agents)
    walls = -(-hands // 4)
    try:  # what this machine cannot hold is refused now, not after hours of play
        check_memory(f"hands={hands}", 4 * walls * 14 * 4)  # every hand's result row is kept for the statistics
    except ValueError as e:
        raise EvalConfigError(str(e)) from None
    keeper = None
    if save_records is not None:
        from .records import RecordKeeper

        try:  # a folder that cannot hold the records is refused before the play, not after it
            check_output_dir(save_records, "save_records")
        except ValueError as e:
            raise EvalConfigError(str(e)) from None

        keeper = RecordKeeper(names, slot_agent, rules_obj, seed, max_records)
        keeper.agent_seed = key
    setup = Setup(slot_agent, objs, rules_obj, seed, batch, walls, keeper is not None, key)
    ref = None if paired is None else with_ref(setup, specs, paired)
    workers = min(workers, -(-walls // (batch // 4)))
    t0 = time.perf_counter()
    from tqdm.auto import tqdm

    total = 4 * walls * (1 if ref is None else 2)
    bar = tqdm(total=total, unit="hand", desc="fzmj-eval", disable=not progress, file=sys.stderr, smoothing=0.1)
    faults: list = [None] * len(objs)  # per distinct agent: exec bots' fault counts
    try:
        results, decisions, fell_back = play_all(setup, specs, workers, start_method, keeper, bar, faults)
        if ref is not None:
            ref_faults: list = [None] * len(ref[0].agents)
            ref_results, ref_decisions, ref_fell_back = play_all(
                ref[0], ref[1], workers, start_method, None, bar, ref_faults
            )
    finally:
        bar.close()
        close_made(objs, specs)  # exec bots: end of input and a grace period, not a kill at exit
        if ref is not None:
            close_made(ref[0].agents, ref[1])
    total_decisions = int(decisions.sum()) + (0 if ref is None else int(ref_decisions.sum()))
    timing = {
        "elapsed_s": time.perf_counter() - t0, "decisions": total_decisions, "workers": workers, "seed_source": source,
    }  # fmt: skip
    out, raw = _result(setup, names, hands, results, timing, total)
    for i, name in enumerate(names):  # each agent's own count (the league's fault shares divide by it)
        out["agents"][name]["decisions"] = int(decisions[i])
    if ref is not None:
        out["paired"] = paired_stats(
            results, ref_results, walls, names[slot_agent[0]], ref[2], fell_back, ref_fell_back
        )
        _add_ref_faults(out["paired"], [*names, ref[2]], ref_faults)
    if any(f is not None for f in faults):  # only with exec: agents (docs/protocol.md, Faults)
        out["bot_faults"] = {names[i]: f for i, f in enumerate(faults) if f is not None}
    bot_names = {names[i]: o.bot_name for i, o in enumerate(objs) if getattr(o, "bot_name", None)}
    if bot_names:  # exec bots that named themselves in their hello: the Markdown shows those names
        out["bot_names"] = bot_names
    if fell_back.any():
        out["hands_with_fallback"] = int(fell_back.sum())
    if keeper is not None:
        try:
            out["records"] = [str(p) for p in keeper.write(save_records)]
        except OSError as e:  # a full disk: the results are kept and returned, the failure said
            out["records_error"] = str(e) if isinstance(e, WriteError) else f"{save_records}: {e}"
    if _raw:
        return out, raw
    return out
