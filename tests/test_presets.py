"""The four source variants (docs/presets.md P2–P5) on scripted walls (R3).

Every expected value is worked out by hand in the comments from the P-section cited; nothing
here calls the engine's scoring. Common scene (as in test_rules_scoring.py): dealer 0 discards
9p, seat 1 draws 9p and discards it, seat 2 draws its tile and wins (or the discarder pays).
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from rules_helpers import A_HU, A_PENG, K, act, discard, new_game, pass_all, resolve, state, tsumogiri

from fzmj_env import Game, RecordError, available_rules, encode, load_rules, make_record, replay
from fzmj_env.core.hand import flush_specials, swims
from fzmj_env.rules import PRESET_DIR, RulesError

CLASSIC, LZ2, BIANFENG, HOME = "fuzhou-lianzhong-classic", "fuzhou-lianzhong-2", "fuzhou-bianfeng", "fuzhou-home"
GOLD = "9s"
JUNK_DEALER = "5m 11223m 3m 789m 99p 11s 33s 5s"  # discards 9p first
READY_A = "46m 789m 234p 567p 678s 11s"  # waits 5m (3 suits: no flush)


def self_draw_pay(v, winner):
    return [3 * v if s == winner else -v for s in range(4)]


def seat2_game(rules, hand2, draw, flowers2=None, streak=0, gold=GOLD):
    """Dealer 0 discards 9p, seat 1 draws 9p and discards it; seat 2 then draws ``draw``."""
    flowers = {2: flowers2} if flowers2 else None
    g = new_game(
        dealer=0,
        hands={0: JUNK_DEALER, 2: hand2},
        flowers=flowers,
        draws=["9p", draw],
        tail=gold,
        streak=streak,
        rules=rules,
    )
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)
    pass_all(g)
    return g


def seat2_self_draw(rules, hand2, draw, **kw):
    g = seat2_game(rules, hand2, draw, **kw)
    act(g, 2, A_HU)
    r = g.result
    assert sum(r["points"]) == 0
    return r


def seat2_discard_win(rules, hand2, tile, flowers2=None, streak=0):
    """Seat 1 draws ``tile`` and discards it; seat 2 wins on it (seat 1 pays)."""
    flowers = {2: flowers2} if flowers2 else None
    g = new_game(
        dealer=0, hands={0: JUNK_DEALER, 2: hand2}, flowers=flowers, draws=[tile], tail=GOLD, streak=streak, rules=rules
    )
    discard(g, 0, "9p")
    pass_all(g)
    discard(g, 1, tile)
    resolve(g, {2: A_HU})
    r = g.result
    assert r["win_type"] == "discard" and r["discarder"] == 1 and sum(r["points"]) == 0
    return r


# ---- loading (presets as data) -----------------------------------------------------
def test_every_preset_ships_and_loads():
    """Built from the presets that ship (a new preset file needs no edit here): each loads under
    its own name, the ones this file tests are among them, and every scheme has one."""
    names = available_rules()
    assert {"fuzhou-lianzhong", CLASSIC, LZ2, BIANFENG, HOME} <= set(names)
    schemes = {n: load_rules(n).scheme for n in names}
    assert all(load_rules(n).name == n for n in names)
    assert set(schemes.values()) == set(state.SCHEME_NAMES)
    assert schemes[HOME] == "home" and schemes[CLASSIC] == "classic" and schemes["fuzhou-lianzhong"] == "lianzhong"


def test_bad_preset_files_name_the_key(tmp_path):
    data = yaml.safe_load((PRESET_DIR / f"{BIANFENG}.yaml").read_text(encoding="utf-8"))
    data["scoring"]["loss_capp"] = 5
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(RulesError, match="loss_capp"):
        load_rules(p)
    data = yaml.safe_load((PRESET_DIR / f"{CLASSIC}.yaml").read_text(encoding="utf-8"))
    del data["scoring"]["specials"]["gold_kan"]
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(RulesError, match="missing key 'gold_kan'"):
        load_rules(p)
    data["scheme"] = "fuzhou"
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(RulesError, match="unknown scheme 'fuzhou'"):
        load_rules(p)
    data = yaml.safe_load((PRESET_DIR / f"{HOME}.yaml").read_text(encoding="utf-8"))
    data["scoring"]["swim_multipliers"] = [4, 8]
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(RulesError, match="swim_multipliers"):
        load_rules(p)
    with pytest.raises(RulesError, match="unknown rule preset 'fuzhou-nope'"):
        load_rules("fuzhou-nope")


def custom_rules(tmp_path, preset, edit):
    data = yaml.safe_load((PRESET_DIR / f"{preset}.yaml").read_text(encoding="utf-8"))
    edit(data)
    p = tmp_path / f"{preset}.yaml"  # a copy keeps its name: a rules file is named after its file
    p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return str(p)


# ---- P2 classic ------------------------------------------------------------------------------
def test_p2_classic_never_offers_a_gold_discard():
    g = seat2_game(CLASSIC, "46m 789m 234p 567p 678s 1s 9s", "1m")  # holds the gold 9s
    assert g.seat == 2 and g.phase == "turn"
    assert not g.mask[K("9s")] and g.mask[K("1m")]
    d = seat2_game("fuzhou-lianzhong", "46m 789m 234p 567p 678s 1s 9s", "1m")
    assert d.mask[K("9s")]  # the default allows it (R7)


def test_p2_classic_self_draw_ping_hu():
    r = seat2_self_draw(CLASSIC, READY_A, "5m")
    # n = fl 0 + kg 0 + g 0 + (s not counted) + 5 = 5; self-draw: n x 2 + sp = 10 + 30 (平胡) = 40
    assert r["specials"] == ["no_flower_no_kong"] and r["special_values"] == {"no_flower_no_kong": 30}
    assert r["value"] == 40 and r["points"] == self_draw_pay(40, 2)


def test_p2_classic_discard_win_pays_n_plus_sp():
    r = seat2_discard_win(CLASSIC, READY_A, "5m")
    # n = 5; discard win: the discarder pays n + sp = 5 + 30 = 35 (P2 "点炮和＝花+金+特殊+连庄数+5")
    assert r["value"] == 35 and r["points"] == [0, -35, 35, 0]


def test_p2_classic_dealer_pays_the_streak():
    r = seat2_self_draw(CLASSIC, READY_A, "5m", streak=2)
    # 抓庄: s = 2 is not in n (a non-dealer won): each pays 40, the dealer 2 more
    assert r["value"] == 40 and r["points"] == [-42, -40, 122, -40]


def test_p2_classic_half_flush():
    r = seat2_self_draw(CLASSIC, "111p 234p 456p 678p 88p 5p 9s", "5p")
    # all non-gold tiles are 饼, one gold 9s (another suit): 混一色 120 > 平胡 30 (ordinary win: highest)
    # n = 0 + 0 + g 1 + 5 = 6; each pays 6 x 2 + 120 = 132
    assert set(r["specials"]) == {"no_flower_no_kong", "half_flush"}
    assert r["specials_counted"] == ["half_flush"] and r["special_values"]["half_flush"] == 120
    assert r["value"] == 132 and r["points"] == self_draw_pay(132, 2)


def test_p2_classic_full_flush_without_gold_and_with_a_dead_gold():
    r = seat2_self_draw(CLASSIC, "111p 234p 456p 678p 88p 57p", "6p")
    # no gold, all 饼: 清一色 240; n = 5; each pays 10 + 240 = 250
    assert "full_flush" in r["specials"] and r["specials_counted"] == ["full_flush"]
    assert r["value"] == 250
    # gold 3p (suit 饼) held as the 3p of 234p: the hand wins with the gold read as itself (死金)
    r = seat2_self_draw(CLASSIC, "111p 234p 456p 678p 88p 57p", "6p", gold="3p")
    # n = g 1 + 5 = 6; each pays 12 + 240 = 252
    assert "full_flush" in r["specials"] and "half_flush" not in r["specials"]
    assert r["value"] == 252
    # the drawn gold 1p (own suit) is needed as the 6p of 567p: read as itself (no 3p for 123p,
    # no pair) the hand does not win, so it is 混一色 (P2), not 清一色; not 金坎 (no 9p).
    # n = g 1 + 5 = 6; each pays 12 + 120 = 132
    r = seat2_self_draw(CLASSIC, "222p 456p 456p 678p 88p 57p", "1p", gold="1p")
    assert "half_flush" in r["specials"] and "full_flush" not in r["specials"] and "gold_kan" not in r["specials"]
    assert r["value"] == 132


def test_p2_classic_wrap_around_gold_kan_for_gold_rank_1():
    hand = "123m 456m 789p 234p 55p 9s 2s"  # no gold; holds 9s and 2s, the neighbours of gold 1s
    g = seat2_game(CLASSIC, hand, "1s", gold="1s")
    assert g.mask[A_HU]  # P2: the mask offers hu for the wrap-around 金坎
    act(g, 2, A_HU)
    r = g.result
    # 金坎 60 > 平胡 30; n = g 1 + 5 = 6; each pays 6 x 2 + 60 = 72
    assert r["win_type"] == "self_draw" and set(r["specials"]) == {"gold_kan", "no_flower_no_kong"}
    assert r["specials_counted"] == ["gold_kan"] and r["value"] == 72
    d = seat2_game("fuzhou-lianzhong", hand, "1s", gold="1s")
    assert not d.mask[A_HU]  # not a win shape anywhere else


def test_p2_gold_kan_value_is_data(tmp_path):
    path = custom_rules(tmp_path, CLASSIC, lambda d: d["scoring"]["specials"].update(gold_kan=120))
    g = seat2_game(path, "123m 456m 789p 234p 55p 9s 2s", "1s", gold="1s")
    act(g, 2, A_HU)
    # the same hand with 金坎 120: each pays 12 + 120 = 132
    assert g.result["value"] == 132 and g.result["special_values"]["gold_kan"] == 120


def test_p2_classic_heavenly_with_three_golds_adds_up():
    junk = "1m 4m 7m 1p 4p 7p 1s 4s 7s 2m 5m 8m 2p 5p"  # 14 singles: no shape, 三金倒 by the 3 golds
    g = new_game(dealer=0, hands={0: junk + " 9s9s9s"}, tail=GOLD, rules=CLASSIC)
    act(g, 0, A_HU)
    r = g.result
    # 天胡 30 + 三金倒 40 + 平胡 30 add up (P2 combining; 三金倒 is the group's highest): sp = 100
    # n = g 3 + s 0 + 5 = 8; each pays 8 x 2 + 100 = 116
    assert r["win_type"] == "heavenly"
    assert set(r["specials"]) == {"heavenly", "three_golds", "no_flower_no_kong"}
    assert set(r["specials_counted"]) == {"heavenly", "three_golds", "no_flower_no_kong"}
    assert r["value"] == 116 and r["points"] == self_draw_pay(116, 0)


def test_hand_api_flush_specials_and_swims():
    assert flush_specials("111p234p456p678p88p55p9s", "9s") == {"half_flush"}
    assert flush_specials("111p234p456p678p88p567p", "9s") == {"full_flush"}
    assert flush_specials("123m456m789p234p55p9s2s1s", "1s", drawn_gold=True) == {"gold_kan"}
    assert flush_specials("123m456m789p234p55p9s2s1s", "1s") == set()  # not drawn: no 金坎, no win
    assert swims("234p567p789p345s678s9s", "9s")  # 5 melds + a gold
    assert not swims("234p567p789p345s678s1s", "9s")
    assert swims("234p567p789p345s67s9s9s", "9s")  # one gold set aside, 67s + the other gold is a meld
    assert not swims("234p567p789p345s66s1m9s", "9s")


# ---- P3 联众 2 ------------------------------------------------------------------------------
def test_p3_no_special_self_draw_and_discard_win():
    r = seat2_self_draw(LZ2, READY_A, "5m", flowers2="1f")
    # h = fl 1 + kg 0 + g 0 = 1, no special (one flower: no 平胡 in P3): self-draw P = h x 2 = 2
    assert r["specials"] == [] and r["value"] == 2 and r["points"] == self_draw_pay(2, 2)
    r = seat2_discard_win(LZ2, READY_A, "5m", flowers2="1f")
    # discard win without a special: P = h = 1, the discarder pays
    assert r["value"] == 1 and r["points"] == [0, -1, 1, 0]


def test_p3_ping_hu_and_dealer_pays_streak():
    r = seat2_self_draw(LZ2, READY_A, "5m", streak=3)
    # 平胡 30, h = 0 (s not counted: non-dealer); P = 0 x 2 + 30 = 30 each; 抓庄 +3 from the dealer
    assert r["specials"] == ["no_flower_no_kong"] and r["value"] == 30
    assert r["points"] == [-33, -30, 93, -30]


def test_p3_win_on_the_dealers_first_discard_is_rob_gold():
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 1: "234p 567p 678s 345s 11s 78p"}, tail=GOLD, rules=LZ2)
    discard(g, 0, "9p")
    resolve(g, {1: A_HU})
    r = g.result
    # P3: a win on the dealer's first discard scores 抢金 30 +10 (no flower, no kong) = 40; 平胡 dropped
    # h = 0: P = 0 x 2 + 40 = 40, paid by the discarder (the dealer) alone; win type stays "discard"
    assert r["win_type"] == "discard" and r["specials"] == ["rob_gold"]
    assert r["special_values"] == {"rob_gold": 40} and r["value"] == 40 and r["points"] == [-40, 40, 0, 0]
    d = new_game(dealer=0, hands={0: JUNK_DEALER, 1: "234p 567p 678s 345s 11s 78p"}, tail=GOLD)
    discard(d, 0, "9p")
    resolve(d, {1: A_HU})
    assert "rob_gold" not in d.result["specials"]  # the default does not widen 抢金


def test_p3_heavenly_lists_rob_gold():
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail=GOLD, rules=LZ2)
    act(g, 0, A_HU)
    r = g.result
    # 天胡 scores 抢金 30 + 10 = 40; h = 0 + s 0; P = 40 each
    assert r["win_type"] == "heavenly" and r["specials"] == ["rob_gold"] and r["value"] == 40


# ---- P4 边锋 -------------------------------------------------------------------------------
def test_p4_no_special_payments():
    r = seat2_self_draw(BIANFENG, READY_A, "5m", flowers2="1f")
    # f = 1, no special: P = 1 + 1 = 2; self-draw without a special: each pays 2P = 4
    assert r["specials"] == [] and r["value"] == 4 and r["points"] == self_draw_pay(4, 2)
    r = seat2_discard_win(BIANFENG, READY_A, "5m", flowers2="1f")
    # discard win: the discarder pays 2P = 4
    assert r["value"] == 4 and r["points"] == [0, -4, 4, 0]


def test_p4_special_payments():
    r = seat2_self_draw(BIANFENG, READY_A, "5m")
    # 平胡 30, f = 0: P = 30 + 0 x 2 = 30; self-draw with a special: each pays P = 30
    assert r["specials"] == ["no_flower_no_kong"] and r["value"] == 30 and r["points"] == self_draw_pay(30, 2)
    r = seat2_discard_win(BIANFENG, READY_A, "5m")
    # discard win with a special: the discarder pays 2P = 60
    assert r["value"] == 60 and r["points"] == [0, -60, 60, 0]


def test_p4_heavenly_scores_as_rob_gold():
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail=GOLD, rules=BIANFENG)
    act(g, 0, A_HU)
    r = g.result
    # 抢金 30 and 平胡 30 (highest 30); P = 30 + 0; each pays P = 30
    assert r["win_type"] == "heavenly" and set(r["specials"]) == {"rob_gold", "no_flower_no_kong"}
    assert "heavenly" not in r["specials"] and r["value"] == 30 and r["points"] == self_draw_pay(30, 0)


def test_p4_loss_cap_and_streak(tmp_path):
    path = custom_rules(tmp_path, BIANFENG, lambda d: d["scoring"].update(loss_cap=50))
    r = seat2_discard_win(path, READY_A, "5m", streak=4)
    # 2P = 60 from seat 1; 抓庄 4 from the dealer (seat 0); cap 50: seat 1 pays 50, the winner gets 54
    assert r["value"] == 60 and r["points"] == [-4, -50, 54, 0]
    r = seat2_self_draw(path, READY_A, "5m", streak=4)
    # each pays 30, the dealer 34: all under the cap
    assert r["points"] == [-34, -30, 94, -30]


# ---- P5 home ------------------------------------------------------------------------------
def test_p5_home_values():
    r = seat2_self_draw(HOME, READY_A, "5m", flowers2="1z 1f 2f", streak=2)
    # n = 5 + f8 2 (1z counts 0) + g 0 + s 2 (any winner) + kg 0 + d 0 = 9; self-draw x2: each pays 18
    assert r["specials"] == [] and r["value"] == 18 and r["points"] == self_draw_pay(18, 2)
    r = seat2_discard_win(HOME, READY_A, "5m")
    # n = 5 + 0 + 0 + 0 + 0 + d 1 = 6; discard win x1
    assert r["value"] == 6 and r["points"] == [0, -6, 6, 0]


def test_p5_heavenly_is_listed_with_value_zero():
    g = new_game(dealer=0, hands={0: "123m 456m 789m 123p 456p 77s"}, tail=GOLD, rules=HOME)
    act(g, 0, A_HU)
    r = g.result
    # n = 5, self-draw-like x2: 10 each; 天胡 listed, worth 0
    assert r["specials"] == ["heavenly"] and r["special_values"] == {"heavenly": 0} and r["value"] == 10


SWIM_HAND = "234p 567p 789p 345s 678s 9s"  # 5 melds + a gold (9s): swims after its next discard


def swim_game(draws):
    """Seat 2 (SWIM_HAND) draws draws[1] and discards it; then every seat discards its draw."""
    g = new_game(dealer=0, hands={0: JUNK_DEALER, 2: SWIM_HAND}, draws=["1m"] + draws, tail=GOLD, rules=HOME)
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)  # seat 1 discards 1m
    pass_all(g)
    return g


def test_p5_swimming_level_1_pays_x4_and_is_public():
    g = swim_game(["2m", "3m", "5m", "6m", "7m"])
    assert int(g.view.swim[2]) == 0
    discard(g, 2, "2m")  # keeps 5 melds + the gold: swims (单游)
    assert int(g.view.swim[2]) == 1
    obs = np.zeros((encode.NUM_CHANNELS, 27), dtype=np.int8)
    while g.phase == "claim":
        pass_all(g)
    encode.encode_table(g.buf, 0, g.seat, obs)  # seat 3 sees seat 2 as its relative seat 3 (上家)
    assert g.seat == 3 and obs[encode.P_SWIM, 3 * 3 + 0] == 1 and obs[encode.P_SWIM, 3 * 3 + 1] == 0
    assert obs[encode.P_PRESET, 4] == 1
    tsumogiri(g, turns=2)  # seats 3 and 0 discard 3m, 5m
    pass_all(g)
    tsumogiri(g, turns=1)  # seat 1 discards 6m
    pass_all(g)
    act(g, 2, A_HU)  # seat 2 draws 7m: the gold pairs it
    r = g.result
    # n = 5 + g 1 = 6; a self-draw while swimming at level 1: x4 -> each pays 24
    assert r["win_type"] == "self_draw" and r["value"] == 24 and r["points"] == self_draw_pay(24, 2)


def test_p5_swimming_goes_up_on_a_drawn_gold_discarded():
    g = swim_game(["2m", "3m", "5m", "6m", "9s", "3m", "4m", "5p", "7m"])
    discard(g, 2, "2m")
    tsumogiri(g, turns=3)  # seats 3, 0, 1 (claim windows passed)
    pass_all(g)
    assert g.seat == 2 and int(g.view.m[state.LAST_DRAW]) == K("9s")  # it drew the gold
    discard(g, 2, "9s")  # declines the win, throws the drawn gold: 双游
    assert int(g.view.swim[2]) == 2
    tsumogiri(g, turns=3)
    pass_all(g)
    act(g, 2, A_HU)  # draws 7m
    r = g.result
    # n = 6; level 2: x8 -> each pays 48
    assert r["value"] == 48 and r["points"] == self_draw_pay(48, 2)


def test_p5_a_claim_ends_swimming():
    g = new_game(
        dealer=0,
        hands={0: JUNK_DEALER, 2: "234p 567p 789p 345s 666s 9s"},
        draws=["1m", "2m", "6s"],
        tail=GOLD,
        rules=HOME,
    )
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)  # seat 1: 1m
    pass_all(g)
    discard(g, 2, "2m")
    assert int(g.view.swim[2]) == 1
    pass_all(g)
    discard(g, 3, "6s")
    resolve(g, {2: A_PENG})  # P5: a peng ends swimming
    assert int(g.view.swim[2]) == 0
    discard(g, 2, "6s")  # 234p 567p 789p 345s + the gold: the discard re-checks, swims again
    assert int(g.view.swim[2]) == 1


def test_records_name_and_carry_their_preset(tmp_path):
    path = custom_rules(tmp_path, BIANFENG, lambda d: d["scoring"].update(loss_cap=7))
    g = Game(path)
    g.reset(seed=5)
    rng = np.random.default_rng(0)
    while not g.done:
        g.step(int(rng.choice(g.legal_actions)))
    rec = make_record(g)
    assert rec["rules"] == BIANFENG and rec["rules_data"]["scoring"]["loss_cap"] == 7
    again = replay(rec)  # replays under the stored content, no file needed
    assert again.results == g.results
    with pytest.raises(RecordError, match="cannot be replayed under 'fuzhou-home'"):
        replay(rec, rules=HOME)
    with pytest.raises(RecordError, match="cannot be replayed under 'fuzhou-bianfeng'"):
        replay(rec, rules=BIANFENG)  # same name, other content (cap 100)
    bad = dict(rec, rules_data=dict(rec["rules_data"], source="edited"))
    with pytest.raises(RecordError, match="rules_digest"):
        replay(bad)


# ---- everywhere the default works (must have 2) --------------------------------------
def test_env_vector_eval_and_train_config_take_every_preset():
    import fzmj_env
    from fzmj.agents.evaluate import evaluate
    from fzmj.train.config import load_config
    from fzmj.train.ppo_selfplay import Args
    from fzmj_env.vector import VectorEnv, results_of

    for rules in available_rules():
        env = fzmj_env.env(rules=rules)
        env.reset(seed=1)
        obs = env.observe(env.agent_selection)["observation"]
        assert obs.shape == (encode.NUM_CHANNELS, 27)
        assert obs[encode.P_PRESET, load_rules(rules).params[state.R_SCHEME - state.R_RESERVE_BASE]] == 1
        venv = VectorEnv(8, rules=rules, seed=3)
        o, mask, seat = venv.reset()
        rng = np.random.default_rng(0)
        for _ in range(300):
            o, mask, seat, rew, done, info = venv.step((rng.random(mask.shape) * mask).argmax(1))
            for r in results_of(info):
                assert sum(r["points"]) == 0
        assert rew.shape == (8, 4)
        res = evaluate(["heuristic", "random"], hands=8, seed=0, progress=False, rules=rules)
        assert res["rules"] == rules
        assert load_config(Args, None, [f"rules={rules}"]).rules == rules  # fzmj-train's rules: key


# ---- the heuristic per preset (must have 8) ------------------------------------------
def _heuristic_choice(g):
    from fzmj.agents.heuristic import HeuristicAgent

    obs = np.zeros((encode.NUM_CHANNELS, 27), dtype=np.int8)
    encode.encode_table(g.buf, 0, g.seat, obs)
    return int(HeuristicAgent().act(obs, g.mask)[0])


def test_heuristic_keeps_a_swimming_hand_and_never_discards_gold_under_classic():
    g = new_game(
        dealer=0,
        hands={0: JUNK_DEALER, 2: "234p 567p 789p 345s 666s 9s"},
        draws=["1m", "2m", "6s", "7m"],
        tail=GOLD,
        rules=HOME,
    )
    discard(g, 0, "9p")
    pass_all(g)
    tsumogiri(g, turns=1)
    pass_all(g)
    discard(g, 2, "2m")  # swims
    pass_all(g)
    discard(g, 3, "6s")
    assert g.seat == 2 and g.mask[A_PENG]
    assert _heuristic_choice(g) == state.A_PASS  # a peng would end swimming (P5)
    resolve(g)
    tsumogiri(g, turns=2)
    pass_all(g)
    assert g.seat == 2 and _heuristic_choice(g) == A_HU  # any draw wins while swimming: x4
    c = seat2_game(CLASSIC, "46m 789m 234p 567p 678s 1s 9s", "1m")
    assert _heuristic_choice(c) != K("9s")


def test_p2_classic_no_chi_or_peng_that_leaves_only_golds():
    from fzmj_env.core import engine
    from fzmj_env.core.hand import get_win_table

    wt = get_win_table()
    for rules, offered in ((CLASSIC, False), ("fuzhou-lianzhong", True)):
        g = new_game(dealer=0, hands={0: JUNK_DEALER}, tail=GOLD, rules=rules)
        tb = g.buf[0]
        g.view.hand[1] = 0
        g.view.hand[1, K("3m")] = g.view.hand[1, K("4m")] = 1
        g.view.hand[1, K("9s")] = 2  # two golds: after chi 2m-3m-4m only golds would be left
        o = int(engine.claim_options(tb, wt, 1, 0, K("2m")))
        assert bool(o & state.OPT_CHI_LOW) == offered
        g.view.hand[1] = 0
        g.view.hand[1, K("2m")] = 2
        g.view.hand[1, K("9s")] = 2
        o = int(engine.claim_options(tb, wt, 1, 0, K("2m")))
        assert bool(o & state.OPT_PENG) == offered
        g.view.hand[1, K("1p")] = 1  # one more non-gold tile: it could be discarded, so both are offered
        assert int(engine.claim_options(tb, wt, 1, 0, K("2m"))) & state.OPT_PENG


def test_p3_dealer_win_on_a_kong_replacement_before_its_first_discard_is_rob_gold():
    g = new_game(dealer=0, hands={0: "1111m 234p 567p 678s 11s 46m"}, tail=[GOLD, "5m"], rules=LZ2)
    act(g, 0, state.A_SELF_KONG + K("1m"))
    act(g, 0, A_HU)
    r = g.result
    # P3: before the dealer's first discard -> 抢金 30 (a kong: no +10); h = kg 2 (concealed kong)
    # P = 2 x 2 + 30 = 34 from each other seat
    assert r["win_type"] == "self_draw" and r["specials"] == ["rob_gold"] and r["value"] == 34
    assert r["points"] == self_draw_pay(34, 0)


def test_version_1_records_still_replay():
    g = Game()
    g.reset(seed=21)
    rng = np.random.default_rng(1)
    while not g.done:
        g.step(int(rng.choice(g.legal_actions)))
    rec = make_record(g)
    old = {k: v for k, v in rec.items() if k not in ("rules_data", "rules_digest")}
    old["version"] = 1
    old["hands"] = [
        dict(h, result={k: v for k, v in h["result"].items() if k not in ("special_values", "specials_counted")})
        for h in rec["hands"]
    ]
    assert replay(old).scores == g.scores


def test_heuristic_swims_instead_of_a_x2_self_draw_under_home():
    g = swim_game(["2m"])
    assert g.seat == 2 and g.mask[A_HU]  # 2m + the gold is a pair: a self-draw win (x2)
    assert _heuristic_choice(g) == K("2m")  # P5: discard into the 游金 shape, the next draw wins x4
    d = new_game(dealer=0, hands={0: JUNK_DEALER, 2: SWIM_HAND}, draws=["1m", "2m"], tail=GOLD)
    discard(d, 0, "9p")
    pass_all(d)
    tsumogiri(d, turns=1)
    pass_all(d)
    assert _heuristic_choice(d) == A_HU  # the default preset has no swimming: win now


def test_p5_swim_levels_go_up_to_3_and_drop_back():
    from rules_helpers import counts

    from fzmj_env.core import engine
    from fzmj_env.core.hand import get_win_table

    wt = get_win_table()
    g = new_game(dealer=0, hands={0: JUNK_DEALER}, tail=GOLD, rules=HOME)
    tb, v, gold = g.buf[0], g.view, K(GOLD)
    v.hand[2] = counts(SWIM_HAND)
    v.m[state.LAST_DRAW] = gold
    for before, after in ((1, 2), (2, 3), (3, 3)):  # a drawn gold thrown keeping the shape: up, at most 3
        v.swim[2] = before
        engine.update_swim(tb, wt, 2, gold)
        assert int(v.swim[2]) == after
    v.swim[2] = 3
    engine.update_swim(tb, wt, 2, K("1m"))  # another discard re-checks: the shape holds -> level 1
    assert int(v.swim[2]) == 1
    v.swim[2] = 0
    engine.update_swim(tb, wt, 2, gold)  # not swimming before: entering is level 1 whatever was thrown
    assert int(v.swim[2]) == 1
    v.hand[2] = counts("234p 567p 789p 345s 67s 1m 9s")  # no shape
    engine.update_swim(tb, wt, 2, K("1p"))
    assert int(v.swim[2]) == 0


@pytest.mark.parametrize(
    ("rules", "specials", "counted", "value"),
    [
        # R11.4: (0 + g 2 + 0 + 5) x 2 + 金雀 60 = 74
        ("fuzhou-lianzhong", {"no_flower_no_kong": 30, "golden_pair": 60}, ["golden_pair"], 74),
        # P2: n = 2 + 5 = 7; ordinary self-draw, highest only: 7 x 2 + 60 = 74
        (CLASSIC, {"no_flower_no_kong": 30, "golden_pair": 60}, ["golden_pair"], 74),
        # P3: 金雀 60 + 10 (no flower, no kong), 平胡 dropped; h = g 2: P = 2 x 2 + 70 = 74
        (LZ2, {"golden_pair": 70}, ["golden_pair"], 74),
        # P4: highest 金雀 60; f = 2: P = 60 + 2 x 2 = 64, self-draw with a special: each pays P
        (BIANFENG, {"no_flower_no_kong": 30, "golden_pair": 60}, ["golden_pair"], 64),
        # P5: no specials; n = 5 + g 2 = 7, self-draw x2 = 14
        (HOME, {}, [], 14),
    ],
)
def test_the_same_golden_pair_win_under_every_preset(rules, specials, counted, value):
    r = seat2_self_draw(rules, "46m 789m 234p 567p 678s 9s9s", "5m")  # the two golds are the pair
    assert r["special_values"] == specials and r["specials_counted"] == counted
    assert r["value"] == value and r["points"] == self_draw_pay(value, 2)
