"""The belief network (torch): one seat's observation in, the other seats' hidden hands out.

An MLP over the flattened binary planes (the same input as the policies': ``(C, 27)`` int8),
(its first layer the policies' sparse ``BinaryLinear``) with three heads, all for the three other seats in relative order (0 = 下家 next, 1 = opposite,
2 = 上家 previous):

* ``concealed``: logits of the count 0..4 of each kind in the seat's concealed hand ``(N, 3, 27, 5)``;
* ``ready``: the logit that the seat is ready (听) ``(N, 3)``;
* ``win_on``: the logit that the seat may win on a discard of each kind now ``(N, 3, 27)``.

Two trunks (the spec's ``arch``): ``"mlp"`` (the default, and what a spec without ``arch`` means:
the shipped model's) and ``"seq"``: the MLP beside a 1-D convolution that reads each seat's
discards of a v3 observation in order (``SeqDiscards``), its output added to the first layer's.

``fzmj/agents/belief.py`` loads it (and checks a checkpoint first); ``fzmj/train/belief.py`` trains it.
"""

from __future__ import annotations

import torch
from torch import nn

from .binary_linear import BinaryLinear

MAX_COUNT = 4  # copies of a suit kind
SPEC_KEYS = {"num_channels", "hidden"}
OPTIONAL_KEYS = {"arch", "seq_channels", "seq_width"}  # "seq" only; a spec without arch is the MLP
ARCHS = ("mlp", "seq")
# v3 seat blocks (docs/observation.md): relative seat r's 47 planes start at 99 + 47 r: 24 planes of
# discard kinds (plane i = its discard i, one-hot kind), then claimed / after-claim / gold flags
# (column i = discard i) and three planes of the table time of each discard
V3_SEAT0, V3_SEAT_PLANES, V3_POSITIONS = 99, 47, 24
SEQ_FEATURES = 27 + 3 + 3  # per discard: its kind, its three flags, its table time (T / 80, three bits)


def check_spec(spec) -> dict:
    """``spec`` if it names a network this module builds, else ``ValueError`` (one line)."""
    if not isinstance(spec, dict):
        raise ValueError(f"belief_spec must be a dict, got {type(spec).__name__}")
    unknown = sorted(set(spec) - SPEC_KEYS - OPTIONAL_KEYS)
    if unknown:
        raise ValueError(f"belief_spec has unknown keys {unknown} (keys: {sorted(SPEC_KEYS | OPTIONAL_KEYS)})")
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
    arch = spec.get("arch", "mlp")
    if arch not in ARCHS:
        raise ValueError(f"belief_spec arch must be one of {', '.join(ARCHS)}, got {arch!r}")
    if arch == "mlp" and set(spec) & {"seq_channels", "seq_width"}:
        raise ValueError("belief_spec seq_channels / seq_width are for arch 'seq' only")
    if arch == "seq":
        need = V3_SEAT0 + 4 * V3_SEAT_PLANES
        if c < need:
            raise ValueError(f"belief_spec arch 'seq' reads the v3 discard planes: num_channels >= {need}, got {c}")
        for k in ("seq_channels", "seq_width"):
            v = spec.get(k)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1024:
                raise ValueError(f"belief_spec {k} must be an integer in 1..1024, got {v!r}")
    return spec


class SeqDiscards(nn.Module):
    """Each seat's discards in turn order: a 1-D convolution over the 24 discard positions of a
    v3 observation (per position its kind, claimed / after-claim / gold flags and table-time bits),
    the same weights for the four seats; each seat's feature map flattened (so the position is
    kept) and projected to ``width``; the four seats' outputs (self, 下家, opposite, 上家)
    concatenated and projected to ``out`` (added to the MLP's first layer)."""

    def __init__(self, channels: int, width: int, out: int):
        super().__init__()
        self.conv1 = nn.Conv1d(SEQ_FEATURES, channels, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(channels, channels, kernel_size=3, padding=1)
        self.seat = nn.Linear(channels * V3_POSITIONS, width)
        self.out = nn.Linear(4 * width, out)

    @staticmethod
    def features(obs: torch.Tensor) -> torch.Tensor:
        """``(N, 4, SEQ_FEATURES, 24)`` float from ``obs`` ``(N, C >= 287, 27)``."""
        n = obs.shape[0]
        blocks = obs[:, V3_SEAT0 : V3_SEAT0 + 4 * V3_SEAT_PLANES].reshape(n, 4, V3_SEAT_PLANES, 27).float()
        kinds = blocks[:, :, :V3_POSITIONS, :].transpose(2, 3)  # (N, 4, 27 kinds, 24 positions)
        flags = blocks[:, :, V3_POSITIONS : V3_POSITIONS + 3, :V3_POSITIONS]  # (N, 4, 3, 24)
        # time planes: column c of plane j set when the table's discard 27 j + c was the seat's;
        # for its discard i (in order) the time T is the i-th set bit: coded as three coarse bits
        t = blocks[:, :, V3_POSITIONS + 3 : V3_POSITIONS + 6, :].reshape(n, 4, 81)
        # the i-th set time (ascending) belongs to discard i: sort the set times first
        times = torch.arange(81, device=obs.device, dtype=t.dtype)
        key = torch.where(t > 0, times, torch.full_like(t, 1e4))
        ordered = torch.sort(key, dim=-1).values[..., :V3_POSITIONS]  # (N, 4, 24): T of discard i or 1e4
        has = (ordered < 1e4).to(t.dtype)
        tt = torch.where(ordered < 1e4, ordered, torch.zeros_like(ordered))
        time_bits = torch.stack([has * (tt >= 8), has * (tt >= 24), has * (tt >= 48)], dim=2)
        return torch.cat([kinds, flags, time_bits], dim=2)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        f = self.features(obs)
        n = f.shape[0]
        x = torch.relu(self.conv1(f.reshape(n * 4, SEQ_FEATURES, V3_POSITIONS)))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.seat(x.reshape(n * 4, -1)))
        return self.out(x.reshape(n, -1))


class BeliefNet(nn.Module):
    """MLP trunk + three heads (see the module docstring)."""

    def __init__(
        self, num_channels: int, hidden=(256, 256), arch: str = "mlp", seq_channels: int = 32, seq_width: int = 64
    ):
        super().__init__()
        spec = {"num_channels": int(num_channels), "hidden": [int(x) for x in hidden]}
        if arch != "mlp":  # an MLP's spec stays the two keys it always had (the shipped model's)
            spec.update(arch=arch, seq_channels=int(seq_channels), seq_width=int(seq_width))
        self.spec = check_spec(spec)
        hidden = self.spec["hidden"]
        # the planes are 0/1 and sparse: the first layer sums the weight rows of the ones (on CPU)
        self.first = BinaryLinear(num_channels * 27, hidden[0])
        self.seq = SeqDiscards(seq_channels, seq_width, hidden[0]) if arch == "seq" else None
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
        x = self.first(obs.reshape(obs.shape[0], -1))
        if self.seq is not None:
            x = x + self.seq(obs)
        return self.trunk(x)

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
    extra = {k: spec[k] for k in OPTIONAL_KEYS if k in spec}
    return BeliefNet(spec["num_channels"], spec["hidden"], **extra)
