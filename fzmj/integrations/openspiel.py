"""Fuzhou mahjong as an OpenSpiel game: ``import fzmj.integrations.openspiel`` registers
``fuzhou_mahjong`` with pyspiel (``pip install -e ".[openspiel]"``; docs/search.md).

    import pyspiel
    import fzmj.integrations.openspiel  # registers the game
    game = pyspiel.load_game("fuzhou_mahjong", {"rules": "fuzhou-home", "hands_per_game": 1})

* Four players (seats 0-3), one decision at a time: the seat the engine asks (the seat whose turn
  it is, or in a claim window each seat with an option, nearest to the discarder first, R8/R10).
  Actions are the env's 62 (``fzmj_env.actions``); the legal ones are the engine's mask.
* Chance: one explicit chance node before the deal, whose outcome picks the game's seed among
  ``walls`` equally likely ones (default 2**16): the engine shuffles the whole wall from the game
  seed at the deal (R3), so the wall is a single chance event, and each later hand's wall follows
  from the same seed. Explicit outcomes (not sampled-stochastic) keep every state a plain action
  history: OpenSpiel's serialization replays it, and ``clone`` is exact.
* Tensors: the observation tensor is our v2 planes (99 x 27) of the player, the information-state
  tensor our v3 planes (292 x 27: v2, then the public history of the hand, docs/observation.md);
  the strings are the same planes, packed, and the information-state string adds the player's
  own actions (a pass in a claim window is seen by nobody else, R12), so it is perfect recall.
* Returns: each seat's points over the game's hands (the engine's scores, R11.4); zero-sum.
* ``clone`` and OpenSpiel's serialization copy the state's Python attributes (pyspiel deep-copies
  or pickles them), the engine's table among them (``Game.__deepcopy__``, ``Game.__getstate__``);
  ``resample_from_infostate`` is ``Game.resample`` (a world drawn uniformly among those the
  acting seat cannot tell apart).
"""

from __future__ import annotations

import functools
import time

import numpy as np

try:
    import pyspiel
except ModuleNotFoundError as exc:  # one line that says what to install, not pyspiel's name alone
    raise ModuleNotFoundError(
        'fzmj.integrations.openspiel needs OpenSpiel: pip install "fzmj[openspiel]" (wheels for Python 3.11 to 3.13)',
        name=exc.name,
    ) from exc

from fzmj_env import Game, available_rules
from fzmj_env.actions import NUM_ACTIONS, action_name
from fzmj_env.checks import check_hands_per_game
from fzmj_env.encode import NUM_CHANNELS, NUM_COLUMNS, V3_CHANNELS, encode_table
from fzmj_env.rules import DEFAULT_RULES, load_rules

GAME_NAME = "fuzhou_mahjong"
DEFAULT_WALLS = 2**16
_MAX_POINTS = 100_000  # per hand: far above any hand's points under the shipped presets
_DEFAULTS = {"rules": DEFAULT_RULES, "hands_per_game": 1, "walls": DEFAULT_WALLS}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Fuzhou mahjong (fzmj)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=4,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


def _seed_of_outcome(outcome: int) -> int:
    """The game seed of chance outcome ``outcome`` (a splitmix64 hash: walls far apart)."""
    z = (outcome + 1) * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


class FuzhouMahjongGame(pyspiel.Game):
    """The game; parameters ``rules`` (a preset name), ``hands_per_game`` and ``walls``."""

    def __init__(self, params=None):
        params = {**_DEFAULTS, **(params or {})}
        rules = params["rules"]
        if rules not in available_rules():
            raise ValueError(f"fuzhou_mahjong: rules must be one of {available_rules()}, got {rules!r}")
        self.rules = load_rules(rules)  # parsed once: every new state (and clone) starts from it
        self.hands_per_game = check_hands_per_game(params["hands_per_game"])
        walls = params["walls"]
        if isinstance(walls, bool) or not isinstance(walls, int) or not 1 <= walls <= 2**24:
            raise ValueError(f"fuzhou_mahjong: walls must be an integer in 1..2**24, got {walls!r}")
        self.walls = walls
        bound = float(_MAX_POINTS * self.hands_per_game)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=walls,
            num_players=4,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=400 * self.hands_per_game,  # a hand takes ~100-250 decisions
        )
        super().__init__(_GAME_TYPE, info, {"rules": rules, "hands_per_game": self.hands_per_game, "walls": walls})

    def new_initial_state(self):
        return FuzhouMahjongState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"fuzhou_mahjong: observer parameters are not supported, got {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        if iig_obs_type is not None and iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError("fuzhou_mahjong: only observations of one player's own view are provided")
        return _Observer(V3_CHANNELS if perfect_recall else NUM_CHANNELS, perfect_recall)


class FuzhouMahjongState(pyspiel.State):
    """A state: before the deal (chance), a decision of the seat to act, or the game's end."""

    def __init__(self, game: FuzhouMahjongGame):
        super().__init__(game)
        self._game = Game(game.rules, hands_per_game=game.hands_per_game)
        self._dealt = False
        self._own_actions: list[list[int]] = [[], [], [], []]  # each seat's own decisions (its infostate)

    # ---- the OpenSpiel API -------------------------------------------------------------------
    def current_player(self):
        if not self._dealt:
            return pyspiel.PlayerId.CHANCE
        if self._game.done:
            return pyspiel.PlayerId.TERMINAL
        return self._game.seat

    def _legal_actions(self, player):
        return self._game.legal_actions if player == self._game.seat else []

    def chance_outcomes(self):
        walls = self.get_game().walls
        p = 1.0 / walls
        return [(o, p) for o in range(walls)]

    def _apply_action(self, action):
        if not self._dealt:
            if not 0 <= action < self.get_game().walls:
                raise ValueError(f"fuzhou_mahjong: chance outcome {action} is outside 0..{self.get_game().walls - 1}")
            self._game.reset(seed=_seed_of_outcome(int(action)))
            self._dealt = True
            return
        seat = self._game.seat
        self._game.step(int(action))  # IllegalActionError (a ValueError) names the legal actions
        self._own_actions[seat].append(int(action))

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"Wall:{action}"
        return action_name(int(action))

    def is_terminal(self):
        return self._dealt and self._game.done

    def returns(self):
        if not self._dealt:
            return [0.0] * 4
        return [float(x) for x in self._game.scores]

    def rewards(self):
        return self.returns() if self.is_terminal() else [0.0] * 4

    def resample_from_infostate(self, player_id, probability_sampler):
        """A world drawn uniformly among those ``player_id`` (the seat to act) cannot tell from
        this one (``Game.resample``); its history is this state's (OpenSpiel's bookkeeping), its
        other seats' lists of their own actions are empty (only they know their passes)."""
        if player_id != self._game.seat:
            raise ValueError(
                f"fuzhou_mahjong: worlds are drawn for the seat to act ({self._game.seat}), got {player_id}"
            )
        seed = int(probability_sampler() * 2**53)
        new = self.clone()
        new._game = self._game.resample(int(player_id), seed)
        # the other seats' own actions (their passes in claim windows) are theirs: not in the world
        new._own_actions = [list(a) if p == player_id else [] for p, a in enumerate(self._own_actions)]
        return new

    def __str__(self):
        if not self._dealt:
            return "before the deal"
        g = self._game
        return " | ".join(f"seat {s}: {g.hand_str(s)}" for s in range(4)) + f" | phase {g.phase} seat {g.seat}"

    # ---- helpers ------------------------------------------------------------------------------
    def planes(self, player: int, channels: int) -> np.ndarray:
        out = np.zeros((channels, NUM_COLUMNS), dtype=np.int8)
        if self._dealt and not self._game.done:
            encode_table(self._game.buf, 0, int(player), out)
        return out


class _Observer:
    """OpenSpiel's observer interface: ``tensor`` and ``dict`` set from a state and a player."""

    def __init__(self, channels: int, perfect_recall: bool):
        self.channels = channels
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(channels * NUM_COLUMNS, np.float32)
        self.dict = {"planes": self.tensor.reshape(channels, NUM_COLUMNS)}

    def set_from(self, state: FuzhouMahjongState, player: int) -> None:
        self.dict["planes"][:] = state.planes(player, self.channels)

    def string_from(self, state: FuzhouMahjongState, player: int) -> str:
        text = f"p{player} " + np.packbits(state.planes(player, self.channels) != 0).tobytes().hex()
        if self.perfect_recall:
            text += " own " + ",".join(map(str, state._own_actions[player]))
        return text


pyspiel.register_game(_GAME_TYPE, FuzhouMahjongGame)


def random_play_states_per_s(seconds: float = 2.0, seed: int = 0) -> float:
    """States per second of random play through OpenSpiel's API (``apply_action`` of a uniformly
    random legal action, chance included), for benchmarks/bench_state.py."""
    game = pyspiel.load_game(GAME_NAME)
    rng = np.random.default_rng(seed)
    states, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(int(rng.integers(game.max_chance_outcomes())))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
            states += 1
    return states / (time.perf_counter() - t0)


# ---- an OpenSpiel search bot as an fzmj agent (fzmj-eval --agents python:...) -------------------
@functools.lru_cache(maxsize=8)
def _game_of(rules: str) -> FuzhouMahjongGame:
    """The game of a preset, made once (making one reads the rules file)."""
    return pyspiel.load_game(GAME_NAME, {"rules": rules})


def state_at(buf: np.ndarray, seat: int, seed: int, rules: str = DEFAULT_RULES) -> FuzhouMahjongState:
    """An OpenSpiel state at a world drawn from ``seat``'s view of the one-table buffer ``buf``
    (``Game.resample``'s drawing; ``buf`` may hold placeholders for what ``seat`` cannot see, as
    ``fzmj.agents.search.state_from_obs`` makes it)."""
    from fzmj_env.core.hand import get_win_table
    from fzmj_env.resample import resample_buffer

    st = _game_of(rules).new_initial_state()
    st.apply_action(0)  # past the chance node; the table is then replaced by the world
    world = st._game
    resample_buffer(buf, 0, seat, np.array([seed], np.uint64), world.buf, np.array([0]), get_win_table())
    world.restore_state(world.save_state())  # checks the world and takes its decision
    return st


class ISMCTSAgent:
    """OpenSpiel's ISMCTS bot (``open_spiel.python.algorithms.ismcts``) as an fzmj agent, for
    ``fzmj-eval --agents python:fzmj.integrations.openspiel:ISMCTSAgent``: each decision's
    observation is turned back into a table (``state_from_obs``), and the bot searches worlds
    drawn from the seat's view (``resample_from_infostate``) with random rollouts to the hand's end.
    ``simulations`` per decision (class attribute: subclass to change it); a decision with one
    legal action is not searched."""

    name = "ismcts"
    simulations = 16
    uct_c = 10.0  # points are the returns: a hand's points are ~1-50

    def __init__(self):
        from open_spiel.python.algorithms import ismcts, mcts

        self._seed = 0
        self._rng = np.random.RandomState(0)
        self.rules = None  # the preset the games are played under (reset's rules; else the plane's)
        self._make = lambda game: ismcts.ISMCTSBot(
            game, mcts.RandomRolloutEvaluator(1, self._rng), self.uct_c, self.simulations, random_state=self._rng
        )
        self.decisions = 0
        self.seconds = 0.0

    def reset(self, seed: int | None = None, rules=None) -> None:
        """Reseed; ``rules`` (when given, as the evaluator does): the preset of the games that follow."""
        if seed is not None:
            self._rng.seed(int(seed) % 2**32)
        if rules is not None:
            self.rules = rules

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        from fzmj.agents.search import rules_of, state_from_obs

        out = np.empty(len(obs), dtype=np.int64)
        for i in range(len(obs)):
            legal = np.flatnonzero(mask[i])
            buf = state_from_obs(obs[i], mask[i], rules=self.rules) if len(legal) > 1 else None
            if buf is None:  # one legal action, or an observation that does not invert: no search
                out[i] = legal[0]
                continue
            t0 = time.perf_counter()
            preset = rules_of(obs[i], self.rules).name
            st = state_at(buf, 0, int(self._rng.randint(2**31)), preset)  # seat 0: the observer
            out[i] = self._make(st.get_game()).step(st)
            self.decisions += 1
            self.seconds += time.perf_counter() - t0
        return out
