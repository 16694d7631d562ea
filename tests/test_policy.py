"""agents/policy.py: the network and checkpoint reader live below train/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_agents_never_import_train():
    """ARCHITECTURE floors: agents/ loads policies through agents/policy.py, never train/."""
    for path in sorted((ROOT / "agents").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            assert not any(n == "train" or n.startswith("train.") for n in names), f"{path.name} imports {names}"


# ---- checkpoints record the observation layout ----------------------------------------------------
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from fzmj.agents import make_agent  # noqa: E402
from fzmj.agents.base import AgentSpecError  # noqa: E402
from fzmj.agents.checkpoint import load_checkpoint, load_policy, save_checkpoint  # noqa: E402
from fzmj.agents.policy import ActorCritic  # noqa: E402
from fzmj_env.encode import NUM_CHANNELS  # noqa: E402
from fzmj_env.features import HF_NUM_PLANES, with_hand_features  # noqa: E402
from fzmj_env.vector import VectorEnv  # noqa: E402


def _tampered(tmp_path, policy, **changes):
    path = save_checkpoint(tmp_path / "p.pt", policy)
    data = torch.load(path, weights_only=True)
    for key, value in changes.items():
        if key == "obs_planes":
            data["policy_spec"]["obs_planes"] = value
        else:
            data[key] = value
    torch.save(data, path)
    return path


@pytest.mark.parametrize(
    "changes",
    [{"obs_version": "v0"}, {"obs_planes": NUM_CHANNELS + 8}, {"hf_version": "hf0"}, {"hf_planes": 16}],
    ids=["obs_version", "planes", "hand_feature_version", "hand_feature_planes"],
)
def test_a_checkpoint_of_another_observation_layout_fails_in_one_line(tmp_path, changes):
    path = _tampered(tmp_path, ActorCritic(hidden_sizes=(8,), hand_features=True), **changes)
    with pytest.raises(ValueError, match="observation layout mismatch") as e:
        load_policy(path)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="observation layout mismatch"):
        make_agent(f"ppo:{path}")


def test_hand_feature_policy_takes_base_or_prepared_observations(tmp_path):
    env = VectorEnv(16, seed=2)
    obs, mask, _ = (a.copy() if isinstance(a, np.ndarray) else a for a in env.reset())  # writable: torch.from_numpy
    torch.manual_seed(0)
    policy = ActorCritic(hidden_sizes=(16,), hand_features=True)
    path = save_checkpoint(tmp_path / "hf.pt", policy)
    data = load_checkpoint(path)
    assert data["hf_version"] == "hf1" and data["obs_planes"] == NUM_CHANNELS
    loaded = load_policy(path)
    a1 = loaded.act(torch.tensor(obs), torch.tensor(mask), deterministic=True)
    a2 = loaded.act(torch.from_numpy(with_hand_features(obs)), torch.tensor(mask), deterministic=True)
    assert torch.equal(a1, a2) and mask[np.arange(16), a1.numpy()].all()
    with pytest.raises(ValueError, match=r"obs must have shape \(N, 99, 27\)"):
        loaded.act(torch.zeros(1, NUM_CHANNELS + HF_NUM_PLANES + 1, 27, dtype=torch.int8), torch.from_numpy(mask[:1]))


# sha256 of the actions of `pretrained:v1` playing all seats of 64 tables (VectorEnv seed
# 20261203) for 300 steps, taken from the file shipped as `pretrained` until issue 33.
PRETRAINED_V1_PLAY = "126913970261c7b861208eb03d2519ce1000d54a6380f56de1069a8f8fbde273"
# the same for `pretrained:v2`, taken while it was `pretrained` (2026-12-04)
PRETRAINED_V2_PLAY = "f197623b73dbc7c0ef5c04d9d849ba40ab56ea141dc795057af1f691a887cd3a"


def _play_digest(spec: str) -> str:
    import hashlib

    agent = make_agent(spec)
    env = VectorEnv(64, seed=20261203)
    obs, mask, _ = env.reset()
    h = hashlib.sha256()
    for _ in range(300):
        actions = agent.act(obs, mask)
        h.update(np.asarray(actions, np.int64).tobytes())
        obs, mask, *_ = env.step(actions)
    return h.hexdigest()


@pytest.mark.parametrize("version, digest", [("v1", PRETRAINED_V1_PLAY), ("v2", PRETRAINED_V2_PLAY)])
def test_pretrained_versions_play_bit_for_bit_as_they_shipped(version, digest):
    """Old weights stay loadable by name and play exactly as before (issue 33, must have 5)."""
    assert _play_digest(f"pretrained:{version}") == digest


def test_pretrained_versions_and_bad_versions():
    from fzmj.agents.ppo_agent import PRETRAINED_LATEST, PRETRAINED_VERSIONS, pretrained_path

    assert make_agent(f"pretrained:{PRETRAINED_LATEST}").name == f"pretrained:{PRETRAINED_LATEST}"
    assert pretrained_path() == pretrained_path(PRETRAINED_LATEST)
    for v in PRETRAINED_VERSIONS:
        assert pretrained_path(v).is_file()
    for bad in ("pretrained:v0", "pretrained:", "pretrained:latest"):
        with pytest.raises(AgentSpecError, match="unknown pretrained version") as e:
            make_agent(bad)
        assert "\n" not in str(e.value) and "pretrained:v1" in str(e.value)


def test_export_never_overwrites_a_shipped_version(tmp_path):
    from fzmj.agents.ppo_agent import pretrained_path
    from fzmj.train.export_pretrained import export

    with pytest.raises(ValueError, match="never changes"):
        export(pretrained_path("v1"), pretrained_path("v1"))
    out = export(pretrained_path("v1"), tmp_path / "copy.pt")
    assert load_policy(out) is not None


def test_pretrained_agent_loads_and_plays_legally():
    agent = make_agent("pretrained")
    assert agent.name == "pretrained"
    env = VectorEnv(32, seed=4)
    obs, mask, _ = env.reset()
    for _ in range(40):
        actions = agent.act(obs, mask)
        assert mask[np.arange(32), actions].all()
        obs, mask, _, _, _, _ = env.step(actions)
