"""One learning seat against three agents, as a Gymnasium env (``SingleSeatEnv``) and as a
Gymnasium ``VectorEnv`` over many tables (``SingleSeatVectorEnv``).

    import gymnasium as gym, fzmj_env
    env = gym.make("fzmj/SingleSeat-v0", opponents="heuristic", seat="rotate", flatten=True, obs_dtype="float32")
    envs = gym.make_vec("fzmj/SingleSeat-v0", num_envs=64, opponents="heuristic")   # one VectorEnv, 64 tables

Everything is played by :class:`fzmj_env.VectorEnv` (the engine's batch kernels): the learner's
actions go to the tables with ``VectorEnv.step``; then the opponents play, as batches, with
``VectorEnv.step_tables`` on the tables where it is not the learner's turn, until the learner
must decide again at every table.

* **Opponents**: agent specs (``agents.make_agent``: ``heuristic``, ``random``, ``random:SEED``,
  ``ppo:PATH``, ``python:module:Class``, any spec it knows) or ``Agent`` objects; one for all
  three, or three, listed by position after the learner (next seat first). Equal specs share
  one agent, so its batch is one call.
* **Seat**: ``seat=0..3`` fixed, or ``"rotate"``: game k of table t seats the learner at
  ``(t + k) % 4`` (every seat equally often, the dealer of the first hand included).
* **Episode** = one game (``hands_per_game`` hands, default 1). **Reward** = the learner's
  score change (R11.4) × ``reward_scale``, delivered at its next decision or at the end of the
  game. A game that ends before the learner's first decision (an opponent's 天胡 or 抢金, a
  win on the dealer's first discard...) is no episode at all: it is skipped (no zero-length
  episode) and counted in ``info["skipped_games"]`` (its learner score in
  ``info["skipped_score"]``). In a match (``hands_per_game`` > 1) a hand that ends before the
  learner's first decision of the game is paid with the episode's first step.
* **Masks**: ``action_masks()`` (bool, what sb3-contrib's ``MaskablePPO`` calls) and
  ``info["action_mask"]`` (int8); ``mask_in_obs=True`` makes the observation a
  ``Dict(observation, action_mask int8)`` like PettingZoo's classic envs.
* **Observation**: the planes (``docs/observation.md``) of the learner's seat, ``(99, 27)``
  ``int8`` by default; ``obs_dtype="float32"`` and ``flatten=True`` (``(2673,)``) for
  libraries whose networks want them. The observation returned with ``terminated=True`` has
  zero planes and a **pass-only mask** (``info["action_mask"]``, the ``action_mask`` key with
  ``mask_in_obs``, ``action_masks()`` between episodes): a valid mask, so libraries that ask
  the policy to act on the final observation (Gymnasium's vector envs, PufferLib) never meet an
  all-zero mask; that action is never stepped. Games never truncate, so nothing bootstraps
  from it.
* **Info** values are numbers and fixed-shape arrays only (replay buffers can store them):
  ``action_mask``, ``seat`` (the learner's seat), ``skipped_games``, ``skipped_score``; with
  ``terminated``: ``final_score`` (the learner's score in the game, unscaled); ``SingleSeatEnv``
  adds ``illegal_action`` (0/1).
* **Actions**: a Python int, a numpy integer or a 0-d integer array in 0..61; anything else
  (floats, bools, strings, out of range) raises ``ValueError``.
* **Illegal actions** (in range but not legal now), ``illegal_action=``:
  ``"terminate"`` (``SingleSeatEnv``'s default; what ``fzmj_env.env()`` does and what checkers
  that step random actions need): the episode ends with ``illegal_reward`` (default -1) and
  ``info["illegal_action"] = 1``, and the next ``reset`` deals a fresh game;
  ``"raise"`` (``SingleSeatVectorEnv``'s default): ``ValueError`` naming the action and the
  legal ones; ``"substitute"`` (for libraries without masks, e.g. plain SB3 PPO/DQN): the
  action ``fzmj_env.actions.substitute_action`` picks (pass when legal, else the lowest legal
  action: in the discard phase the lowest tile kind held) is played instead, ``illegal_reward``
  is added to that step's reward (0 for no penalty) and ``info["illegal_action"] = 1``.
* **Reset options**: none; ``reset(options=...)`` with a non-empty dict raises ``ValueError``
  (scripted hands: ``fzmj_env.env().reset(options={"wall": ...})``).

``SingleSeatVectorEnv`` uses Gymnasium's *same-step* autoreset (``metadata["autoreset_mode"]``):
a table whose game ends returns the first observation of its next game at once; the ended
game's observation and info are in ``info["final_obs"]`` / ``info["final_info"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from fzmj.agents import Agent, make_agent, reset_agent
from fzmj.agents.heuristic import HeuristicAgent, heuristic_kernel
from fzmj_env.actions import A_PASS, NUM_ACTIONS, substitute_action
from fzmj_env.checks import (
    MAX_SEED,
    MAX_TABLES,
    check_action,
    check_float,
    check_int,
    check_obs_version,
    check_seed,
    read_only,
)
from fzmj_env.encode import NUM_CHANNELS, NUM_COLUMNS, obs_channels
from fzmj_env.rules import DEFAULT_RULES
from fzmj_env.seeding import agent_key, keyed_agent_seed
from fzmj_env.vector import RESULT_POINTS, VectorEnv

__all__ = ["SingleSeatEnv", "SingleSeatVectorEnv", "ENV_ID"]

ENV_ID = "fzmj/SingleSeat-v0"
_OBS_DTYPES = {"int8": np.int8, "float32": np.float32}


def _obs_space(obs_dtype: str, flatten: bool, mask_in_obs: bool, channels: int = NUM_CHANNELS) -> spaces.Space:
    dt = _OBS_DTYPES[obs_dtype]
    shape = (channels * NUM_COLUMNS,) if flatten else (channels, NUM_COLUMNS)
    box = spaces.Box(low=0, high=1, shape=shape, dtype=dt)
    if not mask_in_obs:
        return box
    return spaces.Dict({"observation": box, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)})


class _Opponents:
    """The learner's three opponents, by position after it (1 = the next seat); equal specs share one agent."""

    def __init__(self, opponents):
        if isinstance(opponents, (str, Agent)) or callable(getattr(opponents, "act", None)):
            opponents = [opponents] * 3
        if not isinstance(opponents, (list, tuple)):
            raise ValueError(f"opponents must be an agent spec, an Agent, or a list of three, got {opponents!r}")
        opponents = list(opponents)
        if len(opponents) != 3:
            raise ValueError(f"opponents must be one agent spec or three, got {len(opponents)}")
        self.agents: list = []
        keys: list = []
        slot = []
        for o in opponents:
            key = o.strip() if isinstance(o, str) else id(o)
            if key not in keys:
                keys.append(key)
                self.agents.append(make_agent(o))  # AgentSpecError (a ValueError) for a bad spec
            slot.append(keys.index(key))
        self.slot = np.array(slot, dtype=np.int64)  # agent index of relative positions 1, 2, 3
        self.names = [getattr(a, "name", str(a)) for a in self.agents]
        # the built-in heuristic is called through its kernel: the planes and masks come straight
        # from the engine (int8, C-contiguous, 0/1, a legal action in every row), so the checks of
        # its public ``act`` (a third of a one-table step) would only re-check the engine
        self._kernel = [type(a) is HeuristicAgent for a in self.agents]
        self._one = np.empty(1, dtype=np.int64)

    def reset(self, seed: int, rules=None) -> None:
        key = agent_key(seed)  # the opponents' seeds are keyed hashes: they cannot give the walls' seed away
        for i, a in enumerate(self.agents):
            reset_agent(a, keyed_agent_seed(key, i + 1), rules)

    def _act(self, i: int, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        agent = self.agents[i]
        if self._kernel[i]:
            obs = _v2(obs)
            out = np.empty(len(obs), dtype=np.int64)
            heuristic_kernel(read_only(obs), read_only(mask), agent._st, agent._wt, out)
            return out
        return np.asarray(agent.act(obs, mask), dtype=np.int64)

    def act(self, obs: np.ndarray, mask: np.ndarray, rel: np.ndarray) -> np.ndarray:
        """Actions for rows whose acting seat sits ``rel`` (1..3) places after the learner."""
        if len(self.agents) == 1:
            return self._act(0, obs, mask)
        who = self.slot[rel - 1]
        out = np.empty(len(rel), dtype=np.int64)
        for i in range(len(self.agents)):
            rows = np.flatnonzero(who == i)
            if rows.size:
                out[rows] = self._act(i, obs[rows], mask[rows])
        return out

    def act_one(self, rel: int, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The action at a one-table env (``obs`` (1, C, 27)) whose acting seat sits ``rel`` after the learner."""
        i = int(self.slot[rel - 1])
        if self._kernel[i]:
            agent = self.agents[i]
            heuristic_kernel(read_only(_v2(obs)), read_only(mask), agent._st, agent._wt, self._one)
            return self._one
        return np.asarray(self.agents[i].act(obs, mask), dtype=np.int64).reshape(1)


def _v2(obs: np.ndarray) -> np.ndarray:
    """The v2 planes of a batch (a v3 batch's first 99, contiguous) for the heuristic's kernel;
    agents called through ``act`` slice for themselves (``as_batch``)."""
    return obs if obs.shape[1] == NUM_CHANNELS else np.ascontiguousarray(obs[:, :NUM_CHANNELS])


class _SeatDriver:
    """B tables of a :class:`VectorEnv`, each stopped at the learner's decisions."""

    def __init__(self, num_tables, opponents, seat, rules, hands_per_game, reward_scale, obs_version=2):
        if isinstance(seat, str):
            if seat != "rotate":
                raise ValueError(f"seat must be 0..3 or 'rotate', got {seat!r}")
        elif isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
            raise ValueError(f"seat must be 0..3 or 'rotate', got {seat!r}")
        self.B = check_int("num_envs", num_tables, 1, MAX_TABLES)
        self.rotate = seat == "rotate"
        self.fixed_seat = 0 if self.rotate else int(seat)
        self.opponents = _Opponents(opponents)
        self.obs_version = check_obs_version(obs_version)
        self.kwargs = dict(
            rules=rules, hands_per_game=hands_per_game, reward_scale=reward_scale, obs_version=self.obs_version
        )
        # validate now (num_tables, rules, hands_per_game) so a bad argument fails at construction
        self.venv = VectorEnv(self.B, seed=0, **self.kwargs)
        self.tables = np.arange(self.B, dtype=np.int64)
        self._rng = np.random.default_rng()
        self.opponent_decisions = 0  # counted for benchmarks

    # ---- copies and pickles: the VectorEnv copies itself (fzmj_env/vector.py) ----------------------
    def __getstate__(self) -> dict:
        d = self.__dict__.copy()
        for k in ("obs", "mask", "seat"):  # the VectorEnv's own buffers: pointed at again on load
            d.pop(k, None)
        return d

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        if "games" in d:  # after a reset: obs, mask and seat are always the VectorEnv's views
            venv = self.venv
            self.obs, self.mask, self.seat = venv._ro_obs, venv._ro_mask, venv._ro_seat

    # ---- bookkeeping per table ------------------------------------------------------------------
    def _seat_of(self, tables: np.ndarray) -> np.ndarray:
        if self.rotate:
            return (tables + self.games[tables]) % 4
        return np.full(len(tables), self.fixed_seat, dtype=np.int64)

    def _new_games(self, tables: np.ndarray) -> None:
        """The games at ``tables`` ended (the VectorEnv has dealt the next ones): seat the learner."""
        self.games[tables] += 1
        self.ls[tables] = self._seat_of(tables)
        self.acted[tables] = False

    def reset(self, seed: int | None) -> None:
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
                raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
            self._rng = np.random.default_rng(int(seed))
        base = int(self._rng.integers(0, MAX_SEED, dtype=np.uint64, endpoint=True))
        # a fresh VectorEnv per reset: game k of table t is then game_seed(base, t, k), never a repeat
        self.venv = VectorEnv(self.B, seed=base, **self.kwargs)
        self.opponents.reset(base, self.venv.rules)
        self.obs, self.mask, self.seat = self.venv.reset()
        self.games = np.zeros(self.B, dtype=np.int64)
        self.ls = self._seat_of(self.tables)
        self.acted = np.zeros(self.B, dtype=bool)
        self.pend = np.zeros(self.B, dtype=np.float64)  # learner reward since its last decision
        self.skipped = np.zeros(self.B, dtype=np.int64)
        self.skipped_score = np.zeros(self.B, dtype=np.float64)
        self.final_score = np.zeros(self.B, dtype=np.float64)
        self.score = np.zeros(self.B, dtype=np.float64)  # learner's points in the current game, unscaled
        self.terminated = np.zeros(self.B, dtype=bool)
        self.reward = np.zeros(self.B, dtype=np.float64)
        self._advance_one() if self.B == 1 else self._advance()

    def step(self, actions: np.ndarray) -> None:
        """The learner's action at every table, then the opponents until the learner decides again."""
        self.skipped[:] = 0
        self.skipped_score[:] = 0.0
        self.terminated[:] = False
        self.reward[:] = 0.0
        if self.B == 1:  # one table: the same step without VectorEnv.step's argument checks (the kernel checks)
            acts = np.asarray(actions, dtype=np.int64).reshape(1)
            self.obs, self.mask, self.seat, rew, done, info = self.venv._step_tables(self.tables, acts)
        else:
            self.obs, self.mask, self.seat, rew, done, info = self.venv.step(actions)
        self.acted[:] = True
        if self.B == 1:
            self._credit_one(rew, done, info)
            self._advance_one()
        else:
            self._credit(self.tables, rew, done, info)
            self._advance()
        # tables still in their episode hand over what accrued since the learner's last decision;
        # a table whose game ended keeps its next game's early rewards for that episode's first step
        if self.B == 1:
            if not self.terminated[0]:
                self.reward[0] = self.pend[0]
                self.pend[0] = 0.0
            return
        live = ~self.terminated
        self.reward[live] = self.pend[live]
        self.pend[live] = 0.0

    def _credit(self, tables, rew, done, info) -> None:
        """Learner rewards of the stepped ``tables``; games that ended: an episode's end, or skipped."""
        ls = self.ls[tables]
        self.pend[tables] += rew[tables, ls]
        over = info["hand_over"][tables]
        if over.any():  # the learner's points in the hands that ended (results: RESULT_POINTS slots, then points[4])
            self.score[tables[over]] += info["results"][tables[over], RESULT_POINTS + ls[over]]
        if not done[tables].any():
            return
        ended = tables[done[tables]]
        ep = ended[self.acted[ended]]
        self.terminated[ep] = True
        self.reward[ep] = self.pend[ep]
        self.final_score[ep] = self.score[ep]
        skip = ended[~self.acted[ended]]
        self.skipped[skip] += 1
        self.skipped_score[skip] += self.score[skip]
        self.pend[ended] = 0.0
        self.score[ended] = 0.0
        self._new_games(ended)

    def _credit_one(self, rew, done, info) -> None:
        """:meth:`_credit` of a one-table driver, in scalars (the same bookkeeping, ~4x cheaper)."""
        ls = self.ls[0]
        self.pend[0] += rew[0, ls]
        if info["hand_over"][0]:
            self.score[0] += info["results"][0, RESULT_POINTS + ls]
        if not done[0]:
            return
        if self.acted[0]:
            self.terminated[0] = True
            self.reward[0] = self.pend[0]
            self.final_score[0] = self.score[0]
        else:
            self.skipped[0] += 1
            self.skipped_score[0] += self.score[0]
        self.pend[0] = 0.0
        self.score[0] = 0.0
        self._new_games(self.tables)

    def _advance_one(self) -> None:
        """:meth:`_advance` of a one-table driver: one opponent decision at a time, without batching."""
        venv, opp, tables = self.venv, self.opponents, self.tables
        while True:
            rel = (self.seat[0] - self.ls[0]) % 4
            if rel == 0:
                return
            acts = opp.act_one(rel, self.obs, self.mask)
            self.opponent_decisions += 1
            self.obs, self.mask, self.seat, rew, done, info = venv._step_tables(tables, acts)
            self._credit_one(rew, done, info)

    def _advance(self) -> None:
        """Opponents play, in batches, wherever it is not the learner's turn."""
        while True:
            idx = np.flatnonzero(self.seat != self.ls)
            if idx.size == 0:
                break
            rel = (self.seat[idx] - self.ls[idx]) % 4
            acts = self.opponents.act(self.obs[idx], self.mask[idx], rel)
            self.opponent_decisions += idx.size
            self.obs, self.mask, self.seat, rew, done, info = self.venv.step_tables(idx, acts)
            self._credit(idx, rew, done, info)


def _check_options(obs_dtype, flatten, mask_in_obs) -> None:
    if not isinstance(obs_dtype, str) or obs_dtype not in _OBS_DTYPES:
        raise ValueError(f"obs_dtype must be one of {sorted(_OBS_DTYPES)}, got {obs_dtype!r}")
    for name, v in (("flatten", flatten), ("mask_in_obs", mask_in_obs)):
        if not isinstance(v, bool):
            raise ValueError(f"{name} must be True or False, got {v!r}")


class _Shaper:
    """Learner observations in the requested dtype and shape (batched)."""

    def __init__(self, obs_dtype: str, flatten: bool, mask_in_obs: bool):
        self.dt = _OBS_DTYPES[obs_dtype]
        self.flatten = flatten
        self.mask_in_obs = mask_in_obs

    def __call__(self, obs: np.ndarray, mask: np.ndarray):
        o = obs.reshape(obs.shape[0], -1) if self.flatten else obs
        o = o.astype(self.dt)  # always a copy: the VectorEnv's buffers are overwritten by its next call
        if not self.mask_in_obs:
            return o
        return {"observation": o, "action_mask": mask.copy()}


class SingleSeatEnv(gymnasium.Env):
    """One learning seat against three agents at one table (see the module docstring).

    Args:
        opponents: one agent spec / ``Agent`` for all three, or three (next seat first). Default ``"heuristic"``.
        seat: the learner's seat 0..3, or ``"rotate"`` (a different seat each game). Default 0.
        rules, hands_per_game, reward_scale: as :class:`fzmj_env.VectorEnv`.
        obs_dtype: ``"int8"`` (default) or ``"float32"``. flatten: ``(2673,)`` instead of ``(99, 27)``.
        mask_in_obs: observation ``Dict(observation, action_mask)`` instead of the planes alone.
        obs_version: 2 (default, ``(99, 27)``) or 3 (``(292, 27)``: v2's planes, then the public history;
            docs/observation.md). Opponents that read v2 see the v2 planes of their own seat.
        illegal_action: ``"terminate"`` (default: end the episode with ``illegal_reward``), ``"raise"`` or
            ``"substitute"`` (play ``substitute_action`` instead, add ``illegal_reward``; see the module docstring).
    """

    metadata = {"render_modes": [], "name": "fzmj_single_seat_v0"}

    def __init__(
        self,
        opponents: str | Agent | Sequence = "heuristic",
        seat: int | str = 0,
        rules: str = DEFAULT_RULES,
        hands_per_game: int = 1,
        reward_scale: float = 1.0,
        obs_dtype: str = "int8",
        flatten: bool = False,
        mask_in_obs: bool = False,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        obs_version: int | str = 2,
    ):
        _check_options(obs_dtype, flatten, mask_in_obs)
        if illegal_action not in _ILLEGAL_MODES:
            raise ValueError(f"illegal_action must be one of {list(_ILLEGAL_MODES)}, got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = check_float("illegal_reward", illegal_reward)
        self._driver = _SeatDriver(1, opponents, seat, rules, hands_per_game, reward_scale, obs_version)
        self.obs_version = self._driver.obs_version
        self.metadata = {**type(self).metadata, "obs_version": self.obs_version}
        self._shape = _Shaper(obs_dtype, flatten, mask_in_obs)
        self.observation_space = _obs_space(obs_dtype, flatten, mask_in_obs, obs_channels(self.obs_version))
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._state = "new"  # "new" | "running" | "ended" (the next game is already waiting)
        self._act = np.zeros(1, dtype=np.int64)

    def _out(self):
        d = self._driver
        obs = self._shape(d.obs, d.mask)
        obs = {k: v[0] for k, v in obs.items()} if isinstance(obs, dict) else obs[0]
        return obs, self._info()

    def _info(self) -> dict:
        d = self._driver
        return {
            "action_mask": d.mask[0].copy(),
            "seat": int(d.ls[0]),
            "skipped_games": int(d.skipped[0]),
            "skipped_score": float(d.skipped_score[0]),
            "illegal_action": 0,
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode: the learner's first decision of a new game.

        ``seed`` fixes every later game too; without one, a game that had ended leads straight
        to the table's next game, and an unfinished one is dropped for a freshly seeded game.
        """
        _check_reset_options(options)
        if seed is not None:
            check_seed(seed)  # before Gymnasium's own seeding, which raises its own error type
        super().reset(seed=seed)
        if seed is not None or self._state != "ended":
            self._driver.reset(seed)
        self._state = "running"
        return self._out()

    def step(self, action):
        if self._state != "running":
            raise RuntimeError("call reset() before step() (the episode has ended or not started)")
        d = self._driver
        a = check_action(action, NUM_ACTIONS)  # ValueError unless an integer in 0..61
        illegal = not d.mask[0, a] and self.illegal_action != "raise"  # "raise": VectorEnv.step raises
        if illegal:
            if self.illegal_action == "terminate":
                self._state = "new"  # the unfinished game is dropped; reset() deals a fresh one
                info = self._info()
                info.update(action_mask=_pass_only(), illegal_action=1, final_score=0.0)
                return _final_obs(self.observation_space), self.illegal_reward, True, False, info
            a = substitute_action(d.mask[0])
        seat = int(d.ls[0])
        self._act[0] = a
        d.step(self._act)
        reward = float(d.reward[0])
        if illegal:
            reward += self.illegal_reward
        if d.terminated[0]:
            self._state = "ended"
            info = self._info()
            # the ended game's seat and score (the next game, already dealt, may seat the learner elsewhere)
            info.update(action_mask=_pass_only(), seat=seat, final_score=float(d.final_score[0]))
            info["illegal_action"] = int(illegal)
            return _final_obs(self.observation_space), reward, True, False, info
        obs, info = self._out()
        info["illegal_action"] = int(illegal)
        return obs, reward, False, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now, as bools (sb3-contrib ``MaskablePPO``)."""
        if self._state != "running":
            return _pass_only() != 0  # a valid mask between episodes (nothing is stepped with it)
        return self._driver.mask[0] != 0

    @property
    def opponent_names(self) -> list[str]:
        return list(self._driver.opponents.names)


def _pass_only() -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[A_PASS] = 1
    return mask


def _final_obs(space: spaces.Space):
    """The observation returned with ``terminated=True``: zero planes, and a pass-only mask (a valid
    mask, for libraries that ask the policy to act on it; the action is never stepped)."""
    if isinstance(space, spaces.Dict):
        return {
            "observation": np.zeros(space["observation"].shape, space["observation"].dtype),
            "action_mask": _pass_only(),
        }
    return np.zeros(space.shape, dtype=space.dtype)


def _check_reset_options(options) -> None:
    if options:  # None or {} only: the single-seat envs have no reset options (no scripted walls)
        raise ValueError(f"reset takes no options here (scripted hands: fzmj_env.env().reset), got {options!r}")


_ILLEGAL_MODES = ("terminate", "raise", "substitute")


class SingleSeatVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` tables, one learning seat each, as one Gymnasium ``VectorEnv`` (same-step autoreset).

    Same arguments as :class:`SingleSeatEnv`. ``step(actions)`` takes ``(num_envs,)`` ints, legal
    for the learner at each table (``action_masks()``); an illegal one raises ``ValueError``
    (``illegal_action="raise"``, default) or is replaced (``"substitute"``, with
    ``info["illegal_action"]`` per table).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 64,
        opponents: str | Agent | Sequence = "heuristic",
        seat: int | str = 0,
        rules: str = DEFAULT_RULES,
        hands_per_game: int = 1,
        reward_scale: float = 1.0,
        obs_dtype: str = "int8",
        flatten: bool = False,
        mask_in_obs: bool = False,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        obs_version: int | str = 2,
    ):
        _check_options(obs_dtype, flatten, mask_in_obs)
        if illegal_action not in ("raise", "substitute"):
            raise ValueError(f"illegal_action must be 'raise' or 'substitute' here, got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = check_float("illegal_reward", illegal_reward)
        self._driver = _SeatDriver(num_envs, opponents, seat, rules, hands_per_game, reward_scale, obs_version)
        self.obs_version = self._driver.obs_version
        self.metadata = {**type(self).metadata, "obs_version": self.obs_version}
        self._shape = _Shaper(obs_dtype, flatten, mask_in_obs)
        self.num_envs = self._driver.B
        self.single_observation_space = _obs_space(obs_dtype, flatten, mask_in_obs, obs_channels(self.obs_version))
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._ones = np.ones(self.num_envs, dtype=bool)
        self._ready = False

    def _info(self) -> dict:
        d = self._driver
        ones = self._ones
        return {
            "action_mask": d.mask.copy(),
            "seat": d.ls.copy(),
            "skipped_games": d.skipped.copy(),
            "skipped_score": d.skipped_score.copy(),
            "_action_mask": ones,
            "_seat": ones,
            "_skipped_games": ones,
            "_skipped_score": ones,
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New games at every table; ``seed`` (one int) fixes every later game of every table."""
        _check_reset_options(options)
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed must be one integer for all tables, got {seed!r}")
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(int(seed) % (2**63))
        self._driver.reset(seed)
        self._ready = True
        d = self._driver
        return self._shape(d.obs, d.mask), self._info()

    def step(self, actions):
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        d = self._driver
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be {self.num_envs} integers, got shape {actions.shape} dtype {actions.dtype}"
            )
        if (actions < 0).any() or (actions >= NUM_ACTIONS).any():
            raise ValueError(f"actions must be integers in 0..{NUM_ACTIONS - 1}, got {actions.min()}..{actions.max()}")
        illegal = None
        if self.illegal_action == "substitute":
            illegal = d.mask[np.arange(self.num_envs), actions] == 0
            if illegal.any():
                actions = actions.copy()
                for t in np.flatnonzero(illegal):
                    actions[t] = substitute_action(d.mask[t])
        seats = d.ls.copy()
        d.step(actions)
        term = d.terminated.copy()
        info = self._info()
        if term.any():
            final_info = {
                "final_score": np.where(term, d.final_score, 0.0),
                "seat": seats,
                "_final_score": term.copy(),
                "_seat": term.copy(),
            }
            final_obs = np.full(self.num_envs, None, dtype=object)
            for t in np.flatnonzero(term):
                final_obs[t] = _final_obs(self.single_observation_space)
            info.update(final_obs=final_obs, _final_obs=term.copy(), final_info=final_info, _final_info=term.copy())
        rewards = d.reward.astype(np.float32)
        if illegal is not None:
            rewards[illegal] += self.illegal_reward
            info.update(illegal_action=illegal.astype(np.int8), _illegal_action=self._ones)
        return self._shape(d.obs, d.mask), rewards, term, np.zeros(self.num_envs, dtype=bool), info

    def action_masks(self) -> np.ndarray:
        """``(num_envs, 62)`` bools: the learner's legal actions at each table."""
        return self._driver.mask != 0

    def close_extras(self, **kwargs) -> None:
        pass
