"""Guards of a running training: non-finite losses and weights, and a clean stop on Ctrl-C
(the config's checks are all in ``train/config_checks.py``). Small functions so the
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
    """The first SIGINT (Ctrl-C) sets ``requested``; the trainer saves a checkpoint at the next
    safe point and exits. A second Ctrl-C stops at once (``KeyboardInterrupt``)."""

    def __init__(self):
        self.requested = False
        self._old = None
        try:
            self._old = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread (e.g. a test runner's worker): no handler
            self._old = None

    def _handle(self, signum, frame):
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nfzmj-train: interrupted; saving a checkpoint (Ctrl-C again to stop at once)", flush=True)

    def restore(self) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None
