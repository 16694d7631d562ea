"""``fzmj-belief``: train the belief model by supervision on self-play (``docs/belief.md``).

    fzmj-belief --run-name b1 --train-decisions 200000 --val-decisions 50000 --epochs 4
    fzmj-belief --resume runs/b1/checkpoints/last.pt        # continues at the next epoch

The data: decisions of self-play by four agent specs (``--agents``, default four heuristics),
each with the hidden truth read from the engine's state (``fzmj/train/belief_data.py``); a
held-out set from another seed stream. Both are generated once and kept in the run folder
(``data/``), so a resumed run trains on the same samples. The run folder works as
``fzmj-train``'s (``fzmj/train/run_dir.py``: plain names, no silent overwrite, one writer at a
time); TensorBoard events go to the run folder, ``checkpoints/last.pt`` is written after every
epoch and ``checkpoints/model.pt`` (network only, what ``belief:PATH`` and the package ship)
at the end.

Held-out report (TensorBoard ``val/*`` and the console): log-loss of each head against a
constant (the training set's base rates), AUC of the deal-in prediction (``danger`` of each
legal discard at a turn against whether some other seat could win on it) and of ``ready``, and a
calibration table of ``danger`` (``calibration.json``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from fzmj_env.atomic import write_atomic
from fzmj_env.cli import OneLineParser, run_cli

from .run_dir import RunDirError, check_run_name, open_run_dir, resume_run_dir

CAL_EDGES = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
VAL_SEED_OFFSET = 1_000_003  # the held-out games' seed stream: never the training one


class BeliefConfigError(ValueError):
    """A bad fzmj-belief setting (one line)."""


@dataclass
class BeliefArgs:
    run_name: str = "belief"
    runs_dir: str = "runs"
    agents: list = field(default_factory=lambda: ["heuristic"] * 4)
    rules: str = "fuzhou-lianzhong"
    obs_version: str = "v2"
    train_decisions: int = 200_000
    val_decisions: int = 50_000
    epochs: int = 4
    batch_size: int = 512
    lr: float = 1e-3
    hidden: list = field(default_factory=lambda: [256, 256])
    arch: str = "mlp"
    seed: int = 0
    tables: int = 512
    threads: int = 1
    log_every: int = 100


def check_args(a: BeliefArgs) -> BeliefArgs:
    """Every setting checked, one line for the first wrong one."""
    from fzmj.agents import make_agent
    from fzmj.agents.belief import OBS_LAYOUTS
    from fzmj_env.rules import load_rules

    try:
        check_run_name(a.run_name)
    except RunDirError as e:
        raise BeliefConfigError(str(e)) from None
    if len(a.agents) == 1:
        a.agents = a.agents * 4
    if len(a.agents) != 4:
        raise BeliefConfigError(f"agents: give 1 or 4 agent specs (one per seat), got {len(a.agents)}")
    for spec in a.agents:
        make_agent(spec)  # one-line AgentSpecError before anything is generated
    try:
        a.rules = load_rules(a.rules).name
    except ValueError as e:
        raise BeliefConfigError(f"rules: {e}") from None
    if a.obs_version not in OBS_LAYOUTS:
        raise BeliefConfigError(f"obs_version: {a.obs_version!r} is not one of {', '.join(OBS_LAYOUTS)}")
    for key, lo, hi in (
        ("train_decisions", 1_000, 20_000_000),
        ("val_decisions", 1_000, 5_000_000),
        ("epochs", 1, 10_000),
        ("batch_size", 1, 1 << 20),
        ("seed", 0, 2**32 - 1),
        ("tables", 1, 65_536),
        ("threads", 1, 1024),
        ("log_every", 1, 1 << 30),
    ):
        v = getattr(a, key)
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise BeliefConfigError(f"{key} must be an integer in {lo:,}..{hi:,}, got {v!r}")
    if not (isinstance(a.lr, float) and 0 < a.lr < 1):
        raise BeliefConfigError(f"lr must be a number in (0, 1), got {a.lr!r}")
    from fzmj.agents.belief_net import ARCHS, V3_SEAT0, V3_SEAT_PLANES

    if a.arch not in ARCHS:
        raise BeliefConfigError(f"arch: {a.arch!r} is not one of {', '.join(ARCHS)}")
    if a.arch == "seq" and OBS_LAYOUTS[a.obs_version] < V3_SEAT0 + 4 * V3_SEAT_PLANES:
        raise BeliefConfigError(f"arch seq reads the discard order of observation v3: not in {a.obs_version}")
    if not a.hidden or not all(isinstance(h, int) and 1 <= h <= 8192 for h in a.hidden) or len(a.hidden) > 8:
        raise BeliefConfigError(f"hidden: 1..8 layer sizes in 1..8192, got {a.hidden!r}")
    return a


# ---- metrics -------------------------------------------------------------------------------------
def auc(score: np.ndarray, label: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney, ties counted half); nan without both classes."""
    score, label = np.asarray(score, np.float64).ravel(), np.asarray(label).ravel() > 0
    n1 = int(label.sum())
    n0 = len(label) - n1
    if n1 == 0 or n0 == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    ranks = np.empty(len(s))
    # average ranks of tied scores
    _, first, counts = np.unique(s, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[label].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def bce(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(np.asarray(p, np.float64), 1e-7, 1 - 1e-7)
    y = np.asarray(y, np.float64)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def calibration(p: np.ndarray, y: np.ndarray, edges=CAL_EDGES) -> list[dict]:
    """Rows (bin, samples, mean prediction, observed rate)."""
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        n = int(sel.sum())
        rows.append(
            {
                "bin": f"{lo:g}-{hi:g}",
                "n": n,
                "predicted": float(p[sel].mean()) if n else None,
                "observed": float(y[sel].mean()) if n else None,
            }
        )
    return rows


def base_rates(train: dict) -> dict:
    """The constant predictor: the training set's rates (per kind and count; per seat; per kind)."""
    counts = train["counts"].astype(np.int64)
    dist = np.stack([(counts == c).mean(axis=(0, 1)) for c in range(5)], -1)  # (27, 5)
    win = train["win_on"].mean(axis=(0, 1))  # (27,)
    turn = train["turn"] > 0
    danger_y = train["win_on"][turn].max(1)
    legal = train["legal"][turn] > 0
    return {
        "concealed": np.clip(dist, 1e-7, 1),
        "ready": train["ready"].mean(0),
        "win_on": win,
        "danger": float(danger_y[legal].mean()),
    }


def evaluate(predict, val: dict, base: dict, batch: int = 4096) -> tuple[dict, list[dict]]:
    """Held-out metrics of ``predict(obs int8 (N, C, 27)) -> dict`` against the constant ``base``."""
    from .belief_data import unpack

    n = len(val["ready"])
    ll_conc = 0.0
    outs = {"ready": [], "win_on": [], "danger": []}
    for i in range(0, n, batch):
        p = predict(unpack(val["obs"][i : i + batch]))
        c = val["counts"][i : i + batch].astype(np.int64)
        pc = np.take_along_axis(p["concealed_dist"], c[..., None], -1)[..., 0]
        ll_conc += float(-np.log(np.clip(pc, 1e-7, 1)).sum())
        for k in outs:
            outs[k].append(p[k])
    ready, win, danger = (np.concatenate(outs[k]) for k in ("ready", "win_on", "danger"))
    c = val["counts"].astype(np.int64)
    const_conc = float(-np.log(base["concealed"][np.arange(27)[None, None, :], c]).mean())
    turn = val["turn"] > 0
    legal = val["legal"][turn] > 0
    dy = val["win_on"][turn].max(1)[legal]
    dp = danger[turn][legal]
    m = {
        "concealed_logloss": ll_conc / c.size,
        "concealed_logloss_const": const_conc,
        "ready_logloss": bce(ready, val["ready"]),
        "ready_logloss_const": bce(np.broadcast_to(base["ready"], ready.shape), val["ready"]),
        "ready_auc": auc(ready, val["ready"]),
        "win_on_logloss": bce(win, val["win_on"]),
        "win_on_logloss_const": bce(np.broadcast_to(base["win_on"], win.shape), val["win_on"]),
        "danger_logloss": bce(dp, dy),
        "danger_logloss_const": bce(np.full(dp.shape, base["danger"]), dy),
        "danger_auc": auc(dp, dy),
        "danger_rate": float(dy.mean()),
        "val_decisions": int(n),
        "val_discards": int(len(dy)),
    }
    return m, calibration(dp, dy)


def belief_loss(out: dict, counts, ready, win_on) -> tuple:
    """The training loss of the network's logits ``out`` against the labels of a batch: the
    cross-entropy of the counts + BCE of ``ready`` + 10 x BCE of ``win_on`` (rare, 1.5% of its
    labels, so its term is scaled up); returns the loss and its three terms."""
    import torch

    l_conc = torch.nn.functional.cross_entropy(out["concealed"].reshape(-1, 5), counts.reshape(-1))
    l_ready = torch.nn.functional.binary_cross_entropy_with_logits(out["ready"], ready)
    l_win = torch.nn.functional.binary_cross_entropy_with_logits(out["win_on"], win_on)
    return l_conc + l_ready + 10.0 * l_win, l_conc, l_ready, l_win


# ---- the run -------------------------------------------------------------------------------------
def _data(run_dir: Path, a: BeliefArgs, progress) -> tuple[dict, dict]:
    """The training and held-out sets, generated once per run folder (kept in ``data/``)."""
    from .belief_data import generate

    folder = run_dir / "data"
    folder.mkdir(exist_ok=True)
    key = {k: getattr(a, k) for k in ("agents", "rules", "obs_version", "seed", "tables")}
    sets = {}
    for name, size, seed in (
        ("train", a.train_decisions, a.seed),
        ("val", a.val_decisions, a.seed + VAL_SEED_OFFSET),
    ):
        path = folder / f"{name}.npz"
        want = json.dumps({**key, "decisions": size, "seed": seed}, sort_keys=True)
        if path.is_file():
            with np.load(path) as z:
                if str(z["key"]) == want:
                    sets[name] = {k: z[k] for k in z.files if k != "key"}
                    continue
        t0 = time.time()
        d = generate(size, a.agents, a.rules, seed, a.tables, a.obs_version, progress)
        progress(f"data: {name} {size:,} decisions in {time.time() - t0:.0f} s")
        write_atomic(path, lambda f, d=d, want=want: np.savez(f, key=np.array(want), **d))
        sets[name] = d
    return sets["train"], sets["val"]


def _say(line: str) -> None:
    print(line, flush=True)


def _resume(resume: str, epochs: int | None) -> tuple[BeliefArgs, dict, Path]:
    """The checkpoint ``resume``, checked and resumable; its run's settings (``epochs`` replaced
    when given, checked) and its run folder."""

    from fzmj.agents.belief import check_belief_checkpoint
    from fzmj.agents.checkpoint import unreadable_checkpoint
    from fzmj.agents.checkpoint_checks import load_torch_file

    p = Path(resume)
    if not p.is_file():
        raise BeliefConfigError(f"--resume: no such checkpoint {resume!r}")
    try:
        ckpt = load_torch_file(p)
    except Exception as e:  # noqa: BLE001
        raise BeliefConfigError(f"--resume: {unreadable_checkpoint(p, e)}") from None
    check_belief_checkpoint(ckpt, str(p))
    if "optimizer" not in ckpt or "config" not in ckpt:
        raise BeliefConfigError(f"--resume: {p} holds the network only (no optimizer state): not resumable")
    try:
        a = BeliefArgs(**ckpt["config"])
    except TypeError as e:
        raise BeliefConfigError(f"--resume: {p}: its config does not fit this fzmj-belief ({e})") from None
    if epochs is not None:
        a.epochs = epochs
    return check_args(a), ckpt, resume_run_dir(p)


def _write_atomically(path: Path, data: dict) -> None:
    """``torch.save`` to a temporary next to ``path`` (the temporaries ``save_checkpoint`` uses,
    so a killed run's are removed on resume), then renamed over it."""
    import torch

    from fzmj.agents.checkpoint import umask

    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(data, f)
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp makes it 0600; a checkpoint is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _Fit:
    """One run's network, optimizer, generator and counters, fresh (seeded from ``a.seed``) or
    from the checkpoint ``ckpt``; an epoch of training, the held-out report, the checkpoints."""

    def __init__(self, a: BeliefArgs, ckpt: dict | None, train_set: dict, val_set: dict, run_dir: Path):
        import torch
        from torch.utils.tensorboard import SummaryWriter

        from fzmj.agents.belief import OBS_LAYOUTS
        from fzmj.agents.belief_net import BeliefNet

        self.a, self.train_set, self.val_set, self.run_dir = a, train_set, val_set, run_dir
        torch.manual_seed(a.seed)
        self.channels = OBS_LAYOUTS[a.obs_version]
        self.net = BeliefNet(self.channels, a.hidden, arch=a.arch)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=a.lr)
        self.rng = np.random.default_rng(a.seed)
        self.start_epoch, self.step = 0, 0
        if ckpt is not None:
            self.net.load_state_dict(ckpt["model"])
            self.opt.load_state_dict(ckpt["optimizer"])
            self.rng.bit_generator.state = ckpt["rng"]["numpy"]
            torch.set_rng_state(ckpt["rng"]["torch"])
            self.start_epoch, self.step = ckpt["epoch"], ckpt["step"]
        self.epoch = self.start_epoch - 1
        self.writer = SummaryWriter(str(run_dir))
        self.n = len(train_set["ready"])
        self.batches = (self.n + a.batch_size - 1) // a.batch_size
        self.targets = [  # the heads' labels: concealed counts, ready, wins-on
            torch.from_numpy(train_set["counts"].astype(np.int64)),
            torch.from_numpy(train_set["ready"].astype(np.float32)),
            torch.from_numpy(train_set["win_on"].astype(np.float32)),
        ]
        self.metrics: dict = dict(ckpt.get("metrics") or {}) if ckpt else {}

    def train_epoch(self, t0: float) -> float:
        """One pass over the training set in a fresh random order; the mean batch loss."""
        import torch

        from .belief_data import unpack

        a, net, opt, writer = self.a, self.net, self.opt, self.writer
        net.train()
        perm = self.rng.permutation(self.n)
        tot = 0.0
        for b in range(self.batches):
            idx = np.sort(perm[b * a.batch_size : (b + 1) * a.batch_size])
            out = net(torch.from_numpy(unpack(self.train_set["obs"][idx])))
            li = torch.from_numpy(idx)
            loss, l_conc, l_ready, l_win = belief_loss(out, *(t[li] for t in self.targets))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            self.step += 1
            tot += float(loss.detach())
            if self.step % a.log_every == 0:
                writer.add_scalar("train/loss", loss.item(), self.step)
                writer.add_scalar("train/concealed", l_conc.item(), self.step)
                writer.add_scalar("train/ready", l_ready.item(), self.step)
                writer.add_scalar("train/win_on", l_win.item(), self.step)
                _say(
                    f"epoch {self.epoch + 1}/{a.epochs} | batch {b + 1}/{self.batches} | loss {loss.item():.4f} "
                    f"| {self.step * a.batch_size / max(time.time() - t0, 1e-9):,.0f} samples/s"
                )
        return tot / self.batches

    def validate(self, base: dict, train_loss: float) -> None:
        """The held-out report: TensorBoard ``val/*``, ``calibration.json``, ``metrics.json``, one console line."""
        import torch

        def predict(x):
            return {k: v.numpy() for k, v in self.net.probabilities(torch.from_numpy(x)).items()}

        self.net.eval()
        m, cal = evaluate(predict, self.val_set, base)
        m["epoch"] = self.epoch + 1
        m["train_loss"] = train_loss
        self.metrics = m
        for k, v in m.items():
            if isinstance(v, float):
                self.writer.add_scalar(f"val/{k}", v, self.step)
        self.writer.add_text("val/calibration", "\n".join(json.dumps(r) for r in cal), self.step)
        self.writer.flush()
        write_atomic(self.run_dir / "calibration.json", json.dumps(cal, indent=1))
        write_atomic(self.run_dir / "metrics.json", json.dumps(m, indent=1))
        _say(
            f"epoch {self.epoch + 1}/{self.a.epochs} | held-out: win_on log-loss {m['win_on_logloss']:.4f} "
            f"(const {m['win_on_logloss_const']:.4f}) | danger log-loss {m['danger_logloss']:.4f} "
            f"(const {m['danger_logloss_const']:.4f}) AUC {m['danger_auc']:.3f} | ready AUC {m['ready_auc']:.3f} "
            f"| concealed {m['concealed_logloss']:.4f} (const {m['concealed_logloss_const']:.4f})"
        )

    def save(self, name: str, full: bool) -> None:
        """``checkpoints/NAME``: the network and the run's settings; ``full``: the optimizer and the generators too."""
        import torch

        from fzmj.agents.belief import FORMAT, VERSION

        a, net = self.a, self.net
        data = {
            "format": FORMAT,
            "version": VERSION,
            "obs_version": a.obs_version,
            "num_channels": self.channels,
            "rules": a.rules,
            "belief_spec": dict(net.spec),
            "model": {k: v.detach().clone() for k, v in net.state_dict().items()},
            "config": asdict(a),
            "epoch": self.epoch + 1,
            "step": self.step,
            "metrics": self.metrics,
            "data": {"agents": list(a.agents), "train_decisions": self.n, "val_decisions": len(self.val_set["ready"])},
        }
        if full:
            data["optimizer"] = self.opt.state_dict()
            data["rng"] = {"numpy": self.rng.bit_generator.state, "torch": torch.get_rng_state()}
        _write_atomically(self.run_dir / "checkpoints" / name, data)


def train(
    a: BeliefArgs, resume: str | None = None, overwrite: bool = False, epochs: int | None = None, sets=None
) -> dict:
    """One run (module docstring); returns the last held-out metrics. On ``resume`` the run's own
    settings are used, except ``epochs`` when given (to train a finished run further). ``sets``:
    ``(train, val)`` data already made (``benchmarks/studies/belief_curve.py``: nested subsets of one
    set), used instead of the run folder's ``data/`` (not kept there: such a run is not resumable
    from its own folder alone)."""
    import torch

    from .checkpoint import remove_stale_temporaries

    ckpt = None
    if resume is not None:
        a, ckpt, run_dir = _resume(resume, epochs)
    else:
        a = check_args(a)
        run_dir = Path(a.runs_dir) / a.run_name
    lock = open_run_dir(run_dir, resume=ckpt is not None, overwrite=overwrite)
    remove_stale_temporaries(run_dir / "checkpoints")
    torch.set_num_threads(a.threads)
    try:
        train_set, val_set = sets if sets is not None else _data(run_dir, a, _say)
        base = base_rates(train_set)
        fit = _Fit(a, ckpt, train_set, val_set, run_dir)
        t0 = time.time()
        for epoch in range(fit.start_epoch, a.epochs):
            fit.epoch = epoch
            fit.validate(base, fit.train_epoch(t0))
            fit.save("last.pt", full=True)
        if a.epochs > fit.start_epoch or not (run_dir / "checkpoints" / "model.pt").exists():
            fit.epoch = max(fit.epoch, a.epochs - 1)
            fit.save("model.pt", full=False)
        fit.writer.close()
        return fit.metrics
    finally:
        lock.release()


def export_belief(src: str, dst: str) -> dict:
    """Write the network of checkpoint ``src`` to ``dst`` for shipping: half-precision weights
    (``load_belief`` makes them float32 again; the shipped model's figures are measured on the
    file itself), no optimizer, no generator states. Returns the exported fields."""
    import torch

    from fzmj.agents.belief import check_belief_checkpoint
    from fzmj.agents.checkpoint_checks import load_torch_file

    data = load_torch_file(src)
    check_belief_checkpoint(data, str(src))
    out = {k: v for k, v in data.items() if k not in ("optimizer", "rng")}
    out["model"] = {k: v.half() if v.is_floating_point() else v for k, v in data["model"].items()}
    write_atomic(dst, lambda f: torch.save(out, f))
    return out


def build_parser() -> OneLineParser:
    d = BeliefArgs()
    ap = OneLineParser(prog="fzmj-belief", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run-name", default=d.run_name)
    ap.add_argument("--runs-dir", default=d.runs_dir)
    from fzmj.agents.specs import SPEC_HELP

    ap.add_argument(
        "--agents", nargs="+", default=d.agents, help=f"1 or 4 agent specs (default: four heuristics): {SPEC_HELP}"
    )
    ap.add_argument("--rules", default=d.rules, help="rule preset (default fuzhou-lianzhong)")
    ap.add_argument("--obs-version", default=d.obs_version, help="observation layout the model reads (default v2)")
    ap.add_argument("--train-decisions", type=int, default=d.train_decisions)
    ap.add_argument("--val-decisions", type=int, default=d.val_decisions)
    ap.add_argument("--epochs", type=int, default=None, help=f"passes over the data (default {d.epochs})")
    ap.add_argument("--batch-size", type=int, default=d.batch_size)
    ap.add_argument("--lr", type=float, default=d.lr)
    ap.add_argument("--hidden", type=int, nargs="+", default=d.hidden)
    ap.add_argument(
        "--arch",
        default=d.arch,
        help="mlp (default) or seq: also a 1-D convolution over each seat's discards in order (v3)",
    )
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--tables", type=int, default=d.tables, help="self-play tables stepped together")
    ap.add_argument("--threads", type=int, default=d.threads, help="torch threads")
    ap.add_argument("--log-every", type=int, default=d.log_every, help="progress line every N batches")
    ap.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoints/last.pt")
    ap.add_argument("--overwrite", action="store_true", help="replace a run already in the run folder")
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    ns = ap.parse_args(argv)
    from fzmj.agents import AgentSpecError

    def work() -> int:
        args = BeliefArgs(**{k: getattr(ns, k) for k in BeliefArgs.__dataclass_fields__})  # same names
        if ns.epochs is None:
            args.epochs = BeliefArgs().epochs
        train(args, resume=ns.resume, overwrite=ns.overwrite, epochs=ns.epochs)
        return 0

    return run_cli(ap, work, bad_input=(BeliefConfigError, RunDirError, AgentSpecError, ValueError))


if __name__ == "__main__":
    sys.exit(main())
