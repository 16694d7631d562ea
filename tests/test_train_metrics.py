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
