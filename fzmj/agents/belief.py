"""A learned model of the hidden hands, from one seat's observation (``docs/belief.md``).

    from fzmj.agents.belief import load_belief
    b = load_belief("belief")            # the shipped model (agents/pretrained/fzmj_belief.pt)
    b = load_belief("belief:PATH")       # a checkpoint written by fzmj-belief
    out = b.predict(obs)                 # obs (N, C, 27) or (C, 27) int8, one seat's observation

``out`` holds numpy arrays, the three other seats in relative order (index 0 = 下家 next,
1 = opposite, 2 = 上家 previous; encode's relative seats 1, 2, 3):

* ``concealed`` ``(N, 3, 27)``: expected count of each kind in the seat's concealed hand
  (golds as tiles of the gold kind); ``concealed_dist`` ``(N, 3, 27, 5)``: P(count = 0..4);
* ``ready`` ``(N, 3)``: P(the seat is ready, 听);
* ``win_on`` ``(N, 3, 27)``: P(the seat may win on a discard of kind k now: ready, k completes
  its hand, k is not its 过水 kind, k is not the gold and it has not thrown a gold, R9);
* ``danger`` ``(N, 27)``: ``1 - prod_r (1 - win_on[:, r, k])``, P(discarding k deals in).

The model is trained by supervision on self-play (``fzmj-belief``, ``fzmj/train/belief.py``),
with the engine's hidden state as labels; the observation never carries them. A checkpoint is
checked before anything is built from it: its format, its observation layout (``obs_version``
and the number of planes), its preset, every field's type, its weights' shapes against its
network spec, and finite weights; anything else is refused in one line. Torch is imported by
:func:`load_belief`, not by this module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fzmj_env.encode import OBS_VERSIONS, P_PRESET, PRC_LOSS_CAP
from fzmj_env.rules import available_rules, load_rules

from .base import AgentSpecError

FORMAT = "fzmj-belief"
VERSION = 1
BELIEF_PATH = Path(__file__).resolve().parent / "pretrained" / "fzmj_belief.pt"
SPEC_HELP = "belief (the shipped model) or belief:PATH (a checkpoint of fzmj-belief)"

# Observation layouts a belief may be trained on: name -> planes. A later layout appends planes,
# so a model of an earlier one reads the first planes of a later observation.
OBS_LAYOUTS = dict(OBS_VERSIONS)

# Every field a checkpoint may hold, with its type: anything else is a mistyped field.
FIELDS = {
    "format": str,
    "version": int,
    "obs_version": str,
    "num_channels": int,
    "rules": str,
    "belief_spec": dict,
    "model": dict,
    "optimizer": (dict, type(None)),
    "config": dict,
    "step": int,
    "epoch": int,
    "rng": dict,
    "metrics": dict,
    "data": dict,
}
REQUIRED = ("format", "version", "obs_version", "num_channels", "rules", "belief_spec", "model")


def preset_row(rules: str) -> np.ndarray:
    """Columns 0..5 of the preset plane a table of ``rules`` shows (one-hot scheme, loss cap)."""
    from fzmj_env.core.state import R_LOSS_CAP, R_RESERVE_BASE, R_SCHEME

    p = load_rules(rules).params
    row = np.zeros(6, np.int8)
    row[int(p[R_SCHEME - R_RESERVE_BASE])] = 1
    row[PRC_LOSS_CAP] = int(p[R_LOSS_CAP - R_RESERVE_BASE] > 0)
    return row


def check_belief_checkpoint(data, where: str) -> None:
    """Raise ``ValueError`` (one line, starting with ``where``) unless ``data`` is a belief
    checkpoint this version reads (see the module docstring)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: not a belief checkpoint (a dict of fields), got {type(data).__name__}")
    if data.get("format") != FORMAT:
        got = data.get("format")
        hint = " (a policy: use ppo:PATH)" if got == "fzmj-ppo" else ""
        raise ValueError(f"{where}: format {got!r} is not {FORMAT!r}{hint}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown} (mistyped? fields: {', '.join(FIELDS)})")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ValueError(f"{where}: missing field(s) {missing}")
    for key, typ in FIELDS.items():
        if key in data and (not isinstance(data[key], typ) or (typ is int and isinstance(data[key], bool))):
            raise ValueError(f"{where}: field {key!r} must be {getattr(typ, '__name__', typ)}, got {data[key]!r:.60}")
    if data["version"] != VERSION:
        raise ValueError(f"{where}: belief checkpoint version {data['version']} (this fzmj reads {VERSION})")
    ov, nc = data["obs_version"], data["num_channels"]
    if ov not in OBS_LAYOUTS:
        raise ValueError(f"{where}: observation layout {ov!r} is unknown here (known: {', '.join(OBS_LAYOUTS)})")
    if nc != OBS_LAYOUTS[ov]:
        raise ValueError(f"{where}: {nc} planes do not match observation {ov} ({OBS_LAYOUTS[ov]} planes)")
    if data["rules"] not in available_rules():
        raise ValueError(f"{where}: preset {data['rules']!r} is unknown (known: {', '.join(available_rules())})")
    from .belief_net import build_belief_net, check_spec
    from .checkpoint_checks import check_policy_checkpoint

    try:
        spec = check_spec(data["belief_spec"])
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    if spec["num_channels"] != nc:
        raise ValueError(f"{where}: belief_spec num_channels {spec['num_channels']} != num_channels {nc}")
    check_policy_checkpoint({"policy_spec": spec, "model": data["model"]}, build_belief_net, where)


class BeliefModel:
    """A loaded belief network; :meth:`predict` gives numpy arrays (module docstring)."""

    def __init__(self, net, data: dict, name: str):
        self.net = net.eval()
        self.obs_version = data["obs_version"]
        self.num_channels = int(data["num_channels"])
        self.rules = data["rules"]
        self.metrics = dict(data.get("metrics") or {})
        self.name = name
        self._preset = preset_row(self.rules)

    def check_obs(self, obs) -> np.ndarray:
        """``obs`` as ``(N, C, 27)`` int8, checked against the model's layout and preset (one line)."""
        obs = np.asarray(obs)
        if obs.ndim == 2:
            obs = obs[None]
        if obs.ndim != 3 or obs.shape[2] != 27:
            raise ValueError(f"{self.name}: observations must have shape (N, C, 27), got {obs.shape}")
        if obs.shape[1] < self.num_channels:
            raise ValueError(
                f"{self.name}: the model reads observation {self.obs_version} ({self.num_channels} planes), "
                f"got {obs.shape[1]} planes"
            )
        if len(obs) and (obs[:, P_PRESET, :6] != self._preset).any(axis=1).any():
            raise ValueError(f"{self.name}: trained on preset {self.rules}; these observations are of another preset")
        return obs[:, : self.num_channels]

    def predict(self, obs, mask=None) -> dict[str, np.ndarray]:
        """The predictions for a batch of one seat's observations (``mask`` is not used)."""
        import torch

        x = torch.from_numpy(np.require(self.check_obs(obs), requirements=("C", "W")))  # a read-only view is copied
        with torch.no_grad():
            out = self.net.probabilities(x)
        return {k: v.numpy() for k, v in out.items()}


def _path_of(spec) -> tuple[Path, str]:
    if isinstance(spec, Path):
        return spec, f"belief:{spec}"
    if not isinstance(spec, str):
        raise AgentSpecError(f"a belief must be a spec string ({SPEC_HELP}), got {spec!r}")
    s = spec.strip()
    kind, sep, arg = s.partition(":")
    if kind != "belief":
        raise AgentSpecError(f"unknown belief spec {spec!r}: expected {SPEC_HELP}")
    if not sep:
        if not BELIEF_PATH.is_file():
            raise AgentSpecError(f"the shipped belief model is missing from this installation ({BELIEF_PATH})")
        return BELIEF_PATH, "belief"
    if not arg:
        raise AgentSpecError(f"bad belief spec {spec!r}: expected belief:PATH")
    return Path(arg), s


def load_belief(spec="belief", rules: str | None = None) -> BeliefModel:
    """The belief model named by ``spec`` (``belief`` or ``belief:PATH``), checked before it is
    built; with ``rules``, a model of another preset is refused. ``AgentSpecError`` (one line)
    for anything wrong: a missing file, another layout or preset, mistyped fields, bad weights."""
    if isinstance(spec, BeliefModel):
        model = spec
    else:
        path, name = _path_of(spec)
        if not path.exists():
            raise AgentSpecError(f"bad belief spec {name!r}: no such file {str(path)!r}")
        if path.is_dir():
            raise AgentSpecError(f"bad belief spec {name!r}: {str(path)!r} is a directory, expected a checkpoint file")

        from .belief_net import build_belief_net
        from .checkpoint import unreadable_checkpoint
        from .checkpoint_checks import load_torch_file

        try:
            data = load_torch_file(path)
        except Exception as e:  # noqa: BLE001 - any unreadable file is a bad checkpoint to the user
            raise AgentSpecError(unreadable_checkpoint(path, e)) from None
        try:
            check_belief_checkpoint(data, str(path))
        except ValueError as e:
            raise AgentSpecError(str(e)) from None
        net = build_belief_net(data["belief_spec"])
        net.load_state_dict(data["model"])
        model = BeliefModel(net, data, name)
    if rules is not None and load_rules(rules).name != model.rules:
        raise AgentSpecError(f"{model.name}: trained on preset {model.rules}, not {load_rules(rules).name}")
    return model
