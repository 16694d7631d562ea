"""The binary first layer of the networks: ``x @ W`` for a flattened 0/1 int8 observation.

About 6 % of the inputs are 1, so on CPU the product is the sum of the weight rows of the ones
(Numba kernels, forward and backward), roughly ten times cheaper than the dense product; on CUDA
it is the dense product. Used by the policies (``policy.py``) and the belief network
(``belief_net.py``), which is why it is a module of its own.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn
from numba import njit

from fzmj_env.checks import check_input_width


@njit(cache=True)
def active_indices(x):
    """Where ``x`` (N, D) int8 is nonzero, row by row: ``(idx (N, K) int32 padded with -1, count (N,))``."""
    n, d = x.shape
    count = np.zeros(n, np.int64)
    for i in range(n):
        c = 0
        for j in range(d):
            if x[i, j] != 0:
                c += 1
        count[i] = c
    out = np.full((n, max(1, count.max())), -1, np.int32)
    for i in range(n):
        c = 0
        row = out[i]
        for j in range(d):
            if x[i, j] != 0:
                row[c] = j
                c += 1
    return out, count


@njit(cache=True, fastmath=True)
def _gather_sum(idx, count, w, out):
    """out[i] = sum of w[j] over the active j of row i."""
    for i in range(idx.shape[0]):
        acc = out[i]
        acc[:] = 0.0
        for c in range(count[i]):
            row = w[idx[i, c]]
            for u in range(acc.shape[0]):
                acc[u] += row[u]


@njit(cache=True, fastmath=True)
def _scatter_sum(idx, count, g, gw):
    """gw[j] += g[i] for every active j of row i (the weight gradient of ``_gather_sum``)."""
    for i in range(idx.shape[0]):
        gi = g[i]
        for c in range(count[i]):
            row = gw[idx[i, c]]
            for u in range(gi.shape[0]):
                row[u] += gi[u]


class _BinaryMatmul(torch.autograd.Function):
    """``x @ w`` for a 0/1 ``x`` given as active indices (CPU only); gradient for ``w`` only."""

    @staticmethod
    def forward(ctx, idx: torch.Tensor, count: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        out = torch.empty(idx.shape[0], w.shape[1], dtype=w.dtype)
        _gather_sum(idx.numpy(), count.numpy(), w.detach().contiguous().numpy(), out.numpy())
        ctx.save_for_backward(idx, count)
        ctx.w_shape = w.shape
        return out

    @staticmethod
    def backward(ctx, grad_out):
        idx, count = ctx.saved_tensors
        gw = torch.zeros(ctx.w_shape, dtype=grad_out.dtype)
        _scatter_sum(idx.numpy(), count.numpy(), grad_out.contiguous().numpy(), gw.numpy())
        return None, None, gw


class BinaryLinear(nn.Module):
    """``y = x @ weight + bias`` for a flattened 0/1 int8 ``x`` (weight is ``(in, out)``).

    ``mode``: ``"sparse"`` (sum of the weight rows of the ones; CPU only), ``"dense"`` (float
    matmul) or ``"auto"`` (sparse on CPU, dense elsewhere). The result is the same.
    """

    def __init__(self, in_features: int, out_features: int, mode: str = "auto"):
        super().__init__()
        if mode not in ("auto", "sparse", "dense"):
            raise ValueError(f"mode must be auto, sparse or dense, got {mode!r}")
        self.in_features, self.out_features, self.mode = in_features, out_features, mode
        w = torch.empty(out_features, in_features)
        nn.init.orthogonal_(w, math.sqrt(2))
        self.weight = nn.Parameter(w.t().contiguous())
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input_width(x, self.in_features)  # the sparse kernel indexes weight rows by column
        sparse = self.mode == "sparse" or (self.mode == "auto" and x.device.type == "cpu")
        if sparse and x.device.type == "cpu" and self.weight.dtype == torch.float32:
            idx, count = active_indices(x.to(torch.int8).contiguous().numpy())
            return _BinaryMatmul.apply(torch.from_numpy(idx), torch.from_numpy(count), self.weight) + self.bias
        return torch.addmm(self.bias, x.to(self.weight.dtype), self.weight)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, mode={self.mode}"


def warm_binary_linear() -> None:
    """``fzmj-warmup policy`` (the ``fzmj.warmup`` entry point in pyproject.toml): compile the
    sparse kernels of every policy's first layer, forward and backward, with the types play and
    training give them (an int8 batch, float32 weights)."""
    layer = BinaryLinear(27, 4, mode="sparse")
    x = torch.zeros((2, 27), dtype=torch.int8)
    x[0, 3] = 1
    layer(x).sum().backward()
