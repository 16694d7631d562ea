"""Per-decision state snapshots ("frames") for the replay page and the play server.

Every number on the pages comes from here, and everything here is read from the engine's state
or asked of the engine's own functions (the legal mask, 闲金 via ``is_idle_gold_counts``): the
pages only draw. A frame is a plain JSON-ready dict:

``{"hand", "step", "phase", "actor", "cur", "legal", "action", "events", "wall", "seats",
"claim", "scores"}`` — see :func:`snapshot`. ``view`` (a seat, or None for every seat) hides
what that seat may not see (R12): other seats' concealed tiles, their 过水 and 闲金 states,
their legal actions, the kind of their concealed kongs, and whether they were asked in a claim
window and what they answered (only the window's outcome is public).
"""

from __future__ import annotations

import json

from fzmj_env.actions import A_CHI_HIGH, A_CHI_LOW, A_CHI_MID, A_HU, A_KONG, A_PASS, A_PENG, A_ROB, action_name
from fzmj_env.core import state
from fzmj_env.core.hand import is_idle_gold_counts, win_split_counts
from fzmj_env.game import Game
from fzmj_env.record import RecordError, replay
from fzmj_env.rules import Rules
from fzmj_env.tiles import kind_name

# Option bits of a seat in a claim window (core/state.py OPT_*) -> the action each offers.
_OPT_ACTIONS = (
    (state.OPT_HU, A_HU),
    (state.OPT_ROB, A_ROB),
    (state.OPT_KONG, A_KONG),
    (state.OPT_PENG, A_PENG),
    (state.OPT_CHI_LOW, A_CHI_LOW),
    (state.OPT_CHI_MID, A_CHI_MID),
    (state.OPT_CHI_HIGH, A_CHI_HIGH),
)


def preset_name(record: dict) -> str:
    """The preset a record names (a string today; a mapping with a ``name`` is accepted too)."""
    rules = record.get("rules")
    if isinstance(rules, dict):
        rules = rules.get("name")
    return str(rules)


def _check_view(view: int | None) -> None:
    if view is not None and (isinstance(view, bool) or not isinstance(view, int) or not 0 <= view <= 3):
        raise ValueError(f"the seat to view must be 0..3 or None (every seat), got {view!r}")


def snapshot(game: Game, view: int | None = None, start_scores: list[int] | None = None) -> dict:
    """The table as the page shows it now (before the acting seat decides).

    ``start_scores``: the match scores before this hand, when ``game`` plays one hand of a
    longer record on its own (the replay does that to keep each hand's final state).
    """
    # Long on purpose: one flat pass over the engine's state in the order the page draws it (seats, melds,
    # discards, the claim window, counters): splitting it would only pass the same locals around.
    v = game.view
    m = v.m
    phase = int(m[state.PHASE])
    actor = game.seat
    gold = int(m[state.GOLD])
    cur = int(m[state.CUR])
    claim_open = phase == state.PH_CLAIM
    seats = []
    for s in range(4):
        hand = v.hand[s]
        n_tiles = int(hand.sum())
        visible = view is None or view == s
        melds = []
        for j in range(int(v.n_melds[s])):
            mtype, kind, taken, src = (int(x) for x in v.meld[s, j])
            if mtype == state.MELD_CONCEALED_KONG and not visible and phase != state.PH_OVER:
                kind = -1  # which kind a concealed kong holds is private until the hand ends (R12)
            melds.append([state.MELD_NAMES[mtype], kind, taken, src])
        seat = {
            "n_hand": n_tiles,
            "hand": [k for k in range(27) for _ in range(int(hand[k]))] if visible else None,
            "melds": melds,
            "disc": [[int(v.disc[s, i]), int(v.disc_claimed[s, i])] for i in range(int(v.n_disc[s]))],
            "flowers": [27 + i for i in range(15) for _ in range(int(v.flowers[s, i]))],
            "gold_thrown": bool(v.gold_thrown[s]),
            "passed": [k for k in range(27) if v.passed[s, k]] if visible else None,
            # 闲金 (R9.5) is a property of a 3n+1 hand; the engine's own test decides it
            "idle_gold": bool(is_idle_gold_counts(game.win_table, hand, gold))
            if visible and n_tiles % 3 == 1
            else None,
            "last_draw": int(m[state.LAST_DRAW])
            if visible and s == cur and phase == state.PH_TURN and m[state.LAST_DRAW] >= 0
            else None,
        }
        seats.append(seat)
    claim = None
    if claim_open:
        pos = int(m[state.ASK_POS])
        asked = []
        for j in range(int(m[state.N_ASK])):
            s = int(v.ask[j])
            if view is not None and view != s:
                continue  # that a seat is asked at all tells it holds an option: private (R12)
            asked.append(
                {
                    "seat": s,
                    "offered": [a for bit, a in _OPT_ACTIONS if int(v.opts[s]) & bit] + [A_PASS],
                    "answered": j < pos,
                    "answer": int(v.choice[s]) if j < pos else None,
                }
            )
        claim = {
            "tile": int(m[state.CLAIM_TILE]),
            "from": int(m[state.CLAIM_FROM]),
            "rob": bool(m[state.ROB_WINDOW]),
            "asked": asked,
        }
    base = start_scores or [0, 0, 0, 0]
    legal = game.legal_actions if actor >= 0 and (view is None or view == actor) else None
    return {
        "hand": int(m[state.HAND_NO]),
        "phase": state.PHASE_NAMES[phase],
        "actor": actor if actor >= 0 else None,
        "cur": cur if cur >= 0 else None,
        "dealer": int(m[state.DEALER]),
        "streak": int(m[state.STREAK]),
        "gold": gold,
        "legal": legal,
        "wall": {
            "left": game.tiles_left,
            "reserve": game.reserve,
            "drawable": game.drawable,
            "final": int(m[state.FINAL_LEFT]),
        },
        "seats": seats,
        "claim": claim,
        "last_discard": int(m[state.CLAIM_FROM])
        if m[state.CLAIM_FROM] >= 0 and v.n_disc[m[state.CLAIM_FROM]]
        else None,
        "scores": [a + b for a, b in zip(base, game.scores, strict=True)],
    }


def describe_step(
    before: dict, after: dict, seat: int, action: int, view: int | None, result: dict | None
) -> list[str]:
    """Lines saying what one decision did, read off the two snapshots around it.

    ``result``: the hand's result if this decision ended the hand. Only what ``view`` may see.
    """
    lines = []
    who = f"seat {seat}"
    claim = before["claim"]
    if claim is None:
        lines.append(f"{who}: {public_action_name(before, after, seat, action, view)}")
    elif view is None or view == seat:
        lines.append(f"{who} answers the claim window: {action_name(action)}")
    if claim is not None and after["claim"] is None:  # that was the window's last answer
        lines.append("claim window resolved: " + _resolution(before, after, result))
    for s in range(4):
        b, a = before["seats"][s], after["seats"][s]
        laid = laid_flowers(b["flowers"], a["flowers"])
        if laid and before["hand"] == after["hand"]:
            names = " ".join(kind_name(k) for k in laid)
            final = after["wall"]["final"] >= 0 or result is not None  # the final round: no replacement (R6)
            lines.append(f"seat {s} lays out flower(s) {names}" + ("" if final else " and draws replacements"))
    if result is not None:
        return lines
    if after["phase"] == "turn" and after["cur"] is not None and after["seats"][after["cur"]]["last_draw"] is not None:
        if before["cur"] != after["cur"] or before["phase"] != "turn" or claim is not None or action >= 27:
            lines.append(f"seat {after['cur']} draws {kind_name(after['seats'][after['cur']]['last_draw'])}")
    elif after["phase"] == "turn" and after["cur"] is not None and after["cur"] != seat:
        lines.append(f"seat {after['cur']} draws")
    return lines


def laid_flowers(before: list[int], after: list[int]) -> list[int]:
    """The flower kinds laid out between two snapshots: the engine keeps a count per flower kind
    (``flowers[seat, kind - 27]``), so the new ones are the per-kind increase, in kind order."""
    left = list(before)
    new = []
    for k in after:
        if k in left:
            left.remove(k)
        else:
            new.append(k)
    return new


def public_action_name(before: dict, after: dict, seat: int, action: int, view: int | None) -> str:
    """The action's name as ``view`` may see it: another seat's concealed kong hides its kind (R12)."""
    if view is not None and seat != view and state.A_SELF_KONG <= action < state.A_SELF_KONG + 27:
        hidden = sum(m[0] == "concealed_kong" and m[1] < 0 for m in after["seats"][seat]["melds"])
        if hidden > sum(m[0] == "concealed_kong" and m[1] < 0 for m in before["seats"][seat]["melds"]):
            return "concealed kong (kind hidden)"
    return action_name(action)


def _resolution(before: dict, after: dict, result: dict | None) -> str:
    d = before["claim"]["from"]
    if result is not None and result.get("winner") is not None and result.get("win_type") in ("discard", "rob_gold"):
        w = result["winner"]
        if result["win_type"] == "rob_gold":
            return f"seat {w} robs the gold (抢金)"
        return f"seat {w} wins on seat {d}'s discard (胡)"
    for s in range(4):
        b, a = before["seats"][s]["melds"], after["seats"][s]["melds"]
        if len(a) > len(b) and a[-1][3] == d:
            return f"seat {s} takes it: {a[-1][0].replace('_', ' ')}"
    return f"nobody takes it; seat {(d + 1) % 4} draws next"


def result_breakdown(result: dict, game: Game, start_scores: list[int]) -> dict:
    """The hand's result as the page shows it: the engine's numbers, labelled line by line, plus
    the facts they come from (flowers laid out, kongs made). The value's arithmetic (R11.4) is
    shown only when the engine's parts give the engine's V back; nothing is recomputed."""
    out = dict(result)
    w = result.get("winner")
    rows = []
    if w is not None:
        v = game.view
        melds = [state.MELD_NAMES[int(v.meld[w, j, 0])] for j in range(int(v.n_melds[w]))]
        exposed = sum(m in ("exposed_kong", "added_kong") for m in melds)
        concealed = sum(m == "concealed_kong" for m in melds)
        n_flowers = int(v.flowers[w].sum())
        flower = int(result.get("flower_points") or 0)
        gold = int(result.get("gold_points") or 0)
        streak = int(result.get("streak") or 0)
        scoring = _scoring(game.rules)
        base, mult = scoring.get("base"), scoring.get("multiplier")
        counted = result.get("special_values") or {}
        special = max(counted.values(), default=0) if isinstance(counted, dict) else 0
        rows.append(
            [
                "flowers + kongs 花/杠",
                flower,
                f"{n_flowers} flower tiles; kongs {exposed} exposed/added, {concealed} concealed",
            ]
        )
        rows.append(["golds 金", gold, "golds in the winning hand"])
        rows.append(["dealer streak 连庄", streak, f"dealer seat {result.get('dealer')}"])
        value = result.get("value")
        if (
            isinstance(base, int)
            and isinstance(mult, int)
            and (flower + gold + streak + base) * mult + special == value
        ):
            rows.append(["base 底", base, "the preset's base"])
            rows.append(["sum", flower + gold + streak + base, f"{flower} + {gold} + {streak} + {base}"])
            rows.append([f"× {mult}", (flower + gold + streak + base) * mult, "the preset's multiplier"])
        names = ", ".join(f"{k} {val}" for k, val in counted.items()) if isinstance(counted, dict) else ""
        listed = ", ".join(result.get("specials") or [])
        note = (
            f"the highest counted special ({names})"
            if names
            else ("none counted" + (f" ({listed} not paid by this preset)" if listed else ""))
        )
        rows.append(["+ special 特殊", special, note])
        rows.append(["= value V", value, "each paying seat pays V (a discard win: the discarder alone)"])
    for key, value in result.items():  # fields a preset may add: shown when they say something
        if key in _SHOWN_RESULT_KEYS or value in ({}, [], None):
            continue
        scalar = isinstance(value, (int, float, str))
        text = (
            ""
            if scalar
            else ", ".join(f"{k}: {x}" for k, x in value.items())
            if isinstance(value, dict)
            else ", ".join(map(str, value))
            if isinstance(value, list)
            else json.dumps(value, ensure_ascii=False)
        )
        rows.append([key.replace("_", " "), value if scalar else None, text])
    out["rows"] = rows
    out["scores_after"] = [a + b for a, b in zip(start_scores, result.get("points", [0] * 4), strict=True)]
    return out


_SHOWN_RESULT_KEYS = {
    "hand_no", "dealer", "streak", "winner", "win_type", "discarder",
    "flower_points", "gold_points", "specials", "value", "points", "special_values", "specials_counted",
}  # fmt: skip


def _scoring(rules: Rules) -> dict:
    """The preset's scoring section (base, multiplier, specials), for display; empty if it has none."""
    try:
        return dict(rules.data["scoring"])
    except (KeyError, TypeError):
        return {}


def end_frame(game: Game, view: int | None = None, start_scores: list[int] | None = None) -> dict:
    """The frame of a finished hand: ``game`` must hold the hand's final state (its last hand
    over). The winner's concealed tiles are shown to every view, as at the table."""
    result = game.result
    end = snapshot(game, view, start_scores)
    end.update(step=None, action=None, legal=None, events=[], phase="end")
    w = result.get("winner") if result else None
    m = game.view.m
    if w is not None and result.get("win_type") in ("discard", "rob_gold"):
        end["win_tile"] = int(m[state.CLAIM_TILE]) if result["win_type"] == "discard" else int(m[state.GOLD])
    elif w is not None and result.get("win_type") in ("self_draw", "three_golds") and m[state.LAST_DRAW] >= 0:
        end["win_tile"] = int(m[state.LAST_DRAW])
    if view is not None and w is not None:
        end["seats"][w]["hand"] = [k for k in range(27) for _ in range(int(game.view.hand[w, k]))]
    if w is not None:
        end["win_split"] = winning_split(game, w, result)
    return end


def winning_split(game: Game, winner: int, result: dict) -> dict:
    """The winner's concealed tiles as their sets and pair, as the engine's own win table splits
    them (:func:`fzmj_env.core.hand.win_split_counts`: each gold with the tile it stands for);
    the exposed melds are the seat's ``melds``, shown as they are.

    A hand that won without the R9.1 shape gets ``sets`` and ``pair`` None and ``shape`` saying
    why: ``"three_golds"`` (三金倒 wins whatever the shape, R11.3) or ``"gold_kan"`` (the classic
    preset's wrap-around 金坎); ``"unsplit"`` should never be seen.
    """
    v = game.view
    gold = int(v.m[state.GOLD])
    split = win_split_counts(game.win_table, v.hand[winner], gold)
    if split is not None:
        return split
    specials = set(result.get("specials") or [])
    if "three_golds" in specials or result.get("win_type") == "three_golds":
        shape = "three_golds"
    elif "gold_kan" in specials:
        shape = "gold_kan"
    else:
        shape = "unsplit"
    return {"shape": shape, "sets": None, "pair": None}


def record_frames(record: dict, view: int | None = None) -> dict:
    """Replay ``record`` through the engine and return everything the replay page shows.

    Returns ``{"preset", "seed", "hands": [{"dealer", "streak", "gold", "result", "frames": [...]}],
    "decisions", "view", "scores", "record_meta"}``. Each hand's frames are one per decision (the state
    before it, the action taken, the lines it caused) and a last one with the hand's final state.
    Raises :class:`~fzmj_env.record.RecordError` (one line) for a record the engine cannot
    replay exactly (corrupt, foreign, another preset, a preset this engine lacks).
    """
    _check_view(view)
    full = replay(record)  # the whole match, checked decision by decision against the record
    rules = full.rules
    decisions = record["decisions"]
    hands_out = []
    i = 0
    scores = [0, 0, 0, 0]
    for h, start in enumerate(record["hands"]):
        # Each hand again on its own table, so its final state survives (a match deals the next
        # hand inside the step that ends this one). Same wall, dealer and streak: the same hand.
        g = Game(rules, hands_per_game=1)
        g.reset(seed=record["seed"], wall=start["wall"], dealer=start["dealer"], streak=start["streak"])
        frames = []
        before = snapshot(g, view, scores)
        before["hand"] = h
        while not g.done:
            if i >= len(decisions):
                raise RecordError(f"hand {h}: the record ends inside the hand")
            seat, action = decisions[i]
            frame = dict(before, step=i, action={"seat": seat, "action": action, "name": action_name(action)})
            # another seat's answer in a claim window is no frame of a seat's view: that it was
            # asked at all is private (R12); what the window's resolution shows joins the last frame
            hidden_answer = view is not None and seat != view and before["claim"] is not None
            g.step(action)
            after = snapshot(g, view, scores)
            after["hand"] = h
            result = g.result if g.done else None
            if view is not None and seat != view and before["claim"] is None:
                name = public_action_name(before, after, seat, action, view)
                if name != action_name(action):
                    frame["action"] = {"seat": seat, "action": None, "name": name}
            lines = describe_step(before, after, seat, action, view, result)
            frame["events"] = lines if hidden_answer else lines[1:]  # the first line is the decision itself
            if hidden_answer:
                frames[-1]["events"] = frames[-1]["events"] + frame["events"]  # a discard always came first
            else:
                frames.append(frame)
            before = after
            i += 1
        result = g.result
        mine = {k: v for k, v in result.items() if k != "hand_no"}
        theirs = {k: v for k, v in (start.get("result") or {}).items() if k != "hand_no"}
        if mine != theirs:
            raise RecordError(f"hand {h}: replaying it alone gives a different result ({mine} vs {theirs})")
        end = end_frame(g, view, scores)
        end["hand"] = h
        frames.append(end)
        hands_out.append(
            {
                "dealer": start["dealer"],
                "streak": start["streak"],
                "gold": frames[0]["gold"],
                "result": result_breakdown(result, g, scores),
                "frames": frames,
            }
        )
        scores = end["scores"]
    return {
        "preset": preset_name(record),
        "seed": record["seed"],
        "view": view,
        "decisions": len(decisions),
        "scores": record["scores"],
        "record_meta": record.get("meta") if isinstance(record.get("meta"), dict) else {},
        "hands": hands_out,
    }
