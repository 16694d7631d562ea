"""The duplicate evaluator and the ``fzmj-eval`` CLI."""

import json
import math
import textwrap

import numpy as np
import pytest

import fzmj_env.vector as V
from fzmj.agents.evaluate import evaluate, main, mean_ci95, t_quantile_975, wall_seeds
from fzmj_env.core.state import DEALER


def _no_timing(res):
    return {k: v for k, v in res.items() if k != "timing"}


# ---- statistics -------------------------------------------------------------------------------------
def test_ci_math_on_known_data():
    m, ci = mean_ci95([1, 2, 3, 4, 5])
    half = 2.7764 * math.sqrt(2.5) / math.sqrt(5)  # t(0.975, 4) * s / sqrt(n)
    assert m == 3 and ci == pytest.approx([3 - half, 3 + half], abs=1e-4)
    m, ci = mean_ci95([2.0, 2.0, 2.0])
    assert m == 2 and ci == [2, 2]
    assert mean_ci95([7])[1] is None
    # Student t 0.975 quantiles (scipy.stats.t.ppf reference values)
    for df, q in [
        (1, 12.7062),
        (10, 2.2281),
        (30, 2.0423),
        (31, 2.0395),
        (40, 2.0211),
        (60, 2.0003),
        (120, 1.9799),
        (1000, 1.9623),
    ]:
        assert t_quantile_975(df) == pytest.approx(q, abs=2e-4)
    # large-sample: the interval of N(0,1) data covers 0 about 95% of the time
    rng = np.random.default_rng(0)
    cover = np.mean([(lambda c: c[0] <= 0 <= c[1])(mean_ci95(rng.normal(size=20))[1]) for _ in range(2000)])
    assert 0.93 < cover < 0.97


# ---- duplicate format ---------------------------------------------------------------------------------
def test_each_wall_is_played_once_per_rotation(monkeypatch):
    seen = []
    orig = V.VectorEnv.reset

    def spy(self, seeds=None):
        out = orig(self, seeds)
        seen.append((np.array(seeds, dtype=np.uint64), self.buf["wall"].copy(), self.buf["m"][:, DEALER].copy()))
        return out

    monkeypatch.setattr(V.VectorEnv, "reset", spy)
    res = evaluate(["heuristic", "random"], hands=96, seed=5, batch=32, progress=False)
    assert res["hands"] == 96 and res["walls"] == 24
    assert len(seen) == 3  # 3 batches of 8 walls
    seeds = np.concatenate([s for s, _, _ in seen])
    np.testing.assert_array_equal(seeds, np.repeat(wall_seeds(5, 24), 4))
    assert len(set(seeds.tolist())) == 24
    for _, walls, dealers in seen:
        for w in range(0, len(walls), 4):  # the 4 rotations of a wall: same wall, same dealer
            for r in range(1, 4):
                np.testing.assert_array_equal(walls[w + r], walls[w])
                assert dealers[w + r] == dealers[w]


def test_identical_deterministic_agents_cancel_exactly():
    """Four heuristics: each wall is the same game in all 4 rotations, so every slot scores 0."""
    res = evaluate(["heuristic"] * 4, hands=64, seed=2, progress=False)
    assert list(res["agents"]) == ["heuristic"]
    for p in res["per_slot"]:
        assert p["mean_score"] == 0 and p["ci95"] == [0, 0]
    rates = {(p["win_rate"], p["deal_in_rate"]) for p in res["per_slot"]}
    assert len(rates) == 1
    assert res["pairwise"] == [] and res["ratings"] is None


def test_same_results_whatever_the_number_of_workers():
    kw = dict(hands=160, seed=3, batch=32, progress=False)
    agents = ["heuristic", "random", "random:9", "random"]
    one = evaluate(agents, workers=1, **kw)
    two = evaluate(agents, workers=2, **kw)
    assert two["timing"]["workers"] == 2
    assert json.dumps(_no_timing(one), sort_keys=True) == json.dumps(_no_timing(two), sort_keys=True)
    spawned = evaluate(agents, workers=3, start_method="spawn", **kw)  # what a torch-using caller gets
    assert json.dumps(_no_timing(one), sort_keys=True) == json.dumps(_no_timing(spawned), sort_keys=True)
    other = evaluate(agents, workers=1, **{**kw, "seed": 4})
    assert _no_timing(other) != _no_timing(one)


def test_a_random_agents_own_seed_gives_it_its_own_games():
    """``random:SEED`` mixes SEED into the stream the evaluator gives it: two seeds, two players;
    ``random`` and ``random:0`` are the same player."""
    kw = dict(hands=64, seed=5, batch=32, progress=False)
    scores = {}
    for spec in ("random", "random:0", "random:1", "random:2"):
        res = evaluate([spec, "heuristic"], **kw)
        scores[spec] = res["agents"][spec]["mean_score"]
    assert scores["random"] == scores["random:0"]
    assert len({scores["random"], scores["random:1"], scores["random:2"]}) == 3


def test_python_class_agent_in_an_evaluation(tmp_path, monkeypatch):
    (tmp_path / "eval_bot_mod.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from fzmj.agents import Agent

            class FirstLegal(Agent):
                name = "first-legal"
                def act(self, obs, mask):
                    return np.argmax(mask, axis=1)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    res = evaluate(["python:eval_bot_mod:FirstLegal", "heuristic"], hands=40, seed=1, batch=40, progress=False)
    assert list(res["agents"]) == ["python:eval_bot_mod:FirstLegal", "heuristic"]
    assert res["slots"] == ["python:eval_bot_mod:FirstLegal"] + ["heuristic"] * 3
    assert res["agents"]["heuristic"]["slots"] == [1, 2, 3]


# ---- CLI -----------------------------------------------------------------------------------------------
def test_cli_end_to_end(tmp_path, capsys):
    out, png = tmp_path / "results.json", tmp_path / "plot.png"
    rc = main(
        [
            "--agents",
            "heuristic",
            "random",
            "random",
            "random",
            "--hands",
            "300",
            "--seed",
            "0",
            "--out",
            str(out),
            "--plot",
            str(png),
            "--no-progress",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "| heuristic |" in text and "| random |" in text and "OpenSkill" in text
    res = json.loads(out.read_text())
    assert res["hands"] == 300 and res["walls"] == 75
    h, r = res["agents"]["heuristic"], res["agents"]["random"]
    for a in (h, r):
        for key in (
            "mean_score",
            "ci95",
            "win_rate",
            "deal_in_rate",
            "self_draw_rate",
            "mean_win_value",
            "specials",
            "draw_rate",
        ):
            assert key in a
        assert a["ci95"][0] <= a["mean_score"] <= a["ci95"][1]
    assert h["ci95"][0] > 0 and h["win_rate"] > r["win_rate"]
    assert h["mean_score"] + 3 * r["mean_score"] == pytest.approx(0, abs=1e-9)  # zero-sum
    assert res["pairwise"][0]["a"] == "heuristic" and res["pairwise"][0]["mean_diff"] > 0
    assert res["ratings"]["agents"]["heuristic"]["mu"] > res["ratings"]["agents"]["random"]["mu"]
    assert png.stat().st_size > 1000


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["--agents", "heuristic", "randomm"], "unknown agent spec"),
        (["--agents", "ppo:/no/such/file.pt", "heuristic"], "no such checkpoint"),
        (["--agents", "python:no_such_module_xyz:Bot"], "cannot import"),
        (["--agents", "heuristic", "--hands", "0"], "--hands"),
        (["--agents", "heuristic", "--bogus"], "unrecognized arguments"),
        (["--agents", "a", "b", "c", "d", "e"], "at most 4"),
        (["--hands", "10"], "--agents"),
        (["--agents", "heuristic", "--workers", "x"], "--workers"),
        (["--agents", "heuristic", "--rules", "nope"], "unknown rules"),
    ],
)
def test_cli_errors_are_one_line_exit_2(argv, msg, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv + ["--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("fzmj-eval: error:") and msg in err


def test_ppo_checkpoint_in_an_evaluation(tmp_path):
    """``ppo:PATH`` through ``fzmj.train.checkpoint.load_policy`` (skipped while train/ lacks it)."""
    torch = pytest.importorskip("torch")
    ckpt = pytest.importorskip("fzmj.train.checkpoint")
    model = pytest.importorskip("fzmj.train.model")
    torch.manual_seed(0)
    path = ckpt.save_checkpoint(tmp_path / "policy.pt", model.ActorCritic(hidden_sizes=(32,)))
    res = evaluate([f"ppo:{path}", "random"], hands=16, seed=0, batch=16, progress=False)
    assert list(res["agents"]) == [f"ppo:{path}", "random"]
    assert res["agents"][f"ppo:{path}"]["hands"] == 16


# ---- paired evaluation ---------------------------------------------------------------------------------
FIRST_LEGAL = """
import numpy as np
from fzmj.agents import Agent

class FirstLegal(Agent):
    name = "first-legal"
    def act(self, obs, mask):
        return np.argmax(mask, axis=1)
"""


def test_paired_with_itself_is_exactly_zero():
    for agents in (["heuristic", "random"], ["random:3", "heuristic"]):
        res = evaluate(agents, hands=64, seed=2, batch=32, progress=False, paired=agents[0])
        p = res["paired"]
        assert (p["agent"], p["ref"], p["slot"], p["hands"]) == (agents[0], agents[0], 0, 64)
        assert p["mean"] == 0 and p["ci95"] == [0, 0]
        plain = evaluate(agents, hands=64, seed=2, batch=32, progress=False)
        assert _no_timing(plain) == {k: v for k, v in _no_timing(res).items() if k != "paired"}


def test_paired_is_the_slot_0_difference_of_the_two_games(tmp_path, monkeypatch):
    """Deterministic agents: the paired run is the plain evaluation with REF in slot 0, so the
    paired mean is the difference of slot 0's scores, and its interval is over walls."""
    (tmp_path / "paired_bot.py").write_text(FIRST_LEGAL)
    monkeypatch.syspath_prepend(str(tmp_path))
    bot = "python:paired_bot:FirstLegal"
    res, raw = evaluate(["heuristic", bot], hands=96, seed=4, batch=32, progress=False, paired=bot, _raw=True)
    ref, ref_raw = evaluate([bot, bot], hands=96, seed=4, batch=32, progress=False, _raw=True)
    p = res["paired"]
    d = raw["slot_points"][:, :, 0] - ref_raw["slot_points"][:, :, 0]
    assert p["mean"] == pytest.approx(res["per_slot"][0]["mean_score"] - ref["per_slot"][0]["mean_score"], abs=1e-9)
    assert p["ci95"] == pytest.approx(mean_ci95(d.mean(axis=1))[1], abs=1e-12)
    assert p["mean"] > 0 and p["ci95"][0] > 0  # the heuristic is far ahead of the first legal action
    assert (p["agent"], p["ref"], p["hands"]) == ("heuristic", bot, 96)


def test_paired_cli_table_and_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["--agents", "heuristic", "random", "--hands", "32", "--paired", "heuristic", "--no-progress"]
    assert main(argv + ["--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| heuristic vs heuristic | +0.00 | [+0.00, +0.00] | 32 |" in text
    assert json.loads(out.read_text())["paired"] == {
        "agent": "heuristic", "ref": "heuristic", "slot": 0, "mean": 0.0, "ci95": [0.0, 0.0], "hands": 32,
        "clean": True, "walls_excluded": 0,
    }  # fmt: skip


@pytest.mark.parametrize("ref, msg", [("randomm", "unknown agent spec"), ("ppo:/no/such.pt", "no such checkpoint")])
def test_paired_bad_ref_is_one_line_exit_2(ref, msg, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--agents", "heuristic", "--hands", "8", "--paired", ref, "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("fzmj-eval: error:") and msg in err
    with pytest.raises(ValueError, match=msg):
        evaluate(["heuristic"], hands=8, progress=False, paired=ref)


def test_evaluator_counts_each_agents_decisions():
    """``agents[name]["decisions"]``: the rows the evaluator handed that agent, counted by the agent
    itself here; they add up to ``timing.decisions``. One against three and a single agent alone."""
    from fzmj.agents.random_agent import RandomAgent

    class Counting(RandomAgent):
        def __init__(self, name):
            super().__init__(seed=1, name=name)
            self.rows = 0

        def act(self, obs, mask):
            self.rows += len(mask)
            return super().act(obs, mask)

    a, b = Counting("a"), Counting("b")
    res = evaluate([a, b], hands=16, seed=3, progress=False)
    assert res["agents"]["a"]["decisions"] == a.rows > 0 and res["agents"]["b"]["decisions"] == b.rows > a.rows
    assert a.rows + b.rows == res["timing"]["decisions"]
    solo = Counting("solo")
    res = evaluate([solo], hands=8, seed=3, progress=False)
    assert res["agents"]["solo"]["decisions"] == solo.rows == res["timing"]["decisions"]


def test_rules_with_no_value_lists_the_presets(capsys):
    """``fzmj-eval --rules``: every shipped preset, one a line, with its scheme (issue 59)."""
    from fzmj_env import available_rules, load_rules

    assert main(["--rules"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0].removesuffix(" (default)") for line in lines] == available_rules()
    assert all(f"scheme {load_rules(n).scheme}" in line for n, line in zip(available_rules(), lines, strict=True))
    with pytest.raises(SystemExit) as e:
        main(["--hands", "4"])  # --agents is still required to play
    assert e.value.code == 2 and "required: --agents" in capsys.readouterr().err
