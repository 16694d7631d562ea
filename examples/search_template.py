"""A search template (docs/search.md): one-ply information-set search with a trained policy as
its prior, over worlds drawn from the seat's view, on fzmj's public APIs only. A starting point
to copy and change, not a strong player.

At each decision with more than one legal action:

1. the observation is turned back into a table (``fzmj.agents.search.state_from_obs``: the
   seat's own information, placeholders for the rest) and ``--worlds`` worlds are drawn from the
   seat's view into the tables of a ``VectorEnv`` (``load_worlds``: the other hands and the wall
   drawn uniformly among what the seat cannot tell apart); each world is saved
   (``save_tables``) as a root;
2. ``--rounds`` rounds: in every world the root action is chosen by PUCT (the blueprint's
   probabilities as the prior, the mean points so far as the value), the worlds are restored to
   their roots (``restore_tables``), the chosen actions played, and every seat then plays by the
   blueprint to the end of the hand, all worlds stepped together; the seat's points are the
   value of that action in that world;
3. the action with the most visits is played.

It is measured paired against its blueprint (every wall played again with the blueprint in its
seat, the same three blueprint opponents), with its cost per decision:

    python examples/search_template.py [--hands 16] [--worlds 8] [--rounds 3] [--blueprint pretrained]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fzmj.agents import Agent, make_agent
from fzmj.agents.base import agent_obs_version
from fzmj.agents.evaluate import evaluate
from fzmj.agents.search import state_from_obs
from fzmj_env import VectorEnv
from fzmj_env.encode import NUM_CHANNELS


class PriorSearchAgent(Agent):
    """One-ply PUCT over sampled worlds, the blueprint as prior and as the rollout policy."""

    def __init__(self, blueprint: str = "pretrained", worlds: int = 8, rounds: int = 3, c_puct: float = 4.0):
        self.blueprint = make_agent(blueprint)
        self.obs_version = agent_obs_version(self.blueprint)  # our observations are the blueprint's layout
        self.worlds, self.rounds, self.c_puct = int(worlds), int(rounds), float(c_puct)
        self.env = VectorEnv(self.worlds, obs_version=self.obs_version, auto_reset=False)
        self.env.reset()
        self.tables = np.arange(self.worlds)
        self.name = f"search({self.blueprint.name})"
        self.rng = np.random.default_rng(0)
        self.searched, self.seconds = 0, 0.0

    def reset(self, seed: int | None = None) -> None:
        self.blueprint.reset(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = self.blueprint.act(obs, mask)  # the fallback, and every decision with one choice
        for i in np.flatnonzero((mask != 0).sum(axis=1) > 1):
            t0 = time.perf_counter()
            buf = state_from_obs(np.ascontiguousarray(obs[i, :NUM_CHANNELS]), mask[i])
            if buf is not None:
                prior, _ = self.blueprint.action_probs(obs[i : i + 1], mask[i : i + 1])
                out[i] = self._search(buf, prior[0], np.flatnonzero(mask[i]))
                self.searched += 1
                self.seconds += time.perf_counter() - t0
        return out

    def _search(self, buf: np.ndarray, prior: np.ndarray, legal: np.ndarray) -> int:
        env, tables = self.env, self.tables
        seeds = self.rng.integers(0, 2**63, self.worlds, dtype=np.uint64)
        env.load_worlds(tables, buf, 0, 0, seeds)  # seat 0: the observer (state_from_obs's frame)
        roots = env.save_tables(tables)
        visits, total = np.zeros(62), np.zeros(62)
        for _ in range(self.rounds):
            env.restore_tables(tables, roots)
            actions = self._puct(prior, legal, visits, total)
            points = self._rollout(actions)
            np.add.at(visits, actions, 1)
            np.add.at(total, actions, points)
        return int(legal[np.argmax(visits[legal])])

    def _puct(self, prior, legal, visits, total) -> np.ndarray:
        """One root action per world: PUCT, each world's pick counted before the next (so the
        worlds of one round spread over the candidates instead of all taking the same one)."""
        v, s = visits.copy(), total.copy()
        out = np.empty(self.worlds, dtype=np.int64)
        for w in range(self.worlds):
            q = np.where(v[legal] > 0, s[legal] / np.maximum(v[legal], 1), 0.0)
            u = self.c_puct * prior[legal] * np.sqrt(v.sum() + 1) / (1 + v[legal])
            out[w] = legal[np.argmax(q + u)]
            v[out[w]] += 1
        return out

    def _rollout(self, actions: np.ndarray) -> np.ndarray:
        """Play ``actions`` in the worlds, then the blueprint for every seat to the hand's end;
        seat 0's points in each world."""
        env = self.env
        points = np.zeros(self.worlds)
        obs, mask, seat, rewards, done, _ = env.step(actions)
        points += rewards[:, 0]
        while (seat >= 0).any():
            live = np.flatnonzero(seat >= 0)
            obs, mask, seat, rewards, done, _ = env.step_tables(live, self.blueprint.act(obs[live], mask[live]))
            points += rewards[:, 0]
        return points


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=16)
    ap.add_argument("--worlds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blueprint", default="pretrained")
    ap.add_argument("--seed", type=int, default=57)
    args = ap.parse_args(argv)
    agent = PriorSearchAgent(args.blueprint, args.worlds, args.rounds)
    t0 = time.perf_counter()
    res = evaluate([agent, args.blueprint], hands=args.hands, seed=args.seed, progress=False, paired=args.blueprint)
    mean, ci = res["paired"]["mean"], res["paired"]["ci95"]
    ci = "n/a" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"
    per = agent.seconds / max(agent.searched, 1)
    print(
        f"{agent.name}, {args.worlds} worlds x {args.rounds} rounds: {mean:+.2f} points/hand over its blueprint "
        f"(95% CI {ci}, {res['hands']} paired hands); {agent.searched} searched decisions, "
        f"{per * 1e3:.0f} ms each; {time.perf_counter() - t0:.0f} s in all"
    )
    return {"paired": res["paired"], "searched": agent.searched, "ms_per_decision": per * 1e3}


if __name__ == "__main__":
    main()
