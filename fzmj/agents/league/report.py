"""The league table as Markdown (stdout), a self-contained HTML page (``league.html``) and its SVG plot."""

from __future__ import annotations

import html
import math

from fzmj_env.core.state import SPECIAL_NAMES

from ..markdown import interval as _ci
from ..markdown import md_table, pct
from ..markdown import num as _f


def _headline(res: dict) -> str:
    c = res["config"]
    fmt = "A vs three B and B vs three A" if c["format"] == "1v3" else "A B A B, alternating seats"
    return (
        f"{len(res['agents'])} agents, {len(res['pairs'])} pairings; format {c['format']} ({fmt}); "
        f"{res['matches_per_pairing'] * res['hands_per_match']} hands per pairing "
        f"({res['walls_per_match']} walls × 4 seat rotations per match, duplicate); seed {c['seed']}; "
        f"rules `{c['rules_id']['name']}`"
    )


FLAG = "⚠"


def _fault_cell(a: dict) -> str:
    """The agent's fallback share, marked when its ranking rests on the fallback (older tables: -)."""
    share = a.get("fault_share")
    if share is None:
        return "-"
    return f"{pct(share)} {FLAG}" if a.get("fault_flag") else pct(share)


def _table_rows(res: dict) -> tuple[list[str], list[list[str]]]:
    head = ["rank", "agent", "rating (points / hand)", "95% CI", "mean score / hand", "win %", "self-draw %",
            "deal-in %", "mean win value", "hands", "fallback %"]  # fmt: skip
    rows = [
        [f"{a['rank']} {FLAG}" if a.get("fault_flag") else str(a["rank"]), a["name"], _f(a["rating"]),
         _ci(a["rating_ci95"]), _f(a["mean_score"]), pct(a["win_rate"]), pct(a["self_draw_rate"]),
         pct(a["deal_in_rate"]), _f(a["mean_win_value"], "{:.1f}"), str(a["hands"]), _fault_cell(a)]
        for a in res["agents"]
    ]  # fmt: skip
    return head, rows


def fault_note(res: dict) -> str | None:
    """One sentence naming the agents whose ranking rests on their fallback, or None."""
    flagged = [a for a in res["agents"] if a.get("fault_flag")]
    if not flagged:
        return None
    limit = pct(res.get("fault_flag_share", 0.05))
    who = ", ".join(f"{a['name']} ({pct(a['fault_share'])})" for a in flagged)
    est = "" if all(a.get("decisions_exact", True) for a in flagged) else " (share of decisions estimated from seats)"
    return (
        f"{FLAG} the fallback played more than {limit} of the decisions of {who}{est}: that ranking measures the "
        "fallback as much as the bot (faults: crash, timeout, garbage, illegal; see the cache entries' bot_faults)"
    )


def _md_name(s: str) -> str:
    return s.replace("|", "\\|")


def markdown(res: dict) -> str:
    """The leaderboard, the pairs and the special counts as Markdown."""
    head, rows = _table_rows(res)
    lines = [f"**fzmj-league** — {_headline(res)}", ""]
    lines += md_table(head, "rlrlrrrrrrr", [[r[0], _md_name(r[1]), *r[2:]] for r in rows])
    note = fault_note(res)
    if note:
        lines += ["", _md_name(note)]
    lines += [
        "",
        "Rating: least-squares fit of every pairing's mean score difference per hand (sum zero), i.e. the "
        "mean difference against the league's agents; 95% CI by bootstrap over walls.",
        "",
    ]
    pair_rows = [
        [f"{_md_name(p['a'])} vs {_md_name(p['b'])}", _f(p["mean_diff"]), _ci(p["ci95"])] for p in res["pairs"]
    ]
    lines += md_table(["pair (a vs b)", "mean score diff / hand (a − b)", "95% CI"], "lrl", pair_rows)
    special_rows = [
        [_md_name(a["name"]), *(str(a["specials"].get(s, 0)) for s in SPECIAL_NAMES)] for a in res["agents"]
    ]
    lines += ["", *md_table(["agent", *SPECIAL_NAMES], "l" + "r" * len(SPECIAL_NAMES), special_rows)]
    p = res.get("played")
    if p:
        lines += [
            "",
            f"_played now: {p['matches']} matches ({p['hands']} hands) in {p['elapsed_s']:.1f} s; "
            f"{p['cached']} matches from the cache_",
        ]
    return "\n".join(lines)


def _svg_ratings(res: dict) -> str:
    """A dot-and-whisker plot of the ratings and their intervals, as inline SVG (no script, no network)."""
    agents = res["agents"]
    lows = [a["rating_ci95"][0] for a in agents] + [0.0]
    highs = [a["rating_ci95"][1] for a in agents] + [0.0]
    lo, hi = min(lows), max(highs)
    span = hi - lo or 1.0
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    label_w, plot_w, row_h, top = 260, 520, 26, 30
    height = top + row_h * len(agents) + 40

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    step = 10 ** math.floor(math.log10((hi - lo) / 5 or 1))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (m * step) <= 8:
            step *= m
            break
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 20}" height="{height}" '
        f'role="img" aria-label="ratings with 95% intervals">'
    ]
    t = math.ceil(lo / step) * step
    while t <= hi:
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 8}" x2="{x(t):.1f}" y2="{height - 30}" class="grid"/>')
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - 14}" text-anchor="middle">{0 if abs(t) < step / 2 else t:+g}</text>'
        )
        t += step
    parts.append(f'<line x1="{x(0):.1f}" y1="{top - 8}" x2="{x(0):.1f}" y2="{height - 30}" class="zero"/>')
    for r, a in enumerate(agents):
        y = top + r * row_h + row_h / 2
        c_lo, c_hi = a["rating_ci95"]
        tip = html.escape(f"{a['name']}: {a['rating']:+.2f} [{c_lo:+.2f}, {c_hi:+.2f}]")
        parts.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end">{html.escape(a["name"][:40])}</text>')
        parts.append(f"<g><title>{tip}</title>")
        parts.append(f'<line x1="{x(c_lo):.1f}" y1="{y:.1f}" x2="{x(c_hi):.1f}" y2="{y:.1f}" class="ci"/>')
        for v in (c_lo, c_hi):
            parts.append(f'<line x1="{x(v):.1f}" y1="{y - 5:.1f}" x2="{x(v):.1f}" y2="{y + 5:.1f}" class="ci"/>')
        parts.append(f'<circle cx="{x(a["rating"]):.1f}" cy="{y:.1f}" r="4.5" class="dot"/></g>')
    parts.append(
        f'<text x="{label_w + plot_w / 2:.0f}" y="{top - 14}" text-anchor="middle">rating, points per hand '
        "(dot) and 95% interval</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; background: #fff; max-width: 1100px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }
td { white-space: nowrap; }
th { background: #f4f4f4; } td.name, th.name { text-align: left; }
td.pos { color: #0a6b2d; } td.neg { color: #a4161a; }
svg text { font-size: 12px; fill: #222; } svg .grid { stroke: #e4e4e4; } svg .zero { stroke: #888; }
svg .ci { stroke: #1f5fa8; stroke-width: 2; } svg .dot { fill: #1f5fa8; }
p.note { color: #555; font-size: 0.9em; } p.warn { color: #8a4b00; font-weight: 600; }
"""


def html_page(res: dict) -> str:
    """A self-contained HTML page: leaderboard, ratings plot (inline SVG), pair matrix, special counts."""
    e = html.escape
    head, rows = _table_rows(res)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>fzmj-league</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>fzmj-league</h1>",
        f"<p>{e(_headline(res)).replace('`', '')}</p>",
        "<h2>Leaderboard</h2><table><tr>",
    ]
    out += [f'<th class="{"name" if h == "agent" else ""}">{e(h)}</th>' for h in head]
    out.append("</tr>")
    for r in rows:
        out.append(
            "<tr>" + "".join(f'<td class="{"name" if c == 1 else ""}">{e(v)}</td>' for c, v in enumerate(r)) + "</tr>"
        )
    out.append("</table>")
    note = fault_note(res)
    if note:
        out.append(f'<p class="warn">{e(note)}.</p>')
    out += [f'<p class="note">{e(res["rating_model"])}.</p>', "<h2>Ratings</h2>", _svg_ratings(res)]
    # the pair matrix: row agent minus column agent, in leaderboard order
    names = [a["name"] for a in res["agents"]]
    cell = {}
    for p in res["pairs"]:
        cell[(p["a"], p["b"])] = (p["mean_diff"], p["ci95"])
        cell[(p["b"], p["a"])] = (-p["mean_diff"], None if p["ci95"] is None else [-p["ci95"][1], -p["ci95"][0]])
    out += [
        "<h2>Pairs: mean score difference per hand (row − column)</h2>",
        '<table><tr><th class="name"></th>' + "".join(f"<th>{e(n[:24])}</th>" for n in names) + "</tr>",
    ]
    for a in names:
        tds = []
        for b in names:
            if a == b:
                tds.append("<td>·</td>")
                continue
            m, ci = cell[(a, b)]
            cls = "pos" if ci and ci[0] > 0 else "neg" if ci and ci[1] < 0 else ""
            tds.append(f'<td class="{cls}" title="95% CI {e(_ci(ci))}">{e(_f(m))}</td>')
        out.append(f'<tr><td class="name">{e(a)}</td>' + "".join(tds) + "</tr>")
    out += [
        "</table>",
        '<p class="note">Green: the row agent is ahead with 95% confidence; red: behind. Hover a cell for its interval.</p>',
        "<h2>Special counts</h2>",
        '<table><tr><th class="name">agent</th>' + "".join(f"<th>{e(s)}</th>" for s in SPECIAL_NAMES) + "</tr>",
    ]
    for a in res["agents"]:
        out.append(
            f'<tr><td class="name">{e(a["name"])}</td>'
            + "".join(f"<td>{a['specials'].get(s, 0)}</td>" for s in SPECIAL_NAMES)
            + "</tr>"
        )
    out += ["</table>", "</body></html>", ""]
    return "\n".join(out)
