"""The trainer's networks: they live in ``agents/policy.py`` (shared with the agents that load
checkpoints, which must not import ``train/``); re-exported here for the trainer's imports."""

from fzmj.agents.binary_linear import BinaryLinear, active_indices  # noqa: F401
from fzmj.agents.policy import (  # noqa: F401
    ILLEGAL_LOGIT,
    OBS_SHAPE,
    ORACLE_SHAPE,
    ActorCritic,
    MLPTrunk,
    ResidualBlock,
    ResNetTrunk,
    build_policy,
    layer_init,
    sample_gumbel,
)
