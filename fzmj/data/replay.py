"""Hands back into decisions: replay stored hands through the batched engine (``VectorEnv``, the
env that played them) and keep, for each recorded decision, what the env gave at it.

Nothing is re-implemented: the engine deals each wall from its seed, the stored actions are
stepped in order, and the env's own encoder writes the observation (v2 or v3), its mask and, when
asked, the oracle planes (the privileged hidden state). Every stored decision is checked on the
way: the seat the engine says must act is the stored one, the action is legal in the mask (the
env refuses it otherwise), each hand ends exactly at its last stored decision, and the points the
replay scores are the stored ones. A row that disagrees is a ``DatasetError``, never a batch.
"""

from __future__ import annotations

import numpy as np

from fzmj_env.vector import RESULT_POINTS, RESULT_WIDTH, VectorEnv

from .format import DatasetError

OBS_VERSIONS = ("v2", "v3")


def _padded(hands: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(valid, seats, actions), each (H, L) with L the longest hand: the stored decisions, left aligned."""
    dec = hands["decisions"]
    longest = int(dec.max()) if len(dec) else 0
    valid = np.arange(longest)[None, :] < dec[:, None]
    seats = np.full(valid.shape, -1, np.int64)
    actions = np.zeros(valid.shape, np.int64)
    seats[valid] = hands["seats"]
    actions[valid] = hands["actions"]
    return valid, seats, actions


def _outputs(n: int, channels: int, privileged: bool) -> dict:
    out = {
        "obs": np.empty((n, channels, 27), np.int8),
        "mask": np.empty((n, 62), np.int8),
        "action": np.empty(n, np.int64),
        "seat": np.empty(n, np.int8),
        "step": np.empty(n, np.int32),
    }
    if privileged:
        out["privileged_oracle"] = None  # shaped at the first step (the env knows its channels)
    return out


def replay_hands(
    hands: dict,
    rules,
    obs: str = "v2",
    slots=(0, 1, 2, 3),
    privileged: bool = False,
    threads: int = 1,
    where: str = "",
    only_choices: bool = False,
) -> dict:
    """The recorded decisions of ``hands`` (hand arrays, ``shards.read_row_group``) in the order
    the replay meets them (decision 0 of every hand, then decision 1, ...): ``obs`` (N, C, 27) int8 (``"v2"`` or ``"v3"``), ``mask`` (N, 62)
    int8, ``action`` int64, ``seat`` int8, ``step`` (the decision's index in its hand), ``game``,
    ``wall``, ``hand``, ``slot``, ``points`` (N, 4) int32 (every seat's points of the hand),
    ``ret`` float32 (the acting seat's points: its return, one hand per game) and, with
    ``privileged``, ``privileged_oracle`` (N, ORACLE_CHANNELS, 27) int8. ``only_choices``: only the
    decisions with more than one legal action, picked as they are copied out (the same rows, in
    the same order, as filtering the whole output afterwards, without a second copy)."""
    if obs not in OBS_VERSIONS:
        raise ValueError(f"obs must be one of {OBS_VERSIONS}, got {obs!r}")
    valid, seats, actions = _padded(hands)
    H = valid.shape[0]
    slot_of = (seats - hands["rotation"].astype(np.int64)[:, None]) % 4
    recorded = valid & np.isin(slot_of, np.asarray(slots))
    env = VectorEnv(
        H, rules, hands_per_game=1, auto_reset=False, obs_version=obs, oracle=privileged, num_threads=threads
    )
    o, mask, seat = env.reset(seeds=hands["wall_seed"])
    out = _outputs(int(recorded.sum()), env.obs_shape[0], privileged)
    if privileged:
        out["privileged_oracle"] = np.empty((len(out["action"]), *env.oracle_planes.shape[1:]), np.int8)
    points = np.zeros((H, 4), np.int32)
    n = 0
    for k in range(valid.shape[1]):
        _check_seats(hands, seat, seats[:, k], k, where)
        if only_choices:
            recorded[:, k] &= mask.sum(1) > 1
        sel = np.flatnonzero(recorded[:, k])
        at = slice(n, n + sel.size)  # step by step: the rows of one step are contiguous, no scatter
        np.take(o, sel, axis=0, out=out["obs"][at])
        np.take(mask, sel, axis=0, out=out["mask"][at])
        if privileged:
            np.take(env.oracle_planes, sel, axis=0, out=out["privileged_oracle"][at])
        n += sel.size
        try:
            o, mask, seat, _, _, info = env.step(actions[:, k])
        except ValueError as exc:  # an action the engine refuses: an edited or foreign row
            raise DatasetError(f"{where}: decision {k}: {exc}") from None
        ended = info["hand_over"]
        points[ended] = info["results"][ended, RESULT_POINTS:RESULT_WIDTH]
    _check_end(hands, seat, points, where)
    out = {k: v[:n] for k, v in out.items()}  # with only_choices, fewer rows than allocated
    return _with_ids(out, hands, recorded, seats, actions, slot_of, points)


def _check_seats(hands: dict, seat: np.ndarray, stored: np.ndarray, k: int, where: str) -> None:
    """The engine's acting seat at step ``k`` of each hand is the stored one (-1: the hand is over)."""
    bad = np.flatnonzero(seat != stored)
    if bad.size:
        h = int(bad[0])
        if stored[h] < 0:
            raise DatasetError(f"{where}: game {int(hands['game'][h])}: the stored decisions end before the hand does")
        if seat[h] < 0:
            raise DatasetError(f"{where}: game {int(hands['game'][h])}: decisions stored after the hand ended")
        raise DatasetError(
            f"{where}: game {int(hands['game'][h])}, decision {k}: stored seat {int(stored[h])} acts, "
            f"the engine says seat {int(seat[h])}"
        )


def _check_end(hands: dict, seat: np.ndarray, points: np.ndarray, where: str) -> None:
    if (seat >= 0).any():
        h = int(np.flatnonzero(seat >= 0)[0])
        raise DatasetError(f"{where}: game {int(hands['game'][h])}: the stored decisions end before the hand does")
    bad = np.flatnonzero((points != hands["points"]).any(1))
    if bad.size:
        h = int(bad[0])
        raise DatasetError(
            f"{where}: game {int(hands['game'][h])}: stored points {hands['points'][h].tolist()}, "
            f"the replay scores {points[h].tolist()}"
        )


def _with_ids(out: dict, hands: dict, recorded, seats, actions, slot_of, points) -> dict:
    """The per-decision columns in the output's order (step by step, hands in order within a step),
    the hand-level ones repeated, and the acting seat's return."""
    step, rows = np.nonzero(recorded.T)  # (step, hand) of each output row, in output order
    out["action"][:] = actions[rows, step]
    out["seat"][:] = seats[rows, step]
    out["step"][:] = step
    for key in ("game", "wall", "hand"):
        out[key] = hands[key][rows]
    out["slot"] = slot_of[rows, step].astype(np.int8)
    out["points"] = points[rows]
    out["ret"] = points[rows, out["seat"].astype(np.int64)].astype(np.float32)
    return out
