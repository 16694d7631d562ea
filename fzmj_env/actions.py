"""The fixed action layout, ``Discrete(62)`` for every seat and phase (public API).

| index  | action                                                     |
|--------|------------------------------------------------------------|
| 0–26   | discard one tile of kind k                                 |
| 27     | chi, the discard as the lowest tile                        |
| 28     | chi, the discard as the middle tile                        |
| 29     | chi, the discard as the highest tile                       |
| 30     | peng                                                       |
| 31     | exposed kong of the discard                                |
| 32–58  | self kong of kind k-32 (concealed, or added to a peng)     |
| 59     | hu (self-draw, win on a discard, 天胡, 三金倒)             |
| 60     | rob the gold (抢金)                                        |
| 61     | pass                                                       |
"""

from __future__ import annotations

from .core.state import (
    A_CHI_HIGH,
    A_CHI_LOW,
    A_CHI_MID,
    A_HU,
    A_KONG,
    A_PASS,
    A_PENG,
    A_ROB,
    A_SELF_KONG,
    NUM_ACTIONS,
)
from .tiles import kind_name

__all__ = [
    "NUM_ACTIONS",
    "A_CHI_LOW",
    "A_CHI_MID",
    "A_CHI_HIGH",
    "A_PENG",
    "A_KONG",
    "A_SELF_KONG",
    "A_HU",
    "A_ROB",
    "A_PASS",
    "action_name",
    "substitute_action",
]


def action_name(action: int) -> str:
    """Short readable name of an action index, e.g. ``"discard 5m"``, ``"peng"``, ``"kong 3s"``."""
    a = int(action)
    if 0 <= a < 27:
        return f"discard {kind_name(a)}"
    if A_SELF_KONG <= a < A_SELF_KONG + 27:
        return f"kong {kind_name(a - A_SELF_KONG)}"
    names = {
        A_CHI_LOW: "chi (discard lowest)",
        A_CHI_MID: "chi (discard middle)",
        A_CHI_HIGH: "chi (discard highest)",
        A_PENG: "peng",
        A_KONG: "exposed kong",
        A_HU: "hu",
        A_ROB: "rob the gold",
        A_PASS: "pass",
    }
    if a in names:
        return names[a]
    raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")


def substitute_action(mask) -> int:
    """The legal action that replaces an illegal one (``illegal_action="substitute"``): pass when
    pass is legal, else the lowest-numbered legal action (in the discard phase: the discard of
    the lowest tile kind held)."""
    if mask[A_PASS]:
        return A_PASS
    for a in range(NUM_ACTIONS):
        if mask[a]:
            return a
    raise ValueError("no legal action: the mask is all zeros (the episode has ended)")
