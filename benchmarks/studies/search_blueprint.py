"""Search with a policy as its blueprint, paired against that blueprint on the same walls.

The searching agent plays slot 0 against three ``--opponent`` players; then ``--ref`` (by default
the blueprint itself) plays the same walls and seats; the figure is the mean per-hand difference
with its 95% CI over walls (``fzmj.agents.evaluate``, ``paired=REF``), with the search's own
counters: the share of decisions searched, deviations from the blueprint, ms per searched
decision (on this machine, at this load) and the wall time. One JSON object per spec.

    python benchmarks/studies/search_blueprint.py "search:pretrained:worlds=32,margin=0.8" \\
        --hands 4000 --seed 4041

Issue 47's figures (docs/results.md, docs/baselines.md) came from these runs: tuning on seed 1000
(2,000 hands), picking on 4041.
"""

from __future__ import annotations

import argparse
import json
import os
import time


def measure(spec: str, hands: int, seed: int, ref: str, opponent: str, agent_seed: int) -> dict:
    from fzmj.agents import make_agent
    from fzmj.agents.evaluate import evaluate

    agent = make_agent(spec)
    t0 = time.perf_counter()
    res = evaluate([agent, opponent], hands=hands, seed=seed, agent_seed=agent_seed, paired=ref, progress=False)
    st = agent.stats
    return {
        "spec": spec,
        "ref": ref,
        "hands": hands,
        "seed": seed,
        "paired": res["paired"]["mean"],
        "ci95": res["paired"]["ci95"],
        "searched_share": st["searched"] / max(1, st["decisions"]),
        "searched": st["searched"],
        "deviated": st["deviated"],
        "ms_per_search": 1000 * st["search_s"] / max(1, st["searched"]),
        "wall_s": time.perf_counter() - t0,
        "load_1min": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="+", help="search agent specs, e.g. search:pretrained:worlds=32,margin=0.8")
    ap.add_argument("--hands", type=int, default=2000, help="hands, a multiple of 4 (default 2000)")
    ap.add_argument("--seed", type=int, default=1000, help="wall seed (default 1000: the tuning seed)")
    ap.add_argument("--ref", default="pretrained", help="reference in the same seat (default pretrained)")
    ap.add_argument("--opponent", default="heuristic", help="the three other seats (default heuristic)")
    ap.add_argument("--agent-seed", type=int, default=1, help="agents' reset key (default 1)")
    a = ap.parse_args(argv)
    if a.hands <= 0 or a.hands % 4:
        ap.error("--hands must be a positive multiple of 4")
    for spec in a.specs:
        print(json.dumps(measure(spec, a.hands, a.seed, a.ref, a.opponent, a.agent_seed)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
