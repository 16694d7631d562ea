"""Export a dataset to Minari (the Farama format of offline RL datasets, read by TorchRL, d3rlpy and
``minari.load_dataset``): one episode per recorded seat and hand, as ``fzmj/SingleSeat-v0`` with
``mask_in_obs=True`` would have given it to that seat.

Each episode's observations are the seat's decisions in order (``{"observation": planes,
"action_mask": mask}``, replayed by ``fzmj.data``) and a final one (zero planes, a pass-only mask,
as the env's ``terminated`` step gives); its actions are the actions taken; its reward is 0 at
every step but the last, which gets the hand's points times ``reward_scale``; the last step is
terminal. ``pip install "fzmj[minari]"``; the folder is ``MINARI_DATASETS_PATH`` (Minari's own
setting, default ``~/.minari/datasets``).

The default storage is Minari's HDF5 (one file): it wrote 367 episodes a second where its Arrow
storage (a folder per episode) wrote 5 on the loaded 2-core machine
(``benchmarks/bench_minari_export.py``, docs/data.md). ``data_format="arrow"`` gives the other.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from pathlib import Path

import numpy as np

from fzmj_env.actions import A_PASS, NUM_ACTIONS

from .format import DatasetError
from .loader import ReadOptions, open_dataset

STORAGE_MODULES = {"hdf5": "h5py", "arrow": "pyarrow"}  # what each of Minari's storages imports


def _spaces(channels: int):
    from gymnasium import spaces

    obs = spaces.Dict(
        {
            "observation": spaces.Box(0, 1, (channels, 27), dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )
    return obs, spaces.Discrete(NUM_ACTIONS)


def episodes(rows: dict, reward_scale: float) -> list:
    """Minari episode buffers of the replayed ``rows`` of one row group: one per (game, seat)."""
    from minari.data_collector.episode_buffer import EpisodeBuffer

    order = np.lexsort((rows["step"], rows["seat"], rows["game"]))
    key = (rows["game"] * 4 + rows["seat"])[order]
    starts = np.r_[0, np.flatnonzero(np.diff(key)) + 1, len(key)]
    out = []
    for lo, hi in zip(starts[:-1], starts[1:], strict=True):
        idx = order[lo:hi]
        planes = np.concatenate([rows["obs"][idx], np.zeros((1, *rows["obs"].shape[1:]), np.int8)])
        final_mask = np.zeros((1, NUM_ACTIONS), np.int8)
        final_mask[0, A_PASS] = 1
        masks = np.concatenate([rows["mask"][idx], final_mask])
        rewards = np.zeros(len(idx), np.float64)
        rewards[-1] = float(rows["ret"][idx[-1]]) * reward_scale
        done = np.zeros(len(idx), bool)
        done[-1] = True
        out.append(
            EpisodeBuffer(
                observations={"observation": planes, "action_mask": masks},
                actions=rows["action"][idx].astype(np.int64),
                rewards=rewards,
                terminations=done,
                truncations=np.zeros(len(idx), bool),
            )
        )
    return out


def to_minari(
    folder: str | Path,
    dataset_id: str,
    obs: str = "v2",
    reward_scale: float = 1.0,
    description: str = "",
    data_format: str = "hdf5",
):
    """Write the dataset ``folder`` as the Minari dataset ``dataset_id`` (e.g. ``fzmj/heuristic-v0``);
    returns it (``minari.load_dataset(dataset_id)`` opens it again). Every episode is held in
    memory while Minari writes them (docs/data.md): export a part of a large dataset
    (``fzmj-data collect`` fewer hands). ``data_format``: Minari's storage, ``"hdf5"`` (the
    default, needs h5py) or ``"arrow"`` (needs pyarrow; a folder per episode, slow)."""
    if data_format not in STORAGE_MODULES:
        raise DatasetError(f"data_format: 'hdf5' or 'arrow', got {data_format!r}")
    try:
        import minari

        importlib.import_module(STORAGE_MODULES[data_format])
    except ImportError:
        raise DatasetError(
            f'the Minari export ({data_format}) needs minari[{data_format}]: pip install "fzmj[minari]"'
        ) from None
    data = open_dataset(folder)
    buffers: list = []
    for i in range(len(data.groups)):
        buffers += episodes(data.group(i, ReadOptions(obs=obs)), reward_scale)
    for n, b in enumerate(buffers):
        object.__setattr__(b, "id", n)  # EpisodeBuffer is frozen; ids in order
    m = data.manifest
    obs_space, act_space = _spaces(buffers[0].observations["observation"].shape[1] if buffers else 99)
    with warnings.catch_warnings():  # Minari's advice to name an author's e-mail and an evaluation env
        warnings.filterwarnings("ignore", category=UserWarning, module="minari")
        return minari.create_dataset_from_buffers(
            dataset_id,
            buffers,
            env=_env_spec(m, obs),
            algorithm_name=f"fzmj-data collect: {' / '.join(m['agents'])} (slots {m['slots_recorded']})",
            author="fzmj-data",
            observation_space=obs_space,
            action_space=act_space,
            description=description or f"{Path(folder).name}: {m['counts']['hands']:,} hands on {m['preset']}",
            data_format=data_format,
        )


def _env_spec(m: dict, obs: str):
    """The env the episodes are as if from: ``fzmj/SingleSeat-v0`` with the dataset's preset, its
    slot-1..3 agents as opponents and the mask in the observation."""
    import gymnasium

    import fzmj_env  # noqa: F401 - registers fzmj/SingleSeat-v0

    spec = gymnasium.spec("fzmj/SingleSeat-v0")
    kwargs = {
        "opponents": list(m["agents"][1:]),
        "rules": m["preset"],
        "mask_in_obs": True,
        "obs_version": 3 if obs == "v3" else 2,
    }
    return dataclasses.replace(spec, kwargs=kwargs)
