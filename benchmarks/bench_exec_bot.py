"""``exec:`` bots: decisions per second of the example Python bot, and what a timeout costs.

    nice -n 10 .venv/bin/python benchmarks/bench_exec_bot.py [--runs 5] [--quick]

1. Throughput: ``ExecAgent.act`` on real observations (a pool of decisions collected from a
   ``VectorEnv`` played at random), one request per call of B tables (B = 1, 64, 256, 512),
   for the example bot asking for the legal actions only and with ``--obs view`` /
   ``--obs planes`` (the engine decodes and sends the view or the planes, the bot parses them).
   Median decisions/s over ``--runs`` runs.
2. Timeouts: a bot that answers its first request and sleeps 10 s on the second; the wall
   time of the second ``act`` minus the limit is the overshoot (kill, reap, fallback);
   median and max over ``--runs`` runs, for limits 0.1 s and 0.5 s; the next call's restart
   (start the interpreter, hello) is shown too.
3. End to end: ``evaluate([bot, random])`` hands/s against ``evaluate([random])``.
4. Versions: ``evaluate([bot, random])`` hands/s of the bot asking for observation v2 or v3 with the
   legal actions only (the same cost: the tables stay v2), and v3 with the view; interleaved runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "examples/bots/random_bot.py"

SLEEPER = """
import json, sys, time
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": []}), flush=True)
    elif msg["type"] == "act":
        n += 1
        if n >= 2:
            time.sleep(10)
        print(json.dumps({"type": "act", "id": msg["id"], "actions": [r["legal"][0] for r in msg["rows"]]}), flush=True)
"""


def decision_pool(n_tables: int = 512, steps: int = 40, seed: int = 0):
    """(obs, mask) of many real decisions: every acting row of ``steps`` random steps."""
    from fzmj.agents.random_agent import RandomAgent
    from fzmj_env.vector import VectorEnv

    env = VectorEnv(n_tables, seed=seed, hands_per_game=1)
    obs, mask, _ = env.reset()
    rnd = RandomAgent(seed)
    O, M = [], []
    for _ in range(steps):
        O.append(obs.copy())
        M.append(mask.copy())
        obs, mask, *_ = env.step(rnd.act(obs, mask))
    return np.concatenate(O), np.concatenate(M)


def throughput(obs, mask, args) -> None:
    from fzmj.agents import make_agent

    print("| bot asks for | tables per request | decisions/s (median) | runs |")
    print("| --- | ---: | ---: | --- |")
    for ask in ("", " --obs view", " --obs planes"):
        agent = make_agent(f"exec:{sys.executable} {BOT}{ask}")
        agent.act(obs[:4], mask[:4])  # start + hello outside the timing
        for b in (1, 64, 256, 512):
            total = 512 if b == 1 else (4096 if args.quick else 16384)
            rates = []
            for r in range(args.runs):
                lo = (r * total) % (len(obs) - total)
                t0 = time.perf_counter()
                for i in range(lo, lo + total, b):
                    agent.act(obs[i : i + b], mask[i : i + b])
                rates.append(total / (time.perf_counter() - t0))
            assert sum(agent.pop_faults().values()) == 0
            print(
                f"| legal{ask.replace(' --obs ', ' + ')} | {b} | {statistics.median(rates):,.0f} "
                f"| {', '.join(f'{x:,.0f}' for x in rates)} |"
            )
        agent.close()


def timeouts(obs, mask, args) -> None:
    from fzmj.agents import make_agent

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sleeper.py"
        path.write_text(SLEEPER)
        print("\n| limit (s) | overshoot median (ms) | overshoot max (ms) | restart + hello median (ms) | runs |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for limit in (0.1, 0.5):
            agent = make_agent(f"exec:timeout={limit}:restarts=1000:{sys.executable} {path}")
            over, restart = [], []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                agent.act(obs[:64], mask[:64])  # (re)start + hello + the first answer
                restart.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                agent.act(obs[:64], mask[:64])  # the bot sleeps: killed at the limit
                over.append(time.perf_counter() - t0 - limit)
            f = agent.pop_faults()
            assert f["timeout"] == args.runs, f
            print(
                f"| {limit} | {1000 * statistics.median(over):.1f} | {1000 * max(over):.1f} "
                f"| {1000 * statistics.median(restart):.0f} | {args.runs} |"
            )
            agent.close()


def end_to_end(args) -> None:
    from fzmj.agents.evaluate import evaluate

    hands = 512 if args.quick else 2048
    spec = f"exec:{sys.executable} {BOT}"
    print("\n| fzmj-eval agents | hands | hands/s | decisions/s (all seats) |")
    print("| --- | ---: | ---: | ---: |")
    for agents in ([spec, "random"], [spec], ["random"]):
        res = evaluate(agents, hands=hands, seed=0, progress=False)
        t = res["timing"]
        label = " ".join("exec random_bot.py" if a == spec else a for a in agents)
        print(f"| {label} | {hands} | {t['hands_per_s']:,.0f} | {t['decisions'] / t['elapsed_s']:,.0f} |")


def versions(args) -> None:
    """``evaluate([bot, random])`` hands/s of the example bot asking for observation v2 and v3, the
    legal actions only (and v3 with the view, for scale), and a v2 bot asking for ``last_claim``
    (its tables then v3): runs interleaved, medians; the load said."""
    import os

    from fzmj.agents.evaluate import evaluate

    hands = 256 if args.quick else 1024
    bots = {
        "v2, legal only": f"exec:{sys.executable} {BOT}",
        "v3, legal only": f"exec:{sys.executable} {BOT} --obs-version v3",
        "v2, legal + view": f"exec:{sys.executable} {BOT} --obs view",
        "v3, legal + view": f"exec:{sys.executable} {BOT} --obs-version v3 --obs view",
        "v2, legal + last_claim": f"exec:{sys.executable} {BOT} --obs last_claim",
        "v2, legal + view + last_claim": f"exec:{sys.executable} {BOT} --obs view,last_claim",
    }
    rates: dict = {k: [] for k in bots}
    load0 = os.getloadavg()[0]
    for _ in range(args.runs):
        for label, spec in bots.items():
            res = evaluate([spec, "random"], hands=hands, seed=0, progress=False)
            rates[label].append(res["timing"]["hands_per_s"])
    load = f"load {load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    print(f"\n| exec random_bot.py vs random ({hands} hands; {load}) | hands/s (median) | runs |")
    print("| --- | ---: | --- |")
    for label, r in rates.items():
        print(f"| {label} | {statistics.median(r):,.0f} | {', '.join(f'{x:,.0f}' for x in r)} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="fewer decisions per run")
    p.add_argument("--only", choices=("throughput", "timeouts", "eval", "versions"), help="run one part only")
    args = p.parse_args()
    obs, mask = decision_pool()
    keep = mask.any(axis=1)
    obs, mask = obs[keep], mask[keep]
    print(f"decision pool: {len(obs)} real decisions; python {sys.version.split()[0]}\n")
    if args.only in (None, "throughput"):
        throughput(obs, mask, args)
    if args.only in (None, "timeouts"):
        timeouts(obs, mask, args)
    if args.only in (None, "eval"):
        end_to_end(args)
    if args.only in (None, "versions"):
        versions(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
