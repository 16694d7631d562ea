"""Observation v3 for ``exec:`` bots and evaluation records (docs/protocol.md, "Observation v3"):
a bot asks for v3 in its hello and gets the env's v3 tensor and the decoded history; v2 stays the
default byte for byte; an unknown or malformed layout is one counted fault, never a crash; an
evaluation record rebuilds the v3 observation of every decision through the engine and encoder."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from fzmj.agents import make_agent
from fzmj.agents.evaluate import evaluate
from fzmj.agents.evaluate.records import record_observations
from fzmj.agents.exec_bot import history_view, public_view
from fzmj_env.core.state import MELD_NAMES
from fzmj_env.encode import NUM_CHANNELS, V3_CHANNELS, encode_table
from fzmj_env.game import Game
from fzmj_env.record import load_record
from fzmj_env.vector import VectorEnv

# A bot that logs every line it receives to argv[1] and answers a seeded random legal action; its
# hello carries argv[2] as "obs_version" (raw JSON) unless argv[2] is "-", and argv[3] (raw JSON) as
# "obs" when given (else ["view", "planes"]).
LOGGING_BOT = """\
import json, random, sys
log = open(sys.argv[1], "a")
rng = random.Random(0)
for line in sys.stdin:
    log.write(line)
    log.flush()
    msg = json.loads(line)
    if msg["type"] in ("hello", "reset"):
        rng.seed(msg.get("seed"))
    if msg["type"] == "hello":
        obs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else ["view", "planes"]
        hello = {"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": obs}
        if sys.argv[2] != "-":
            hello["obs_version"] = json.loads(sys.argv[2])
        print(json.dumps(hello), flush=True)
    elif msg["type"] == "act":
        acts = [rng.choice(r["legal"]) for r in msg["rows"]]
        print(json.dumps({"type": "act", "id": msg["id"], "actions": acts}), flush=True)
"""


def logging_bot(
    tmp_path: Path, version: str = "-", options: str = "", name: str = "log", obs: list | None = None
) -> tuple[str, Path]:
    """(an exec spec of LOGGING_BOT with hello fields ``version`` and ``obs``, the file it logs to)."""
    src = tmp_path / "logging_bot.py"
    src.write_text(LOGGING_BOT)
    log = tmp_path / f"{name}.jsonl"
    argv = [sys.executable, str(src), str(log), version] + ([] if obs is None else [json.dumps(obs)])
    return f"exec:{options}{shlex.join(argv)}", log


def received(log: Path, kind: str = "act") -> list[dict]:
    return [m for m in map(json.loads, log.read_text().splitlines()) if m["type"] == kind]


def tables(n: int = 8, seed: int = 3, steps: int = 60):
    """(v2 obs, v3 obs, mask) of the same tables along one random game (every ``steps``th kept)."""
    e2, e3 = VectorEnv(n, seed=seed), VectorEnv(n, seed=seed, obs_version=3)
    o2, m, _ = e2.reset()
    o3, _, _ = e3.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        act = (rng.random(m.shape) * m).argmax(1)
        o2, m, *_ = e2.step(act)
        o3, *_ = e3.step(act)
    return o2, o3, m


def planes_of(row: dict) -> np.ndarray:
    return (np.frombuffer(row["planes"].encode(), dtype=np.uint8) - 48).astype(np.int8)


# ---- 1. the hello: v2 by default, v3 on request -------------------------------------------------------
def test_the_engine_hello_names_the_layouts_and_v2_stays_the_default_byte_for_byte(tmp_path):
    """A bot that does not ask gets v2 rows, identical whether the table gives v2 or v3."""
    o2, o3, m = tables()
    lines = []
    for obs in (o2, o3):
        spec, log = logging_bot(tmp_path, name=f"v2_{obs.shape[1]}")
        agent = make_agent(spec)
        try:
            assert agent.obs_version == "v2"
            agent.act(obs, m)
            assert sum(agent.pop_faults().values()) == 0
        finally:
            agent.close()
        hello = received(log, "hello")[0]
        assert hello["obs_version"] == "v2" and hello["obs_shape"] == [NUM_CHANNELS, 27]
        assert hello["obs_versions"] == ["v2", "v3"]
        lines.append([line for line in log.read_text().splitlines() if '"act"' in line])
    assert lines[0] == lines[1]
    row = json.loads(lines[0][0])["rows"][0]
    assert len(row["planes"]) == NUM_CHANNELS * 27 and "hand_no" not in row["view"]


@pytest.mark.parametrize("version", ['"v3"', "3"])
def test_a_v3_bot_gets_the_env_v3_observation(tmp_path, version):
    """The planes are the env's v3 tensor exactly; the view is v2's view plus the v3 fields."""
    o2, o3, m = tables()
    spec, log = logging_bot(tmp_path, version)
    agent = make_agent(spec)
    try:
        assert agent.obs_version == "v3"
        a = agent.act(o3, m)
        assert sum(agent.pop_faults().values()) == 0 and bool((m[np.arange(len(a)), a] == 1).all())
    finally:
        agent.close()
    (req,) = received(log)
    v2_views, history = public_view(o2), history_view(o3)
    for i, row in enumerate(req["rows"]):
        assert len(row["planes"]) == V3_CHANNELS * 27
        assert np.array_equal(planes_of(row).reshape(V3_CHANNELS, 27), o3[i])
        assert row["legal"] == np.flatnonzero(m[i]).tolist()
        view = row["view"]
        assert view["hand_no"] == history[i]["hand_no"]
        for r in range(4):
            seat = view["seats"][r]
            assert {k: seat[k] for k in v2_views[i]["seats"][r]} == v2_views[i]["seats"][r]
            assert {k: seat[k] for k in history[i]["seats"][r]} == history[i]["seats"][r]
        assert {k: view[k] for k in v2_views[i] if k != "seats"} == {
            k: v for k, v in v2_views[i].items() if k != "seats"
        }


def test_the_example_bot_asks_for_v3_and_fzmj_eval_runs_v3(tmp_path):
    root = Path(__file__).resolve().parents[1]
    spec = f"exec:{shlex.join([sys.executable, str(root / 'examples/bots/random_bot.py'), '--obs', 'view,planes', '--obs-version', 'v3'])}"
    agent = make_agent(spec)
    try:
        assert agent.obs_version == "v3"
    finally:
        agent.close()
    out = evaluate([spec, "heuristic"], hands=8, seed=2, batch=8, progress=False)
    assert sum(out["bot_faults"][spec].values()) == 0 and out["agents"][spec]["decisions"] > 0


def _check_seat(h: dict, g: Game, q: int, me: int) -> None:
    """One relative seat's decoded v3 fields against the engine's own record of seat ``q``."""
    v = g.view
    n = int(v.n_disc[q])
    assert h["discard_order"] == v.disc[q, : min(n, 24)].tolist()
    assert len(h["disc_time"]) == n and h["disc_time"] == sorted(h["disc_time"])
    assert h["disc_claimed_at"] == np.flatnonzero(v.disc_claimed[q, : min(n, 27)]).tolist()
    melds = h["meld_history"]
    assert len(melds) == int(v.n_melds[q])
    for j, m in enumerate(melds):
        t, k, _, src = (int(x) for x in v.meld[q, j])
        assert m["type"] == MELD_NAMES[t]
        assert m["source"] == (None if src < 0 else (src - q) % 4)
        hidden = MELD_NAMES[t] == "concealed_kong" and q != me
        assert m["kinds"] == ([] if hidden else [k, k + 1, k + 2] if MELD_NAMES[t] == "chi" else [k])
        assert (m["taken"] is None) == (MELD_NAMES[t] != "chi")
        assert 1 <= len(m["when"]) <= (2 if MELD_NAMES[t] == "added_kong" else 1)
    laid = int(v.flowers[q].sum())  # per position the planes count at most 4
    assert len(h["flowers_when"]) == 27 and (0 < sum(h["flowers_when"]) <= laid or laid == 0 == sum(h["flowers_when"]))
    score, best = int(v.scores[q]), int(v.scores.max())
    assert np.sign(h["score_level"]) == np.sign(score) and h["score_leads"] == (score == best)


def test_the_v3_fields_mean_what_docs_observation_says():
    """Decoded from the planes only, they agree with the engine's state (public parts) along a
    three-hand match: discard order and table times, melds, flowers, scores, hand number."""
    heuristic = make_agent("heuristic")
    g = Game(hands_per_game=3)
    g.reset(seed=11)
    rng = np.random.default_rng(0)
    o = np.zeros((V3_CHANNELS, 27), dtype=np.int8)
    checked, levels = 0, set()
    while not g.done:
        me = g.seat
        encode_table(g.buf, 0, me, o)
        (h,) = history_view(o)
        assert h["hand_no"] == len(g.hand_starts) - 1
        for r in range(4):
            _check_seat(h["seats"][r], g, (me + r) % 4, me)
        times = sorted(t for s in h["seats"] for t in s["disc_time"])
        assert times == list(range(len(times)))  # the four clocks interleave into the table's
        checked += 1
        levels |= {s["score_level"] for s in h["seats"]}
        greedy = rng.random() < 0.7  # mostly heuristic play: hands are won, scores move
        g.step(int(heuristic.act(o[None], g.mask[None])[0] if greedy else rng.choice(np.flatnonzero(g.mask))))
    assert checked > 100 and len(levels) > 2 and h["hand_no"] == 2


# ---- 2. a bad layout: one counted fault, the fallback plays, no restart ----------------------------------
BAD_VERSIONS = [
    '"v4"',
    "4",
    '"V3"',
    '"3"',
    "3.0",
    "true",
    "null",
    "[3]",
    '{"v": 3}',
    '""',
    str(2**64),
    '"' + "v" * 5000 + '"',
]


@pytest.mark.parametrize("version", BAD_VERSIONS, ids=lambda v: v[:12])
def test_an_unknown_or_malformed_layout_is_one_counted_fault(tmp_path, capfd, version):
    spec, log = logging_bot(tmp_path, version, options="restarts=3:")
    _, o3, m = tables(4)
    agent = make_agent(spec)
    try:
        for _ in range(2):  # refused once, not restarted: the same hello would come back
            a = agent.act(o3, m)
            assert bool((m[np.arange(len(a)), a] == 1).all())
        assert agent.obs_version == "v2"
        f = agent.pop_faults()
    finally:
        agent.close()
    assert f == {"crash": 0, "timeout": 0, "garbage": 1, "illegal": 0, "fallback_decisions": 8}, f
    err = [line for line in capfd.readouterr().err.splitlines() if "exec bot" in line]
    assert len(err) == 1 and "asks for observation" in err[0] and len(err[0]) < 400
    assert len(received(log, "hello")) == 1


@pytest.mark.parametrize(
    ("version", "obs", "why"),
    [
        ('"v3"', None, "asked for observation v3, this table gives v2"),
        ("-", ["view", "last_claim"], "asked for last_claim, read from observation v3, this table gives v2"),
    ],
)
def test_a_v3_bot_at_a_v2_table_is_one_counted_fault(tmp_path, capfd, version, obs, why):
    """The single-seat env made without obs_version=3 gives v2: a bot that asked for v3, or for
    last_claim (read from the v3 planes), is refused there in one line."""
    o2, _, m = tables(4)
    spec, log = logging_bot(tmp_path, version, obs=obs)
    agent = make_agent(spec)
    try:
        for _ in range(2):
            a = agent.act(o2, m)
            assert bool((m[np.arange(len(a)), a] == 1).all())
        f = agent.pop_faults()
    finally:
        agent.close()
    assert f["garbage"] == 1 and f["fallback_decisions"] == 8 and not received(log)
    assert why in capfd.readouterr().err


def test_fzmj_eval_goes_on_with_a_bad_layout_and_counts_it(tmp_path):
    bad, _ = logging_bot(tmp_path, '"v9"', name="bad")
    out = evaluate([bad, "random"], hands=8, seed=5, batch=8, progress=False)
    assert out["bot_faults"][bad]["garbage"] == 1
    assert out["bot_faults"][bad]["fallback_decisions"] == out["agents"][bad]["decisions"] > 0


# ---- 3. records: the v3 observation of every decision, rebuilt through the engine ------------------------
def _rows_by_job(acts: list[dict], lengths: dict[int, int]) -> dict[tuple[int, int], dict]:
    """(job, decision) -> the row the bot got: at step s the rows are the live jobs in order."""
    out = {}
    for s, req in enumerate(acts):
        live = [j for j in sorted(lengths) if lengths[j] > s]
        assert len(req["rows"]) == len(live)
        out.update({(j, s): row for j, row in zip(live, req["rows"], strict=True)})
    return out


def test_records_rebuild_exactly_the_v3_observation_each_decision_was_played_on(tmp_path):
    """One v3 bot in every seat, one wall (4 tables, one request per step): every record replays
    to the exact v3 tensor the bot received at each of its decisions."""
    spec, log = logging_bot(tmp_path, '"v3"')
    out = evaluate(
        [spec], hands=4, seed=21, batch=4, progress=False, save_records=str(tmp_path / "rec"), max_records=32
    )
    assert sum(out["bot_faults"][spec].values()) == 0
    records = {(r := load_record(p))["meta"]["rotation"]: r for p in out["records"]}
    assert sorted(records) == [0, 1, 2, 3]
    rows = _rows_by_job(received(log), {j: len(r["decisions"]) for j, r in records.items()})
    for j, rec in records.items():
        assert rec["meta"]["obs_version"] == "v3" and rec["meta"]["obs_versions"] == ["v3"] * 4
        seats, obs, masks = record_observations(rec, 3)
        assert len(obs) == len(rec["decisions"]) > 20
        for i in range(len(obs)):
            assert np.array_equal(planes_of(rows[j, i]).reshape(V3_CHANNELS, 27), obs[i]), (j, i)
            assert rows[j, i]["legal"] == np.flatnonzero(masks[i]).tolist()


def test_records_rebuild_the_env_v3_and_v2_observations(tmp_path):
    """Records of v2 agents rebuild v3 too: equal to a v3 env stepped through the same decisions."""
    out = evaluate(
        ["heuristic", "random"], hands=8, seed=8, batch=8, progress=False, save_records=str(tmp_path), max_records=4
    )
    assert len(out["records"]) >= 2
    for path in out["records"]:
        rec = load_record(path)
        assert rec["meta"]["obs_version"] == "v2" and rec["meta"]["obs_versions"] == ["v2"] * 4
        seats, obs, masks = record_observations(rec, "v3")
        env = VectorEnv(1, rules=rec["rules"], hands_per_game=1, auto_reset=False, obs_version=3)
        o, m, s = env.reset(seeds=np.array([rec["seed"]], dtype=np.uint64))
        for i, (seat, action) in enumerate(rec["decisions"]):
            assert int(s[0]) == seat == seats[i]
            assert np.array_equal(o[0], obs[i]) and np.array_equal(m[0], masks[i]), (path, i)
            o, m, s, *_ = env.step(np.array([action]))
        assert np.array_equal(record_observations(rec, 2)[1], obs[:, :NUM_CHANNELS])
