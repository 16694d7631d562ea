"""PettingZoo Parallel API for Fuzhou Mahjong (``fzmj_parallel_v0``): all four seats every step.

    import fzmj_env
    env = fzmj_env.parallel_env()
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)

One decision is taken per step, as in the AEC env (``fzmj_env.env()``): the seat the engine
asks (the seat whose turn it is, or in a claim window each seat with an option, one after
another, R8/R10). Every step returns an observation for all four seats; the seat to act has its
legal actions in ``action_mask``, the three others a pass-only mask (index 61), and their
actions are ignored (they may be left out of ``actions``). Same engine, same games: for the
same seed and the same decisions, the AEC env and this one deal and play identical games.

* **Rewards**: each seat's score change (R11.4) × ``reward_scale`` on the step a hand ends,
  zero otherwise (not accumulated: every seat gets its reward on that very step).
* **End**: when the game is over (``hands_per_game`` hands) every seat is terminated, the final
  observations carry pass-only masks, and ``agents`` becomes empty. Games never truncate.
* **Infos**: ``infos[agent]["to_act"]`` (1 for the seat asked this step, else 0); on the step a
  hand ends, what the AEC env puts in infos (``info="full"``: ``result``; ``"numeric"``: the
  numeric keys; ``record`` with ``record=True`` at the game's end); ``oracle`` planes every
  step with ``oracle=True``.
* **Illegal actions** of the seat to act: ``illegal_action="raise"`` (default,
  ``fzmj_env.IllegalActionError``, a ``ValueError``), ``"terminate"`` (the game ends, that seat
  gets ``illegal_reward``, the others 0, ``infos[agent]["illegal_action"] = 1``) or
  ``"substitute"`` (``fzmj_env.actions.substitute_action``: pass when legal, else the lowest
  legal action, is played instead; ``illegal_reward`` is added to that seat's reward of the
  step, use 0 for no penalty; ``infos[agent]["illegal_action"] = 1``). An action that is not
  an integer in 0..61 always raises ``ValueError``.

Other keyword arguments are the AEC env's (``rules``, ``hands_per_game``, ``reward_scale``,
``oracle``, ``record``, ``obs_dtype``, ``flatten``, ``info``, ``render_mode``).
``reset(seed, options)`` takes the AEC env's options (``wall``, ``dealer``, ``streak``).
"""

from __future__ import annotations

import copy

import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo import ParallelEnv

from .actions import A_PASS, NUM_ACTIONS, substitute_action
from .aec import _NO_RESULT, AGENTS, raw_env
from .checks import check_action, check_float
from .snapshot import StateError, tag_pickle, untag_pickle

__all__ = ["parallel_env", "FzmjParallelEnv"]

_ILLEGAL = ("raise", "terminate", "substitute")


def parallel_env(**kwargs) -> FzmjParallelEnv:
    """The Parallel API env (see the module docstring)."""
    return FzmjParallelEnv(**kwargs)


class FzmjParallelEnv(ParallelEnv, EzPickle):
    metadata = {"render_modes": ["ansi", "human"], "name": "fzmj_parallel_v0", "render_fps": 1}

    def __init__(self, illegal_action: str = "raise", illegal_reward: float = -1.0, **kwargs):
        EzPickle.__init__(self, illegal_action=illegal_action, illegal_reward=illegal_reward, **kwargs)
        if illegal_action not in _ILLEGAL:
            raise ValueError(f"illegal_action must be one of {list(_ILLEGAL)}, got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = check_float("illegal_reward", illegal_reward)
        self.aec = raw_env(**kwargs)  # validates the rest
        self.obs_version = self.aec.obs_version
        self.metadata = {**type(self).metadata, "obs_version": self.obs_version}
        self.render_mode = self.aec.render_mode
        self.possible_agents = AGENTS[:]
        self.agents = []
        self.observation_spaces = self.aec.observation_spaces
        self.action_spaces = self.aec.action_spaces
        self._numeric = self.aec._info_mode == "numeric"

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def state(self) -> np.ndarray:
        return self.aec.state()

    def render(self):
        return self.aec.render()

    def close(self):
        self.aec.close()

    # ---- copies, saved states, pickles (docs/search.md) ---------------------------------------
    def save_state(self) -> tuple:
        """The env's state (``raw_env.save_state`` of the AEC env it drives, and its agents)."""
        return self.aec.save_state(), list(self.agents)

    def restore_state(self, saved: tuple) -> None:
        """Bring the env back to ``saved`` (``save_state``); ``StateError`` for anything else."""
        if not isinstance(saved, tuple) or len(saved) != 2:
            raise StateError(
                f"parallel_env.restore_state: expected a state from save_state, got {type(saved).__name__}"
            )
        self.aec.restore_state(saved[0])
        self.agents = list(saved[1])

    def __deepcopy__(self, memo: dict) -> FzmjParallelEnv:
        """An independent env that plays on exactly as this one would (the AEC env's copy, its
        agents list; the options shared)."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        d = self.__dict__.copy()
        d["aec"] = aec = copy.deepcopy(self.aec, memo)
        d["observation_spaces"], d["action_spaces"] = aec.observation_spaces, aec.action_spaces
        d["agents"] = list(self.agents)
        new.__dict__.update(d)
        return new

    def __getstate__(self) -> dict:
        return tag_pickle(self.__dict__.copy())

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(untag_pickle(d, "fzmj_env parallel_env"))

    # ------------------------------------------------------------------------------------------
    def _observations(self) -> dict:
        aec = self.aec
        acting = aec._obs_agent  # None once the game is over (then every mask is pass-only already)
        out = {}
        for a in AGENTS:
            o = aec.observe(a)
            if a != acting and aec._seat >= 0:
                o["action_mask"][A_PASS] = 1  # a fresh array for a seat that does not act
            out[a] = o
        return out

    def _infos(self, hand_over: bool, illegal: str | None = None) -> dict:
        aec = self.aec
        acting = aec._obs_agent
        infos = {}
        for a in AGENTS:
            src = aec.infos.get(a, {})
            if hand_over:
                info = dict(src)
            elif self._numeric:
                info = dict(_NO_RESULT, points=np.zeros(4, dtype=np.int64))
            else:
                info = {}
            if aec.oracle and "oracle" in src:
                info["oracle"] = src["oracle"]
            info["to_act"] = int(a == acting)
            if illegal is not None:
                info["illegal_action"] = int(a == illegal)
            infos[a] = info
        return infos

    def reset(self, seed=None, options=None):
        self.aec.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        return self._observations(), self._infos(hand_over=False)

    def step(self, actions: dict):
        if not self.agents:
            raise RuntimeError("the game is over (or has not started): call reset() before step()")
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict agent -> action, got {type(actions).__name__}")
        aec = self.aec
        agent = aec.agent_selection
        if agent not in actions:
            raise ValueError(f"{agent} is to act; got actions for {sorted(map(str, actions))}")
        a = check_action(actions[agent], NUM_ACTIONS)
        illegal = None
        if not aec._obs["action_mask"][a] and self.illegal_action != "raise":
            illegal = agent
            if self.illegal_action == "terminate":
                return self._terminate_illegal(agent)
            a = substitute_action(aec._obs["action_mask"])
        aec.step(a)  # raises IllegalActionError on an illegal action in "raise" mode
        hand_over = aec._rewards_dirty
        rewards = {x: float(aec.rewards[x]) if hand_over else 0.0 for x in AGENTS}
        if illegal is not None:
            rewards[agent] += self.illegal_reward
        over = aec._seat < 0
        terminations = dict.fromkeys(AGENTS, over)
        truncations = dict.fromkeys(AGENTS, False)
        obs = self._observations()
        infos = self._infos(hand_over, illegal)
        if over:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def _terminate_illegal(self, agent: str):
        """``illegal_action="terminate"``: the game ends here, ``agent`` gets ``illegal_reward``."""
        aec = self.aec
        rewards = dict.fromkeys(AGENTS, 0.0)
        rewards[agent] = self.illegal_reward
        obs = {}
        for a in AGENTS:
            o = aec.observe(a)
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
            mask[A_PASS] = 1
            obs[a] = {"observation": o["observation"].copy(), "action_mask": mask}
        infos = self._infos(hand_over=False, illegal=agent)
        for info in infos.values():
            info["to_act"] = 0
        self.agents = []
        return obs, rewards, dict.fromkeys(AGENTS, True), dict.fromkeys(AGENTS, False), infos
