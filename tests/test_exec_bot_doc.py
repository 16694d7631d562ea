"""A bot written from docs/protocol.md to the letter, played through ``evaluate``: the hello, a
reset before the first request (and every batch), rows whose fields are what the doc promises
(tile lists ascending with repetition, sets ascending without, ``drawn`` inside ``hand``, the
capped ``flowers_when``, ``last_claim``), and the end of input followed by a grace period (its last write, made
after end of file, is not lost). Also the hello's fields checked as strictly as the doc says."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fzmj.agents import make_agent
from fzmj.agents.evaluate import evaluate, markdown
from fzmj_env.vector import VectorEnv

DOC_BOT = textwrap.dedent(
    """
    import json, sys, time
    OUT = sys.argv[1]
    errors, resets, acts, rows, first_after_hello, tables, claims = [], [], 0, 0, None, {}, 0
    SEAT = ("melds", "pengs", "kongs", "taken", "discards", "claimed", "recent", "flowers", "dealer",
            "current", "discarder", "gold_discarded", "n_melds", "concealed_kongs", "swim",
            "discard_order", "meld_history", "flowers_when", "score_level")
    VIEW = ("hand", "gold", "golds", "drawn", "passed", "own_concealed_kongs", "phase", "to_act", "rob_window",
            "heaven_possible", "claim_tile", "seats", "drawable", "tiles_left_div4", "reserve", "streak",
            "hands_left", "preset", "loss_cap", "hand_no")

    def check(cond, what):
        if not cond and len(errors) < 20:
            errors.append(what)

    def tile_list(x):
        return isinstance(x, list) and all(type(k) is int and 0 <= k < 27 for k in x) and x == sorted(x)

    def kind_set(x):
        return tile_list(x) and len(set(x)) == len(x)

    last = None
    for line in sys.stdin:
        msg = json.loads(line)
        if last == "hello" and first_after_hello is None:
            first_after_hello = msg["type"]
        last = msg["type"]
        if msg["type"] == "hello":
            check(msg["protocol"] == "fzmj-bot" and msg["version"] == 1, "hello")
            print(json.dumps({"type": "hello", "protocol": "fzmj-bot", "version": 1, "name": "doc_bot",
                              "obs": ["view", "last_claim"], "obs_version": "v3"}), flush=True)
        elif msg["type"] == "reset":
            check(type(msg["seed"]) is int, "reset seed")
            resets.append(msg["seed"])
        elif msg["type"] == "act":
            acts += 1
            out = []
            for row in msg["rows"]:
                rows += 1
                legal, v = row["legal"], row["view"]
                check(type(row["table"]) is int and row["seat"] in (0, 1, 2, 3), "table and seat")
                check(tables.setdefault(row["table"], row["seat"]) == row["seat"], "one seat per table")
                check(legal and all(type(a) is int and 0 <= a < 62 for a in legal), "legal actions")
                check(legal == sorted(set(legal)), "legal ascending")
                check(all(k in v for k in VIEW), "view fields")
                check(tile_list(v["hand"]) and kind_set(v["passed"]), "hand/passed")
                check(v["drawn"] is None or v["drawn"] in v["hand"], "drawn in hand")
                check(v["phase"] in ("turn", "discard", "claim", "over") and v["to_act"] is True, "phase")
                for s in v["seats"]:
                    check(all(k in s for k in SEAT), "seat fields")
                    check(tile_list(s["melds"]) and tile_list(s["discards"]), "tile lists")
                    check(kind_set(s["taken"]) and kind_set(s["claimed"]), "sets")
                    check(kind_set(s["pengs"]) and kind_set(s["kongs"]), "pengs/kongs")
                    check(len(s["flowers_when"]) == 27 and all(0 <= c <= 4 for c in s["flowers_when"]), "fw")
                    check(sum(s["flowers_when"]) <= s["flowers"], "flowers_when within flowers")
                    check(len(s["recent"]) <= 4, "recent")
                c = row["last_claim"]
                check(c is None or set(c) == {"seat", "type", "kinds", "tile", "from", "at"}, "last_claim fields")
                if c is not None:
                    claims += 1
                    check(c["type"] in ("chi", "peng", "exposed_kong") and kind_set(c["kinds"]), "claim kinds")
                    check(len(c["kinds"]) == (3 if c["type"] == "chi" else 1) and c["tile"] in c["kinds"], "tile")
                    check(c["seat"] in (0, 1, 2, 3) and c["from"] in (0, 1, 2, 3) and c["from"] != c["seat"], "seats")
                    check(c["type"] != "chi" or c["from"] == (c["seat"] + 3) % 4, "a chi takes from 上家")
                    check(type(c["at"]) is int and 0 <= c["at"] < sum(len(s["disc_time"]) for s in v["seats"]), "at")
                out.append(legal[0])
            print(json.dumps({"type": "act", "id": msg["id"], "actions": out}), flush=True)
    time.sleep(0.05)  # after end of file: the engine waits for this write
    with open(OUT, "w") as f:
        json.dump({"errors": errors, "resets": resets, "acts": acts, "rows": rows, "first": first_after_hello,
                   "tables": sorted(tables), "claims": claims}, f)
    """
)


def test_a_bot_that_follows_the_doc_to_the_letter(tmp_path):
    path, out = tmp_path / "doc_bot.py", tmp_path / "summary.json"
    path.write_text(DOC_BOT)
    spec = f"exec:{sys.executable} {path} {out}"
    res = evaluate([spec, "random"], hands=32, seed=5, batch=4, progress=False)
    faults = res["bot_faults"]
    assert all(v == 0 for f in faults.values() for v in f.values()), faults
    summary = json.loads(out.read_text())  # written after end of input: the grace period kept it
    assert summary["errors"] == [] and summary["acts"] > 0 and summary["rows"] >= summary["acts"]
    assert summary["first"] == "reset"  # the first batch starts with a reset too
    assert summary["claims"] > 0  # rows with a last claim, in the doc's format
    assert summary["tables"] == list(range(32))  # every row said its table (4 x wall + rotation) and seat
    assert len(summary["resets"]) >= 32 // 4 // 4  # one per batch (and seat) at least
    # the bot named itself in its hello: the report shows that name, the JSON keeps the spec as key
    assert res["bot_names"] == {spec: "doc_bot"} and spec in res["agents"]
    table = markdown(res)
    assert "| doc_bot |" in table and f"doc_bot = `{spec}`" in table


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ({"obs": "view"}, "obs must be a list"),
        ({"obs": "last_claim"}, "obs must be a list"),
        ({"obs": ["view", "last-claim"]}, "obs must be a list"),
        ({"obs": ["Last_claim"]}, "obs must be a list"),
        ({"name": {"a": 1}}, "name must be a string"),
        ({"name": 7}, "name must be a string"),
        ({"max_batch": -1}, "max_batch must be"),
    ],
)
def test_wrongly_typed_hello_fields_are_garbage(tmp_path, capfd, extra, why):
    hello = {"type": "hello", "protocol": "fzmj-bot", "version": 1, **extra}
    path = tmp_path / "bot.py"
    path.write_text(f"import json, sys\nfor line in sys.stdin:\n    print(json.dumps({hello!r}), flush=True)\n")
    agent = make_agent(f"exec:restarts=0:{sys.executable} {path}")
    env = VectorEnv(4, seed=1, hands_per_game=1)
    obs, mask, _ = env.reset()
    acts = agent.act(obs, mask)
    agent.close()
    assert mask[np.arange(4), acts].all()  # the fallback played
    assert agent.pop_faults()["garbage"] == 1
    err = capfd.readouterr().err
    assert why in err and "at the handshake" in err


def test_a_v3_bot_asking_for_legal_only_gets_v2_tables(tmp_path):
    """``obs_version: v3`` with ``obs: []``: the bot reads nothing of the layout, so the evaluator's
    tables stay v2 (a v3 table costs such a bot half its hands/s) and a v2 table is not refused."""
    bot = Path(__file__).resolve().parents[1] / "examples/bots/random_bot.py"
    agent = make_agent(f"exec:{sys.executable} {bot} --obs-version v3")
    try:
        assert agent.obs_version == "v2"
        obs, mask, _ = VectorEnv(4, seed=1, hands_per_game=1).reset()
        acts = agent.act(obs, mask)
        assert mask[np.arange(4), acts].all() and agent.pop_faults()["garbage"] == 0
    finally:
        agent.close()
    viewer = make_agent(f"exec:{sys.executable} {bot} --obs-version v3 --obs view")
    try:
        assert viewer.obs_version == "v3"
    finally:
        viewer.close()
