"""The PPO checkpoint format, with one owner: its fields and version, the atomic writer
(:func:`save_checkpoint`, used by the trainer) and the reader (:func:`load_checkpoint`,
:func:`load_policy`, used by agents, the trainer's resume and every tool). It lives with the
agents because ``ppo:PATH`` agents read it and the agents never import the trainer.

A checkpoint is one ``torch.save`` file of plain data (loadable with ``weights_only=True``)::

    format        "fzmj-ppo"          version   1
    obs_version   "v1"                policy_spec   ActorCritic's constructor arguments
    obs_planes    99 (base planes)    hf_version    "hf1" with hand features, else None
    hf_planes     18 with hand features, else 0
    bp_version    "bp1" with belief planes (policy_spec belief_planes, belief_spec), else absent
    model         the policy's state_dict
    optimizer     the optimizer's state_dict
    config        the training config (a dict of the Args fields)
    update, global_step
    rng           torch / CUDA / numpy generator states
    pool          the opponent pool's snapshots (state_dicts), when the pool is used

It is written to a temporary file (``<name>.<8 random characters>.tmp`` in the same folder) and
renamed, so an interrupted save never leaves half a file (the trainer removes the temporaries a
killed run left, ``fzmj.train.checkpoint.remove_stale_temporaries``). A reader refuses, in one
line naming the file, a file of another format, a newer version, another observation layout,
mistyped fields, weights that do not fit the spec and non-finite weights.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

import numpy as np
import torch

from fzmj_env.encode import NUM_CHANNELS, OBS_VERSION, OBS_VERSIONS
from fzmj_env.features import HF_NUM_PLANES, HF_VERSION

from .belief_net import BELIEF_NUM_PLANES, BELIEF_PLANES_VERSION
from .checkpoint_checks import check_checkpoint_fields, check_policy_checkpoint, check_torch_sizes
from .policy import ActorCritic, build_policy

FORMAT = "fzmj-ppo"


VERSION = 1


def _read_checkpoint(path: str | Path, map_location="cpu") -> dict:
    """The checkpoint's dict; ``FileNotFoundError`` / ``ValueError`` with the path when unusable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    check_torch_sizes(path)  # a zip bomb is refused before the loader takes its memory
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # a truncated file, not a torch file, ... (one line of ours)
        raise ValueError(unreadable_checkpoint(path, e)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not an fzmj PPO checkpoint (format {FORMAT!r})")
    check_checkpoint_fields(data, str(path))  # each field's type, before it is compared or converted
    if data.get("version", 0) > VERSION:
        raise ValueError(f"{path}: checkpoint version {data['version']} is newer than this code ({VERSION})")
    check_layout(data, path)
    check_policy_checkpoint(data, build_policy, str(path))  # spec vs weight shapes, finite weights
    return data


def unreadable_checkpoint(path, err: Exception) -> str:
    """One line for a file torch cannot load as plain data (torch's own text runs to several
    lines and suggests ``weights_only=False``, which must never be done with a file from elsewhere)."""
    if isinstance(err, pickle.UnpicklingError) and "weights only" in str(err).lower():
        why = "it holds Python objects besides tensors and plain data, which are never loaded"
    else:
        why = (str(err).strip().splitlines() or [type(err).__name__])[0][:160]
    return f"{path} is not a readable fzmj checkpoint: {why}"


def layout_name(obs_version: str, planes: int, hf_version: str | None, hf_planes: int = HF_NUM_PLANES) -> str:
    """``"v2 (99 planes) + hand features hf1 (18 planes)"``: an observation layout, for messages."""
    text = f"{obs_version} ({planes} planes)"
    return text + (f" + hand features {hf_version} ({hf_planes} planes)" if hf_version else "")


def check_layout(data: dict, path) -> None:
    """One-line ``ValueError`` when the checkpoint's observation layout is not this code's."""
    spec = data.get("policy_spec") or {}
    planes = int(spec.get("obs_planes", 97))  # checkpoints before v1, 97 planes
    hf = data.get("hf_version") if spec.get("hand_features") else None
    here_hf = HF_VERSION if spec.get("hand_features") else None
    hf_planes = int(data.get("hf_planes", HF_NUM_PLANES)) if hf else 0
    version = data.get("obs_version")
    if (
        version not in OBS_VERSIONS
        or planes != OBS_VERSIONS[version]
        or hf != here_hf
        or (hf and hf_planes != HF_NUM_PLANES)
    ):
        raise ValueError(
            f"{path}: observation layout mismatch: the policy was trained on "
            f"{layout_name(data.get('obs_version'), planes, hf, hf_planes)}, this code encodes "
            f"{' or '.join(layout_name(v, c, here_hf) for v, c in OBS_VERSIONS.items())}; "
            "retrain it or use a matching checkpoint"
        )
    bp = data.get("bp_version")
    if spec.get("belief_planes") and bp != BELIEF_PLANES_VERSION:
        raise ValueError(
            f"{path}: the policy reads belief planes {bp!r}, this code makes {BELIEF_PLANES_VERSION!r} "
            f"({BELIEF_NUM_PLANES} planes); retrain it or use a matching checkpoint"
        )


def load_policy(path: str | Path, device: str | torch.device = "cpu") -> ActorCritic:
    """The policy of a checkpoint, on ``device``, in eval mode: ``policy.act(obs, mask, deterministic)``.
    A policy that cannot give a finite distribution on real observations is refused (:func:`check_plays`)."""
    data = load_checkpoint(path, map_location=device)
    policy = build_policy(data["policy_spec"])
    policy.load_state_dict(data["model"])
    policy = policy.to(device).eval()
    check_plays(policy, path)
    return policy


PROBE_TABLES, PROBE_STEPS = 4, 6


def check_plays(policy: ActorCritic, where) -> None:
    """One-line ``ValueError`` (naming ``where``) unless the policy's action distribution is finite on
    every legal action of real observations (the first decisions of a few seeded tables). Finite but
    absurd weights (a first layer of 3e38) make every masked logit NaN; the agent then takes the first
    legal action every time and an evaluation prints a normal-looking table."""
    from fzmj_env.vector import VectorEnv

    from .policy import to_tensor

    dev = next(policy.parameters()).device
    env = VectorEnv(PROBE_TABLES, seed=0, obs_version=3 if policy.obs_version == "v3" else 2)
    obs, mask, _ = env.reset()
    for _ in range(PROBE_STEPS):
        with torch.no_grad():
            m = to_tensor(mask, dev)
            logits = policy.masked_logits(
                policy.trunk(policy.actor_input(policy.prepare(to_tensor(obs, dev)), None)), m
            )
            probs = torch.softmax(logits, dim=-1)
        legal = m != 0
        if not (bool(torch.isfinite(logits[legal]).all()) and bool(torch.isfinite(probs).all())):
            raise ValueError(
                f"{where}: the policy gives no finite action distribution on real observations "
                "(its weights overflow the network's arithmetic: NaN or inf logits); refused"
            )
        obs, mask, *_ = env.step(np.argmax(mask, axis=1))  # the first legal action: a few more states


def load_checkpoint(path: str | Path, map_location="cpu") -> dict:
    """The checkpoint's dict (:func:`_read_checkpoint`), with a mistyped field in a crafted or damaged file
    reported as a one-line ``ValueError`` too (never a ``TypeError`` from deep inside)."""
    try:
        return _read_checkpoint(path, map_location=map_location)
    except FileNotFoundError:
        raise
    except ValueError as e:
        if str(path) in str(e):  # already our one line, naming the file
            raise
        why = (str(e).strip().splitlines() or [type(e).__name__])[0][:160]
        raise ValueError(
            f"{path} is not a usable fzmj checkpoint: a field has the wrong type or value ({why})"
        ) from None
    except (TypeError, AttributeError, KeyError, IndexError, RuntimeError, OverflowError) as e:
        why = (str(e).strip().splitlines() or [type(e).__name__])[0][:160]
        raise ValueError(
            f"{path} is not a usable fzmj checkpoint: a field has the wrong type or shape ({why})"
        ) from None


def save_checkpoint(
    path: str | Path,
    policy: ActorCritic,
    optimizer=None,
    config: dict | None = None,
    update: int = 0,
    global_step: int = 0,
    rng: dict | None = None,
    **extra,
) -> Path:
    """Write a checkpoint atomically; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "version": VERSION,
        "obs_version": getattr(policy, "obs_version", OBS_VERSION),
        "obs_planes": int(policy.spec.get("obs_planes", NUM_CHANNELS)),
        "hf_version": HF_VERSION if policy.spec.get("hand_features") else None,
        "hf_planes": HF_NUM_PLANES if policy.spec.get("hand_features") else 0,
        **({"bp_version": BELIEF_PLANES_VERSION} if policy.spec.get("belief_planes") else {}),
        "policy_spec": dict(policy.spec),
        "model": {k: v.detach().cpu() for k, v in policy.state_dict().items()},
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "config": dict(config or {}),
        "update": int(update),
        "global_step": int(global_step),
        "rng": rng or {},
        **extra,
    }
    bad = [k for k, v in data["model"].items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:  # never replace a good checkpoint by a poisoned one
        raise ValueError(f"refusing to save {path}: non-finite weights in {', '.join(bad[:3])}")
    # a unique temporary name: two writers never share it; removed if the write fails
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            out = _Writes(f)
            try:
                torch.save(data, out)
            except RuntimeError:  # torch hides the OS error (ENOSPC, EIO) behind its own message
                if out.error is not None:
                    raise out.error from None
                raise
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp makes it 0600; a checkpoint is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class _Writes:
    """A file for ``torch.save`` that remembers the OS error of a failed write."""

    def __init__(self, f):
        self.f, self.error = f, None

    def write(self, b) -> int:
        try:
            return self.f.write(b)
        except OSError as e:
            self.error = e
            raise

    def flush(self) -> None:
        self.f.flush()


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
