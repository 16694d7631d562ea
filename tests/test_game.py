"""The Python driver (Game), scripted walls (R3) and game records."""

import json

import numpy as np
import pytest

from fzmj_env import Game, IllegalActionError, RecordError, load_record, make_record, replay, save_record
from fzmj_env.game import parse_wall
from fzmj_env.tiles import full_set, kind_name


def play_random(game: Game, seed: int) -> None:
    rng = np.random.default_rng(seed)
    while not game.done:
        legal = game.legal_actions
        game.step(legal[int(rng.integers(len(legal)))])


def test_illegal_action_names_seat_action_and_legal_choices():
    g = Game()
    g.reset(seed=3)
    bad = int(np.flatnonzero(g.mask == 0)[0])
    before = g.buf.copy()
    with pytest.raises(IllegalActionError, match=rf"seat {g.seat} cannot take action {bad} .*legal: "):
        g.step(bad)
    with pytest.raises(IllegalActionError, match="outside 0..61"):
        g.step(99)
    with pytest.raises(IllegalActionError, match="integer"):
        g.step("5")
    assert (g.buf == before).all()


def test_reset_validates_its_arguments():
    g = Game()
    with pytest.raises(ValueError, match="seed"):
        g.reset(seed=-5)
    with pytest.raises(ValueError, match="dealer"):
        g.reset(seed=1, dealer=4)
    with pytest.raises(ValueError, match="144"):
        g.reset(wall=list(range(10)))
    wall = full_set().tolist()
    wall[0] = wall[-1]  # one 1m too few, one 8f too many
    with pytest.raises(ValueError, match="wrong counts: 1m: 3 .*8f: 2"):
        g.reset(wall=wall)
    with pytest.raises(ValueError, match="hands_per_game"):
        Game(hands_per_game=0)


def test_r3_wall_accepts_kinds_names_or_notation():
    kinds = np.random.default_rng(0).permutation(full_set())
    names = [kind_name(int(k)) for k in kinds]
    assert (parse_wall(kinds) == kinds).all()
    assert (parse_wall(names) == kinds).all()


def test_same_seed_same_game():
    a, b = Game(), Game()
    a.reset(seed=42)
    b.reset(seed=42)
    play_random(a, 1)
    play_random(b, 1)
    assert a.decisions == b.decisions and a.results == b.results
    assert (a.buf == b.buf).all()


@pytest.mark.parametrize("hands", [1, 3])
def test_record_round_trip_replays_exactly(tmp_path, hands):
    g = Game(hands_per_game=hands)
    g.reset(seed=11)
    play_random(g, 5)
    rec = make_record(g)
    path = tmp_path / "game.json"
    save_record(rec, path)
    again = replay(load_record(path))
    assert again.results == g.results and again.scores == g.scores
    assert len(rec["hands"]) == hands


def test_record_rejects_corruption(tmp_path):
    g = Game()
    g.reset(seed=12)
    play_random(g, 6)
    rec = make_record(g)

    bad = json.loads(json.dumps(rec))
    bad["decisions"][3][0] = (bad["decisions"][3][0] + 1) % 4
    with pytest.raises(RecordError, match="decision 3"):
        replay(bad)

    bad = json.loads(json.dumps(rec))
    bad["decisions"] = bad["decisions"][:-1]
    with pytest.raises(RecordError, match="ends before the game does"):
        replay(bad)

    bad = json.loads(json.dumps(rec))
    bad["hands"][0]["result"]["value"] += 1
    with pytest.raises(RecordError, match="result differs"):
        replay(bad)

    # a different deal: swap a dealer tile with a tile of another kind in the next seat's hand
    bad = json.loads(json.dumps(rec))
    wall = bad["hands"][0]["wall"]
    j = next(i for i in range(16, 32) if wall[i] != wall[0])
    wall[0], wall[j] = wall[j], wall[0]
    with pytest.raises(RecordError):
        replay(bad)

    bad = dict(rec)
    del bad["decisions"]
    with pytest.raises(RecordError, match="missing keys: decisions"):
        replay(bad)

    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(RecordError, match="not valid JSON"):
        load_record(path)
