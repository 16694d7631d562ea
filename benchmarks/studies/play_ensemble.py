"""A play-time ensemble of trained policies, paired against the heuristic and a control
(docs/results.md, "Opponents that play like v2, the recipe's seed spread, and an ensemble").

Each decision takes the legal action with the highest mean log-probability over the members
(their geometric mean: an action any member all but rules out stays out). The members read their
own seat's view only, as every checkpoint does at play time; a member costs one forward pass.

    python benchmarks/studies/play_ensemble.py pretrained:v2 runs/a/checkpoints/latest.pt runs/b/checkpoints/latest.pt \\
        --control pretrained:v2 --seeds 4041 5051 6061 --hands 4000 --workers 2

It runs ``oracle_ablation.py`` with the control first and the ensemble second (an agent spec
``python:play_ensemble:Ensemble`` whose members come from ``$FZMJ_ENSEMBLE``, so that every
evaluation worker builds the same one).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MEMBERS_VAR = "FZMJ_ENSEMBLE"

from fzmj.agents.base import Agent, as_batch  # noqa: E402


class Ensemble(Agent):
    """The members named in ``$FZMJ_ENSEMBLE`` (``|``-separated checkpoint paths or ``pretrained[:vN]``)."""

    def __init__(self):
        import torch

        from fzmj.agents.checkpoint import load_policy
        from fzmj.agents.ppo_agent import checkpoint_file

        members = [m for m in os.environ.get(MEMBERS_VAR, "").split("|") if m]
        if not members:
            raise ValueError(f"${MEMBERS_VAR} names no checkpoint")
        self.policies = [load_policy(str(checkpoint_file(m)), "cpu").eval() for m in members]
        self.channels = {int(getattr(p, "obs_planes", 99)) for p in self.policies}
        if len(self.channels) != 1:
            raise ValueError("the members read different observation layouts")
        self.name = "ensemble of " + ", ".join(members)
        self._torch = torch

    def act(self, obs, mask) -> np.ndarray:
        torch = self._torch
        obs, mask = as_batch(obs, mask, channels=next(iter(self.channels)))
        o, m = torch.from_numpy(np.ascontiguousarray(obs)), torch.from_numpy(np.ascontiguousarray(mask))
        with torch.no_grad():
            total = torch.zeros(m.shape, dtype=torch.float32)
            for pol in self.policies:  # the same calls as PPOAgent.action_probs: the public actor only
                hidden = pol.trunk(pol.actor_input(pol.prepare(o), None))
                total += torch.log_softmax(pol.masked_logits(hidden, m), dim=-1).clamp_min(-1e4)
            total = total.masked_fill(m == 0, -torch.inf)
        return total.argmax(dim=-1).numpy().astype(np.int64)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("members", nargs="+", help="checkpoint paths or pretrained[:vN]")
    ap.add_argument("--control", default="pretrained:v2", help="the paired control (default pretrained:v2)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[101, 202, 303])
    ap.add_argument("--hands", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if any("|" in m for m in a.members):
        ap.error("a member's path may not contain '|'")
    os.environ[MEMBERS_VAR] = "|".join(a.members)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))
    sys.path.insert(0, HERE)
    try:
        Ensemble()  # a missing or unreadable member fails here, once
    except (OSError, ValueError) as e:
        ap.error(str(e))
    import oracle_ablation

    args = [f"control={a.control}", "ensemble=python:play_ensemble:Ensemble", "--seeds", *map(str, a.seeds)]
    args += ["--hands", str(a.hands), "--workers", str(a.workers)] + (["--json", a.json] if a.json else [])
    return oracle_ablation.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
