"""``"obs": [..., "last_claim"]`` (docs/protocol.md, "The last claim"): each request row names the
hand's most recent chi, peng or exposed kong, decoded from the v3 planes, for a v2 bot too (its
tables are made v3, its view and planes stay v2 byte for byte); a bot that does not ask gets what it
got before; a table that gives v2 refuses it in one line (tests/test_exec_bot_v3.py, with v3 bots)."""

from __future__ import annotations

import json

import numpy as np
from test_exec_bot_v3 import logging_bot, planes_of, received, tables

from fzmj.agents import make_agent
from fzmj.agents.evaluate import evaluate
from fzmj.agents.exec_bot import last_claim, public_view, request_message
from fzmj_env import Game, encode
from fzmj_env.actions import A_CHI_MID, A_PASS, A_PENG, A_SELF_KONG
from fzmj_env.core.state import MELD_NAMES
from fzmj_env.scenario import make_wall
from fzmj_env.tiles import kind_index as K


def _v3(game: Game, seat: int) -> np.ndarray:
    out = np.zeros((encode.V3_CHANNELS, 27), dtype=np.int8)
    encode.encode_table(game.buf, 0, seat, out)
    return out


def _rows(game: Game) -> list[dict]:
    """Each seat's request row (a v2 bot that asked for the view and last_claim) of the game now."""
    out = []
    for seat in range(4):
        o = _v3(game, seat)[None]
        line = request_message(1, o, game.mask[None], ("view", "last_claim"), layout="v2")
        (row,) = json.loads(line)["rows"]
        assert row["view"] == public_view(o[:, : encode.NUM_CHANNELS])[0]  # the v2 view, nothing more
        out.append(row)
    return out


def _claim(seat: int, kind: str, kinds: str, tile: str, source: int, at: int) -> list[dict]:
    """The last_claim every seat's row should carry: seat ``seat`` claimed ``tile`` from ``source``
    (absolute seats), the table's discard ``at``; seen from seat s, seats are relative to s."""
    return [
        {
            "seat": (seat - s) % 4,
            "type": kind,
            "kinds": [K(t) for t in kinds.split()],
            "tile": K(tile),
            "from": (source - s) % 4,
            "at": at,
        }
        for s in range(4)
    ]


def _play_to(game: Game, seat: int, action: int) -> None:
    """Pass every claim until ``seat`` may take ``action``, then take it."""
    while not (game.seat == seat and action in game.legal_actions):
        assert game.phase == "claim", (game.seat, game.phase, game.legal_actions)
        game.step(A_PASS)
    game.step(action)


def _seat_3_discards(game: Game) -> None:
    """Pass every claim until seat 3's turn; it discards its lowest kind."""
    while not (game.seat == 3 and game.phase == "turn"):
        game.step(A_PASS)
    game.step(game.legal_actions[0])


def test_a_scripted_hand_null_then_each_claim_exactly():
    """Seat 1 chis 3m-4m-5m on 4m, later 4m-5m-6m on 5m: its flat ``melds`` (3m 4m 4m 5m 5m 6m) and
    its ``taken`` set (4m 5m) fit either chi taking either tile; last_claim names the chi and the
    tile. Then seat 2 pengs 9p, and after it adds the fourth 9p the claim is still that peng."""
    wall = make_wall(
        dealer=0,
        hands={
            0: "4m 5m 1p 2p 3p 7p 7p 1s 2s 3s 4s 6s 7s 8s 9m 9m 9m",
            1: "3m 5m 4m 6m 9p 1p 2p 3p 7s 7s 7s 2s 3s 4s 5p 6p",
            2: "9p 9p 1s 2p 3p 4p 6m 7m 8m 2m 2m 2m 5s 5s 6p 7p",
        },
        draws=[None] * 6 + ["9p"],
        tail="8p",
    )
    g = Game()
    g.reset(seed=0, wall=wall, dealer=0)
    assert [r["last_claim"] for r in _rows(g)] == [None] * 4  # the start of the hand
    _play_to(g, 0, K("4m"))  # T 0
    _play_to(g, 1, A_CHI_MID)
    assert [r["last_claim"] for r in _rows(g)] == _claim(1, "chi", "3m 4m 5m", "4m", 0, 0)
    _play_to(g, 1, K("1p"))  # T 1
    _play_to(g, 2, K("2p"))  # T 2
    _seat_3_discards(g)  # T 3
    _play_to(g, 0, K("5m"))  # T 4
    _play_to(g, 1, A_CHI_MID)
    rows = _rows(g)
    seat1 = rows[0]["view"]["seats"][1]
    assert seat1["melds"] == [K(t) for t in "3m 4m 4m 5m 5m 6m".split()] and seat1["taken"] == [K("4m"), K("5m")]
    assert [r["last_claim"] for r in rows] == _claim(1, "chi", "4m 5m 6m", "5m", 0, 4)
    _play_to(g, 1, K("9p"))  # T 5
    _play_to(g, 2, A_PENG)
    assert [r["last_claim"] for r in _rows(g)] == _claim(2, "peng", "9p", "9p", 1, 5)
    _play_to(g, 2, K("1s"))  # T 6
    _seat_3_discards(g)  # T 7
    _play_to(g, 0, K("9m"))  # T 8
    _play_to(g, 1, K("2p"))  # T 9
    _play_to(g, 2, A_SELF_KONG + K("9p"))  # the peng becomes an added kong: no claim
    assert MELD_NAMES[int(g.view.meld[2, 0, 0])] == "added_kong"
    assert [r["last_claim"] for r in _rows(g)] == _claim(2, "peng", "9p", "9p", 1, 5)


def _new_claim(g: Game, before: list[int], truth):
    """The engine's own record of a claim the last step made, else ``truth`` unchanged."""
    v = g.view
    for q in range(4):
        if int(v.n_melds[q]) > before[q]:
            t, k, taken, src = (int(x) for x in v.meld[q, int(v.n_melds[q]) - 1])
            name = MELD_NAMES[t]
            if name in ("chi", "peng", "exposed_kong"):
                kinds = [k, k + 1, k + 2] if name == "chi" else [k]
                tile = taken if name == "chi" else k
                truth = (q, name, kinds, tile, src, int(v.n_disc.sum()) - 1)
    return truth


def test_last_claim_agrees_with_the_engine_over_random_games():
    """Every decision of three-hand matches played claim-happy: the decoded last claim is the
    engine's (who, what, which tile, from whom, which discard), None before the hand's first."""
    heuristic = make_agent("heuristic")
    seen, checked = set(), 0
    for seed in range(4):
        g = Game(hands_per_game=3)
        g.reset(seed=seed)
        rng = np.random.default_rng(seed)
        truth, hand = None, 1
        while not g.done:
            if len(g.hand_starts) != hand:
                truth, hand = None, len(g.hand_starts)
            me, o = g.seat, _v3(g, g.seat)
            (got,) = last_claim(o)
            if truth is None:
                assert got is None
            else:
                q, name, kinds, tile, src, at = truth
                want = {"seat": (q - me) % 4, "type": name, "kinds": kinds, "tile": tile, "from": (src - me) % 4}
                assert got == {**want, "at": at}, (got, truth)
                seen.add((name, tile - kinds[0]))
            checked += 1
            before = [int(x) for x in g.view.n_melds]
            legal = g.legal_actions
            claims = [a for a in legal if 27 <= a <= 31]
            if claims and rng.random() < 0.6:
                a = int(rng.choice(claims))
            else:
                a = int(heuristic.act(o[None], g.mask[None])[0])
            g.step(a)
            truth = _new_claim(g, before, truth)
    assert checked > 300 and {("chi", 0), ("chi", 1), ("chi", 2), ("peng", 0)} <= seen


def test_a_v2_bot_asking_for_last_claim_gets_v3_tables_and_its_v2_view(tmp_path):
    o2, o3, m = tables()
    spec, log = logging_bot(tmp_path, obs=["view", "planes", "last_claim"])
    agent = make_agent(spec)
    try:
        assert agent.obs_version == "v3"  # the evaluator makes its tables v3 for it
        agent.act(o3, m)
        assert sum(agent.pop_faults().values()) == 0
    finally:
        agent.close()
    (req,) = received(log)
    views, claims = public_view(o2), last_claim(o3)
    assert any(c is not None for c in claims)
    for i, row in enumerate(req["rows"]):
        assert row["view"] == views[i] and np.array_equal(planes_of(row), o2[i].ravel())
        assert row["last_claim"] == claims[i]
    # the same rows as a v2 bot's that did not ask, plus the key
    plain = json.loads(request_message(req["id"], o2, m, ("view", "planes")))["rows"]
    assert [{k: v for k, v in row.items() if k != "last_claim"} for row in req["rows"]] == plain


def test_a_bot_that_does_not_ask_gets_the_same_bytes_and_v2_tables(tmp_path):
    """At a v3 table a v2 bot's request is byte for byte the one made from the v2 planes alone."""
    o2, o3, m = tables()
    spec, log = logging_bot(tmp_path)
    agent = make_agent(spec)
    try:
        assert agent.obs_version == "v2"
        agent.act(o3, m)
    finally:
        agent.close()
    (line,) = [x for x in log.read_text().splitlines() if '"act"' in x]
    assert line == request_message(json.loads(line)["id"], o2, m, ("view", "planes"))
    assert "last_claim" not in line


def test_fzmj_eval_sends_last_claim_to_a_v2_bot(tmp_path):
    spec, log = logging_bot(tmp_path, obs=["last_claim"])
    out = evaluate([spec, "heuristic"], hands=8, seed=4, batch=8, progress=False)
    assert sum(out["bot_faults"][spec].values()) == 0
    rows = [row for req in received(log) for row in req["rows"]]
    assert all(set(row) == {"table", "seat", "legal", "last_claim"} for row in rows)
    claims = [row["last_claim"] for row in rows if row["last_claim"] is not None]
    assert claims and all(c["type"] in ("chi", "peng", "exposed_kong") and c["tile"] in c["kinds"] for c in claims)
