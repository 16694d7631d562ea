"""The belief network (torch): one seat's observation in, the other seats' hidden hands out.

An MLP over the flattened binary planes (the same input as the policies': ``(C, 27)`` int8),
(its first layer the policies' sparse ``BinaryLinear``) with three heads, all for the three other seats in relative order (0 = 下家 next, 1 = opposite,
2 = 上家 previous):

* ``concealed``: logits of the count 0..4 of each kind in the seat's concealed hand ``(N, 3, 27, 5)``;
* ``ready``: the logit that the seat is ready (听) ``(N, 3)``;
* ``win_on``: the logit that the seat may win on a discard of each kind now ``(N, 3, 27)``.

``fzmj/agents/belief.py`` loads it (and checks a checkpoint first); ``fzmj/train/belief.py`` trains it.
"""

from __future__ import annotations

import torch
from torch import nn

from .binary_linear import BinaryLinear

MAX_COUNT = 4  # copies of a suit kind
SPEC_KEYS = {"num_channels", "hidden"}


def check_spec(spec) -> dict:
    """``spec`` if it names a network this module builds, else ``ValueError`` (one line)."""
    if not isinstance(spec, dict):
        raise ValueError(f"belief_spec must be a dict, got {type(spec).__name__}")
    unknown = sorted(set(spec) - SPEC_KEYS)
    if unknown:
        raise ValueError(f"belief_spec has unknown keys {unknown} (keys: {sorted(SPEC_KEYS)})")
    missing = sorted(SPEC_KEYS - set(spec))
    if missing:
        raise ValueError(f"belief_spec lacks {missing}")
    c = spec["num_channels"]
    if not isinstance(c, int) or isinstance(c, bool) or not 1 <= c <= 4096:
        raise ValueError(f"belief_spec num_channels must be an integer in 1..4096, got {c!r}")
    h = spec["hidden"]
    if (
        not isinstance(h, (list, tuple))
        or not 1 <= len(h) <= 8
        or not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 8192 for x in h)
    ):
        raise ValueError(f"belief_spec hidden must be a list of 1..8 layer sizes in 1..8192, got {h!r}")
    return spec


class BeliefNet(nn.Module):
    """MLP trunk + three heads (see the module docstring)."""

    def __init__(self, num_channels: int, hidden=(256, 256)):
        super().__init__()
        self.spec = check_spec({"num_channels": int(num_channels), "hidden": [int(x) for x in hidden]})
        hidden = self.spec["hidden"]
        # the planes are 0/1 and sparse: the first layer sums the weight rows of the ones (on CPU)
        self.first = BinaryLinear(num_channels * 27, hidden[0])
        layers: list[nn.Module] = [nn.ReLU()]
        for a, b in zip(hidden, hidden[1:], strict=False):
            layers += [nn.Linear(a, b), nn.ReLU()]
        width = hidden[-1]
        self.trunk = nn.Sequential(*layers)
        self.concealed = nn.Linear(width, 3 * 27 * (MAX_COUNT + 1))
        self.ready = nn.Linear(width, 3)
        self.win_on = nn.Linear(width, 3 * 27)

    def forward(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        """``obs``: ``(N, C, 27)`` (any dtype; int8 planes are made float here). Logits."""
        x = self.hidden(obs)
        n = x.shape[0]
        return {
            "concealed": self.concealed(x).reshape(n, 3, 27, MAX_COUNT + 1),
            "ready": self.ready(x),
            "win_on": self.win_on(x).reshape(n, 3, 27),
        }

    def hidden(self, obs: torch.Tensor) -> torch.Tensor:
        """The trunk's output, which every head reads: ``(N, hidden[-1])``."""
        return self.trunk(self.first(obs.reshape(obs.shape[0], -1)))

    @torch.no_grad()
    def probabilities(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        """The predictions of ``fzmj.agents.belief.BeliefModel.predict`` as tensors."""
        out = self(obs)
        dist = torch.softmax(out["concealed"], dim=-1)
        counts = torch.arange(MAX_COUNT + 1, dtype=dist.dtype, device=dist.device)
        win = torch.sigmoid(out["win_on"])
        return {
            "concealed": (dist * counts).sum(-1),
            "concealed_dist": dist,
            "ready": torch.sigmoid(out["ready"]),
            "win_on": win,
            "danger": danger_of(win),
        }


def danger_of(win: torch.Tensor) -> torch.Tensor:
    """P(discarding k deals in), ``(N, 27)``, from each other seat's P(wins on k) ``(N, 3, 27)``."""
    return 1.0 - torch.prod(1.0 - win, dim=1)


# ---- the belief as binary planes, a policy's input (ActorCritic(belief_planes=True)) ---------------
BELIEF_PLANES_VERSION = "bp1"
DANGER_LEVELS = (0.02, 0.05, 0.10, 0.20, 0.40)  # P(discarding k deals in) at or above each
WIN_ON_LEVELS = (0.10, 0.30)  # per seat: P(it may win on a discard of k) at or above each
BELIEF_NUM_PLANES = len(DANGER_LEVELS) + 3 + 3 * len(WIN_ON_LEVELS)  # 14


@torch.no_grad()
def belief_planes(net: BeliefNet, obs: torch.Tensor) -> torch.Tensor:
    """``(N, BELIEF_NUM_PLANES, 27)`` int8 0/1 planes from the belief of one seat's observation
    ``obs`` ``(N, C, 27)`` (its first ``num_channels`` planes are the belief's input), so that a
    policy's binary first layer reads them like every other plane. Thermometer codes, column k =
    kind k: five planes of the danger of discarding k (``DANGER_LEVELS``); three of each other
    seat's P(ready), column j set when it is at least (j + 0.5) / 27; six of each other seat's
    P(wins on k) (``WIN_ON_LEVELS``). Seats in relative order (下家, opposite, 上家)."""
    hidden = net.hidden(obs[:, : net.spec["num_channels"]])  # the concealed head is not needed here
    win = torch.sigmoid(net.win_on(hidden)).reshape(-1, 3, 27)
    danger = danger_of(win)  # (N, 27)
    ready = torch.sigmoid(net.ready(hidden))  # (N, 3)
    dev = win.device
    d_levels = torch.tensor(DANGER_LEVELS, device=dev)
    w_levels = torch.tensor(WIN_ON_LEVELS, device=dev)
    r_levels = (torch.arange(27, device=dev, dtype=win.dtype) + 0.5) / 27
    planes = [
        danger[:, None, :] >= d_levels[None, :, None],
        ready[:, :, None] >= r_levels[None, None, :],
        (win[:, :, None, :] >= w_levels[None, None, :, None]).flatten(1, 2),
    ]
    return torch.cat(planes, dim=1).to(torch.int8)


def build_belief_net(spec: dict) -> BeliefNet:
    spec = check_spec(spec)
    return BeliefNet(spec["num_channels"], spec["hidden"])
