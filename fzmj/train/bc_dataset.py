"""The warm start from a dataset (``bc_dataset: DIR``, a folder of ``fzmj-data collect``): its
recorded decisions with a choice become the demonstrations that ``train/bc.py`` clones, instead of
games the teacher plays now.

The decisions are replayed in the run's observation layout (``obs_version``; the oracle planes for
an oracle critic) and taken whole games at a time, up to ``bc_decisions``. Each one's return is
what the in-memory warm start gives it: the hand's points times ``reward_scale``, discounted by
``gamma`` once per later kept decision of the same seat in the hand (the seat's chain; a dataset
holds one-hand games).

With the all-seeing teacher as ``bc_teacher`` (``oracle:defend``, train/oracle_teacher.py), the
dataset gives the states and the teacher the labels: the replay rebuilds each decision's hidden
state exactly, the teacher labels it, and the dataset's action stays as ``played``.
"""

from __future__ import annotations

import numpy as np
import torch

from fzmj.data import DatasetError, open_dataset
from fzmj_env.rules import load_rules


def open_checked(folder: str, rules: str):
    """The dataset ``folder``, refused (``DatasetError``, one line) unless collected on ``rules``."""
    data = open_dataset(folder)
    data.check_rules(load_rules(rules), who="the run (rules)")
    return data


def dataset_demonstrations(folder: str, decisions: int, args, oracle: bool) -> dict:
    """Up to ``decisions`` decisions with a choice of the dataset ``folder`` (whole games, in order),
    as the fields of ``bc.Demonstrations``."""
    from .oracle_teacher import ORACLE_TEACHERS

    data = open_checked(folder, args.rules)
    obs = "v3" if args.obs_version == 3 else "v2"
    relabel = getattr(args, "bc_teacher", "") in ORACLE_TEACHERS
    parts, n = [], 0
    for i in range(len(data.groups)):
        if n >= decisions:
            break
        part = data.group(i, _options(obs, oracle or relabel))
        parts.append(part)
        n += len(part["action"])
    if not parts or n == 0:
        raise DatasetError(f"{folder}: no decision with a choice among its recorded ones")
    rows = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    rows = _whole_games(rows, decisions)
    ret = _returns(rows, args.reward_scale, args.gamma)
    labels = _oracle_labels(args.bc_teacher, rows) if relabel else rows["action"]
    return dict(
        obs=torch.from_numpy(rows["obs"]),
        mask=torch.from_numpy(rows["mask"]),
        action=torch.from_numpy(labels),
        ret=torch.from_numpy(ret),
        table=rows["game"].astype(np.int64),  # the hold-out takes whole games
        seat=rows["seat"].astype(np.int64),
        played=torch.from_numpy(rows["action"]),
        oracle=torch.from_numpy(rows["privileged_oracle"]) if oracle else None,
    )


def _oracle_labels(spec: str, rows: dict) -> np.ndarray:
    """The all-seeing teacher's actions on the dataset's decisions (their hidden state replayed)."""
    from .oracle_teacher import make_teacher

    return np.asarray(make_teacher(spec).act(rows["obs"], rows["mask"], rows["privileged_oracle"]), np.int64)


def _options(obs: str, oracle: bool):
    from fzmj.data.loader import ReadOptions

    return ReadOptions(obs=obs, privileged=oracle, only_choices=True)


def _whole_games(rows: dict, decisions: int) -> dict:
    """The rows of the first games (in game order) whose decisions add up to at most ``decisions``
    (at least one game)."""
    games, counts = np.unique(rows["game"], return_counts=True)
    keep_games = games[: max(1, int(np.searchsorted(np.cumsum(counts), decisions, side="right")))]
    keep = np.isin(rows["game"], keep_games)
    order = np.lexsort((rows["step"][keep], rows["game"][keep]))  # game by game, each in order of play
    return {k: v[keep][order] for k, v in rows.items()}


def _returns(rows: dict, reward_scale: float, gamma: float) -> np.ndarray:
    """Each decision's discounted return along its seat's chain of kept decisions in the hand."""
    key = rows["game"] * 4 + rows["seat"].astype(np.int64)
    order = np.lexsort((-rows["step"], key))  # per (game, seat), the last decision first
    later = np.zeros(len(key), np.int64)
    sorted_key = key[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_key)) + 1]
    rank = np.arange(len(key)) - np.repeat(starts, np.diff(np.r_[starts, len(key)]))
    later[order] = rank
    return (rows["ret"] * reward_scale * gamma ** later.astype(np.float64)).astype(np.float32)
