"""The reports of an evaluation: the Markdown tables ``fzmj-eval`` prints and the score plot."""

from __future__ import annotations

import numpy as np

from fzmj_env.atomic import save_figure_atomic
from fzmj_env.core.state import SPECIAL_NAMES

from ..markdown import interval as _ci
from ..markdown import md_table, pct
from ..markdown import num as _f


def shown_names(res: dict) -> dict[str, str]:
    """How the report shows each agent: an exec bot by the name its hello gave (``bot_names``;
    docs/protocol.md), unless two agents would then look the same; every other agent by its name."""
    given = res.get("bot_names") or {}
    shown = {n: given.get(n, n) for n in res["agents"]}
    seen = list(shown.values())
    return {n: (n if seen.count(v) > 1 else v) for n, v in shown.items()}


def _renamed(shown: dict[str, str]) -> list[str]:
    """A line giving the spec behind each name an exec bot gave itself (none if no bot did)."""
    renamed = [f"{v} = `{n}`" for n, v in shown.items() if v != n]
    return ["", f"_Exec bots by the names their hellos gave: {'; '.join(renamed)}._"] if renamed else []


def markdown(res: dict) -> str:
    """The results as Markdown tables."""
    shown = shown_names(res)

    def lab(name: str) -> str:
        return shown.get(name, name)

    lines = [
        f"**fzmj-eval** — {res['hands']} hands ({res['walls']} walls × 4 seat rotations, duplicate), "
        f"seed {res['seed']}, rules `{res['rules']}`; drawn hands {100 * res['draw_rate']:.1f}%",
        "",
    ]
    if "agent_seed" in res:  # the seeds are shown only now, after the play (docs/protocol.md, Threat model)
        drawn = "drawn for this run, secret while it played; " if res.get("seed_source") == "drawn" else ""
        lines += [f"_Seeds: {drawn}replay it with `{res['reproduce']}`._", ""]
    rates = ("win_rate", "self_draw_rate", "deal_in_rate")
    head = ["mean score / hand", "95% CI", "win %", "self-draw %", "deal-in %"]
    rows = [
        [lab(name), ",".join(map(str, a["slots"])), _f(a["mean_score"]), _ci(a["ci95"]), *(pct(a[r]) for r in rates),
         _f(a["mean_win_value"], "{:.1f}")]
        for name, a in res["agents"].items()
    ]  # fmt: skip
    lines += md_table(["agent", "slots", *head, "mean win value"], "llrlrrrr", rows)
    if len(res["agents"]) < 4:  # an agent holds several slots: show each slot too
        rows = [
            [str(p["slot"]), lab(p["agent"]), _f(p["mean_score"]), _ci(p["ci95"]), *(pct(p[r]) for r in rates)]
            for p in res["per_slot"]
        ]
        lines += ["", *md_table(["slot", "agent", *head], "rlrlrrr", rows)]
    rows = [[lab(name), *(str(a["specials"][s]) for s in SPECIAL_NAMES)] for name, a in res["agents"].items()]
    lines += ["", *md_table(["agent", *SPECIAL_NAMES], "l" + "r" * len(SPECIAL_NAMES), rows)]
    if res.get("pairwise"):
        head = ["pair (a vs b)", "mean score diff / hand (a − b)", "95% CI", "a out-scores b"]
        rows = [
            [f"{lab(p['a'])} vs {lab(p['b'])}", _f(p["mean_diff"]), _ci(p["ci95"]), f"{100 * p['a_outscores_b']:.1f}%"]
            for p in res["pairwise"]
        ]
        lines += ["", *md_table(head, "lrlr", rows)]
    if res.get("ratings"):
        rated = [(name, res["ratings"]["agents"].get(name)) for name in res["agents"]]
        rows = [
            [lab(n), f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}"]
            for n, r in rated
            if isinstance(r, dict)
        ]
        lines += ["", *md_table(["agent", "OpenSkill μ", "σ", "ordinal (μ − 3σ)"], "lrrr", rows)]
    if res.get("paired"):
        p = res["paired"]
        head = [
            f"paired: slot {p['slot']} vs REF in its seat",
            "mean score diff / hand (agent − REF)",
            "95% CI",
            "hands",
        ]
        lines += [
            "",
            *md_table(
                head,
                "lrlr",
                [[f"{lab(p['agent'])} vs {lab(p['ref'])}", _f(p["mean"]), _ci(p["ci95"]), str(p["hands"])]],
            ),
        ]
        if not p.get("clean", True):
            lines += ["", f"**paired: not clean** — {p['warning']}."]
    faults = [(name, f, "") for name, f in (res.get("bot_faults") or {}).items()]
    faults += [
        (name, f, " in the paired run") for name, f in ((res.get("paired") or {}).get("bot_faults") or {}).items()
    ]
    for name, f, where in faults:
        if any(f.values()):
            what = ", ".join(f"{k} {v}" for k, v in f.items())
            lines += ["", f"**{lab(name)}** faults{where}: {what} (docs/protocol.md)"]
    lines += _renamed(shown)
    if res.get("hands_with_fallback"):
        lines += ["", f"_A fallback played in {res['hands_with_fallback']} of {res['hands']} hands._"]
    t = res.get("timing", {})
    if t.get("hands_per_s"):
        lines += ["", f"_{t['elapsed_s']:.1f} s, {t['hands_per_s']:.0f} hands/s, {t['workers']} worker(s)_"]
    return "\n".join(lines)


def plot(res: dict, raw: dict, path: str) -> None:
    """Score distribution and cumulative score per agent into ``path`` (PNG)."""
    from matplotlib.figure import Figure  # no pyplot: no global backend state is touched

    fig = Figure(figsize=(12, 4.5))
    ax1, ax2 = fig.subplots(1, 2)
    pts = raw["slot_points"]
    lo, hi = np.percentile(pts, [0.5, 99.5])
    bins = np.linspace(lo, hi if hi > lo else lo + 1, 61)
    for name, info in res["agents"].items():
        x = pts[:, :, info["slots"]].reshape(-1)
        ax1.hist(np.clip(x, bins[0], bins[-1]), bins=bins, alpha=0.5, label=name, density=True)
        ax2.plot(np.arange(1, len(raw["per_hand"][name]) + 1), np.cumsum(raw["per_hand"][name]), label=name)
    ax1.set_title("score per hand (0.5–99.5 percentile range)")
    ax1.set_xlabel("points")
    ax1.set_yscale("log")
    ax1.legend()
    ax2.set_title("cumulative score (hands in wall order)")
    ax2.set_xlabel("hand")
    ax2.set_ylabel("points")
    ax2.axhline(0, color="grey", lw=0.5)
    ax2.legend()
    fig.suptitle(f"fzmj-eval: {res['hands']} hands, seed {res['seed']}")
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=100)
