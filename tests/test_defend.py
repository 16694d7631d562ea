"""``heuristic:defend`` and ``heuristic:patient``: specs, legality, folding on a scripted wall, and
that the plain heuristic (and defend without danger) plays exactly the heuristic's moves."""

import numpy as np
import pytest

from fzmj.agents import AgentSpecError, make_agent
from fzmj.agents.defend import DefendAgent, defend_kernel, public_win_on, win_chance
from fzmj.agents.defend_tables import COST
from fzmj.agents.heuristic import HeuristicAgent, PatientAgent, heuristic_kernel
from fzmj_env import encode
from fzmj_env.core.hand import get_shanten_table, get_win_table, waits
from fzmj_env.game import Game
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_name
from fzmj_env.vector import VectorEnv


def obs_of(game, seat):
    out = np.zeros((encode.NUM_CHANNELS, 27), np.int8)
    encode.encode_table(game.buf, 0, seat, out)
    return out


# ---- specs ------------------------------------------------------------------------------------------
def test_specs_build_the_variants():
    d = make_agent("heuristic:defend")
    assert isinstance(d, DefendAgent) and d.name == "heuristic:defend"
    d = make_agent("heuristic:defend:risk=0.5,margin=2,slack=1")
    assert list(d.params[:3]) == [0.5, 2.0, 1.0]
    p = make_agent("heuristic:patient")
    assert isinstance(p, PatientAgent) and p.goal == "jinque"
    assert make_agent("heuristic:patient:goal=selfdraw").goal == "selfdraw"
    assert type(make_agent("heuristic")) is HeuristicAgent


@pytest.mark.parametrize(
    "spec, msg",
    [
        ("heuristic:defend:foo=1", "unknown option 'foo=1'"),
        ("heuristic:defend:risk=x", "risk needs a number"),
        ("heuristic:defend:risk=-1", "must be a finite number >= 0"),
        ("heuristic:defend:margin=nan", "must be a finite number >= 0"),
        ("heuristic:defend:slack=3", "slack must be 0, 1 or 2"),
        ("heuristic:defend:belief=", "belief= needs a belief model spec"),
        ("heuristic:defend:base=random", "base must be one of heuristic, pretrained"),
        ("heuristic:patient:goal=money", "expected heuristic:patient[:goal=jinque|selfdraw|golds]"),
        ("heuristic:patient:jinque", "expected heuristic:patient"),
        ("heuristic:attack", "expected heuristic, heuristic:defend"),
    ],
)
def test_bad_variant_specs_are_one_line_errors(spec, msg):
    with pytest.raises(AgentSpecError) as e:
        make_agent(spec)
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_eval_cli_refuses_a_bad_defend_spec_in_one_line(capsys):
    from fzmj.agents.evaluate.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--agents", "heuristic:defend:risk=x", "heuristic", "--hands", "4"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "risk needs a number" in err and "\n" not in err


# ---- legality and determinism ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec", ["heuristic:defend", "heuristic:defend:slack=2,margin=0", "heuristic:patient:goal=golds"]
)
def test_variants_only_play_legal_actions(spec):
    agent = make_agent(spec)
    env = VectorEnv(64, seed=5, auto_reset=True)
    obs, mask, _ = env.reset()
    for _ in range(400):  # VectorEnv.step raises on an illegal action
        a = agent.act(obs, mask)
        assert (mask[np.arange(len(a)), a] == 1).all()
        obs, mask, _seat, _r, _d, _i = env.step(a)


def test_defend_without_danger_is_the_heuristic():
    env = VectorEnv(128, seed=9, auto_reset=True)
    h = HeuristicAgent()
    obs, mask, _ = env.reset()
    st, wt = get_shanten_table(), get_win_table()
    d = DefendAgent()
    for _ in range(120):
        ref = np.empty(len(obs), np.int64)
        heuristic_kernel(obs, mask, st, wt, ref)
        out = np.empty(len(obs), np.int64)
        defend_kernel(obs, mask, st, wt, np.zeros((len(obs), 3, 27)), COST, d.params, out)
        assert (out == ref).all()
        obs, mask, _s, _r, _d, _i = env.step(h.act(obs, mask))


def test_public_danger_is_a_probability_and_zero_on_golds():
    env = VectorEnv(64, seed=2, auto_reset=True)
    h = HeuristicAgent()
    obs, mask, _ = env.reset()
    for _ in range(60):
        obs, mask, _s, _r, _d, _i = env.step(h.act(obs, mask))
    p = public_win_on(obs)
    assert p.shape == (64, 3, 27) and (p >= 0).all() and (p <= 1).all()
    gold = obs[:, encode.P_GOLD_KIND].argmax(1)
    assert (p[np.arange(64), :, gold] == 0).all()


def test_win_chance_orders_hands():
    assert win_chance(0, 12, 80, 10) > win_chance(0, 4, 80, 10) > 0
    assert win_chance(0, 8, 80, 10) > win_chance(1, 8, 80, 10) > win_chance(2, 8, 80, 10)
    assert win_chance(2, 20, 80, 2) == 0.0  # three improvements cannot come in two draws


# ---- folding on a scripted wall (R3) ----------------------------------------------------------------
def test_defend_folds_where_the_heuristic_deals_in():
    """Wall ``make_wall(dealer=0, seed=63)``: at seat 0's 7th discard, two opponents are ready on
    4m after four discards each; the heuristic throws 4m and deals in, defend keeps it (5p)."""
    wall = make_wall(dealer=0, seed=63)
    game = Game()
    game.reset(seed=0, wall=wall, dealer=0)
    h, d = make_agent("heuristic"), make_agent("heuristic:defend")
    while True:
        o, m = obs_of(game, game.seat), game.mask
        ah = int(h.act(o, m)[0])
        if game.seat == 0 and int(d.act(o, m)[0]) != ah:
            break
        game.step(ah)
        assert not game.done, "the scenario changed: defend never deviated"
    ad = int(d.act(o, m)[0])
    assert (kind_name(ah), kind_name(ad)) == ("4m", "5p")
    ready = {r: waits(game.hand(r), game.gold) for r in (1, 2, 3) if game.hand(r).sum() % 3 == 1}
    assert all("5p" not in w for w in ready.values())
    game.step(ah)  # the heuristic's 4m: both ready seats are offered the win and take it
    while game.phase == "claim":
        game.step(int(h.act(obs_of(game, game.seat), game.mask)[0]))
    assert game.done and game.result["discarder"] == 0 and game.result["winner"] in ready


# ---- the pluggable danger ------------------------------------------------------------------------
class _Oracle:
    """A stand-in belief: every opponent wins on ``kind`` for sure, on nothing else."""

    def __init__(self, kind):
        self.kind = kind

    def predict(self, obs, mask=None):
        p = np.zeros((len(obs), 3, 27), np.float32)
        p[:, :, self.kind] = 1.0
        return {"win_on": p}


def test_a_belief_object_is_the_danger_source():
    env = VectorEnv(64, seed=4, auto_reset=True)
    h = HeuristicAgent()
    obs, mask, _ = env.reset()
    checked = 0
    for _ in range(40):
        a = h.act(obs, mask)
        for i in np.flatnonzero((a < 27) & (obs[:, encode.P_PHASE, encode.PC_CLAIM] == 0))[:8]:
            k = int(a[i])
            d = DefendAgent(belief=_Oracle(k), margin=0.0)
            alt = int(d.act(obs[i], mask[i])[0])
            assert alt == k or alt < 27  # it only ever swaps one discard for another
            held = (obs[i, encode.P_HAND] > 0) & (mask[i, :27] > 0)
            held[obs[i, encode.P_GOLD_KIND].argmax()] = False
            if held.sum() > 1:
                checked += alt != k
        obs, mask, _s, _r, _d, _i = env.step(a)
    assert checked > 0


def test_a_missing_belief_model_is_a_one_line_error():
    with pytest.raises(AgentSpecError) as e:
        make_agent("heuristic:defend:belief=belief:/no/such/model.pt")
    assert "\n" not in str(e.value)
