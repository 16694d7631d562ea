"""The trainer's console rate is the last window's; ``charts/SPS`` stays the average since the start."""

from __future__ import annotations

from types import SimpleNamespace

from fzmj.train import metrics
from fzmj.train.metrics import HandStats, Logger


class _Writer:
    def __init__(self):
        self.scalars: dict[str, list] = {}

    def add_scalar(self, tag, value, step):
        self.scalars.setdefault(tag, []).append((step, value))


class _Ranks:
    def sum_counters(self, stats):
        pass


def test_console_sps_is_the_window_rate_and_charts_sps_the_whole_run(monkeypatch, capsys):
    clock = iter([100.0, 110.0, 110.0, 111.0, 111.0])  # start; update 1 (scalars, console); update 2
    monkeypatch.setattr(metrics.time, "time", lambda: next(clock))
    w = _Writer()
    log = Logger(w, num_updates=2, log_every=1, stats=HandStats(), ranks=_Ranks(), start_step=0)
    result = SimpleNamespace(
        trained=0, carried=0, value_loss=0.0, policy_loss=0.0, entropy=1.0, old_approx_kl=0.0,
        approx_kl=0.0, clipfrac=0.0, explained_variance=0.0, teacher_loss=0.0,
    )  # fmt: skip
    times = {"rollout": 0.5, "update": 0.5, "cpu": 1.0}
    log.scalars(10_000, 1e-4, 0.0, result, times)  # 10,000 steps in the first 10 s
    log.console(1, 10_000, result, times, {})
    log.scalars(30_000, 1e-4, 0.0, result, times)  # 20,000 more in the next 1 s
    log.console(2, 30_000, result, times, {})
    lines = capsys.readouterr().out.splitlines()
    assert "SPS 1,000 " in lines[0] and "SPS 20,000 " in lines[1]
    assert w.scalars["charts/SPS_window"] == [(10_000, 1_000), (30_000, 20_000)]
    assert w.scalars["charts/SPS"] == [(10_000, 1_000), (30_000, 2_727)]  # 30,000 steps / 11 s


def _result():
    return SimpleNamespace(
        trained=0, carried=0, value_loss=0.0, policy_loss=0.0, entropy=1.0, old_approx_kl=0.0,
        approx_kl=0.0, clipfrac=0.0, explained_variance=0.0, teacher_loss=0.0,
    )  # fmt: skip


def test_every_window_line_goes_to_the_log_file_and_the_bar_shows_only_evaluations_and_the_end(tmp_path, capsys):
    import io

    screen = io.StringIO()
    bar = metrics.ProgressBar(num_updates=3, steps_per_update=1000, start_update=1, start_step=0, file=screen)
    log_file = tmp_path / "train.log"
    log = Logger(_Writer(), 3, 1, HandStats(), _Ranks(), 0, log_file=log_file, bar=bar)
    times = {"rollout": 0.5, "update": 0.5, "cpu": 1.0}
    evals = {"random": {"mean_score": 25.0, "ci95": [24.0, 26.0]}}
    log.console(1, 1000, _result(), times, {})
    log.console(2, 2000, _result(), times, evals, evaluated=True)
    log.console(3, 3000, _result(), times, evals)
    log.close()
    lines = log_file.read_text().splitlines()
    assert [ln.split(" | ")[0] for ln in lines] == ["update 1/3", "update 2/3", "update 3/3"]
    shown = screen.getvalue()
    assert "update 1/3 | step" not in shown  # a plain window: the bar only
    assert "update 2/3 | step 2,000" in shown and "vs random +25.00 [+24.00, +26.00]" in shown
    assert "update 3/3 | step 3,000" in shown  # the end
    assert "3.00k/3.00k steps" in shown and "100%" in shown  # the bar: steps done of the total
    assert capsys.readouterr().out == ""  # nothing printed beside the bar


def test_without_a_bar_every_window_is_a_console_line_and_a_log_line(tmp_path, capsys):
    log_file = tmp_path / "train.log"
    log = Logger(_Writer(), 2, 1, HandStats(), _Ranks(), 0, log_file=log_file)
    times = {"rollout": 0.5, "update": 0.5, "cpu": 1.0}
    log.console(1, 1000, _result(), times, {})
    log.console(2, 2000, _result(), times, {})
    out = capsys.readouterr().out
    assert out.splitlines() == log_file.read_text().splitlines() and len(out.splitlines()) == 2


def test_the_bar_is_drawn_only_on_a_terminal_when_asked_and_only_by_rank_0(tmp_path, monkeypatch):
    import io

    from fzmj.train.run_setup import make_logger

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    args = SimpleNamespace(num_updates=3, batch_size=1000, log_every=1)
    ranks = SimpleNamespace(main=True)
    for stdout, progress, main, bar in [(Terminal(), True, True, True), (Terminal(), False, True, False),
                                        (io.StringIO(), True, True, False), (Terminal(), True, False, False)]:  # fmt: skip
        monkeypatch.setattr("sys.stdout", stdout)
        ranks.main = main
        (tmp_path / "train.log").write_text("an older run's line\n")
        log = make_logger(args, _Writer(), HandStats(), ranks, tmp_path, False, progress, 1, 0)
        assert (log.bar is not None) == bar
        assert (log.log_file is not None) == main
        assert (tmp_path / "train.log").read_text() == ("" if main else "an older run's line\n")  # a fresh run: empty
        log.close()
