"""Checks of a policy checkpoint's content before anything is built from it.

A checkpoint names its network (``policy_spec``) and carries its weights (``model``). Both come
from a file, so neither is trusted: the spec is built on PyTorch's ``meta`` device (shapes only,
no memory, so a spec of ``hidden_sizes: [100000, 100000]`` costs nothing), its parameter shapes
are compared with the stored weights', and every floating-point weight must be finite. Only
then does the loader allocate the real network.

Used by the checkpoint loader (``train/checkpoint.py``); it lives in ``agents/`` so that a policy
loader there can call it too (agents never import ``train/``): the network builder is passed in.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from typing import Any

import torch

from fzmj_env.checks import check_int, short_repr


def check_torch_sizes(path: str | os.PathLike) -> None:
    """Raise ``ValueError`` (one line naming ``path``) when the torch file's zip entries declare more
    bytes than the file holds, before anything is loaded: ``torch.save`` stores every entry as is,
    so a compressed entry (a 3.7 MB file unpacking a 2.4 GB tensor of zeros) is a crafted file, and
    the loader would take that memory before any check of ours could run."""
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip file: torch's own loader says what it is (no larger in memory than the file)
    packed = [i for i in infos if i.compress_type != zipfile.ZIP_STORED]
    if packed:
        i = packed[0]
        raise ValueError(
            f"{path}: entry {i.filename} is compressed ({i.compress_size:,} bytes unpacking to {i.file_size:,}); "
            "torch.save never writes one: refused before loading"
        )
    total, size = sum(i.file_size for i in infos), os.path.getsize(path)
    if total > size:
        raise ValueError(
            f"{path}: its entries declare {total:,} bytes, the file holds {size:,}: refused before loading"
        )


def load_torch_file(path: str | os.PathLike, map_location="cpu"):
    """``torch.load`` of plain data only (``weights_only=True``), after :func:`check_torch_sizes`."""
    check_torch_sizes(path)
    return torch.load(path, map_location=map_location, weights_only=True)


def _first(items, n: int = 3) -> str:
    items = list(items)
    more = f" (+{len(items) - n} more)" if len(items) > n else ""
    return ", ".join(items[:n]) + more


# The top-level fields besides the weights, and the spec fields the layout check reads: each with the
# type a checkpoint written by train/checkpoint.py holds (None = the field may be null).
_INT, _STR, _BOOL = (int,), (str,), (bool,)
_FIELDS = {"version": _INT, "obs_version": _STR, "obs_planes": _INT, "hf_version": _STR + (type(None),),
           "hf_planes": _INT, "bp_version": _STR, "update": _INT, "global_step": _INT}  # fmt: skip
_SPEC_FIELDS = {"obs_planes": _INT, "hand_features": _BOOL, "oracle_critic": _BOOL, "belief_planes": _BOOL}


def _type_name(types: tuple) -> str:
    names = {int: "an integer", str: "a string", bool: "true or false", type(None): "null"}
    return " or ".join(names[t] for t in types)


def check_checkpoint_fields(data: dict, where: str) -> None:
    """Raise ``ValueError`` (one line, starting with ``where``) when a field of the checkpoint has
    the wrong type (``version: "abc"``, ``obs_planes: [99]``, ``hf_planes: {...}``), before any
    code compares or converts it; ``policy_spec`` must be a dict."""

    def check(name: str, value, types: tuple) -> None:
        ok = isinstance(value, types) and not (bool not in types and isinstance(value, bool))
        if not ok:
            raise ValueError(f"{where}: {name} must be {_type_name(types)}, got {short_repr(value)}")

    for name, types in _FIELDS.items():
        if name in data:
            check(name, data[name], types)
    spec = data.get("policy_spec")
    if spec is not None and not isinstance(spec, dict):
        raise ValueError(f"{where}: policy_spec must be a dict of network settings, got {short_repr(spec)}")
    for name, types in _SPEC_FIELDS.items():
        if spec and name in spec:
            check(f"policy_spec.{name}", spec[name], types)


def check_policy_checkpoint(data: dict, build: Callable[[dict], Any], where: str) -> None:
    """Raise ``ValueError`` (one line, starting with ``where``) unless ``data["policy_spec"]``
    builds a network whose parameter names and shapes are exactly those of ``data["model"]``
    and every floating-point tensor of ``data["model"]`` is finite (no NaN, no inf)."""
    spec, model = data.get("policy_spec"), data.get("model")
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: the checkpoint has no policy_spec (a dict of network settings)")
    if not isinstance(model, dict) or not all(isinstance(v, torch.Tensor) for v in model.values()):
        raise ValueError(f"{where}: the checkpoint's model is not a state dict of tensors")
    try:
        with torch.device("meta"):
            net = build(spec)
    except Exception as e:  # noqa: BLE001 - any failure to build is a bad spec to the user
        raise ValueError(
            f"{where}: policy_spec {spec!r} does not describe a network ({type(e).__name__}: {e})"
        ) from None
    _check_real(model, where, "")
    want = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in model.items()}
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    if missing or extra:
        what = ([f"missing {_first(missing)}"] if missing else []) + ([f"unexpected {_first(extra)}"] if extra else [])
        raise ValueError(f"{where}: the weights do not match policy_spec {spec!r}: {'; '.join(what)}")
    wrong = [f"{k} {got[k]} (spec: {want[k]})" for k in want if got[k] != want[k]]
    if wrong:
        raise ValueError(f"{where}: the weights do not match policy_spec {spec!r}: {_first(wrong)}")
    _check_finite(model, where, "")
    # a trainer checkpoint also carries counters and the opponent pool's snapshots (same network)
    for key in ("update", "global_step"):
        try:
            if key in data:
                check_int(key, data[key], 0)
        except ValueError:
            raise ValueError(f"{where}: {key} must be a non-negative integer, got {data[key]!r}") from None
    pool = data.get("pool")
    if pool is not None:
        if not isinstance(pool, list):
            raise ValueError(f"{where}: pool must be a list of state dicts")
        for i, sd in enumerate(pool):
            if not isinstance(sd, dict) or {k: tuple(getattr(v, "shape", ())) for k, v in sd.items()} != want:
                raise ValueError(f"{where}: pool snapshot {i} does not match policy_spec {spec!r}")
            _check_real(sd, where, f"pool snapshot {i}: ")
            _check_finite(sd, where, f"pool snapshot {i}: ")


def _check_finite(state: dict, where: str, what: str) -> None:
    bad = [
        k
        for k, v in state.items()
        if isinstance(v, torch.Tensor) and v.is_floating_point() and not bool(torch.isfinite(v).all())
    ]
    if bad:
        raise ValueError(f"{where}: {what}non-finite weights (NaN or inf) in {_first(bad)}: refused")


def _check_real(state: dict, where: str, what: str) -> None:
    """Complex weights: torch would drop their imaginary parts with a raw ``UserWarning``."""
    bad = [f"{k} ({v.dtype})" for k, v in state.items() if isinstance(v, torch.Tensor) and v.is_complex()]
    if bad:
        raise ValueError(
            f"{where}: {what}complex-valued weights in {_first(bad)}; a network's weights are real: refused"
        )
