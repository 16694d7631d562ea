"""Guards of a running training: non-finite losses and weights, and a clean stop on Ctrl-C or
SIGTERM (the config's checks are all in ``train/config_checks.py``). Small functions so the
trainer's loop only gains a call per check.
"""

from __future__ import annotations

import signal

import torch


class NonFiniteError(RuntimeError):
    """A loss or a weight became NaN or inf: the run stops and keeps its last good checkpoint."""


def check_finite_loss(loss: torch.Tensor, update: int, parts: dict[str, torch.Tensor]) -> None:
    """Raise :class:`NonFiniteError` if ``loss`` is NaN/inf, naming which of ``parts`` are."""
    if not bool(torch.isfinite(loss)):
        bad = [k for k, v in parts.items() if not bool(torch.isfinite(v).all())] or ["loss"]
        raise NonFiniteError(f"update {update}: the loss became non-finite ({', '.join(bad)})")


def check_finite_weights(model: torch.nn.Module, update: int) -> None:
    """Raise :class:`NonFiniteError` if any parameter of ``model`` holds NaN or inf."""
    bad = [name for name, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
    if bad:
        raise NonFiniteError(f"update {update}: non-finite weights in {', '.join(bad[:3])}")


class GracefulStop:
    """The first SIGINT (Ctrl-C) or SIGTERM (``kill``, a job scheduler's notice, a container's
    stop) sets ``requested``; the trainer saves a checkpoint at the next safe point and exits with
    ``exit_code`` (130 after SIGINT, 143 after SIGTERM, the shells' 128 + signal). The same
    signal again stops at once: a second Ctrl-C raises ``KeyboardInterrupt``, a second SIGTERM
    terminates. Only the main thread can take signals: elsewhere (a test runner's worker) nothing
    is installed."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.requested = False
        self.exit_code = 0
        self._old: dict[int, object] = {}
        for sig in self._SIGNALS:
            try:
                self._old[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no handler
                break

    def _handle(self, signum, frame):
        self.requested = True
        self.exit_code = 128 + signum
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            print("\nfzmj-train: interrupted; saving a checkpoint (Ctrl-C again to stop at once)", flush=True)
        else:
            signal.signal(signum, signal.SIG_DFL)
            print(
                f"\nfzmj-train: {signal.Signals(signum).name}; saving a checkpoint (send it again to stop at once)",
                flush=True,
            )

    def restore(self) -> None:
        """Put back the handlers found when the run started."""
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}
