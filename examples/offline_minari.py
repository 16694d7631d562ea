"""Offline RL from recorded play: a dataset of ``heuristic`` games, exported to Minari, learned by
TorchRL's discrete CQL, then the learned policy paired against ``random`` and ``heuristic``.

    pip install "fzmj[data,minari,torchrl]"   # pyarrow, minari + h5py, torchrl + tensordict
    python examples/offline_minari.py          # the default size: see docs/data.md for its time here

1. ``fzmj.data.collect``: ``--hands`` hands of four ``heuristic`` seats (every seat's decisions).
2. ``fzmj.data.minari_export.to_minari``: one Minari episode per seat and hand, as
   ``fzmj/SingleSeat-v0`` (three ``heuristic`` opponents, the mask in the observation) would have
   given it; ``minari.load_dataset`` opens it.
3. ``transitions()``: the episodes as TorchRL transitions (``next`` observation, reward, end) in
   TorchRL's ``ReplayBuffer``; ``DiscreteCQLLoss`` (Kumar et al. 2020: Q-learning plus the
   conservative term ``logsumexp Q - Q(s, a_data)``) trains a Q network on them, with
   ``SoftUpdate`` target parameters. Illegal actions get the float's minimum as their Q inside
   the network, so the target's max and the conservative term see legal actions only.
   (TorchRL's ``MinariExperienceReplay(..., load_from_local_minari=True)`` reads local HDF5
   Minari datasets but not int8 planes in 0.14.1: docs/data.md.)
4. The greedy legal policy plays ``--eval-hands`` hands against three ``heuristic`` (the dataset's
   opponents) through ``fzmj.agents.evaluate``, every hand again with ``random`` in its seat (the
   *learning signal*, ``examples/_verdict.py``) and again with ``heuristic`` (the teacher it
   learned from), on the same deals.

Nothing is downloaded: the datasets are written under ``--work`` (default a temporary folder),
with ``MINARI_DATASETS_PATH`` pointed there.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

DATASET_ID = "fzmj/heuristic-offline-v0"


def masked_q_network(core):
    """``(planes, mask) -> Q``: the ``core`` MLP on the flat planes, illegal actions at the float's minimum."""
    import torch

    class MaskedQ(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.core = core

        def forward(self, planes, mask):
            q = self.core(planes.flatten(1).float())
            return q.masked_fill(mask == 0, torch.finfo(q.dtype).min)

    return MaskedQ()


def export(work: Path, hands: int, seed: int, reward_scale: float) -> None:
    """Collect ``hands`` hands of ``heuristic`` self-play into ``work/data`` and export them to Minari."""
    import minari

    from fzmj.data import collect
    from fzmj.data.minari_export import to_minari

    t = time.perf_counter()
    m = collect(work / "data", ["heuristic"], hands, seed=seed, progress=False, log=lambda *_: None)
    print(
        f"collected {m['counts']['recorded_decisions']:,} decisions of {hands:,} hands in {time.perf_counter() - t:.1f} s"
    )
    t = time.perf_counter()
    if DATASET_ID in minari.list_local_datasets():  # a kept --work folder: export again
        minari.delete_dataset(DATASET_ID)
    to_minari(work / "data", DATASET_ID, reward_scale=reward_scale)
    ds = minari.load_dataset(DATASET_ID)
    print(
        f"Minari: {DATASET_ID}: {ds.total_episodes:,} episodes, {ds.total_steps:,} steps "
        f"(written and loaded in {time.perf_counter() - t:.1f} s)"
    )


def transitions(dataset):
    """The Minari dataset's episodes as one TensorDict of transitions in TorchRL's layout (the next
    observation, the reward and the episode's end under ``"next"``)."""
    import numpy as np
    import torch
    from tensordict import TensorDict

    steps = [
        (ep.observations["observation"], ep.observations["action_mask"], ep.actions, ep.rewards, ep.terminations)
        for ep in dataset.iterate_episodes()
    ]
    planes, masks, actions, rewards, ends = zip(*steps, strict=True)

    def now(xs):  # an episode's observations before each step, and after it
        return torch.from_numpy(np.concatenate([x[:-1] for x in xs]))

    def after(xs):
        return torch.from_numpy(np.concatenate([x[1:] for x in xs]))

    def flat(xs, dtype):
        return torch.from_numpy(np.concatenate(xs).astype(dtype))

    ended = flat(ends, bool).unsqueeze(-1)
    return TensorDict(
        {
            "observation": {"observation": now(planes), "action_mask": now(masks)},
            "action": flat(actions, np.int64),
            "next": {
                "observation": {"observation": after(planes), "action_mask": after(masks)},
                "reward": flat(rewards, np.float32).unsqueeze(-1),
                "terminated": ended,
                "done": ended.clone(),  # no truncation: every episode ends with its hand
            },
        },
        batch_size=[len(ended)],
    )


def replay_buffer(batch_size: int):
    """TorchRL's replay buffer holding every transition of the Minari dataset, read with ``minari.load_dataset``."""
    import minari
    from torchrl.data import LazyTensorStorage, ReplayBuffer

    t = time.perf_counter()
    td = transitions(minari.load_dataset(DATASET_ID))
    data = ReplayBuffer(storage=LazyTensorStorage(len(td)), batch_size=batch_size)
    data.extend(td)
    print(f"TorchRL ReplayBuffer: {len(data):,} transitions (read in {time.perf_counter() - t:.1f} s)")
    return data


def cql_loss(n_obs: int):
    """TorchRL's ``DiscreteCQLLoss`` over a masked Q network (an MLP); returns (loss, the MLP)."""
    import torch
    from tensordict.nn import TensorDictModule
    from torchrl.data import Categorical
    from torchrl.modules import QValueActor
    from torchrl.objectives import DiscreteCQLLoss

    from fzmj_env.actions import NUM_ACTIONS

    core = torch.nn.Sequential(
        torch.nn.Linear(n_obs, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, NUM_ACTIONS),
    )
    keys = [("observation", "observation"), ("observation", "action_mask")]
    qnet = QValueActor(
        TensorDictModule(masked_q_network(core), in_keys=keys, out_keys=["action_value"]),
        spec=Categorical(NUM_ACTIONS),
    )
    loss_fn = DiscreteCQLLoss(qnet, action_space="categorical")
    loss_fn.make_value_estimator(gamma=0.99)
    return loss_fn, core


def train(steps: int, batch_size: int, lr: float, seed: int):
    """Discrete CQL on the Minari dataset; returns the Q network's MLP and the CQL term's mean over
    the first and the last tenth of the steps (the term is a clone's cross-entropy: it falls as
    the Q values rank the dataset's actions first)."""
    import torch
    from _verdict import report_training
    from torchrl.objectives import SoftUpdate

    torch.manual_seed(seed)
    data = replay_buffer(batch_size)
    loss_fn, core = cql_loss(data[0]["observation", "observation"].numel())
    target = SoftUpdate(loss_fn, eps=0.995)
    optim = torch.optim.Adam(loss_fn.parameters(), lr=lr)
    t0, c0 = time.perf_counter(), time.process_time()
    cql = []
    for _ in range(steps):
        losses = loss_fn(data.sample())
        optim.zero_grad()
        (losses["loss_qvalue"] + losses["loss_cql"]).backward()
        optim.step()
        target.step()
        cql.append(losses["loss_cql"].item())
    report_training(steps, t0, c0)  # gradient steps of --batch-size transitions
    tenth = max(1, steps // 10)
    first, last = sum(cql[:tenth]) / tenth, sum(cql[-tenth:]) / tenth
    print(f"CQL term {first:.3f} over the first tenth of the steps, {last:.3f} over the last")
    return core, first, last


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hands", type=int, default=4000, help="hands of heuristic self-play collected")
    p.add_argument("--steps", type=int, default=4000, help="gradient steps of the offline learner")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--reward-scale", type=float, default=0.05, help="points -> reward")
    p.add_argument("--eval-hands", type=int, default=2000, help="evaluation hands (duplicate format, paired)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", help="folder for the datasets (default: a temporary one, removed at the end)")
    args = p.parse_args(argv)

    import torch
    from _verdict import learning_verdict
    from torchrl_ppo import TorchRLAgent

    torch.set_num_threads(1)  # small MLP: threads cost more than they bring
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp).absolute()
        os.environ["MINARI_DATASETS_PATH"] = str(work / "minari")  # Minari's own setting: nothing under ~
        export(work, args.hands, args.seed, args.reward_scale)
        core, _, _ = train(args.steps, args.batch_size, args.lr, args.seed)

    agent = TorchRLAgent(core, name="torchrl_cql")
    # the walls of the evaluation: another seed than the dataset's
    learning_verdict(agent, "heuristic", args.eval_hands, seed=args.seed + 1)
    print_paired_with_heuristic(agent, args.eval_hands, args.seed + 1)
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


def print_paired_with_heuristic(agent, hands: int, seed: int) -> dict:
    """The learned agent against the teacher: the same hands with ``heuristic`` in its seat."""
    from fzmj.agents.evaluate import evaluate

    res = evaluate([agent, "heuristic"], hands=hands, seed=seed, progress=False, paired="heuristic")
    mean, (lo, hi) = res["paired"]["mean"], res["paired"]["ci95"]
    print(
        f"paired with heuristic: {mean:+.2f} [{lo:+.2f}, {hi:+.2f}] points/hand vs heuristic in the same seat ({res['hands']} paired hands)"
    )
    return res


if __name__ == "__main__":
    raise SystemExit(main())
