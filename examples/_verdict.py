"""What the examples share: the closing learning verdict and an optional shaping potential (``examples/*.py``).

Each example ends by calling :func:`learning_verdict` with its trained agent. It plays the
agent against three ``opponents`` with ``fzmj.agents.evaluate.evaluate`` in the duplicate
format (every wall in all four seat rotations). Against three ``random`` agents the *learning
signal* is the agent's mean score per hand with its 95% interval over walls: a random agent in
that seat scores 0 in expectation (four random agents are symmetric). Against other opponents
every hand is played again with a random agent in the learner's slot (``paired="random"``) and
the signal is the mean per-hand difference. ``LEARNED`` when the interval is above zero.
(Against random opponents the paired difference was measured wider, not narrower: SB3's
MaskablePPO at 65,536 steps, 800 hands: score +2.27 [+1.12, +3.41], paired +1.56 [+0.12, +3.00];
the random agent's own score adds its variance and the two games soon diverge.)

The examples run as scripts (``python examples/x.py``), which puts ``examples/`` on
``sys.path``, so ``from _verdict import learning_verdict`` finds this file.
"""

from __future__ import annotations

import time

import numpy as np


def report_training(steps: int, t0: float, c0: float) -> None:
    """Print the line an example ends its training with (``benchmarks/readme_figures.py`` reads it):
    ``steps`` learner steps since ``time.perf_counter()`` was ``t0`` and ``time.process_time()`` was ``c0``."""
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"trained {steps} learner steps in {wall:.1f} s ({steps / wall:,.0f} steps/s; "
        f"{cpu:.1f} CPU s, {steps / cpu:,.0f} steps per CPU s)"
    )


def learning_verdict(agent, opponents: str, hands: int, seed: int = 0) -> dict:
    """Evaluate ``agent`` against three ``opponents``, print its score and the verdict; return the results
    (``evaluate``'s, with ``"verdict"`` added)."""
    from fzmj.agents.evaluate import evaluate

    paired = None if opponents == "random" else "random"
    res = evaluate([agent, opponents], hands=hands, seed=seed, progress=False, paired=paired)
    a = res["agents"][agent.name]
    lo, hi = a["ci95"]
    print(
        f"{agent.name} vs 3x {opponents}: {a['mean_score']:+.2f} points/hand "
        f"(95% CI [{lo:+.2f}, {hi:+.2f}], {res['hands']} hands), win rate {a['win_rate']:.1%}"
    )
    if paired is None:
        mean, what = a["mean_score"], f"points/hand vs random (a random agent scores 0 here; {res['hands']} hands)"
    else:
        mean, (lo, hi) = res["paired"]["mean"], res["paired"]["ci95"]
        what = f"points/hand vs random in the same seat ({res['hands']} paired hands)"
    verdict = "LEARNED" if lo > 0 else "NOT SHOWN"
    print(f"learning signal: {mean:+.2f} [{lo:+.2f}, {hi:+.2f}] {what} -> {verdict}")
    res["verdict"] = verdict
    return res


def shanten_potential(planes) -> np.ndarray:
    """``-shanten`` of each observation's own hand (``fzmj_env.features``, golds as wildcards).

    ``planes``: ``(N, C, 27)`` or ``(N, C * 27)`` base observation planes (any dtype). The
    potential of the examples' optional reward shaping (``--shaping``): each step adds
    ``coef * (gamma * phi(next) - phi(now))`` to the reward (0 for ``phi(next)`` at the end of a
    game), potential-based shaping, which leaves the optimal policy unchanged (Ng, Harada and
    Russell, 1999) and rewards discards that bring the hand closer to a win.
    """

    from fzmj_env.encode import NUM_CHANNELS
    from fzmj_env.features import HF_SHANTEN, with_hand_features

    x = np.asarray(planes).reshape(-1, NUM_CHANNELS, 27).astype(np.int8)
    hf = with_hand_features(x)[:, NUM_CHANNELS + HF_SHANTEN]
    return -(hf.argmax(axis=1) - 1).astype(np.float64)
