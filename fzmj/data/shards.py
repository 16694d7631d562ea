"""Hands as columns: from the evaluator's per-batch log into a shard's arrays, and between those
arrays and a Parquet file (one row per hand, the decisions as list columns)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from fzmj_env.vector import RESULT_POINTS, RESULT_WIDTH

from .format import HAND_COLUMNS, DatasetError, pyarrow

ROW_GROUP_HANDS = 512  # the loader's unit of work: ~13k decisions, ~35 MB of v2 planes once replayed
_WINNER, _VALUE = 0, 6  # columns of a result row (fzmj_env.vector._RESULT_SLOTS)


def hands_of_batch(first_wall: int, seeds: np.ndarray, results: np.ndarray, log) -> dict:
    """A batch of the evaluator (``play_batch`` with ``log``: seats and actions per step and job,
    seat -1 once the job's game is over) as hand columns; job ``j`` is wall ``first_wall + j // 4``
    with slot 0 at seat ``j % 4``."""
    seats_log, actions_log = np.asarray(log[0]).T, np.asarray(log[1]).T  # (jobs, steps)
    live = seats_log >= 0
    j = np.arange(results.shape[0])
    return hand_columns(
        4 * first_wall + j, first_wall + j // 4, j % 4, seeds, live.sum(1), seats_log[live], actions_log[live], results
    )


def hand_columns(game, wall, rotation, wall_seed, decisions, seats, actions, results: np.ndarray) -> dict:
    """One-hand games as a shard's columns: per hand its ids, wall seed, number of decisions and
    result row (``VectorEnv``'s ``info["results"]``); ``seats`` / ``actions`` hand by hand, each in
    order of play."""
    return {
        "game": np.asarray(game, np.int64),
        "wall": np.asarray(wall, np.int64),
        "rotation": np.asarray(rotation, np.int8),
        "hand": np.zeros(len(results), np.int16),  # one hand per game
        "wall_seed": np.asarray(wall_seed, dtype=np.uint64),
        "decisions": np.asarray(decisions, np.int64),
        "seats": np.asarray(seats).astype(np.int8),
        "actions": np.asarray(actions).astype(np.uint8),
        "points": results[:, RESULT_POINTS:RESULT_WIDTH].astype(np.int32),
        "winner": results[:, _WINNER].astype(np.int8),
        "value": results[:, _VALUE].astype(np.int32),
    }


def concat_hands(parts: list[dict]) -> dict:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def to_parquet_bytes(hands: dict) -> bytes:
    """The shard's Parquet file (zstd; a row group per ``ROW_GROUP_HANDS`` hands)."""
    pa, pq = pyarrow()
    offsets = np.zeros(len(hands["decisions"]) + 1, np.int32)
    np.cumsum(hands["decisions"], out=offsets[1:])
    cols = {}
    for key in HAND_COLUMNS:
        v = hands[key]
        if key in ("seats", "actions"):
            cols[key] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(v))
        elif key == "points":
            cols[key] = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), 4)
        else:
            cols[key] = pa.array(v)
    sink = io.BytesIO()
    pq.write_table(pa.table(cols), sink, compression="zstd", row_group_size=ROW_GROUP_HANDS)
    return sink.getvalue()


def table_to_hands(table, where: str) -> dict:
    """A shard's (or a row group's) Arrow table as the hand arrays (the inverse of ``to_parquet_bytes``)."""
    missing = [k for k in HAND_COLUMNS if k not in table.column_names]
    if missing:
        raise DatasetError(f"{where}: not a dataset shard (no column {missing[0]!r})")
    out = {}
    try:
        for key in HAND_COLUMNS:
            col = table.column(key).combine_chunks()
            if key in ("seats", "actions"):
                out[key] = col.values.to_numpy(zero_copy_only=False)
                out["decisions"] = np.diff(col.offsets.to_numpy()).astype(np.int64)
            elif key == "points":
                out[key] = col.values.to_numpy(zero_copy_only=False).reshape(-1, 4)
            else:
                out[key] = col.to_numpy(zero_copy_only=False)
    except Exception as exc:  # noqa: BLE001 - a column of another type: one line
        raise DatasetError(f"{where}: column {key!r} is not what a dataset holds ({exc})") from None
    return out


def read_row_group(path: Path, group: int) -> dict:
    """Row group ``group`` of a shard as hand arrays (``DatasetError`` for a file that is not one)."""
    _, pq = pyarrow()
    try:
        table = pq.ParquetFile(path).read_row_group(group)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file
        raise DatasetError(f"{path}: cannot read row group {group} ({type(exc).__name__}: {exc})") from None
    return table_to_hands(table, f"{path} row group {group}")


def row_group_sizes(path: Path) -> list[int]:
    """Hands in each row group of a shard, from its Parquet footer."""
    _, pq = pyarrow()
    try:
        meta = pq.ParquetFile(path).metadata
    except Exception as exc:  # noqa: BLE001
        raise DatasetError(f"{path}: not a readable Parquet shard ({type(exc).__name__}: {exc})") from None
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
