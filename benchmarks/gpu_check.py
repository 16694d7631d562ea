"""The GPU check: the throughput figures of one machine, on its GPU and on its CPU, in one run.

Run it through ``benchmarks/gpu_check.sh`` (which sets up the environment; docs/gpu.md), or
directly from a checkout whose dependencies are installed:

    python benchmarks/gpu_check.py [--device auto|cuda|cpu|both] [--budget 420] [--json FILE] [--tiny]

Sections, each on every device asked for (``both``, the default: CUDA when there is one, then
the CPU, so the ratios come from one run and one machine):

1. ``train``: ``fzmj-train`` on ``configs/ppo_gpu.yaml`` for a few updates (a subprocess, its own
   console lines parsed): env steps/s, and each update's rollout and update seconds. The config
   is used as it is except: ``num_steps`` (``--train-steps``, so an update fits the budget),
   ``total_timesteps`` (``--train-updates`` updates), no behaviour-cloning warm start
   (``bc_decisions=0``, ``teacher_coef=0``: the 1M-decision clone alone takes minutes), and no
   evaluation or periodic save during those updates.
2. ``inference``: the trainer's network (``ppo_gpu.yaml``: MLP 512-512-256 with hand features)
   at the batch sizes the trainer uses: a rollout step (``num_tables`` observations) and an
   update minibatch (``num_tables * num_steps / num_minibatches``); decisions/s of
   ``prepare_host`` (hand features on the host over the env threads, as the trainer's rollout)
   + one copy + forward, and of the forward alone on prepared input already on the device.
3. ``eval``: ``fzmj-eval --agents pretrained heuristic`` played in this process
   (``evaluate``, one worker, the default batch of 512 tables), the pretrained policy on the
   device: hands/s.
4. ``search``: the ``search`` agent with the pretrained policy as its blueprint (on the device)
   against three heuristics: rollouts/s over the time spent searching.
5. ``recipes``: every shipped recipe, and the options users turn on (observation v3, resnet,
   belief planes, the league pool, distillation from a search), for two tiny updates on the
   device, then its checkpoint plays 8 hands there: a correctness check, seconds only.

A section that would start after ``--budget`` seconds is skipped and says so: the whole check
prints within the budget plus the section running at that moment (sizes chosen so each section
takes well under a minute on an H200 machine with 16 cores). ``--tiny`` runs every section with
tiny sizes (CPU, a few seconds each once the kernels are compiled; tests/test_gpu_check.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "ppo_gpu.yaml"

# search: every decision with two or more choices (a late-hand-only search saw none in 4 hands on the
# first H200 run, 2026-12-04)
FULL = dict(
    train_steps=16, train_updates=6, eval_hands=4096, search_hands=4, search_spec="worlds=64,top=3", recipes="all"
)
TINY = dict(
    train_steps=16,
    train_updates=2,
    eval_hands=8,
    search_hands=1,
    search_spec="worlds=2,top=2,late=40",
    recipes=["ppo_oracle"],
)
TINY_TRAIN = ["num_tables=8", "hidden_sizes=[32,32]", "num_minibatches=2", "env_threads=1"]


def devices_for(choice: str) -> list[str]:
    """The devices to measure: ``both`` is CUDA (if present) then CPU; ``auto`` is CUDA if present."""
    import torch

    cuda = torch.cuda.is_available()
    if choice in ("cuda", "both", "auto") and not cuda and choice == "cuda":
        raise SystemExit("gpu_check: error: --device cuda, but torch sees no CUDA device")
    if choice == "both":
        return (["cuda"] if cuda else []) + ["cpu"]
    if choice == "auto":
        return ["cuda" if cuda else "cpu"]
    return [choice]


def machine() -> dict:
    import numba
    import torch

    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numba": numba.__version__,
        "cpus": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
    }
    if info["cuda"]:
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_memory_gb"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    if Path("/proc/loadavg").exists():
        info["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    return info


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def config_args(tiny: bool):
    """``configs/ppo_gpu.yaml`` as the trainer reads it (its sizes and network); read with
    ``device=cpu`` so that reading it works on any machine (each section picks its own device)."""
    from fzmj.train.ppo_selfplay import parse_args

    sets = sum((["--set", s] for s in (TINY_TRAIN if tiny else [])), [])
    return parse_args(["--config", str(CONFIG), "--device", "cpu", *sets])[0]


# ---- 1. the trainer ----------------------------------------------------------------------------
def _update_times(runs_dir: Path) -> list[dict]:
    """Each update's rollout and update seconds, from the run's TensorBoard charts (the console
    line prints tenths of a second, too coarse for a tiny run)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    charts = {}
    for events in runs_dir.rglob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events.parent), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in ("perf/rollout_seconds", "perf/update_seconds"):
            if tag in acc.Tags()["scalars"]:
                charts[tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
    pairs = zip(charts.get("perf/rollout_seconds", []), charts.get("perf/update_seconds", []), strict=True)
    return [
        {"update": i + 1, "step": step, "rollout_s": round(roll, 4), "update_s": round(upd, 4)}
        for i, ((step, roll), (_, upd)) in enumerate(pairs)
    ]


def _train(config: str, device: str, sets: list[str], runs_dir: str) -> tuple[float, str | None]:
    """``fzmj-train --config CONFIG --device DEVICE --set ...`` in a subprocess from this checkout,
    its run folder under ``runs_dir``: (wall seconds, None) or (wall seconds, one error line)."""
    cmd = [sys.executable, "-m", "fzmj.train.ppo_selfplay", "--config", config, "--device", device]
    cmd += sum((["--set", s] for s in [*sets, f"runs_dir={runs_dir}"]), [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return wall, f"fzmj-train exited {p.returncode}: {' | '.join(tail)}"
    return wall, None


def check_train(device: str, sizes: dict, tiny: bool) -> dict:
    args = config_args(tiny)
    steps = sizes["train_steps"]
    per_update = args.num_tables * steps
    sets = [
        f"num_steps={steps}",
        f"total_timesteps={per_update * sizes['train_updates']}",
        "bc_decisions=0",
        "teacher_coef=0",
        "eval_every=0",
        "save_every=1000000",
        "log_every=1",
        *(TINY_TRAIN if tiny else []),
    ]
    with tempfile.TemporaryDirectory(prefix="fzmj-gpu-check-") as tmp:
        wall, error = _train(str(CONFIG), device, sets, tmp)
        if error:
            return {"error": error}
        updates = _update_times(Path(tmp))
    if not updates:
        return {"error": "fzmj-train wrote no perf/rollout_seconds charts"}
    later = updates[1:] or updates  # the first update pays the compile and the CUDA start
    roll = sum(u["rollout_s"] for u in later)
    upd = sum(u["update_s"] for u in later)
    steps = per_update * len(later)

    def rate(n: float, seconds: float):
        # a phase that took no measurable time gives no rate (never a division by zero)
        return round(n / seconds) if seconds > 0 else None

    return {
        "steps_per_update": per_update,
        "updates": updates,
        "env_steps_per_s": rate(steps, roll + upd),
        "rollout_steps_per_s": rate(steps, roll),
        "rollout_share": round(roll / (roll + upd), 3) if roll + upd > 0 else None,
        "process_wall_s": round(wall, 1),
    }


# ---- 2. inference --------------------------------------------------------------------------------
def _observations(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` real observations and masks (``bench_rollout_host.observations``, beside this file)."""
    if str(ROOT / "benchmarks") not in sys.path:  # imported as a module (the tests), not run as a script
        sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_rollout_host import observations

    return observations(n)


def _rate(fn, n: int, device: str, min_s: float) -> float:
    fn()  # warm: kernels, CUDA context and cuBLAS handles
    _sync(device)
    reps, t0 = 0, time.perf_counter()
    while True:
        fn()
        reps += 1
        _sync(device)
        dt = time.perf_counter() - t0
        if dt >= min_s and reps >= 2:
            return n * reps / dt


def check_inference(device: str, tiny: bool) -> dict:
    import torch

    from fzmj.train.run_setup import env_threads_of, make_network

    args = config_args(tiny)
    torch.manual_seed(0)
    net = make_network(args, torch.device(device)).eval()
    threads = env_threads_of(args)  # the trainer's own count (one process)
    steps = 4 if tiny else args.num_steps
    batches = {"rollout step": args.num_tables, "update minibatch": args.num_tables * steps // args.num_minibatches}
    out = {}
    obs_all, mask_all = _observations(max(batches.values()))
    for label, n in batches.items():
        obs, mask = obs_all[:n], mask_all[:n]
        mask_d = torch.from_numpy(mask).to(device)

        def full(obs=obs, mask_d=mask_d):
            with torch.no_grad():  # as the trainer's rollout: features on the host's threads, one copy
                x = net.prepare(torch.from_numpy(net.prepare_host(obs, threads)).to(device))
                net.get_action_and_value(x, mask_d)

        prepared = net.prepare(torch.from_numpy(obs).to(device))

        def forward(prepared=prepared, mask_d=mask_d):
            with torch.no_grad():
                net.get_action_and_value(prepared, mask_d)

        min_s = 0.2 if tiny else 2.0
        out[label] = {
            "batch": n,
            "decisions_per_s": round(_rate(full, n, device, min_s)),
            "forward_only_per_s": round(_rate(forward, n, device, min_s)),
        }
    return out


# ---- 3. evaluation and 4. search -------------------------------------------------------------
def _pretrained(device: str):
    from fzmj.agents.ppo_agent import PPOAgent, pretrained_path

    return PPOAgent(pretrained_path(), device=device, name="pretrained")


def check_eval(device: str, sizes: dict) -> dict:
    from fzmj.agents.evaluate import evaluate

    agent = _pretrained(device)
    evaluate([agent, "heuristic"], hands=8, seed=1, progress=False)  # warm: kernels, CUDA
    t0 = time.perf_counter()
    evaluate([agent, "heuristic"], hands=sizes["eval_hands"], seed=7, progress=False)
    dt = time.perf_counter() - t0
    return {"hands": sizes["eval_hands"], "seconds": round(dt, 2), "hands_per_s": round(sizes["eval_hands"] / dt, 1)}


def check_search(device: str, sizes: dict) -> dict:
    from fzmj.agents.evaluate import evaluate
    from fzmj.agents.search import SearchAgent, parse_search_spec

    _, opts = parse_search_spec("search:pretrained:" + sizes["search_spec"])
    agent = SearchAgent(_pretrained(device), name="search:pretrained:" + sizes["search_spec"], **opts)
    t0 = time.perf_counter()
    evaluate([agent, "heuristic"], hands=sizes["search_hands"], seed=7, progress=False)
    dt = time.perf_counter() - t0
    st = agent.stats
    # no decision searched: no rate (a 0 would read as a measured figure)
    rate = round(st["rollouts"] / st["search_s"], 1) if st["searched"] and st["search_s"] > 0 else None
    return {
        "spec": agent.name,
        "hands": sizes["search_hands"],
        "searched_decisions": st["searched"],
        "rollouts": st["rollouts"],
        "search_s": round(st["search_s"], 2),
        "rollouts_per_s": rate,
        "seconds": round(dt, 2),
    }


# ---- 5. every recipe on the device ----------------------------------------------------------------
# Each shipped recipe (and the options a user turns on) for 2 tiny updates on the device, then its
# checkpoint plays 8 hands there: a correctness check (the figures are seconds, not speeds).
RECIPE_SIZES = ["num_tables=64", "num_steps=16", "total_timesteps=2048", "eval_every=0", "save_every=1000000"]
CLONE = ["bc_decisions=2000", "bc_eval_hands=0"]  # a short behaviour-cloning warm start
RECIPES = {  # label: (config, its --set beyond RECIPE_SIZES)
    "ppo_oracle": ("ppo_oracle", [*CLONE, "eval_paired_every=1", "eval_paired_hands=8", "eval_paired_seeds=1"]),
    "ppo_oracle, observation v3": ("ppo_oracle", [*CLONE, "obs_version=3"]),
    "ppo_oracle_phase2 (from pretrained:v2)": ("ppo_oracle_phase2", []),
    "ppo_default": ("ppo_default", CLONE),
    "ppo_default, resnet": ("ppo_default", [*CLONE, "network=resnet"]),
    "ppo_default, belief planes": ("ppo_default", [*CLONE, "belief_planes=true"]),
    "ppo_scratch": ("ppo_scratch", []),
    "ppo_smoke (league pool)": ("ppo_smoke", []),
    "distill_search": (
        "distill_search",
        [*CLONE, "distill_iterations=1", "distill_decisions=256", "distill_teacher=search:heuristic:worlds=4"],
    ),
}


def check_recipes(device: str, sizes: dict) -> dict:
    from fzmj.agents.evaluate import evaluate
    from fzmj.agents.ppo_agent import PPOAgent

    out = {}
    for label in list(RECIPES) if sizes["recipes"] == "all" else sizes["recipes"]:
        config, sets = RECIPES[label]
        with tempfile.TemporaryDirectory(prefix="fzmj-gpu-recipe-") as tmp:
            wall, error = _train(config, device, [*RECIPE_SIZES, *sets], tmp)
            row = {"train_s": round(wall, 1)}
            ckpts = sorted(Path(tmp).rglob("latest.pt"))
            if error or not ckpts:
                row["error"] = error or "fzmj-train wrote no checkpoints/latest.pt"
            else:
                t0 = time.perf_counter()
                agent = PPOAgent(str(ckpts[0]), device=device, name=label)
                res = evaluate([agent, "heuristic"], hands=8, seed=1, progress=False)
                row["play_s"] = round(time.perf_counter() - t0, 1)
                row["hands"] = res.get("hands")
        out[label] = row
        print(f"  {label}: {json.dumps(row)}", flush=True)
    failed = [k for k, v in out.items() if "error" in v]
    return {"recipes": out, "ok": len(out) - len(failed), "failed": failed} | ({"error": f"{failed}"} if failed else {})


SECTIONS = {
    "train": check_train,
    "inference": check_inference,
    "eval": check_eval,
    "search": check_search,
    "recipes": check_recipes,
}


def run(devices: list[str], sections: list[str], budget: float, tiny: bool, out=sys.stdout) -> dict:
    sizes = TINY if tiny else FULL
    t_start = time.perf_counter()
    report = {"machine": machine(), "tiny": tiny, "results": {}}
    print(f"gpu_check: {json.dumps(report['machine'])}", file=out, flush=True)
    for name in sections:
        for dev in devices:
            key = f"{name}/{dev}"
            if time.perf_counter() - t_start > budget:
                report["results"][key] = {"skipped": f"the {budget:.0f} s budget was spent"}
                print(f"{key}: skipped (budget)", file=out, flush=True)
                continue
            t0 = time.perf_counter()
            fn = SECTIONS[name]
            try:
                if name == "train":
                    res = fn(dev, sizes, tiny)
                elif name == "inference":
                    res = fn(dev, tiny)
                else:
                    res = fn(dev, sizes)
            except Exception as exc:  # a section's failure is a figure missing, not the end of the check
                res = {"error": f"{type(exc).__name__}: {exc}"}
            res["section_s"] = round(time.perf_counter() - t0, 1)
            report["results"][key] = res
            print(f"{key}: {json.dumps(res)}", file=out, flush=True)
    report["total_s"] = round(time.perf_counter() - t_start, 1)
    print(summary(report), file=out, flush=True)
    return report


def summary(report: dict) -> str:
    """A Markdown table of the headline figures, one column per device, and GPU/CPU ratios."""
    res = report["results"]
    devs = sorted({k.split("/")[1] for k in res}, key=lambda d: d != "cuda")
    rows = [
        ("fzmj-train env steps/s (ppo_gpu.yaml)", "train", lambda r: r["env_steps_per_s"]),
        ("  rollout share of an update", "train", lambda r: r["rollout_share"]),
        ("inference decisions/s, rollout batch", "inference", lambda r: r["rollout step"]["decisions_per_s"]),
        ("  forward only", "inference", lambda r: r["rollout step"]["forward_only_per_s"]),
        ("inference decisions/s, update minibatch", "inference", lambda r: r["update minibatch"]["decisions_per_s"]),
        ("  forward only", "inference", lambda r: r["update minibatch"]["forward_only_per_s"]),
        ("fzmj-eval hands/s, pretrained vs heuristic", "eval", lambda r: r["hands_per_s"]),
        ("search rollouts/s, pretrained blueprint", "search", lambda r: r["rollouts_per_s"]),
        (
            "recipes trained and played on the device (no error)",
            "recipes",
            lambda r: f"{r['ok']} of {len(r['recipes'])}",
        ),
    ]
    head = "| figure | " + " | ".join(devs) + (" | GPU/CPU |" if len(devs) == 2 else " |")
    lines = [head, "|" + " --- |" * (len(devs) + 1 + (len(devs) == 2))]
    for label, sec, get in rows:
        vals = []
        for d in devs:
            try:
                vals.append(get(res[f"{sec}/{d}"]))
            except (KeyError, TypeError):
                vals.append(None)
        cells = ["-" if v is None else f"{v:,}" if isinstance(v, (int, float)) else str(v) for v in vals]
        if len(devs) == 2:
            a, b = vals
            ratio = isinstance(a, (int, float)) and isinstance(b, (int, float)) and a and b and "share" not in label
            cells.append(f"{a / b:.2f}x" if ratio else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + f"\n(total {report['total_s']} s)"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="both", choices=["both", "auto", "cuda", "cpu"])
    p.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=list(SECTIONS))
    p.add_argument("--budget", type=float, default=420.0, help="no section starts after this many seconds")
    p.add_argument("--tiny", action="store_true", help="tiny sizes (the CPU test)")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    a = p.parse_args(argv)
    report = run(devices_for(a.device), a.sections, a.budget, a.tiny)
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1))
    failed = [k for k, v in report["results"].items() if "error" in v]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
