"""The policy network, shared by ``fzmj.agents`` (``ppo:PATH``) and ``fzmj.train`` (which trains
it); the checkpoint format that stores it is ``fzmj/agents/checkpoint.py``'s.

Actor-critic networks over the observation planes (``(99, 27)`` v2 int8, every value 0 or 1).

* ``mlp``: the flattened planes -> hidden layers -> policy logits (62) and a value.
* ``resnet``: the planes as NUM_CHANNELS (99) channels over the 3 suits x 9 ranks grid, a stem and residual
  blocks of ``(1, 3)`` convolutions (a rank's neighbours within its own suit), then an MLP head.

The int8 observation goes into the model as it is; the conversion to float happens inside.
The first layer of ``mlp`` is a :class:`BinaryLinear`: on CPU it adds up the weight rows of the
ones (about 6 % of the 2,619 inputs are 1), roughly ten times cheaper than the dense product
both forward and backward; on CUDA it is the dense product. Same parameters, same result.

With ``oracle_critic`` the value comes from a separate network that also sees the oracle planes
(``docs/observation.md``: the hidden part of the state); the policy never does, except with
``oracle_guide`` (Suphx's oracle guiding, docs/training.md): the actor's first layer also takes
the oracle planes, which training passes through a dropout that ends at "always off", and which
every play-time call (``act``) gives as zeros: a checkpoint plays from its own seat's view alone.

Every policy has ``act(obs, mask, deterministic) -> actions`` (what ``agents/ppo_agent.py`` and
the evaluator call) and ``get_action_and_value`` (what PPO calls). Illegal actions get the logit
``ILLEGAL_LOGIT`` before the softmax.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.checks import check_policy_input
from fzmj_env.encode import NUM_CHANNELS, OBS_VERSION, ORACLE_CHANNELS, V3_CHANNELS
from fzmj_env.features import HF_NUM_PLANES, with_hand_features

from .belief_net import BELIEF_NUM_PLANES, belief_planes, build_belief_net
from .binary_linear import BinaryLinear

OBS_SHAPE = (NUM_CHANNELS, 27)
ORACLE_SHAPE = (ORACLE_CHANNELS, 27)
ILLEGAL_LOGIT = -1e8  # exp() underflows to exactly 0 in float32, and 0 * ILLEGAL_LOGIT stays finite


def layer_init(layer: nn.Module, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Module:
    """CleanRL's init: orthogonal weights with gain ``std``, constant bias."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


# ---- trunks -------------------------------------------------------------------------------------
class MLPTrunk(nn.Module):
    """Flattened binary planes -> ``hidden_sizes`` ReLU layers."""

    def __init__(self, in_features: int, hidden_sizes: list[int], input_layer: str = "auto"):
        super().__init__()
        self.first = BinaryLinear(in_features, hidden_sizes[0], input_layer)
        layers: list[nn.Module] = []
        for a, b in zip(hidden_sizes, hidden_sizes[1:], strict=False):
            layers += [layer_init(nn.Linear(a, b)), nn.ReLU()]
        self.rest = nn.Sequential(*layers)
        self.out_features = hidden_sizes[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rest(torch.relu(self.first(x.flatten(1))))


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, (1, 3), padding=(0, 1))
        self.conv2 = nn.Conv2d(channels, channels, (1, 3), padding=(0, 1))
        nn.init.zeros_(self.conv2.weight)  # each block starts as the identity
        nn.init.zeros_(self.conv2.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class ResNetTrunk(nn.Module):
    """Planes (C, 27) as C channels over (3 suits, 9 ranks) -> stem + residual blocks -> MLP."""

    def __init__(self, in_channels: int, channels: int, blocks: int, hidden_sizes: list[int]):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_channels, channels, (1, 3), padding=(0, 1)), nn.ReLU())
        self.blocks = nn.Sequential(*[ResidualBlock(channels) for _ in range(blocks)])
        layers: list[nn.Module] = []
        prev = channels * 27
        for h in hidden_sizes:
            layers += [layer_init(nn.Linear(prev, h)), nn.ReLU()]
            prev = h
        self.head = nn.Sequential(*layers)
        self.out_features = prev

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(self.stem[0].weight.dtype).reshape(x.shape[0], x.shape[1], 3, 9)
        return self.head(self.blocks(self.stem(x)).flatten(1))


# ---- the actor-critic -------------------------------------------------------------------------
class ActorCritic(nn.Module):
    """Masked categorical policy over the 62 actions and a value, from v1 planes.

    ``spec`` (stored in checkpoints, see :func:`build_policy`): ``network`` ("mlp" | "resnet"),
    ``hidden_sizes``, ``res_channels``, ``res_blocks``, ``input_layer``, ``oracle_critic``,
    ``obs_planes`` (the base observation's planes), ``hand_features`` (append the
    ``fzmj_env/features.py`` planes, computed from the observation: :meth:`prepare`) and
    ``belief_planes`` with ``belief_spec`` (append the planes of a frozen belief network,
    ``belief_net.belief_planes``; its weights are the ``belief.*`` entries of the state dict, so
    a checkpoint carries the belief it was trained with).
    """

    def __init__(
        self,
        network: str = "mlp",
        hidden_sizes: list[int] | tuple[int, ...] = (256, 256),
        res_channels: int = 64,
        res_blocks: int = 4,
        input_layer: str = "auto",
        oracle_critic: bool = False,
        obs_planes: int = NUM_CHANNELS,
        hand_features: bool = False,
        belief_planes: bool = False,
        belief_spec: dict | None = None,
        oracle_channels: int | None = None,
        oracle_guide: bool = False,
    ):
        super().__init__()
        self.spec = dict(
            network=network,
            hidden_sizes=list(hidden_sizes),
            res_channels=res_channels,
            res_blocks=res_blocks,
            input_layer=input_layer,
            oracle_critic=oracle_critic,
            obs_planes=obs_planes,
            hand_features=hand_features,
        )
        self.oracle_critic, self.oracle_guide = oracle_critic, bool(oracle_guide)
        if self.oracle_guide and not oracle_critic:
            raise ValueError("oracle_guide needs oracle_critic")
        # the oracle planes the critic reads: today's layout, or the 37 of oracle_v1 for an older checkpoint
        self.oracle_channels = (oracle_channels or ORACLE_CHANNELS) if oracle_critic else 0
        if oracle_critic:  # the keys only then: the specs of every other checkpoint stay as they were
            self.spec["oracle_channels"] = self.oracle_channels
        elif oracle_channels is not None:
            raise ValueError("oracle_channels is given but oracle_critic is false")
        if self.oracle_guide:
            self.spec["oracle_guide"] = True
        self.obs_planes, self.hand_features = obs_planes, hand_features
        self.obs_version = "v3" if obs_planes == V3_CHANNELS else OBS_VERSION
        # host_planes: what prepare_host gives (and the rollout stores); in_planes: the network's input
        self.host_planes = obs_planes + (HF_NUM_PLANES if hand_features else 0)
        self.belief_planes = bool(belief_planes)
        if self.belief_planes:  # the keys only then: the specs of every other checkpoint stay as they were
            if belief_spec is None:
                raise ValueError("belief_planes needs belief_spec (the belief network's spec)")
            self.belief = build_belief_net(belief_spec).requires_grad_(False)
            if self.belief.spec["num_channels"] > obs_planes:
                raise ValueError(
                    f"the belief reads {self.belief.spec['num_channels']} planes, the observation has {obs_planes}"
                )
            self.spec.update(belief_planes=True, belief_spec=dict(self.belief.spec))
        elif belief_spec is not None:
            raise ValueError("belief_spec is given but belief_planes is false")
        self.in_planes = self.host_planes + (BELIEF_NUM_PLANES if self.belief_planes else 0)
        C, W = self.in_planes, OBS_SHAPE[1]
        guide = self.oracle_channels if self.oracle_guide else 0  # the actor's oracle planes, extra channels
        if network == "mlp":
            self.trunk = MLPTrunk((C + guide) * W, list(hidden_sizes), input_layer)
        elif network == "resnet":
            self.trunk = ResNetTrunk(C + guide, res_channels, res_blocks, list(hidden_sizes))
        else:
            raise ValueError(f"network must be 'mlp' or 'resnet', got {network!r}")
        self.actor = layer_init(nn.Linear(self.trunk.out_features, NUM_ACTIONS), std=0.01)
        if oracle_critic:  # the critic sees the observation and the oracle planes: its own network
            self.critic_trunk = MLPTrunk((C + self.oracle_channels) * W, list(hidden_sizes), input_layer)
            self.critic = layer_init(nn.Linear(self.critic_trunk.out_features, 1), std=1.0)
        else:  # shared trunk
            self.critic = layer_init(nn.Linear(self.trunk.out_features, 1), std=1.0)

    # -- pieces -------------------------------------------------------------------------------
    def masked_logits(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.actor(hidden).masked_fill(mask == 0, ILLEGAL_LOGIT)

    def value_from(self, hidden: torch.Tensor, obs: torch.Tensor, oracle: torch.Tensor | None) -> torch.Tensor:
        if self.oracle_critic:
            if oracle is None:
                raise ValueError("this policy's critic needs the oracle planes (oracle_critic=True)")
            if oracle.shape[1] != self.oracle_channels:
                raise ValueError(
                    f"this policy's critic reads {self.oracle_channels} oracle planes, got {oracle.shape[1]} "
                    f"(a critic of oracle_v1 reads {ORACLE_V1_CHANNELS}; the env gives {ORACLE_CHANNELS})"
                )
            both = torch.cat([obs.flatten(1), oracle.flatten(1)], dim=1)
            return self.critic(self.critic_trunk(both)).squeeze(-1)
        return self.critic(hidden).squeeze(-1)

    def prepare_host(self, obs: np.ndarray, threads: int = 1) -> np.ndarray:
        """:meth:`prepare` on the host, for callers that hold numpy observations (the trainer's
        rollout): the v2 planes of a v3 observation for a v2 policy, the hand-feature planes appended
        in Numba, all before the one transfer to the device (on a GPU, :meth:`prepare` of a device
        tensor would bring it back to compute the features and send it out again). The result passes
        :meth:`prepare` unchanged. ``threads`` > 1 computes the features of a large batch on that
        many Numba threads (the same planes)."""
        if obs.ndim != 3 or obs.shape[2] != OBS_SHAPE[1]:
            raise ValueError(f"observations must have shape (N, C, {OBS_SHAPE[1]}), got {tuple(obs.shape)}")
        if obs.shape[1] == V3_CHANNELS and self.obs_planes == NUM_CHANNELS:
            obs = obs[:, :NUM_CHANNELS]
        if self.hand_features and obs.shape[1] == self.obs_planes:
            return with_hand_features(obs, threads)
        return obs

    def prepare(self, obs: torch.Tensor) -> torch.Tensor:
        """The network's input from base observations: hand-feature planes appended when the
        policy uses them (computed on the host, in Numba); already prepared input passes."""
        if obs.dim() != 3 or obs.shape[2] != OBS_SHAPE[1]:  # the feature kernel indexes (N, C, 27)
            raise ValueError(f"observations must have shape (N, C, {OBS_SHAPE[1]}), got {tuple(obs.shape)}")
        if obs.shape[1] == V3_CHANNELS and self.obs_planes == NUM_CHANNELS:
            obs = obs[:, :NUM_CHANNELS]  # a v2 policy reads v3 through its first planes, exactly v2
        elif obs.shape[1] == NUM_CHANNELS and self.obs_planes == V3_CHANNELS:
            raise ValueError(
                f"this policy was trained on observation v3 ({V3_CHANNELS} planes), got v2 ({NUM_CHANNELS}): "
                "make the env with obs_version=3"
            )
        if self.hand_features and obs.shape[1] == self.obs_planes:
            obs = torch.from_numpy(with_hand_features(obs.cpu().numpy())).to(obs.device)
        if self.belief_planes and obs.shape[1] == self.host_planes:
            obs = torch.cat([obs, belief_planes(self.belief, obs[:, : self.obs_planes])], dim=1)
        if obs.shape[1] != self.in_planes:
            raise ValueError(
                f"this policy takes {self.obs_planes} observation planes"
                f"{' + hand features' if self.hand_features else ''}"
                f"{' + belief planes' if self.belief_planes else ''}, got {obs.shape[1]}"
            )
        return obs

    def actor_input(self, obs: torch.Tensor, guide: torch.Tensor | None) -> torch.Tensor:
        """The actor trunk's input from prepared ``obs``: the observation, and for an oracle-guided
        policy the oracle planes ``guide`` after their dropout (None: zeros, as at play time), as
        more planes over the same 27 kinds (the MLP flattens them in the same order as before)."""
        if not self.oracle_guide:
            return obs
        if guide is None:
            guide = torch.zeros((obs.shape[0], self.oracle_channels, obs.shape[2]), dtype=obs.dtype, device=obs.device)
        elif guide.shape[1] != self.oracle_channels:
            raise ValueError(f"this policy's actor reads {self.oracle_channels} oracle planes, got {guide.shape[1]}")
        return torch.cat([obs, guide.to(obs.dtype)], dim=1)

    # -- what PPO calls -----------------------------------------------------------------------
    def get_value(self, obs: torch.Tensor, oracle: torch.Tensor | None = None) -> torch.Tensor:
        obs = self.prepare(obs)
        hidden = None if self.oracle_critic else self.trunk(obs)
        return self.value_from(hidden, obs, oracle)

    def get_action_and_value(self, obs, mask, action=None, oracle=None, guide=None):
        """``(action, log_prob(action), entropy, value)``; samples ``action`` when it is None.
        ``oracle``: the critic's oracle planes; ``guide``: the actor's (oracle guiding only)."""
        action, logprob, entropy, value, _ = self.get_action_value_and_logp(obs, mask, action, oracle, guide)
        return action, logprob, entropy, value

    def get_action_value_and_logp(self, obs, mask, action=None, oracle=None, guide=None):
        """:meth:`get_action_and_value` plus the log-probabilities of every action (N, 62)."""
        obs = self.prepare(obs)
        hidden = self.trunk(self.actor_input(obs, guide))
        logits = self.masked_logits(hidden, mask)
        logp_all = torch.log_softmax(logits, dim=-1)
        if action is None:
            action = sample_gumbel(logits)
        logprob = logp_all.gather(1, action.unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return action, logprob, entropy, self.value_from(hidden, obs, oracle), logp_all

    @torch.no_grad()
    def log_probs(self, obs: torch.Tensor, mask: torch.Tensor, guide: torch.Tensor | None = None) -> torch.Tensor:
        """Log-probabilities of every action (N, 62), illegal ones about -1e8 (a frozen teacher's;
        an oracle-guided teacher reads ``guide``)."""
        hidden = self.trunk(self.actor_input(self.prepare(obs), guide))
        return torch.log_softmax(self.masked_logits(hidden, mask), dim=-1)

    # -- what agents call ---------------------------------------------------------------------
    @torch.no_grad()
    def act(self, obs: torch.Tensor, mask: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """One legal action per row: ``obs`` (N, 99, 27) int8, ``mask`` (N, 62) -> LongTensor (N,)."""
        dev = next(self.parameters()).device
        obs = to_tensor(obs, dev)
        mask = to_tensor(mask, dev)
        if obs.dim() == 2:
            obs, mask = obs.unsqueeze(0), mask.reshape(1, -1)
        planes = obs.shape[1] if obs.shape[1] in (self.in_planes, self.host_planes, V3_CHANNELS) else self.obs_planes
        check_policy_input(obs, mask, planes)  # shapes, dtypes, 0/1 values, a legal action per row
        # play time: an oracle-guided actor gets zeros for the oracle planes (its seat's view alone)
        logits = self.masked_logits(self.trunk(self.actor_input(self.prepare(obs), None)), mask)
        return logits.argmax(-1) if deterministic else sample_gumbel(logits)


def to_tensor(x, device=None) -> torch.Tensor:
    """``x`` (a numpy array or a tensor) as a tensor on ``device``; a read-only numpy array (a
    ``VectorEnv`` buffer) is copied first: torch would share it and warn, since a tensor cannot
    be read-only. The one place that rule lives (the trainer's rollout and ``ppo:`` agents use it)."""
    if isinstance(x, np.ndarray) and not x.flags.writeable:
        x = x.copy()
    return torch.as_tensor(x, device=device)


def sample_gumbel(logits: torch.Tensor) -> torch.Tensor:
    """A sample of the categorical ``softmax(logits)`` per row (Gumbel-max: one op, no validation)."""
    u = torch.rand_like(logits).clamp_(1e-20, 1.0)
    return (logits - torch.log(-torch.log(u))).argmax(-1)


ORACLE_V1_CHANNELS = 37
"""The oracle planes of a critic saved before ``oracle_channels`` was in the spec (``oracle_v1``)."""


def build_policy(spec: dict) -> ActorCritic:
    """An :class:`ActorCritic` from its ``spec`` dict (as saved in checkpoints)."""
    if spec.get("oracle_critic") and "oracle_channels" not in spec:
        spec = {**spec, "oracle_channels": ORACLE_V1_CHANNELS}
    return ActorCritic(**spec)


# ---- the checkpoint reader ----------------------------------------------------------------------
