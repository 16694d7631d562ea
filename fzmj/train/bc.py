"""Behaviour cloning: the warm start of ``fzmj-train`` (``bc_decisions > 0`` in the config).

1. :func:`collect_demonstrations`: a teacher agent (any agent spec, ``heuristic`` by default)
   plays all four seats of ``VectorEnv`` tables; every decision with more than one legal
   action is kept (observation, mask, the teacher's action) with its *return*: the discounted
   sum of that seat's rewards from the decision on, along the seat's own chain of decisions
   (the same bookkeeping as PPO, ``train/selfplay_buffer.py``, with lambda = 1, so the return
   is the Monte-Carlo return whatever the stored values are).
2. :func:`behaviour_clone`: minibatch Adam on masked cross-entropy to the teacher's action
   (illegal logits are -1e8, as in PPO) plus ``vf_coef`` x the squared error of the value head
   on the returns, for ``epochs`` passes; the last ``holdout`` share of the decisions (whole
   tables' games, never trained on) measures ``accuracy`` (argmax == teacher) and the losses.

The trainer then evaluates the cloned policy against three copies of its teacher (duplicate
deals, ``fzmj.agents.evaluate``) before PPO starts and logs ``bc/*`` to TensorBoard.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from fzmj.agents import reset_agent
from fzmj.agents.policy import ActorCritic
from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.vector import VectorEnv

from .bc_loss import clone_update, label_hits
from .bc_loss import masked_cross_entropy as masked_cross_entropy  # the loss, still importable from here
from .bc_record import FOLDER as DATASET_FOLDER
from .bc_record import HandRecorder
from .selfplay_buffer import SelfPlayBuffer


@dataclass
class Demonstrations:
    """Teacher decisions: ``obs`` (N, C, 27) int8, ``mask`` (N, 62) int8, ``action`` (N,) int64,
    ``ret`` (N,) float32 returns, ``table`` / ``seat`` (N,) where each came from (the hold-out
    takes whole tables)."""

    obs: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    ret: torch.Tensor
    table: np.ndarray
    seat: np.ndarray
    played: torch.Tensor | None = None
    """the action actually played when an ``actor`` played and the teacher only labelled"""
    oracle: torch.Tensor | None = None
    """(N, ORACLE_CHANNELS, 27) int8: the hidden state of each decision (``oracle=True``), for an
    oracle critic's value fit and an oracle teacher's labels; never an input of the policy"""

    def __len__(self) -> int:
        return int(self.action.shape[0])


def collect_demonstrations(
    teacher: str,
    decisions: int,
    num_tables: int = 256,
    seed: int = 0,
    rules: str = "fuzhou-lianzhong",
    hands_per_game: int = 1,
    reward_scale: float = 0.02,
    gamma: float = 1.0,
    env_threads: int = 1,
    progress: bool = True,
    actor=None,
    prefix: str = "bc",
    obs_version: int = 2,
    oracle: bool = False,
    record=None,
) -> Demonstrations:
    """About ``decisions`` decisions of ``teacher`` playing all four seats (see the module docstring).

    With ``actor`` (an agent object), the actor plays all four seats instead and the teacher only
    labels the actor's decisions with its own choice (expert iteration, ``train/distill.py``):
    the states are the actor's, the returns those of the actor's play, ``played`` its actions.

    With ``oracle`` (or a teacher that reads the oracle planes, ``train/oracle_teacher.py``) each
    decision keeps its oracle planes (``Demonstrations.oracle``).

    ``record`` (``train/bc_record.HandRecorder``), if given, sees the env and the player (``.start(env, player)``) and every
    step (``.step(actions, info)``); it only reads, so the demonstrations are the same with or without it.
    """
    from .oracle_teacher import make_teacher, reads_oracle

    agent = make_teacher(teacher) if isinstance(teacher, str) else teacher
    oracle = oracle or reads_oracle(agent)
    player = agent if actor is None else actor
    env = VectorEnv(num_tables, rules, seed=seed, hands_per_game=hands_per_game, reward_scale=reward_scale,
                    num_threads=env_threads, obs_version=obs_version, oracle=oracle)  # fmt: skip
    reset_agent(agent, seed, env.rules)
    obs, mask, seat = env.reset()
    if record is not None:
        record.start(env, player)
    hidden = env.oracle_planes if oracle else None
    obs_shape = obs.shape[1:]
    # room for the decisions wanted plus the games still running when we stop (whole chains)
    buf = SelfPlayBuffer(
        num_tables, decisions + 400 * num_tables, obs_shape, NUM_ACTIONS, "cpu", hidden.shape[1:] if oracle else None
    )
    played = torch.zeros(buf.actions.shape[0], dtype=torch.int64)  # by buffer row
    tables = np.arange(num_tables)
    zeros = torch.zeros(num_tables)
    t0, next_print = time.perf_counter(), 0
    while buf.n < decisions:
        actions = _act(player, obs, mask, hidden)
        # forced moves teach nothing: keep the decisions with a choice
        keep = tables[mask.sum(1) > 1]
        labels = actions[keep]
        if actor is not None and len(keep):
            labels = _act(agent, obs[keep], mask[keep], None if hidden is None else hidden[keep])
        played[buf.n : buf.n + len(keep)] = torch.from_numpy(actions[keep])
        buf.add(
            keep,
            seat[keep],
            torch.from_numpy(obs[keep]),
            torch.from_numpy(mask[keep]),
            torch.from_numpy(labels),
            zeros[: len(keep)],
            zeros[: len(keep)],
            None if hidden is None else torch.from_numpy(hidden[keep]),
        )
        obs, mask, seat, hidden = _step(env, actions, buf, record)
        if progress and buf.n >= next_print:
            what = "teacher" if actor is None else "labelled"
            print(f"{prefix}: {buf.n:,}/{decisions:,} {what} decisions ({time.perf_counter() - t0:.0f}s)", flush=True)
            next_print += max(decisions // 4, 1)
    # every game still running is played to its end, so each kept decision has its return
    while (buf.last_idx >= 0).any():  # a game's end cuts its table's chains
        actions = _act(player, obs, mask, hidden)
        obs, mask, seat, hidden = _step(env, actions, buf, record)
    return _demonstrations(buf, played, gamma)


def _step(env: VectorEnv, actions: np.ndarray, buf: SelfPlayBuffer, record) -> tuple:
    """One step of the demonstration games: the buffer credited with its rewards, the recorder (if
    any) told; ``(obs, mask, seat, oracle planes)`` of the next decisions."""
    obs, mask, seat, _rewards, done, info = env.step(actions)
    buf.credit(seat, info["pending_reward"], done, info["final_reward"])
    if record is not None:
        record.step(actions, info)
    return obs, mask, seat, info.get("oracle")


def _demonstrations(buf: SelfPlayBuffer, played: torch.Tensor, gamma: float) -> Demonstrations:
    """The kept decisions of a buffer whose games all ended, with their Monte-Carlo returns."""
    _adv, returns, idx = buf.compute_gae(gamma, 1.0)  # lambda = 1: Monte-Carlo returns
    sel = torch.as_tensor(idx)
    return Demonstrations(
        obs=buf.obs.index_select(0, sel).clone(),
        mask=buf.mask.index_select(0, sel).clone(),
        action=buf.actions.index_select(0, sel).clone(),
        ret=returns.index_select(0, sel).float().clone(),
        table=buf.table[idx].copy(),
        seat=buf.seat[idx].copy(),
        played=played.index_select(0, sel).clone(),
        oracle=buf.oracle.index_select(0, sel).clone() if buf.oracle is not None else None,
    )


def _act(player, obs, mask, hidden) -> np.ndarray:
    """The player's actions; an oracle teacher also gets the rows' oracle planes."""
    from .oracle_teacher import reads_oracle

    if reads_oracle(player):
        return np.asarray(player.act(obs, mask, hidden), dtype=np.int64)
    return np.asarray(player.act(obs, mask), dtype=np.int64)


class PolicyActor:
    """The learner as an agent: its most likely legal action (as ``ppo:PATH`` plays)."""

    name = "learner"

    def __init__(self, policy):
        self.policy = policy

    def act(self, obs, mask) -> np.ndarray:
        with torch.no_grad():
            # copies: a VectorEnv hands out read-only buffers, which torch does not take
            a = self.policy.act(torch.tensor(obs), torch.tensor(mask), deterministic=True)
        return a.cpu().numpy().astype(np.int64)


def join_demonstrations(a: Demonstrations, b: Demonstrations) -> Demonstrations:
    """``a`` then ``b`` (DAgger's aggregate); ``b``'s tables renumbered after ``a``'s, so the
    hold-out still takes whole games."""
    cat = lambda x, y: None if x is None or y is None else torch.cat([x, y])  # noqa: E731
    return Demonstrations(
        obs=torch.cat([a.obs, b.obs]),
        mask=torch.cat([a.mask, b.mask]),
        action=torch.cat([a.action, b.action]),
        ret=torch.cat([a.ret, b.ret]),
        table=np.concatenate([a.table, b.table + int(a.table.max()) + 1]),
        seat=np.concatenate([a.seat, b.seat]),
        played=cat(a.played, b.played),
        oracle=cat(a.oracle, b.oracle),
    )


def add_hand_features(demos: Demonstrations) -> None:
    """Append the hand-feature planes to ``demos.obs`` in place (once, rather than at every epoch)."""
    from fzmj_env.features import with_hand_features

    planes = [torch.from_numpy(with_hand_features(demos.obs[i : i + 8192].numpy())) for i in range(0, len(demos), 8192)]
    demos.obs = torch.cat(planes)


def _rows(demos: Demonstrations, mb: torch.Tensor, dev) -> tuple:
    """``(obs, mask, action, oracle)`` of the decisions ``mb``, on ``dev``."""
    oracle = demos.oracle.index_select(0, mb).to(dev) if demos.oracle is not None else None
    return (
        demos.obs.index_select(0, mb).to(dev),
        demos.mask.index_select(0, mb).to(dev),
        demos.action[mb].to(dev),
        oracle,
    )


def behaviour_clone(
    policy: ActorCritic,
    demos: Demonstrations,
    epochs: int = 4,
    batch_size: int = 1024,
    lr: float = 1e-3,
    vf_coef: float = 0.5,
    holdout: float = 0.05,
    seed: int = 0,
    log=None,
    progress: bool = True,
) -> dict:
    """Fit ``policy`` to ``demos`` in place; returns ``{accuracy, ce, value_loss, train_decisions, ...}``.

    ``log(name, value, step)`` (e.g. a TensorBoard writer's ``add_scalar``) receives ``bc/loss``,
    ``bc/ce``, ``bc/value_loss`` per epoch and ``bc/accuracy`` on the hold-out.

    An oracle critic (``policy.oracle_critic``) is fitted here too, on the demonstrations' oracle
    planes: the actor is cloned, the critic learns the returns from the whole state, so PPO starts
    with a critic that already knows the game (the two networks share nothing).
    """
    if policy.oracle_critic and demos.oracle is None:
        raise ValueError("an oracle critic is fitted on demonstrations with oracle planes (collect with oracle=True)")
    # hold out whole tables (their games), so the accuracy is on games never trained on
    held_tables = np.unique(demos.table)[: max(1, int(round(holdout * len(np.unique(demos.table)))))]
    is_held = np.isin(demos.table, held_tables)
    train_idx = torch.as_tensor(np.flatnonzero(~is_held))
    test_idx = torch.as_tensor(np.flatnonzero(is_held))
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=lr, eps=1e-5)
    dev = next(policy.parameters()).device
    steps_per_epoch = max(1, -(-len(train_idx) // batch_size))
    total = epochs * steps_per_epoch
    step = 0
    stats: dict = {"train_decisions": int(len(train_idx)), "holdout_decisions": int(len(test_idx))}
    t0 = time.perf_counter()
    for epoch in range(epochs):
        perm = train_idx[torch.randperm(len(train_idx), generator=gen)]
        sum_ce = sum_v = 0.0
        for start in range(0, len(perm), batch_size):
            mb = perm[start : start + batch_size]
            for g in opt.param_groups:  # linear decay to a tenth
                g["lr"] = lr * (1.0 - 0.9 * step / total)
            obs, mask, action, oracle = _rows(demos, mb, dev)
            ce, v_loss = clone_update(policy, opt, obs, mask, action, demos.ret[mb].to(dev), oracle, vf_coef)
            sum_ce += ce * len(mb)
            sum_v += v_loss * len(mb)
            step += 1
        stats.update(ce=sum_ce / len(perm), value_loss=sum_v / len(perm))
        if log is not None:
            log("bc/ce", stats["ce"], epoch)
            log("bc/value_loss", stats["value_loss"], epoch)
            log("bc/loss", stats["ce"] + vf_coef * stats["value_loss"], epoch)
        if progress:
            print(
                f"bc: epoch {epoch + 1}/{epochs} ce {stats['ce']:.4f} value loss {stats['value_loss']:.4f} "
                f"({time.perf_counter() - t0:.0f}s)",
                flush=True,
            )
    stats.update(holdout_metrics(policy, demos, test_idx))
    if log is not None:
        log("bc/accuracy", stats["accuracy"], epochs)
        log("bc/holdout_ce", stats["holdout_ce"], epochs)
    return stats


def clone_with_config(policy: ActorCritic, demos: Demonstrations, args, seed: int, **kw) -> dict:
    """:func:`behaviour_clone` with the run config's ``bc_*`` settings and ``vf_coef`` (the warm
    start's and expert iteration's fit)."""
    return behaviour_clone(
        policy,
        demos,
        epochs=args.bc_epochs,
        batch_size=args.bc_batch_size,
        lr=args.bc_learning_rate,
        vf_coef=args.vf_coef,
        seed=seed,
        **kw,
    )


@torch.no_grad()
def holdout_metrics(policy: ActorCritic, demos: Demonstrations, idx: torch.Tensor, batch: int = 4096) -> dict:
    """Accuracy (argmax == teacher's action) and CE of ``policy`` on the decisions ``idx``."""
    hits, ce_sum, n = 0, 0.0, len(idx)
    dev = next(policy.parameters()).device
    for start in range(0, n, batch):
        mb = idx[start : start + batch]
        batch_hits, ce = label_hits(policy, *_rows(demos, mb, dev))
        hits += batch_hits
        ce_sum += ce * len(mb)
    return {"accuracy": hits / max(n, 1), "holdout_ce": ce_sum / max(n, 1)}


def warm_start(agent: ActorCritic, args, writer, path) -> dict:
    """The trainer's warm start: demonstrations of ``args.bc_teacher``, behaviour cloning of
    ``agent`` in place, then ``bc_dagger_rounds`` rounds of DAgger (the clone plays all four
    seats, the teacher labels its decisions, the clone is fitted again on everything so far); the
    BC checkpoint at ``path``, and its duplicate score against three copies of the teacher (an
    oracle teacher: three heuristics) as ``bc/score_vs_teacher``. Returns the BC statistics."""
    import dataclasses

    from fzmj.agents.checkpoint import save_checkpoint

    t0 = time.perf_counter()
    cost = search_cost(args.bc_teacher, args.bc_decisions)
    if cost:
        print(f"bc: teacher {args.bc_teacher!r} {cost}", flush=True)
    if args.bc_stream:  # a large dataset, streamed (train/bc_stream.py)
        from .bc_stream import stream_clone

        stats = stream_clone(agent, args, log=writer.add_scalar)
        stats.update(collect_seconds=0.0, seconds=time.perf_counter() - t0, rounds=1)
    else:
        stats = _clone_rounds(agent, args, writer, t0, path)
    save_checkpoint(path, agent, config=dataclasses.asdict(args), bc=dict(stats))
    source = f"the dataset {args.bc_dataset}" if args.bc_dataset else repr(args.bc_teacher)
    line = (
        f"bc: {stats['decisions']:,} decisions of {source} "
        f"({'streamed' if args.bc_stream else format(stats['collect_seconds'], '.0f') + 's'}), accuracy "
        f"{stats['accuracy']:.1%} on {stats['holdout_decisions']:,} held-out decisions"
    )
    line += _check_clone(args, path, stats, writer)
    print(line + f" ({time.perf_counter() - t0:.0f}s in all)", flush=True)
    return stats


def _clone_rounds(agent: ActorCritic, args, writer, t0: float, path) -> dict:
    """The in-memory clone: the demonstrations (the dataset's or the teacher's games, written as a
    dataset beside the BC checkpoint ``path`` with ``bc_save_dataset``), then each DAgger round's;
    returns the last fit's statistics."""
    demos = stats = None
    for rnd in range(1 + args.bc_dagger_rounds):
        t_round = time.perf_counter()
        if rnd == 0 and args.bc_dataset:  # a recorded dataset instead of the teacher's games (train/bc_dataset.py)
            from .bc_dataset import dataset_demonstrations

            more = Demonstrations(
                **dataset_demonstrations(args.bc_dataset, args.bc_decisions, args, agent.oracle_critic)
            )
        else:
            record = HandRecorder() if rnd == 0 and args.bc_save_dataset else None  # the teacher's own games
            more = _collect_round(agent, args, rnd, record)
            if record is not None:
                _save_dataset(record, args, path)
        if agent.hand_features:
            add_hand_features(more)
        demos = more if demos is None else join_demonstrations(demos, more)
        t_collect = time.perf_counter() - t_round
        stats = clone_with_config(
            agent,
            demos,
            args,
            seed=args.seed + rnd,
            log=lambda name, value, step, rnd=rnd: writer.add_scalar(name, value, step + rnd * args.bc_epochs),
        )
        stats.update(decisions=len(demos), collect_seconds=t_collect, seconds=time.perf_counter() - t0, rounds=rnd + 1)
        if args.bc_dagger_rounds:
            print(
                f"bc: round {rnd + 1}/{1 + args.bc_dagger_rounds}: {len(demos):,} decisions ({t_collect:.0f}s to "
                f"collect), accuracy {stats['accuracy']:.1%} on {stats['holdout_decisions']:,} held-out decisions",
                flush=True,
            )
    return stats


def _save_dataset(record, args, path) -> None:
    """The warm start's games as a dataset in the run folder (``bc_save_dataset``, train/bc_record.py)."""
    from .bc_record import write_warm_start_dataset
    from .run_dir import resume_run_dir

    folder = resume_run_dir(path) / DATASET_FOLDER
    m = write_warm_start_dataset(folder.parent, record, args.bc_teacher)
    print(
        f"bc: the warm start's {m['counts']['hands']:,} hands ({m['counts']['decisions']:,} decisions) written "
        f"as a dataset: {folder} (digest {m['digest']}; bc_dataset={folder} clones them)",
        flush=True,
    )


def _collect_round(agent: ActorCritic, args, rnd: int, record=None) -> Demonstrations:
    """Round ``rnd``'s demonstrations: the teacher's games (round 0) or the clone's, labelled (DAgger)."""
    return collect_demonstrations(
        args.bc_teacher,
        args.bc_decisions,
        num_tables=args.num_tables,
        seed=(args.seed * 7919 + 17 + 104_729 * rnd) % 2**63,
        rules=args.rules,
        hands_per_game=args.hands_per_game,
        reward_scale=args.reward_scale,
        gamma=args.gamma,
        obs_version=args.obs_version,
        oracle=agent.oracle_critic,
        actor=PolicyActor(agent) if rnd else None,  # DAgger: the clone's own states, the teacher's labels
        prefix="bc" if rnd == 0 else f"bc dagger {rnd}",
        record=record,
    )


def _check_clone(args, path, stats: dict, writer) -> str:
    """The clone's duplicate score against three copies of its teacher (or the teacher's public
    stand-in, :func:`eval_opponent`): into ``stats`` and TensorBoard; the console's words."""
    from fzmj.agents.evaluate import evaluate

    if args.bc_eval_hands <= 0:
        return ""
    opponent = eval_opponent(args.bc_teacher)
    res = evaluate(
        [f"ppo:{path}", opponent],
        hands=args.bc_eval_hands,
        seed=2_000_000 + args.seed,
        workers=args.eval_workers,
        progress=False,
        rules=args.rules,
    )
    me = res["agents"][f"ppo:{path}"]
    stats.update(score_vs_teacher=me["mean_score"], ci95_vs_teacher=me.get("ci95"))
    writer.add_scalar("bc/score_vs_teacher", me["mean_score"], 0)
    ci = me.get("ci95") or [float("nan")] * 2
    line = f"; vs 3x {opponent} {me['mean_score']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}] per hand"
    if args.bc_teacher.startswith("search"):
        line += " (the search's blueprint: three searching seats would take hours)"
    elif opponent != args.bc_teacher:
        line += " (the oracle teacher's public base: it is no agent)"
    return line


def search_cost(spec: str, decisions: int) -> str:
    """For a search teacher, what labelling ``decisions`` decisions costs (one line); else ''.

    A search plays rollouts for every decision with a choice: about 40-140 ms each at 64 worlds
    on one core (docs/baselines.md), about proportional to the worlds."""
    if not spec.startswith("search"):
        return ""
    from fzmj.agents.search import parse_search_spec

    blueprint, opts = parse_search_spec(spec)
    worlds = opts["worlds"]
    lo, hi = (decisions * ms * worlds / 64 / 1000 / 60 for ms in (40, 140))
    line = (
        f"searches each decision with a choice ({worlds} worlds: about {40 * worlds / 64:.0f}-"
        f"{140 * worlds / 64:.0f} ms each on one core): {decisions:,} decisions take about {_mins(lo)}-{_mins(hi)} minutes"
    )
    if blueprint != "heuristic":  # rollouts call the blueprint at every step of every world
        line += f" with the heuristic blueprint; {blueprint!r} as blueprint is slower (a network: tens of times)"
    return line


def _mins(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


def eval_opponent(teacher: str) -> str:
    """The opponent of the clone's check: the teacher, a search teacher's blueprint (three
    searching seats would make the check take hours), or an oracle teacher's heuristic (it is no
    agent: it reads hidden tiles)."""
    from .oracle_teacher import ORACLE_TEACHERS

    if teacher in ORACLE_TEACHERS:
        return "heuristic"
    if not teacher.startswith("search"):
        return teacher
    from fzmj.agents.search import parse_search_spec

    return parse_search_spec(teacher)[0]
