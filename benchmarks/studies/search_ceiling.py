"""DIAGNOSTIC, not an agent: how much could any belief buy the ``search`` agent?

The same search as ``search[:BLUEPRINT][:options]`` (same candidates, same z test, same
rollouts by the blueprint), except that its M worlds are the TRUE table with only the live wall
(and the reserve) redrawn: the other seats' hands, their concealed kongs and 过水 are the real
ones. No belief can do better than knowing the hands, so the paired gain of this diagnostic
bounds what worlds from a belief (``search:...:sir=F``) can add; the gap between the two is
what a better belief could still give. It reads the hidden state, so it is never playable:
it exists only here, in a benchmark, and plays through ``benchmarks/studies/paired_search.py``'s
driver (a ``Game`` per hand, the searcher in each seat of each wall in turn, paired against
REF in the same seat on the same walls).

    nice -n 10 python benchmarks/studies/search_ceiling.py --agent search:heuristic:worlds=32 \\
        --walls 25 --seed 5000 [--json]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import paired_search  # noqa: E402  (the driver next to this file)


def known_hands(agent):
    """``agent`` (a SearchAgent) searching on worlds that keep the true hands and redraw the
    live wall only (the diagnostic of the module docstring). Reads ``agent.truth`` (the Game),
    which ``paired_search.play`` sets before every decision."""
    from fzmj_env.core import state

    def _search(o, mk, base):
        t0 = time.perf_counter()
        cands = agent.candidates(o, mk, base)
        if len(cands) < 2:
            return base
        K, M = len(cands), agent.opts["worlds"]
        agent._n += 1
        env = agent._env(agent.rules_for(o), K * M)
        tables = np.arange(K * M)
        true = agent.truth.buf[0]
        seat = agent.truth.seat
        env.buf[tables] = true
        env.buf["m"][tables, state.HANDS_PER_GAME] = 1  # stop at the end of this hand
        env.buf["m"][tables, state.HAND_NO] = 0
        head, tail = int(true["m"][state.HEAD]), int(true["m"][state.TAIL])
        live = true["wall"][head : tail + 1]
        rng = np.random.default_rng(np.random.SeedSequence([agent._seed & 0xFFFFFFFF, agent._seed >> 32, agent._n]))
        for j in range(M):  # world j: one wall order, the same for every candidate (common random numbers)
            env.buf["wall"][j::M, head : tail + 1] = rng.permutation(live)
        env._observe_tables(tables)
        obs, mask, st, *_ = env.step_tables(tables, np.repeat(np.asarray(cands, np.int64), M))
        go = tables[st[tables] >= 0]
        while len(go):
            acts = np.asarray(agent.blueprint.act(obs[go], mask[go]), np.int64)
            obs, mask, st, *_ = env.step_tables(go, acts)
            go = go[st[go] >= 0]
        pts = env.buf["points"][tables, seat].astype(np.float64).reshape(K, M)
        diff = pts[1:] - pts[0]
        mean = diff.mean(1)
        se = diff.std(1, ddof=1) / np.sqrt(M)
        ok = mean > agent.opts["z"] * se
        choice = base
        if ok.any():
            choice = cands[1 + int(np.argmax(np.where(ok, mean, -np.inf)))]
            agent.stats["deviated"] += 1
        agent.stats["searched"] += 1
        agent.stats["rollouts"] += K * M
        agent.stats["search_s"] += time.perf_counter() - t0
        return choice

    agent._search = _search
    return agent


def main(argv=None) -> dict:
    # the driver's --clairvoyant hook, pointed at this diagnostic's worlds
    paired_search.clairvoyant = known_hands
    argv = list(sys.argv[1:] if argv is None else argv)
    return paired_search.main([*argv, "--clairvoyant"])


if __name__ == "__main__":
    main()
