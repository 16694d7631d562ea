"""Random legal play through the PettingZoo AEC env: steps/s and hands/s.

Measured the same way, in the same run, for ``fzmj_env.env()`` and PettingZoo's
``connect_four_v3`` (needs pygame; skipped when it cannot be imported). Each env plays
``--steps`` decisions per run (whole games, reset after each), with observations (``last()``)
and the standard wrappers; the figure is the median of ``--repeats`` runs. A step is one
decision of a live agent (the dead steps after a game count towards the time, not the steps).

    python benchmarks/bench_aec.py            # table
    python benchmarks/bench_aec.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time


def play(env, n_steps: int, seed: int, hands_per_game: int = 1) -> dict:
    rng = random.Random(seed)
    env.reset(seed=seed)
    steps = games = 0
    t0 = time.perf_counter()
    while steps < n_steps:
        for _agent in env.agent_iter():
            obs, _rew, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[rng.randrange(len(legal))])
                steps += 1
            env.step(action)
        games += 1
        env.reset()
    dt = time.perf_counter() - t0
    return {"steps": steps, "games": games, "hands": games * hands_per_game, "seconds": dt}


def measure(make, n_steps: int, repeats: int, hands_per_game: int = 1) -> dict:
    play(make(), min(n_steps, 2000), seed=12345, hands_per_game=hands_per_game)  # warm-up (Numba, caches)
    runs = [play(make(), n_steps, seed=i, hands_per_game=hands_per_game) for i in range(repeats)]
    sps = [r["steps"] / r["seconds"] for r in runs]
    hps = [r["hands"] / r["seconds"] for r in runs]
    return {
        "steps_per_s": statistics.median(sps),
        "hands_per_s": statistics.median(hps),
        "steps_per_hand": sum(r["steps"] for r in runs) / max(1, sum(r["hands"] for r in runs)),
        "runs": repeats,
        "steps_per_run": n_steps,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=50_000, help="decisions per run (default 50000)")
    ap.add_argument("--repeats", type=int, default=5, help="runs per env; the median is reported (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--no-connect-four", action="store_true", help="skip the connect_four_v3 reference")
    args = ap.parse_args(argv)

    import fzmj_env

    out = {
        "benchmark": "aec_random_play",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "fzmj_v0": measure(fzmj_env.env, args.steps, args.repeats),
    }
    if not args.no_connect_four:
        try:
            from pettingzoo.classic import connect_four_v3
        except Exception as exc:  # pygame missing, typically
            out["connect_four_v3"] = {"error": f"{type(exc).__name__}: {exc}"}
        else:
            out["connect_four_v3"] = measure(connect_four_v3.env, args.steps, args.repeats)
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"random legal play through env() (wrappers, observations), median of {args.repeats} runs x {args.steps} steps"
    )
    print(f"{'env':<18}{'steps/s':>12}{'hands/s':>12}{'steps/hand':>12}")
    for name in ("fzmj_v0", "connect_four_v3"):
        r = out.get(name)
        if r is None:
            continue
        if "error" in r:
            print(f"{name:<18}  unavailable ({r['error']})")
            continue
        label = "games/s" if name == "connect_four_v3" else ""
        print(f"{name:<18}{r['steps_per_s']:>12,.0f}{r['hands_per_s']:>12,.1f}{r['steps_per_hand']:>12.1f} {label}")


if __name__ == "__main__":
    main()
