"""Fuzhou mahjong in OpenSpiel (``fzmj.integrations.openspiel``): OpenSpiel's own consistency
checks, tensors from our planes, clone and worlds, an ISMCTS bot playing a whole hand, bad input.
Needs ``open_spiel`` (``pip install -e ".[openspiel]"``; CI installs it)."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel not installed (pip install open_spiel==2.0.2)")

import fzmj.integrations.openspiel as fos  # noqa: E402
from fzmj_env import IllegalActionError  # noqa: E402
from fzmj_env.encode import NUM_CHANNELS, V3_CHANNELS, encode_table  # noqa: E402


def _random_state(game, seed: int, steps: int):
    rng = np.random.default_rng(seed)
    st = game.new_initial_state()
    st.apply_action(int(rng.integers(game.max_chance_outcomes())))
    for _ in range(steps):
        if st.is_terminal():
            break
        st.apply_action(int(rng.choice(st.legal_actions())))
    return st


@pytest.mark.parametrize("params", [{}, {"rules": "fuzhou-home", "hands_per_game": 2, "walls": 50}])
def test_random_sim_test_with_serialization(params):
    game = pyspiel.load_game("fuzhou_mahjong", params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_tensors_mask_and_returns_are_ours():
    game = pyspiel.load_game("fuzhou_mahjong")
    st = _random_state(game, 1, 30)
    seat = st.current_player()
    g = st._game
    planes = np.zeros((V3_CHANNELS, 27), np.int8)
    encode_table(g.buf, 0, seat, planes)
    assert np.array_equal(np.asarray(st.information_state_tensor(seat)), planes.ravel())
    assert np.array_equal(np.asarray(st.observation_tensor(seat)), planes[:NUM_CHANNELS].ravel())
    assert st.legal_actions() == g.legal_actions
    while not st.is_terminal():
        st.apply_action(st.legal_actions()[0])
    assert st.returns() == [float(x) for x in st._game.scores] and sum(st.returns()) == 0


def test_clone_is_exact_and_independent():
    game = pyspiel.load_game("fuzhou_mahjong", {"hands_per_game": 2})
    st = _random_state(game, 2, 40)
    twin = st.clone()
    saved = twin._game.save_state()
    rng = np.random.default_rng(0)
    ref = []
    while not st.is_terminal():
        a = int(rng.choice(st.legal_actions()))
        ref.append((st.information_state_string(), a))
        st.apply_action(a)
    assert np.array_equal(twin._game.save_state(), saved)  # the original's play never reached the copy
    rng = np.random.default_rng(0)
    got = []
    while not twin.is_terminal():
        a = int(rng.choice(twin.legal_actions()))
        got.append((twin.information_state_string(), a))
        twin.apply_action(a)
    assert got == ref and twin.returns() == st.returns() and twin.history() == st.history()


def test_worlds_keep_the_seats_information():
    game = pyspiel.load_game("fuzhou_mahjong")
    st = _random_state(game, 3, 25)
    seat = st.current_player()
    worlds = [st.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(0.0, 1.0)) for _ in range(4)]
    for w in worlds:
        assert w.information_state_string(seat) == st.information_state_string(seat)
        assert w.legal_actions() == st.legal_actions()
        assert all(w._own_actions[p] == [] for p in range(4) if p != seat)  # the others' passes are theirs
    hidden = {w._game.hand_str((seat + 1) % 4) for w in worlds}
    assert len(hidden) > 1  # the other seats' tiles are drawn, not copied
    with pytest.raises(ValueError, match="seat to act"):
        st.resample_from_infostate((seat + 1) % 4, pyspiel.UniformProbabilitySampler(0.0, 1.0))


def test_bad_actions_and_parameters_are_refused():
    game = pyspiel.load_game("fuzhou_mahjong")
    st = _random_state(game, 4, 10)
    bad = next(a for a in range(62) if a not in st.legal_actions())
    with pytest.raises((IllegalActionError, pyspiel.SpielError, RuntimeError), match="cannot take|not legal|illegal"):
        st.apply_action(bad)
    with pytest.raises(Exception, match="rules must be one of"):
        pyspiel.load_game("fuzhou_mahjong", {"rules": "nope"})
    with pytest.raises(Exception, match="walls must be"):
        pyspiel.load_game("fuzhou_mahjong", {"walls": 0})


def test_ismcts_bot_plays_a_whole_hand():
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("fuzhou_mahjong")
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 10.0, 4, random_state=rng)
    st = game.new_initial_state()
    st.apply_action(7)
    searched = 0
    while not st.is_terminal():
        if st.current_player() == 0 and len(st.legal_actions()) > 1:
            st.apply_action(int(bot.step(st)))
            searched += 1
        else:
            st.apply_action(int(rng.choice(st.legal_actions())))
    assert searched > 0 and len(st.returns()) == 4


def test_ismcts_agent_acts_through_our_agent_interface():
    from fzmj_env import Game

    g = Game()
    g.reset(seed=5)
    for _ in range(6):
        g.step(g.legal_actions[0])
    planes = np.zeros((1, NUM_CHANNELS, 27), np.int8)
    encode_table(g.buf, 0, g.seat, planes[0])
    agent = fos.ISMCTSAgent()
    agent.simulations = 2
    action = int(agent.act(planes, g.mask[None])[0])
    assert g.mask[action] == 1


def test_without_open_spiel_the_import_says_what_to_install():
    """Where OpenSpiel is missing (Python 3.10 has no wheel), importing the integration is one line
    naming the extra (a subprocess: the registered game stays registered here)."""
    import subprocess
    import sys

    code = "import sys; sys.modules['pyspiel'] = None\nimport fzmj.integrations.openspiel"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert 'pip install "fzmj[openspiel]"' in done.stderr.strip().splitlines()[-1]
