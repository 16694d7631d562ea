"""Review mode against reviewers that fail or answer nonsense, and records with non-JSON numbers.

A reviewer's failure is one line naming the reviewer (never a traceback, never "not a valid
record"); only legal actions with checked probabilities are shown; the page's JSON never holds
NaN; ``load_record`` refuses NaN / Infinity / 1e999.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import fzmj_env as F
from fzmj.web import play as P
from fzmj.web import replay as R
from fzmj.web.review import ReviewError, review_record


def _record(seed=2):
    g = F.Game()
    g.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not g.done:
        g.step(int(rng.choice(g.legal_actions)))
    return F.make_record(g)


class Raises:
    name = "raiser"

    def __init__(self, exc):
        self.exc = exc

    def act(self, obs, mask):
        raise self.exc


class Probs:
    """``action_probs`` returning what it was built with (broadcast to the batch)."""

    name = "probs"

    def __init__(self, row, value=0.0):
        self.row, self.value = np.asarray(row, dtype=np.float64), value

    def action_probs(self, obs, mask):
        return np.tile(self.row, (len(obs), 1)), np.full(len(obs), self.value)

    def act(self, obs, mask):  # an agent has one (never called when action_probs exists)
        raise AssertionError("act called")


class Acts:
    name = "acts"

    def __init__(self, answer):
        self.answer = answer

    def act(self, obs, mask):
        return self.answer


def _row(**at):
    r = np.zeros(62)
    for k, v in at.items():
        r[int(k[1:])] = v
    return r


@pytest.mark.parametrize(
    "agent, words",
    [
        (Raises(ZeroDivisionError("division by zero")), "reviewer raiser failed: ZeroDivisionError"),
        (Raises(ValueError("bad\nthing")), "reviewer raiser failed: ValueError: bad thing"),
        (Raises(IndexError("index 99")), "reviewer raiser failed: IndexError"),
        (Raises(KeyError("k")), "reviewer raiser failed: KeyError"),
        (Probs(np.full(62, np.nan)), "non-finite probability"),
        (Probs(np.full(62, np.inf)), "non-finite probability"),
        (Probs(np.full(62, 1 / 62), value=np.nan), "non-finite value"),
        (Probs(np.full(62, -0.5)), "negative probability"),
        (Probs(np.zeros(62)), "no probability to any legal action"),
        (Probs(np.ones(5)), "expected"),
        (Acts(np.array([99])), "not legal"),
        (Acts(np.array([-1])), "not legal"),
        (Acts(np.array([0.5])), "one integer action"),
        (Acts(np.array([1, 2])), "one integer action"),
        (Acts("x"), "one integer action"),
    ],
)
def test_a_bad_reviewer_is_one_line_naming_it(agent, words):
    with pytest.raises(ReviewError) as e:
        review_record(_record(), agent, seat=1)
    msg = str(e.value)
    assert words in msg and "\n" not in msg and agent.name in msg


def test_an_illegal_action_with_the_most_probability_is_never_the_best():
    # all the weight on pass (illegal at a turn), a little on every discard: the best is a legal discard
    rev = review_record(_record(), Probs(_row(a61=0.9) + np.r_[np.full(27, 0.01), np.zeros(35)]), seat=0)
    rec = _record()
    g = F.Game()
    h0 = rec["hands"][0]
    g.reset(seed=rec["seed"], wall=h0["wall"], dealer=h0["dealer"], streak=h0["streak"])
    for i, (s, a) in enumerate(rec["decisions"]):
        if s == 0:
            r = rev["at"][i]
            assert g.mask[r["best"]] and all(g.mask[a] for a, _, _ in r["top"] if a != r["played"])
            assert all(p >= 0 for _, p, _ in r["top"])
        g.step(a)


def _cli_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        R.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fzmj-replay: error:"), err
    return err


def test_replay_cli_names_the_failing_reviewer_not_the_record(tmp_path, capsys, monkeypatch):
    mod = tmp_path / "badreviewers.py"
    mod.write_text(
        "class Zero:\n    def act(self, obs, mask):\n        return 1 // 0\n"
        "class Index:\n    def act(self, obs, mask):\n        return [][3]\n"
        "class Nan:\n    def action_probs(self, obs, mask):\n        import numpy as np\n"
        "        return np.full((len(obs), 62), np.nan), None\n"
        "    def act(self, obs, mask):\n        raise AssertionError('act called')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    src = tmp_path / "m.json"
    F.save_record(_record(), src)
    for cls, what in (("Zero", "ZeroDivisionError"), ("Index", "IndexError"), ("Nan", "non-finite")):
        err = _cli_error([str(src), "-o", str(tmp_path / "x.html"), "--review", f"python:badreviewers:{cls}"], capsys)
        assert "--review" in err and what in err and "not a valid fzmj record" not in err
        assert "Traceback" not in err
    sys.modules.pop("badreviewers", None)


@pytest.mark.parametrize("junk", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_load_record_refuses_numbers_json_does_not_have(tmp_path, capsys, junk):
    rec = _record()
    text = json.dumps(rec)[:-1] + f', "meta": {{"x": {junk}}}}}'
    src = tmp_path / "m.json"
    src.write_text(text, encoding="utf-8")
    with pytest.raises(F.RecordError, match="not valid JSON"):
        F.load_record(src)
    assert "not valid JSON" in _cli_error([str(src), "-o", str(tmp_path / "x.html")], capsys)


def test_page_json_never_holds_nan():
    rec = _record()
    rec["meta"] = {"why": "x", "score": float("nan"), "list": [float("inf"), 1.5]}
    page = R.replay_html(rec)
    text = page.split('id="fzmj-data">', 1)[1].split("</script>", 1)[0]
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the page"))
    assert data["record_meta"]["score"] is None and data["record_meta"]["list"] == [None, 1.5]
    assert R.json_safe({"a": (float("nan"), 2)}) == {"a": [None, 2]}


def test_play_hint_of_a_bad_reviewer_is_one_line_and_only_legal():
    from fzmj.agents import make_agent

    s = P.Session([make_agent("random:1")] * 3, seat=0, seed=3, reviewer=Probs(np.full(62, np.nan)))
    hint = s.state()["hint"]
    assert "non-finite" in hint["error"] and "probs" in hint["error"]
    s.reviewer = Raises(ZeroDivisionError("x"))
    s._hint = None
    assert "reviewer raiser failed: ZeroDivisionError" in s.state()["hint"]["error"]
    s.reviewer = Probs(_row(a61=0.99, a60=0.5) + np.r_[np.full(27, 0.001), np.zeros(35)])
    s._hint = None
    top = s.state()["hint"]["top"]
    assert top and all(s.game.mask[a] for a, _, _ in top)
