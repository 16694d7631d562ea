"""TorchRL PPO (masked categorical policy) on one seat against three agents, then the learning verdict.

    pip install "fzmj[torchrl]"        # torchrl + tensordict
    python examples/torchrl_ppo.py     # the default size: see docs/integrations.md for its time here

TorchRL's ``GymWrapper`` over ``SingleSeatEnv(mask_in_obs=True)`` (float32 flat planes; the
observation ``Dict`` becomes the keys ``observation`` and ``action_mask``; seat rotated every
game), ``--n-envs`` of them in a ``SerialEnv``. The policy is a ``ProbabilisticActor`` with
TorchRL's ``MaskedCategorical`` (illegal actions get probability 0), the loss ``ClipPPOLoss`` with
``GAE`` advantages, the data from a ``Collector``. Then the greedy policy plays with
``fzmj.agents.evaluate.evaluate`` against the same opponents, and again with a random agent in
its seat on the same deals (``paired="random"``): the printed *learning signal* is the difference,
``LEARNED`` when its 95% interval is above zero (``examples/_verdict.py``).

Four-seat play through TorchRL's ``PettingZooWrapper`` needs ``info="numeric"`` (fixed info
keys; see docs/integrations.md and ``tests/integrations/test_torchrl.py``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


class TorchRLAgent:
    """The actor's logits network as an agent for ``fzmj-eval``'s library call (greedy, legal actions only)."""

    def __init__(self, net, name: str = "torchrl_ppo"):
        self.net = net
        self.name = name

    def act(self, obs, mask) -> np.ndarray:
        import torch

        from fzmj.agents import as_batch

        obs, mask = as_batch(obs, mask)
        with torch.no_grad():
            logits = self.net(torch.from_numpy(obs.reshape(len(obs), -1).astype(np.float32)))
        logits = logits.numpy()
        logits[mask == 0] = -np.inf
        return logits.argmax(axis=1).astype(np.int64)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frames", type=int, default=65536, help="learner steps (all envs together)")
    p.add_argument("--opponents", default="random", help="agent spec of the three opponents (default random)")
    p.add_argument("--hands", type=int, default=2000, help="evaluation hands (duplicate format)")
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import torch
    from _verdict import learning_verdict, report_training
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
    from torchrl.envs import GymWrapper, SerialEnv
    from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    from fzmj.integrations.gymnasium import SingleSeatEnv

    torch.set_num_threads(1)  # small MLP: threads cost more than they bring
    torch.manual_seed(args.seed)
    t0, c0 = time.perf_counter(), time.process_time()

    def make_env():
        return GymWrapper(
            SingleSeatEnv(
                opponents=args.opponents,
                seat="rotate",
                obs_dtype="float32",
                flatten=True,
                mask_in_obs=True,
                reward_scale=0.05,
            ),
            categorical_action_encoding=True,  # integer actions 0..61, not one-hot
        )

    env = SerialEnv(args.n_envs, make_env)
    env.set_seed(args.seed)
    n_obs = env.observation_spec["observation"].shape[-1]
    logits_net = nn.Sequential(nn.Linear(n_obs, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, 62))
    value_net = nn.Sequential(nn.Linear(n_obs, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, 1))
    # MaskedCategorical wants a bool mask; the env's is int8
    to_bool = TensorDictModule(lambda m: m.bool(), in_keys=["action_mask"], out_keys=["legal"])
    actor = ProbabilisticActor(
        TensorDictSequential(to_bool, TensorDictModule(logits_net, in_keys=["observation"], out_keys=["logits"])),
        in_keys={"logits": "logits", "mask": "legal"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        spec=env.full_action_spec["action"],
    )
    value = ValueOperator(value_net, in_keys=["observation"])

    frames_per_batch = 256 * args.n_envs
    collector = Collector(
        env, actor, frames_per_batch=frames_per_batch, total_frames=args.frames, auto_register_policy_transforms=False
    )
    buffer = ReplayBuffer(storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement())
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=value, average_gae=True)
    loss_fn = ClipPPOLoss(actor, value, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5)
    optim = torch.optim.Adam(loss_fn.parameters(), lr=3e-4)
    frames = 0
    for data in collector:
        frames += data.numel()
        for _ in range(4):  # epochs
            with torch.no_grad():
                advantage(data)
            buffer.extend(data.reshape(-1))
            for _ in range(frames_per_batch // 256):
                batch = buffer.sample(256)
                losses = loss_fn(batch)
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_fn.parameters(), 0.5)
                optim.step()
        collector.update_policy_weights_()
    collector.shutdown()  # closes the env too
    report_training(frames, t0, c0)

    learning_verdict(TorchRLAgent(logits_net), args.opponents, args.hands, args.seed)
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
