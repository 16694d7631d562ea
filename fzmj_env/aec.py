"""PettingZoo AEC environment for Fuzhou Mahjong (``fzmj_v0``), in the shape of PettingZoo's classic envs.

| Import             | `import fzmj_env; env = fzmj_env.env()`                       |
|--------------------|---------------------------------------------------------------|
| Actions            | Discrete(62) (layout: `fzmj_env.actions`)                      |
| Parallel API       | `fzmj_env.parallel_env()`; not via `aec_to_parallel` (see below) |
| Agents             | `player_0` … `player_3` = seats 0–3                            |
| Observation        | Dict(observation=Box(0, 1, (99, 27), int8), action_mask=Box(0, 1, (62,), int8)) |
| Rewards            | each seat's score change at the end of each hand × reward_scale |

The acting agent is the engine's acting seat: the seat whose turn it is, or, in a claim window
(R8, R10), each seat that has an option, one after another, nearest to the discarder first;
none sees another's answer (the observation never shows it, R12) and seats with no option are
never asked. Everything automatic (draws, flower replacement, the final round) happens inside
``step``.

Observation: ``fzmj_env.encode`` v2 (``docs/observation.md``) from the observing seat's
perspective. ``action_mask`` is the legal actions of the acting agent, all zeros for the others
while the game runs; once the game is over every agent's mask is pass-only (a valid mask for
libraries that ask a policy to act on the final observation; the action is never stepped).
Every array and dict the env hands out (``observe``, ``last``, ``infos``) is the caller's own: the
env checks actions against its own copy of the mask, so writing into a returned array never
changes the game or what the env accepts.

Parallel API: seats do not act in a fixed cycle (claims go to whoever has an option, R8/R10),
so PettingZoo's ``aec_to_parallel`` cannot wrap this env (``is_parallelizable=False``,
``raw_env.parallel_note`` says why); ``fzmj_env.parallel_env()`` is the Parallel API over the
same engine (all four seats every step, the ones not to act get a pass-only mask).

Rewards: zero except at the end of a hand, when every seat gets its score change
(``tb.points``, R11.4) × ``reward_scale``; PettingZoo accumulates them per agent until the
agent next acts (``last()`` returns the sum).

Infos:

* ``infos[agent]["result"]``: set for every agent when a hand ends (``hand_result``: winner,
  win_type, discarder, specials, value, points, …); kept until that agent next acts.
* ``infos[agent]["oracle"]`` (``oracle=True``): ``oracle_v2`` planes of the hidden state from
  that agent's seat, refreshed every step; for centralized critics only. ``state()`` gives the
  flat engine state row.
* ``infos[agent]["record"]`` (``record=True``): the game record (``fzmj_env.record``) once the
  game is over; ``fzmj_env.record.replay`` replays it through the engine.

Options: constructor kwargs ``rules`` (preset, default ``"fuzhou-lianzhong"``),
``hands_per_game`` (default 1; more plays a match with dealer rotation and streak, R2),
``reward_scale`` (1.0), ``oracle``, ``record``, ``render_mode`` (``"ansi"``, ``"human"``),
``obs_version`` (2, the default: ``(99, 27)`` planes; 3: ``(V3_CHANNELS, 27)`` = the v2 planes, then
the public history, docs/observation.md; ``metadata["obs_version"]`` names it).

Library options (defaults keep the PettingZoo-classic shape above): ``obs_dtype`` (``"int8"``,
or ``"float32"`` for torch layers that refuse int8; ``action_mask`` stays int8, the dtype
PettingZoo's ``Discrete.sample(mask)`` requires),
``flatten`` (``observation`` of shape ``(2673,)``: libraries that refuse 2-D boxes), and
``info``: ``"full"`` (default, ``result`` dicts as above), ``"numeric"`` (every agent's info
always holds the same keys with numbers and fixed-shape arrays only, for replay buffers:
``hand_over`` 0/1, ``winner``, ``win_type`` (index in ``core.state.WIN_TYPE_NAMES``),
``discarder`` (-1 = none), ``value``, ``specials`` (bit i = ``SPECIAL_NAMES[i]``), ``hand_no``,
``points`` (int64, 4), set when a hand ends and back to ``hand_over=0`` / -1 / 0 when the
agent next acts), or ``"none"`` (no result in infos). ``record=True`` needs ``info="full"``.
``reset(seed, options={"wall": ..., "dealer": 0..3, "streak": n})`` plays a scripted first
hand (R3): 144 kinds or notation, e.g. from ``fzmj_env.scenario.make_wall``.

Copies (docs/search.md): ``copy.deepcopy`` and pickles of ``env()`` or ``raw_env`` are exact,
independent copies that play on as the original would; ``raw_env.save_state()`` /
``restore_state(saved)`` save and restore the table and the per-agent dicts cheaply
(``fzmj_env.StateError`` for a state that is not one of this env's).

``raw_env`` raises ``fzmj_env.IllegalActionError`` on an illegal action; ``env()`` adds the
standard wrappers (an illegal action ends the game with reward -1 for that agent, an action
outside the space asserts, call order is enforced).
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import encode
from .actions import NUM_ACTIONS, action_name
from .checks import MAX_SEED, check_obs_version, check_reward_scale
from .core import state
from .core.engine import STEP_GAME_OVER, STEP_HAND_OVER
from .core.hand import get_win_table
from .core.state import A_PASS
from .game import Game, IllegalActionError, hand_result
from .rules import DEFAULT_RULES
from .snapshot import StateError, tag_pickle, untag_pickle
from .tiles import kind_glyph, kind_name

AGENTS = ["player_0", "player_1", "player_2", "player_3"]
_RESET_OPTIONS = {"wall", "dealer", "streak"}

# library options (see the module docstring and raw_env._set_library_options)
_OBS_DTYPES = {"int8": np.int8, "float32": np.float32}
_INFO_MODES = ("full", "numeric", "none")
_NO_RESULT = {"hand_over": 0, "winner": -1, "win_type": -1, "discarder": -1, "value": 0, "specials": 0, "hand_no": -1}


def _copy_result(result: dict) -> dict:
    """A copy of ``hand_result``'s dict (its values are numbers, strings, None, and flat lists or
    dicts of those: copying each container is a deep copy, at a tenth of ``copy.deepcopy``'s cost)."""
    return {k: v.copy() if isinstance(v, (list, dict)) else v for k, v in result.items()}


def _numeric_result(result: dict) -> dict:
    """``hand_result``'s dict as numbers only (fixed keys and types; None -> -1, names -> indices/bits)."""
    return {
        "hand_over": 1,
        "winner": -1 if result["winner"] is None else int(result["winner"]),
        "win_type": -1 if result["win_type"] is None else state.WIN_TYPE_NAMES.index(result["win_type"]),
        "discarder": -1 if result["discarder"] is None else int(result["discarder"]),
        "value": int(result["value"]),
        "specials": sum(1 << state.SPECIAL_NAMES.index(n) for n in result["specials"]),
        "hand_no": int(result["hand_no"]),
        "points": np.asarray(result["points"], dtype=np.int64),
    }


def _copy_rng(rng: np.random.Generator | None) -> np.random.Generator | None:
    """An independent generator in ``rng``'s state (a third of ``copy.deepcopy``'s cost)."""
    if rng is None:
        return None
    bits = type(rng.bit_generator)(0)  # seeded: no call to the system's entropy
    bits.state = rng.bit_generator.state
    return np.random.Generator(bits)


def _copy_space(space: spaces.Space, memo: dict) -> spaces.Space:
    """An independent copy of a space: its attributes shared (shapes, bounds: never written), its
    random stream and those of its subspaces copied (a tenth of ``copy.deepcopy``'s cost)."""
    new = memo.get(id(space))
    if new is None:
        new = object.__new__(type(space))
        new.__dict__.update(space.__dict__)
        if space._np_random is not None:
            new._np_random = copy.deepcopy(space._np_random, memo)
        if isinstance(space, spaces.Dict):
            new.spaces = {k: _copy_space(v, memo) for k, v in space.spaces.items()}
        memo[id(space)] = new
    return new


def env(**kwargs):
    """The AEC env with PettingZoo's standard wrappers (illegal action = -1 and game over).

    The wrappers are PettingZoo's own classes (``TerminateIllegalWrapper``,
    ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``), subclassed only to forward the
    per-step attributes (``agent_selection``, ``terminations``, …) to the raw env directly
    instead of through three ``__getattr__`` fallbacks (~40 per step): same behaviour, ~3×
    faster.
    """
    e = raw_env(**kwargs)
    e = _TerminateIllegal(e, illegal_reward=-1)
    e = _AssertOutOfBounds(e)
    e = _OrderEnforcing(e)
    return e


class FastDiscrete(spaces.Discrete):
    """``Discrete`` with the same ``contains`` answer, without building ``np.iinfo`` per call.

    ``AssertOutOfBoundsWrapper`` calls ``contains`` on every step; gymnasium's costs ~8 µs.
    """

    def __init__(self, n, seed=None, start=0, dtype=np.int64):
        super().__init__(n, seed=seed, start=start, dtype=dtype)
        self._lo, self._hi = int(self.start), int(self.start) + int(self.n)

    def contains(self, x) -> bool:
        if isinstance(x, int):
            return _I64_MIN <= x <= _I64_MAX and self._lo <= x < self._hi
        if isinstance(x, (np.generic, np.ndarray)) and x.dtype.kind in "iu" and x.shape == ():
            return self._lo <= int(x) < self._hi and np.can_cast(x.dtype, self.dtype)
        return False


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_ATOMS = (bool, int, float, str)


class _Forward:
    """Per-step attributes read straight from the raw env (``self._raw``), not via ``__getattr__``."""

    _raw: raw_env

    def __deepcopy__(self, memo: dict):
        """A copy of the wrapper around a copy of the env (``raw_env.__deepcopy__``): the generic
        deep copy of its few attributes, without ``copy``'s reduce protocol (3x cheaper)."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(
            {k: v if v is None or isinstance(v, _ATOMS) else copy.deepcopy(v, memo) for k, v in self.__dict__.items()}
        )
        return new

    @property
    def agent_selection(self):
        return self._raw.agent_selection

    @property
    def agents(self):
        return self._raw.agents

    @property
    def possible_agents(self):
        return self._raw.possible_agents

    @property
    def terminations(self):
        return self._raw.terminations

    @property
    def truncations(self):
        return self._raw.truncations

    @property
    def rewards(self):
        return self._raw.rewards

    @property
    def infos(self):
        return self._raw.infos

    @property
    def _cumulative_rewards(self):
        return self._raw._cumulative_rewards

    def action_space(self, agent):
        return self._raw.action_spaces[agent]

    def observation_space(self, agent):
        return self._raw.observation_spaces[agent]


class _GuardedForward(_Forward):
    """As ``_Forward``; before ``reset`` the attributes ``OrderEnforcingWrapper`` guards raise as it does."""

    @property
    def agent_selection(self):
        if self._has_reset:
            return self._raw.agent_selection
        raise AttributeError("agent_selection cannot be accessed before reset")

    @property
    def agents(self):
        if self._has_reset:
            return self._raw.agents
        raise AttributeError("agents cannot be accessed before reset")

    @property
    def terminations(self):
        if self._has_reset:
            return self._raw.terminations
        raise AttributeError("terminations cannot be accessed before reset")

    @property
    def truncations(self):
        if self._has_reset:
            return self._raw.truncations
        raise AttributeError("truncations cannot be accessed before reset")

    @property
    def rewards(self):
        if self._has_reset:
            return self._raw.rewards
        raise AttributeError("rewards cannot be accessed before reset")

    @property
    def infos(self):
        if self._has_reset:
            return self._raw.infos
        raise AttributeError("infos cannot be accessed before reset")


class _TerminateIllegal(_Forward, wrappers.TerminateIllegalWrapper):
    def __init__(self, env, illegal_reward):
        super().__init__(env, illegal_reward)
        self._raw = env.unwrapped

    def observe(self, agent):
        # PettingZoo's wrapper checks the next action against the dict it handed out, which the
        # caller may have written into (a legal action would be punished as illegal): it checks
        # against the env's own mask instead; the caller still gets its copy.
        obs = self.env.observe(agent)
        if agent == self.agent_selection:
            own = self._raw._obs
            self._prev_obs = own if own is not None and agent == self._raw._obs_agent else obs
            self._prev_info = self.infos.get(agent, {})
        return obs


class _AssertOutOfBounds(_Forward, wrappers.AssertOutOfBoundsWrapper):
    def __init__(self, env):
        super().__init__(env)
        self._raw = env.unwrapped


class _OrderEnforcing(_GuardedForward, wrappers.OrderEnforcingWrapper):
    def __init__(self, env):
        super().__init__(env)
        self._raw = env.unwrapped


class raw_env(AECEnv, EzPickle):
    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "fzmj_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }
    parallel_note = (
        "aec_to_parallel cannot wrap fzmj_v0: seats do not act in a fixed cycle (claims go to whoever "
        "has an option); use fzmj_env.parallel_env()"
    )

    def __init__(
        self,
        rules: str = DEFAULT_RULES,
        hands_per_game: int = 1,
        reward_scale: float = 1.0,
        oracle: bool = False,
        record: bool = False,
        render_mode: str | None = None,
        obs_dtype: str = "int8",
        flatten: bool = False,
        info: str = "full",
        obs_version: int | str = 2,
    ):
        EzPickle.__init__(
            self,
            rules,
            hands_per_game,
            reward_scale,
            oracle,
            record,
            render_mode,
            obs_dtype,
            flatten,
            info,
            obs_version,
        )
        super().__init__()
        self.obs_version = check_obs_version(obs_version)  # "v2" / "v3" (docs/observation.md)
        self._obs_channels = encode.obs_channels(self.obs_version)
        self.metadata = {**type(self).metadata, "obs_version": self.obs_version}
        self._set_library_options(obs_dtype, flatten, info, record)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.game = Game(rules, hands_per_game=hands_per_game)  # validates rules and hands_per_game
        self.reward_scale = check_reward_scale(reward_scale)
        self.oracle = bool(oracle)
        self.record = bool(record)
        self.render_mode = render_mode

        self.possible_agents = AGENTS[:]
        self.agents = []
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: FastDiscrete(NUM_ACTIONS) for a in self.possible_agents}
        self.observation_spaces = {a: self._observation_space() for a in self.possible_agents}
        self._buf = self.game.buf
        self._wt = self.game.win_table
        self._rng: np.random.Generator | None = None
        self._obs = None  # cached observation dict of the acting agent, ``self._obs_agent``
        # The engine writes the acting seat's planes and mask into these two buffers, reused every
        # step; they never leave the env (observe hands out copies), so nothing outside can change
        # what the env checks actions against.
        self._own = {
            "observation": np.empty((self._obs_channels, encode.NUM_COLUMNS), dtype=np.int8),
            "action_mask": np.empty(NUM_ACTIONS, dtype=np.int8),
        }
        self._obs_agent = None
        self._seat = -1
        self._rewards_dirty = False

    # ---- observations ----------------------------------------------------------------------
    def observe(self, agent):
        if self._plain_obs:
            return self._observe_owned(agent)
        return self._present(self._observe_v1(agent))

    def _observe_owned(self, agent):
        """The int8 observation dict with arrays the caller owns: the acting agent's cached
        arrays are the ones the env checks the next action against, so they go out as copies
        (writing into a returned array never reaches the game)."""
        d = self._observe_v1(agent)
        if d is self._obs:
            return {"observation": d["observation"].copy(), "action_mask": d["action_mask"].copy()}
        return d

    def _observe_v1(self, agent):
        if agent == self._obs_agent:
            return self._obs
        seat = self.agent_name_mapping[agent]
        obs = np.empty((self._obs_channels, encode.NUM_COLUMNS), dtype=np.int8)
        encode.encode_table(self._buf, 0, seat, obs)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self._seat < 0:  # the game is over: a valid (pass-only) mask, for libraries that act on it
            mask[A_PASS] = 1
        return {"observation": obs, "action_mask": mask}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def state(self) -> np.ndarray:
        """The full engine state of the table as a flat ``int32`` array (a copy; hidden information included).

        The fields of ``core.state.STATE_DTYPE`` in order; ``core.state.numpy_view`` names them.
        """
        return state.flat_state(self._buf, 0)

    # ---- copies, saved states, pickles (docs/search.md) ---------------------------------------
    def save_state(self) -> tuple:
        """Everything the env's next steps depend on: the table (``Game.save_state``) and the
        per-agent rewards, terminations and infos PettingZoo keeps, copied. ``restore_state``
        takes it back (the env's random stream for unseeded resets is not part of it)."""
        if self._seat < 0 and not self.agents:
            raise StateError("raw_env.save_state: call reset() first")
        return (
            self.game.save_state(),
            list(self.agents),
            dict(self.rewards),
            dict(self._cumulative_rewards),
            dict(self.terminations),
            dict(self.truncations),
            copy.deepcopy(self.infos),
            self._rewards_dirty,
        )

    def restore_state(self, saved: tuple) -> None:
        """Bring the env back to ``saved`` (from ``save_state`` of an env with the same options);
        ``StateError`` (a ``ValueError``) for anything else, the env unchanged."""
        if not isinstance(saved, tuple) or len(saved) != 8:
            raise StateError(
                f"raw_env.restore_state: expected a state from raw_env.save_state, got {type(saved).__name__}"
            )
        table, agents, rewards, cumulative, terminations, truncations, infos, dirty = saved
        game = self.game
        game.restore_state(table)  # checks the table; the acting seat's mask lands in self._own
        self.agents = list(agents)
        self.rewards, self._cumulative_rewards = dict(rewards), dict(cumulative)
        self.terminations, self.truncations = dict(terminations), dict(truncations)
        self.infos = copy.deepcopy(infos)
        self._rewards_dirty = bool(dirty)
        self._after_restore()

    def _after_restore(self) -> None:
        """The acting seat's planes and the agent to act, from the restored table."""
        seat = self._seat = self.game.seat
        own = self._own
        if own["action_mask"] is not self.game._mask:  # a Game that was restored on its own
            own["action_mask"][:] = self.game._mask
            self.game.adopt_decision(seat, own["action_mask"])
        if seat >= 0:
            encode.encode_table(self._buf, 0, seat, own["observation"])
        self._select(seat)

    def _select(self, seat: int) -> None:
        """``seat`` acts next (-1: the hand is over): the agent to act, its cached planes, the oracle's."""
        if seat >= 0:
            self.agent_selection = self._obs_agent = AGENTS[seat]
            self._obs = self._own
        else:
            self._obs = self._obs_agent = None
        if self.oracle:
            self._update_oracle()

    def __deepcopy__(self, memo: dict) -> raw_env:
        """An independent env that plays on exactly as this one would: the table, the
        agents' dicts, the random stream and the spaces' streams are copied; options are shared."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        d = self.__dict__.copy()
        own = {k: v.copy() for k, v in self._own.items()}
        memo[id(self._own)] = own
        for k, v in self._own.items():
            memo[id(v)] = own[k]
        d["_own"] = own
        d["game"] = game = self.game.__deepcopy__(memo)
        d["_buf"] = game.buf
        for k in ("_obs", "infos", "_skip_agent_selection"):
            if k in d:
                d[k] = copy.deepcopy(d[k], memo)
        d["_rng"] = _copy_rng(self._rng)
        for k in ("action_spaces", "observation_spaces"):
            d[k] = memo[id(d[k])] = {a: _copy_space(sp, memo) for a, sp in d[k].items()}
        for k in ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations"):
            if k in d:
                d[k] = copy.copy(d[k])  # of strings, numbers and booleans
        new.__dict__.update(d)
        return new

    def __getstate__(self) -> dict:
        d = self.__dict__.copy()
        del d["_wt"], d["_buf"]  # the shared 4 MB win table, and game.buf: set again on load
        return tag_pickle(d)

    def __setstate__(self, d: dict) -> None:
        d = untag_pickle(d, "fzmj_env raw_env")  # then the Game checks its own table as it loads
        d["_wt"] = get_win_table()
        d["_buf"] = d["game"].buf
        self.__dict__.update(d)

    # ---- stepping ----------------------------------------------------------------------------
    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is int or isinstance(action, np.integer):
            a = int(action)
        elif isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            a = int(action)  # a 0-d array, as np.array(a) gives: the same action
        else:
            self._raise_illegal(action)
        if not (0 <= a < NUM_ACTIONS and self._obs["action_mask"][a]):
            self._raise_illegal(a)
        seat = self._seat

        self._cumulative_rewards[agent] = 0
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        info = self.infos[agent]
        if info:
            info.pop("result", None)
        if self._info_mode == "numeric":
            info.update(_NO_RESULT, points=np.zeros(4, dtype=np.int64))

        own = self._own
        new_mask, new_obs = own["action_mask"], own["observation"]
        r = encode.step_observe(self._buf, 0, self._wt, a, new_mask, new_obs)
        code = (r >> 3) - 1
        if code < 0:  # the mask allowed it: an engine bug, never a user error
            raise RuntimeError(f"engine refused action {a} that its mask allowed (seat {seat})")
        nxt = (r & 7) - 1
        self._seat = nxt
        game = self.game
        game.adopt_decision(nxt, new_mask)
        if self.record:
            game.decisions.append((seat, a))
        if code >= STEP_HAND_OVER:
            self._hand_over(code)
        self._select(nxt)
        if self.render_mode == "human":
            self.render()

    def _raise_illegal(self, action):
        a = action
        seat = self._seat
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise IllegalActionError(f"player_{seat}: action must be an integer in 0..{NUM_ACTIONS - 1}, got {a!r}")
        what = (
            f"action {a} ({action_name(a)})" if 0 <= a < NUM_ACTIONS else f"action {a} (outside 0..{NUM_ACTIONS - 1})"
        )
        legal = ", ".join(f"{x} ({action_name(x)})" for x in np.flatnonzero(self._obs["action_mask"]))
        raise IllegalActionError(f"player_{seat} cannot take {what} in phase '{self.game.phase}'; legal: {legal}")

    def _hand_over(self, code: int) -> None:
        result = hand_result(self._buf, 0)
        game = self.game
        if self.record:
            game.results.append(result)
            if code == STEP_HAND_OVER:
                game.record_hand_start()
        scale = self.reward_scale
        points = result["points"]
        for i, a in enumerate(AGENTS):
            rew = points[i] * scale
            self.rewards[a] = rew
            self._cumulative_rewards[a] += rew
            if self._info_mode == "full":  # each agent its own copy: game.results feeds the record
                self.infos[a]["result"] = _copy_result(result)
            elif self._info_mode == "numeric":
                self.infos[a].update(_numeric_result(result))
        self._rewards_dirty = True
        if code == STEP_GAME_OVER:
            self.terminations = dict.fromkeys(self.agents, True)
            if self.record:
                from .record import make_record

                rec = make_record(game)
                for a in self.agents:  # each agent its own copy: the record shares game.results' dicts
                    self.infos[a]["record"] = copy.deepcopy(rec)

    def _update_oracle(self) -> None:
        out = np.empty((4, encode.ORACLE_CHANNELS, encode.NUM_COLUMNS), dtype=np.int8)
        encode.oracle_all(self._buf, 0, out)
        for i, a in enumerate(AGENTS):
            if a in self.infos:
                self.infos[a]["oracle"] = out[i]

    # ---- reset ---------------------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        options = dict(options or {})
        unknown = set(options) - _RESET_OPTIONS
        if unknown:  # PettingZoo's api_test passes arbitrary options: warn, do not fail
            warnings.warn(
                f"ignoring unknown reset option(s) {sorted(unknown)}; known: {sorted(_RESET_OPTIONS)}", stacklevel=2
            )
        if seed is not None:
            if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= int(seed) <= MAX_SEED:
                raise ValueError(f"seed must be an integer in 0..2**64-1, got {seed!r}")
            self._rng = np.random.default_rng(int(seed))
            game_seed = int(seed)
        else:
            if self._rng is None:
                self._rng = np.random.default_rng()
            game_seed = int(self._rng.integers(0, MAX_SEED, dtype=np.uint64, endpoint=True))
        game = self.game
        game.reset(
            seed=game_seed, wall=options.get("wall"), dealer=options.get("dealer"), streak=options.get("streak", 0)
        )

        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        if self._info_mode == "numeric":
            for a in self.agents:
                self.infos[a].update(_NO_RESULT, points=np.zeros(4, dtype=np.int64))
        self._rewards_dirty = False
        self._skip_agent_selection = None

        own = self._own
        seat = (encode.step_observe(self._buf, 0, self._wt, -1, own["action_mask"], own["observation"]) & 7) - 1
        self._seat = seat
        game.adopt_decision(seat, own["action_mask"])
        self._select(seat)
        if self.render_mode == "human":
            self.render()

    # ---- library options (obs_dtype, flatten, info) ----------------------------------------
    def _set_library_options(self, obs_dtype: str, flatten: bool, info: str, record: bool) -> None:
        if not isinstance(obs_dtype, str) or obs_dtype not in _OBS_DTYPES:
            raise ValueError(f"obs_dtype must be one of {sorted(_OBS_DTYPES)}, got {obs_dtype!r}")
        if not isinstance(flatten, bool):
            raise ValueError(f"flatten must be True or False, got {flatten!r}")
        if info not in _INFO_MODES:
            raise ValueError(f"info must be one of {list(_INFO_MODES)}, got {info!r}")
        if record and info != "full":
            raise ValueError(f"record=True puts a dict in infos: it needs info='full', got info={info!r}")
        self._obs_dtype = _OBS_DTYPES[obs_dtype]
        self._flatten = flatten
        self._info_mode = info
        self._plain_obs = obs_dtype == "int8" and not flatten  # the cached int8 dicts go out as they are

    def _observation_space(self) -> spaces.Dict:
        shape = (
            (self._obs_channels * encode.NUM_COLUMNS,) if self._flatten else (self._obs_channels, encode.NUM_COLUMNS)
        )
        return spaces.Dict(
            {
                "observation": spaces.Box(low=0, high=1, shape=shape, dtype=self._obs_dtype),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }
        )

    def _present(self, d: dict) -> dict:
        """The v1 int8 observation dict in the requested dtype / shape (a new dict, new arrays)."""
        obs = d["observation"].reshape(-1) if self._flatten else d["observation"]
        return {"observation": obs.astype(self._obs_dtype), "action_mask": d["action_mask"].copy()}

    # ---- rendering -------------------------------------------------------------------------------
    def render(self):
        if self.render_mode is None:
            logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _render_text(self, seat: int | None = None) -> str:
        """A text view for ``seat`` (default: the acting seat, or seat 0 once the game is over).

        Only what that seat may see (R12): other seats' concealed tiles and concealed kong kinds
        are hidden.
        """
        g = self.game
        v = g.view
        m = v.m
        if seat is None:
            seat = self._seat if self._seat >= 0 else 0
        gold = int(m[state.GOLD])
        ph = int(m[state.PHASE])
        over = ph == state.PH_OVER

        def tiles(kinds):
            return "".join(kind_glyph(int(k)) for k in kinds)

        lines = [
            f"fzmj_v0 · hand {int(m[state.HAND_NO]) + 1}/{int(m[state.HANDS_PER_GAME])} · dealer player_{int(m[state.DEALER])} · "
            f"streak {int(m[state.STREAK])} · gold {kind_glyph(gold)} ({kind_name(gold)})",
            f"wall: {g.tiles_left} left · reserve {g.reserve} · drawable {g.drawable} · scores {g.scores}",
        ]
        for s in range(4):
            tags = []
            if s == int(m[state.DEALER]):
                tags.append("dealer")
            if v.gold_thrown[s]:
                tags.append("discarded a gold")
            if not over and s == int(m[state.CUR]):
                tags.append("current")
            head = f"player_{s}" + (f" ({', '.join(tags)})" if tags else "")
            fl = [27 + i for i in range(15) for _ in range(int(v.flowers[s, i]))]
            melds = []
            for j in range(int(v.n_melds[s])):
                t, k, taken, src = (int(x) for x in v.meld[s, j])
                if t == state.MELD_CONCEALED_KONG:
                    melds.append(f"[{tiles([k] * 4)} concealed]" if s == seat else "[🀫🀫🀫🀫 concealed]")
                elif t == state.MELD_CHI:
                    melds.append(f"[{tiles([k, k + 1, k + 2])} chi {kind_glyph(taken)}←p{src}]")
                else:
                    n = 3 if t == state.MELD_PENG else 4
                    melds.append(f"[{tiles([k] * n)} {state.MELD_NAMES[t]} ←p{src}]")
            nd = int(v.n_disc[s])
            disc = "".join(kind_glyph(int(v.disc[s, i])) + ("*" if v.disc_claimed[s, i] else "") for i in range(nd))
            lines.append(head)
            lines.append(f"  flowers ({len(fl)}): {tiles(fl) or '-'}")
            lines.append(f"  melds: {' '.join(melds) or '-'}")
            lines.append(f"  discards ({nd}): {disc or '-'}   (* = claimed)")
        hand = v.hand[seat]
        kinds = [k for k in range(27) for _ in range(int(hand[k]))]
        lines.append(
            f"hand of player_{seat}: {tiles(kinds)}  ({g.hand_str(seat)}; {int(hand[gold])} gold)"
            if kinds
            else f"hand of player_{seat}: -"
        )
        if over:
            res = hand_result(self._buf, 0)
            lines.append(f"game over · last hand: {res}")
        else:
            status = f"phase: {g.phase} · to act: player_{self._seat}"
            if ph == state.PH_CLAIM:
                t = int(m[state.CLAIM_TILE])
                status += f" · tile under claim {kind_glyph(t)} ({kind_name(t)}) from player_{int(m[state.CLAIM_FROM])}"
            lines.append(status)
        return "\n".join(lines)

    def close(self):
        pass
