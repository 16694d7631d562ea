"""``fzmj-replay``: a game record as one self-contained HTML page (no server, no network).

    fzmj-replay game.json -o game.html            # every seat face up
    fzmj-replay game.json --seat 2                # what seat 2 saw (R12)

The engine replays the record and writes one snapshot per decision into the page (see
``frames.py``); the page's JavaScript only draws them. Keys: ← → decision, ↑ ↓ hand, Home/End.
"""

from __future__ import annotations

import html
import json
import math
import re
import sys
import time
from importlib import resources
from pathlib import Path

from fzmj_env.actions import NUM_ACTIONS, action_name
from fzmj_env.cli import OneLineParser
from fzmj_env.record import RecordError, load_record
from fzmj_env.tiles import GLYPHS, NUM_KINDS, kind_name

from .frames import record_frames
from .outpath import check_out_path, write_atomic

_SLOT = re.compile(r"\{\{([A-Z_]+)\}\}")


def asset(name: str) -> str:
    """The text of a static file of the pages (``fzmj/web/static``)."""
    return resources.files("fzmj.web").joinpath("static", name).read_text(encoding="utf-8")


def page_meta(seat_names: list[str] | None = None) -> dict:
    """Names the pages print: tile notation and Chinese glyph per kind, action names (from Python)."""
    return {
        "names": [kind_name(k) for k in range(NUM_KINDS)],
        "glyphs": list(GLYPHS),
        "actions": [action_name(a) for a in range(NUM_ACTIONS)],
        "seat_names": seat_names or [],
    }


def fill(template: str, slots: dict[str, str]) -> str:
    """Put each ``{{NAME}}`` slot's text in, in one pass (inserted text is never scanned again)."""
    return _SLOT.sub(lambda m: slots[m.group(1)], template)


_SCRIPT_UNSAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def json_safe(obj):
    """``obj`` with every non-finite float (NaN, inf) replaced by None: JSON has no such numbers,
    and ``JSON.parse`` in the page fails on Python's ``NaN``. Containers are copied, the rest kept."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def script_json(obj) -> str:
    """JSON safe inside a <script> element: no ``<``, ``>`` or ``&`` at all (so neither ``</script>``
    nor ``<!--`` can change how the HTML parser reads the element) and no U+2028/2029; no NaN or
    inf either (:func:`json_safe`)."""
    text = json.dumps(json_safe(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_SCRIPT_UNSAFE)


def _seat_names(record: dict) -> list[str]:
    meta = record.get("meta")
    names = meta.get("seats") if isinstance(meta, dict) else None
    if isinstance(names, list) and len(names) == 4:
        return [str(x) for x in names]
    return []


def replay_html(record: dict, view: int | None = None, title: str = "fzmj replay", review: dict | None = None) -> str:
    """The replay page of ``record`` as one HTML string. ``view``: a seat 0..3, or None for all.
    ``review``: a :func:`fzmj.web.review.review_record` result, shown beside each decision.

    Raises :class:`~fzmj_env.record.RecordError` if the engine cannot replay the record exactly.
    """
    data = record_frames(record, view)
    data["meta"] = page_meta(_seat_names(record))
    if review is not None:
        data["review"] = review
    who = "every seat face up" if view is None else f"seat {view}'s view"
    subtitle = f"preset {data['preset']} · seed {data['seed']} · {len(data['hands'])} hand(s) · {who}"
    why = data["record_meta"].get("why")
    if why:
        subtitle += f" · {why}"
    if review is not None:
        subtitle += f" · reviewed by {review['agent']} for seat {review['seat']}"
    return fill(
        asset("replay.html"),
        {
            "TITLE": html.escape(title),
            "SUBTITLE": html.escape(subtitle),
            "CSS": asset("cjk_font.css") + asset("viewer.css"),  # the Chinese labels draw without a CJK font
            "DATA": script_json(data),
            "VIEWER_JS": asset("viewer.js"),
            "REPLAY_JS": asset("replay.js"),
        },
    )


def write_replay(
    record_path: str | Path,
    out: str | Path,
    view: int | None = None,
    review_agent=None,
    review_seat: int = 0,
    danger=None,
) -> Path:
    """Read a record file and write its replay page; returns the output path. ``review_agent``
    (a spec or an agent object) adds what it would have played at each decision of ``review_seat``;
    ``danger`` (a belief spec or model) adds each legal discard's deal-in probability there."""
    record = load_record(record_path)
    review = None
    if review_agent is not None:
        from .review import review_record  # imports the agents only when a review is asked for

        review = review_record(record, review_agent, review_seat, belief=danger)
    page = replay_html(record, view, title=f"fzmj replay — {Path(record_path).name}", review=review)
    out = Path(out)
    write_atomic(out, page)
    return out


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="fzmj-replay", description="Write a game record as a self-contained HTML replay page.")
    p.add_argument(
        "record", help="a game record (JSON, from fzmj_env.save_record, fzmj-eval --save-records or fzmj-play)"
    )
    p.add_argument("-o", "--out", help="the HTML file to write (default: the record's name with .html)")
    p.add_argument("--force", action="store_true", help="overwrite an existing -o file that is not an .html page")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seat", type=int, metavar="N", help="show only what seat N (0-3) could see")
    g.add_argument("--all", action="store_true", help="show every seat face up (the default)")
    from fzmj.agents.specs import SPEC_HELP

    p.add_argument(
        "--review",
        metavar="AGENT_SPEC",
        help=f"show what this agent would play at each decision of a seat (agent specs: {SPEC_HELP})",
    )
    p.add_argument("--review-seat", type=int, metavar="N", help="the seat to review (default: --seat, else 0)")
    p.add_argument(
        "--danger",
        metavar="BELIEF_SPEC",
        default="belief",
        help="with --review: each discard's deal-in probability from this belief model (default: belief, "
        "the shipped one; none: off)",
    )
    args = p.parse_args(argv)
    if args.seat is not None and not 0 <= args.seat <= 3:
        p.error(f"--seat must be 0..3, got {args.seat}")
    review_seat = args.review_seat if args.review_seat is not None else args.seat if args.seat is not None else 0
    if not 0 <= review_seat <= 3:
        p.error(f"--review-seat must be 0..3, got {review_seat}")
    src = Path(args.record)
    if not src.is_file():
        p.error(f"{src}: no such file")
    out = Path(args.out) if args.out else src.with_suffix(".html")
    try:  # an earlier page may be replaced; a record or any other file only with --force
        force = args.force or out.suffix.lower() in (".html", ".htm")
        check_out_path(out, force, inputs=(src,), what="-o" if args.out else "the output page")
    except ValueError as e:
        p.error(str(e))
    agent = None  # loaded last: the cheap checks come first
    if args.review is not None:
        from fzmj.agents import AgentSpecError, make_agent

        try:
            agent = make_agent(args.review)
        except AgentSpecError as e:
            p.error(f"--review: {e}")
    danger = None
    if args.review is not None and args.danger != "none":
        from fzmj.agents.belief import load_belief

        try:
            danger = load_belief(args.danger)  # before anything is replayed
        except AgentSpecError as e:
            p.error(f"--danger: {e}")
    from .review import ReviewError  # the agents load only when a review is asked for

    t0 = time.perf_counter()
    try:
        write_replay(src, out, args.seat, review_agent=agent, review_seat=review_seat, danger=danger)
    except ReviewError as e:  # the reviewer failed, not the record: one line naming it
        p.error(f"--review: {e}")
    except RecordError as e:  # load_record's messages already name the file
        msg = str(e) if str(e).startswith(str(src)) else f"{src}: {e}"
        p.error(msg.replace("\n", " "))
    except OSError as e:
        p.error(f"cannot write {out}: {e.strerror or e}")
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:  # malformed beyond the shape check
        p.error(f"{src}: not a valid fzmj record ({type(e).__name__}: {e})".replace("\n", " "))
    print(f"wrote {out} in {time.perf_counter() - t0:.2f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
