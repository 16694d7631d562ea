"""The ``fzmj-bot`` protocol's messages (docs/protocol.md): what a bot is sent (the public view,
v3's history and the last claim decoded from the observation, the ``act`` request) and the one parser every line it
writes goes through (a well-typed answer or a counted fault, never another exception)."""

from __future__ import annotations

import gc
import json

import numpy as np

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.encode import (
    H_DISC,
    H_DISC_AFTER_CLAIM,
    H_DISC_CLAIMED,
    H_DISC_GOLD,
    H_DISC_N,
    H_DISC_TIME,
    H_FLOWER_WHEN,
    H_MELD,
    H_MELD_SOURCE,
    H_MELD_TAKEN,
    H_MELD_TYPE,
    H_MELD_WHEN,
    H_SEAT_PLANES,
    H_TIME_PLANES,
    NUM_CHANNELS,
    P_HAND_NO,
    P_HIST,
    P_SCORES,
    SCORE_BITS,
    V3_CHANNELS,
)


# ---------------------------------------------------------------------------------------------
# what the bot sees
# ---------------------------------------------------------------------------------------------
def _tiles(c: np.ndarray) -> list[list[int]]:
    """Each row of a (N, 27) count matrix as its kinds with repetition, ascending (a tile list)."""
    rows, cols = np.nonzero(c)
    flat = np.repeat(cols, c[rows, cols]).tolist()
    ends = np.cumsum(c.sum(axis=1, dtype=np.int64)).tolist()
    return [flat[a:b] for a, b in zip([0, *ends][: len(ends)], ends, strict=True)]


def _sets(m: np.ndarray) -> list[list[int]]:
    """The kinds set in each row of a (N, 27) 0/1 matrix."""
    return _tiles(m != 0)


def _hot(m: np.ndarray) -> list:
    """The column of the one-hot in each row of a (N, K) 0/1 matrix, None for an empty row."""
    return np.where(m.any(axis=1), m.argmax(axis=1), -1).tolist()


def _seat_columns(o: np.ndarray, r: int) -> list[list]:
    """Each field of relative seat r's view, as one list over the batch (``_SEAT_KEYS`` order)."""
    b = 9 + 20 * r
    recent = [_hot(o[:, b + 12 + j]) for j in range(4)]
    f = o[:, b + 19]
    return [
        _tiles(o[:, b : b + 4].sum(axis=1, dtype=np.int64)),
        _sets(o[:, b + 4]),
        _sets(o[:, b + 5]),
        _sets(o[:, b + 6]),
        _tiles(o[:, b + 7 : b + 11].sum(axis=1, dtype=np.int64)),
        _sets(o[:, b + 11]),
        [[k for k in ks if k >= 0] for ks in zip(*recent, strict=True)],
        o[:, b + 18].sum(axis=1, dtype=np.int64).tolist(),
        (f[:, 0] == 1).tolist(),
        (f[:, 1] == 1).tolist(),
        (f[:, 2] == 1).tolist(),
        (f[:, 3] == 1).tolist(),
        f[:, 4:9].sum(axis=1, dtype=np.int64).tolist(),
        f[:, 9:13].sum(axis=1, dtype=np.int64).tolist(),
        o[:, 98, 3 * r : 3 * r + 3].sum(axis=1, dtype=np.int64).tolist(),
    ]


_SEAT_KEYS = (
    "melds", "pengs", "kongs", "taken", "discards", "claimed", "recent", "flowers",
    "dealer", "gold_discarded", "current", "discarder", "n_melds", "concealed_kongs", "swim",
)  # fmt: skip
_PHASES = ("turn", "discard", "claim", "over")


def public_view(obs: np.ndarray) -> list[dict]:
    """The decoded public view of each observation row (docs/protocol.md names every field).

    A function of the observation only, decoded for the whole batch at once (one numpy pass
    per field, then one dict per row)."""
    o = np.asarray(obs, dtype=np.int8)
    if o.ndim == 2:
        o = o[None]
    n = o.shape[0]

    def col(m):
        return [None if k < 0 else k for k in _hot(m)]

    drawable = o[:, 89].sum(axis=1, dtype=np.int64)
    drawable = np.where(drawable == 27, 27 + 2 * o[:, 90].sum(axis=1, dtype=np.int64), drawable)
    ph = o[:, 95]
    phase = [_PHASES[k] if k >= 0 else "none" for k in _hot(ph[:, :4])]
    seats = [[dict(zip(_SEAT_KEYS, v, strict=True)) for v in zip(*_seat_columns(o, r), strict=True)] for r in range(4)]
    fields = {
        "hand": _tiles(o[:, 0:4].sum(axis=1, dtype=np.int64)),
        "gold": col(o[:, 4]),
        "golds": o[:, 5].sum(axis=1, dtype=np.int64).tolist(),
        "drawn": col(o[:, 8]),
        "passed": _sets(o[:, 6]),
        "own_concealed_kongs": _sets(o[:, 7]),
        "phase": phase,
        "to_act": (ph[:, 6] == 1).tolist(),
        "rob_window": (ph[:, 4] == 1).tolist(),
        "heaven_possible": (ph[:, 5] == 1).tolist(),
        "claim_tile": col(o[:, 96]),
        "seats": [list(x) for x in zip(*seats, strict=True)] if n else [],
        "drawable": drawable.tolist(),
        "tiles_left_div4": o[:, 91].sum(axis=1, dtype=np.int64).tolist(),
        "reserve": o[:, 92].sum(axis=1, dtype=np.int64).tolist(),
        "streak": o[:, 93].sum(axis=1, dtype=np.int64).tolist(),
        "hands_left": o[:, 94].sum(axis=1, dtype=np.int64).tolist(),
        "preset": col(o[:, 97, :5]),
        "loss_cap": (o[:, 97, 5] == 1).tolist(),
    }
    keys = list(fields)
    return [dict(zip(keys, v, strict=True)) for v in zip(*fields.values(), strict=True)]


# ---- observation v3: the public history (docs/protocol.md, "Observation v3") ----------------------
MELD_TYPES = ("chi", "peng", "exposed_kong", "added_kong", "concealed_kong")  # meld_type's t = 0..4
_N_MELDS = H_MELD_TYPE - H_MELD  # meld planes per seat (MAX_MELDS)


def _first(m: np.ndarray) -> list:
    """The column of the one-hot in each row of a (..., K) 0/1 array, None for an empty row."""
    return np.where(m.any(axis=-1), m.argmax(axis=-1), -1).tolist()


def _meld_histories(h: np.ndarray) -> list[list[dict]]:
    """Each row's melds of one seat's v3 blocks ``h`` (N, 47, 27), in the order they were made."""
    n = h.shape[0]
    types = _first(h[:, H_MELD_TYPE, : 5 * _N_MELDS].reshape(n, _N_MELDS, 5))
    sources = _first(h[:, H_MELD_SOURCE, : 3 * _N_MELDS].reshape(n, _N_MELDS, 3))
    taken = _first(h[:, H_MELD_TAKEN, : 3 * _N_MELDS].reshape(n, _N_MELDS, 3))
    kinds = _sets(h[:, H_MELD : H_MELD + _N_MELDS].reshape(n * _N_MELDS, 27))
    when = _sets(h[:, H_MELD_WHEN : H_MELD_WHEN + _N_MELDS].reshape(n * _N_MELDS, 27))
    out = []
    for i in range(n):
        melds = []
        for j, t in enumerate(types[i]):
            if t < 0:
                break  # melds fill 0, 1, ... in order
            d, k = sources[i][j], taken[i][j]
            melds.append(
                {
                    "type": MELD_TYPES[t],
                    "kinds": kinds[i * _N_MELDS + j],
                    "source": None if d < 0 else d + 1,
                    "taken": None if k < 0 else k,
                    "when": when[i * _N_MELDS + j],
                }
            )
        out.append(melds)
    return out


def _seat_histories(h: np.ndarray, score: np.ndarray) -> list[dict]:
    """The v3 fields of one relative seat in each row: its blocks ``h`` (N, 47, 27) and its score
    planes (N, 27), decoded for the whole batch at once (one numpy pass per field)."""
    n = h.shape[0]
    disc = _first(h[:, H_DISC : H_DISC + H_DISC_N])
    level = score[:, :SCORE_BITS].sum(axis=1, dtype=np.int64) - score[:, SCORE_BITS : 2 * SCORE_BITS].sum(
        axis=1, dtype=np.int64
    )
    columns = {
        "discard_order": [[k for k in ks if k >= 0] for ks in disc],
        "disc_claimed_at": _sets(h[:, H_DISC_CLAIMED]),
        "disc_after_claim_at": _sets(h[:, H_DISC_AFTER_CLAIM]),
        "disc_gold_at": _sets(h[:, H_DISC_GOLD]),
        "disc_time": _sets(h[:, H_DISC_TIME : H_DISC_TIME + H_TIME_PLANES].reshape(n, -1)),  # T = 27 plane + column
        "meld_history": _meld_histories(h),
        "flowers_when": h[:, H_FLOWER_WHEN : H_FLOWER_WHEN + 4].sum(axis=1, dtype=np.int64).tolist(),
        "score_level": level.tolist(),
        "score_leads": (score[:, 26] != 0).tolist(),
    }
    keys = list(columns)
    return [dict(zip(keys, v, strict=True)) for v in zip(*columns.values(), strict=True)]


def history_view(obs: np.ndarray) -> list[dict]:
    """The v3 fields of each observation row (N, V3_CHANNELS, 27): ``{"seats": [4 dicts],
    "hand_no": n}``, decoded from planes 99-291 only (docs/protocol.md names every field), for the
    whole batch at once."""
    o = np.asarray(obs, dtype=np.int8)
    if o.ndim == 2:
        o = o[None]
    seats = [
        _seat_histories(o[:, P_HIST + H_SEAT_PLANES * r : P_HIST + H_SEAT_PLANES * (r + 1)], o[:, P_SCORES + r])
        for r in range(4)
    ]
    hand_no = o[:, P_HAND_NO].sum(axis=1, dtype=np.int64).tolist()
    return [{"seats": list(s), "hand_no": k} for *s, k in zip(*seats, hand_no, strict=True)]


# ---- the last claim (docs/protocol.md, "The last claim"), read from the v3 planes -----------------------
_CLAIM_TYPES = 4  # meld types 0-3 were claims of a discard: chi, peng, exposed kong, a peng since added to


def _claim_times(h: np.ndarray) -> np.ndarray:
    """(N, 4, MAX_MELDS) the table time T of the discard each meld of the four seat blocks ``h``
    (N, 4, 47, 27) took, -1 for a meld that took none (a concealed kong) and for no meld.

    A claim at the melder's position p is followed by the melder's own discard p with nobody's
    discard between (chi/peng: it discards at once; exposed kong: a replacement draw, then its
    discard), so it took the table's discard T - 1, T being the time of that discard p; when the
    melder has not made discard p yet, the claimed tile is the table's last discard. Every time is
    exact: a hand has at most 77 discards (the dealer's first, one per chi or peng: 20, one per draw
    before the last round: 144 - 65 dealt - the indicator - 22 left at least = 56; R3, R6) and the
    time planes hold T = 0..80."""
    n = h.shape[0]
    clock = np.cumsum(h[:, :, H_DISC_TIME : H_DISC_TIME + H_TIME_PLANES].reshape(n, 4, -1), axis=2, dtype=np.int16)
    made = clock[:, :, -1]  # (N, 4) discards each seat made
    types = h[:, :, H_MELD_TYPE, : 5 * _N_MELDS].reshape(n, 4, _N_MELDS, 5)
    claim = types[..., :_CLAIM_TYPES].any(axis=-1)
    p = h[:, :, H_MELD_WHEN : H_MELD_WHEN + _N_MELDS].argmax(axis=-1)  # the first column: when it was claimed
    after = (clock[:, :, None, :] > p[..., None]).argmax(axis=-1)  # the time of the melder's discard p
    last = made.sum(axis=1)[:, None, None] - 1
    return np.where(claim, np.where(p < made[..., None], after - 1, last), -1)


def last_claim(obs: np.ndarray) -> list:
    """The hand's most recent claim of a discard (a chi, peng or exposed kong, by any seat) in each
    row of a v3 observation (N, V3_CHANNELS, 27), ``None`` before the first: ``{"seat", "type",
    "kinds", "tile", "from", "at"}`` (docs/protocol.md, "The last claim"), decoded from planes
    99-286 only, for the whole batch at once. A peng since added to a kong stays ``"peng"`` (the
    claim it was)."""
    o = np.asarray(obs, dtype=np.int8)
    if o.ndim == 2:
        o = o[None]
    n = o.shape[0]
    h = o[:, P_HIST : P_HIST + 4 * H_SEAT_PLANES].reshape(n, 4, H_SEAT_PLANES, 27)
    at = _claim_times(h).reshape(n, 4 * _N_MELDS)
    best = at.argmax(axis=1)  # claims took distinct discards: no ties
    rows = np.arange(n)
    seat, j = np.divmod(best, _N_MELDS)
    s = h[rows, seat]  # (N, 47, 27): the claimer's block
    t = s[rows, H_MELD_TYPE, : 5 * _N_MELDS].reshape(n, _N_MELDS, 5)[rows, j].argmax(axis=1)
    src = s[rows, H_MELD_SOURCE, : 3 * _N_MELDS].reshape(n, _N_MELDS, 3)[rows, j].argmax(axis=1) + 1
    taken = s[rows, H_MELD_TAKEN, : 3 * _N_MELDS].reshape(n, _N_MELDS, 3)[rows, j].argmax(axis=1)
    kinds = _sets(s[rows, H_MELD + j])
    out = []
    for r, k, d, c, ks, when in zip(
        seat.tolist(), t.tolist(), src.tolist(), taken.tolist(), kinds, at[rows, best].tolist(), strict=True
    ):
        if when < 0:
            out.append(None)
            continue
        tile = ks[c] if k == 0 else ks[0]
        kind = MELD_TYPES[1 if k == 3 else k]  # an added kong's claim was its peng
        out.append({"seat": r, "type": kind, "kinds": ks, "tile": tile, "from": (r + d) % 4, "at": when})
    return out


def _add_history(views: list[dict], obs: np.ndarray) -> None:
    """Add the v3 fields to each row's public view (each seat's and ``hand_no``)."""
    for v, h in zip(views, history_view(obs), strict=True):
        for seat, more in zip(v["seats"], h["seats"], strict=True):
            seat.update(more)
        v["hand_no"] = h["hand_no"]


def request_message(
    req_id: int, obs: np.ndarray, mask: np.ndarray, fields=("view",), where=None, layout: str | None = None
) -> str:
    """The ``act`` request line for a batch (without the newline): what the bot is sent. ``obs``
    (N, C, 27): v2 (C = 99) or v3 (C = 292). ``layout``: the one the bot asked for (``None``: the
    observation's own); with v3 ``planes`` is the whole v3 tensor and ``view`` gains the v3 fields
    of :func:`history_view`, with v2 both are v2's (of a v3 observation, its first 99 planes).
    ``"last_claim"`` in ``fields`` needs a v3 observation (:func:`last_claim`), whatever the layout.
    ``where``: each row's ``(tables, seats)`` when the caller knows them (the evaluator: a table's
    index in the run and the bot's seat at it), sent as each row's ``table`` and ``seat``."""
    obs = np.asarray(obs, dtype=np.int8)
    if "last_claim" in fields and obs.shape[1] != V3_CHANNELS:
        raise ValueError(f"last_claim is read from observation v3 ({V3_CHANNELS} planes), got {obs.shape[1]}")
    if not gc.isenabled():
        return _request_message(req_id, obs, mask, fields, where, layout)
    gc.disable()  # many small lists and dicts, all garbage a moment later: no cycle scans meanwhile
    try:
        return _request_message(req_id, obs, mask, fields, where, layout)
    finally:
        gc.enable()


def _request_message(req_id: int, obs: np.ndarray, mask: np.ndarray, fields, where, layout) -> str:
    if where is None:
        rows = [{"legal": lg} for lg in _sets(mask)]
    else:
        tables, seats = (np.asarray(x, dtype=np.int64).tolist() for x in where)
        rows = [{"table": t, "seat": s, "legal": lg} for t, s, lg in zip(tables, seats, _sets(mask), strict=True)]
    full = obs
    if layout is not None and layout != "v3":
        obs = obs[:, :NUM_CHANNELS]  # v3 starts with the v2 planes
    if "view" in fields:
        views = public_view(obs[:, :NUM_CHANNELS])
        if obs.shape[1] == V3_CHANNELS:  # a bot that asked for observation v3: its history too
            _add_history(views, obs)
        for row, v in zip(rows, views, strict=True):
            row["view"] = v
    if "last_claim" in fields:
        for row, c in zip(rows, last_claim(full), strict=True):
            row["last_claim"] = c
    if "planes" in fields:
        flat = (np.asarray(obs, dtype=np.int8).reshape(len(rows), -1) + 48).astype(np.uint8)
        for row, p in zip(rows, flat, strict=True):
            row["planes"] = p.tobytes().decode("ascii")
    return json.dumps({"type": "act", "id": req_id, "rows": rows}, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# reading what the bot writes
# ---------------------------------------------------------------------------------------------
class _BotFault(Exception):
    def __init__(self, kind: str, why: str):
        super().__init__(why)
        self.kind = kind


MAX_LINE = 64 << 20  # bytes in one answer line; a longer one is garbage


def _one_line(what, limit: int = 80) -> str:
    from fzmj_env.checks import short_repr

    return short_repr(what, limit)


def parse_line(raw: bytes) -> dict:
    """One line of a bot as a JSON object, or a ``garbage`` fault; never another exception
    (invalid UTF-8, nesting deeper than the parser's recursion limit, integers beyond Python's
    digit limit, lone surrogates: all are faults)."""
    try:
        msg = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _BotFault("garbage", f"JSON nested too deep: {_one_line(raw[:60])}") from None
    except Exception:  # noqa: BLE001 - whatever the decoder makes of a hostile line is a fault
        raise _BotFault("garbage", f"not JSON: {_one_line(raw[:60])}") from None
    if not isinstance(msg, dict):
        raise _BotFault("garbage", f"not a JSON object: {_one_line(raw[:60])}")
    return msg


def parse_actions(ans: dict, req_id: int, n: int) -> np.ndarray:
    """The actions of an ``act`` answer to request ``req_id`` with ``n`` rows, as int64 with -1
    for every entry that is not an integer in ``0..NUM_ACTIONS-1`` (booleans, floats, strings,
    big integers of either sign); a malformed answer is a ``garbage`` fault."""
    acts = ans.get("actions")
    rid = ans.get("id")
    if (
        ans.get("type") != "act"
        or type(rid) is not int
        or rid != req_id
        or not isinstance(acts, list)
        or len(acts) != n
    ):
        raise _BotFault("garbage", f"expected an act answer to request {req_id} with {n} action(s)")
    return np.array([x if type(x) is int and 0 <= x < NUM_ACTIONS else -1 for x in acts], dtype=np.int64)
