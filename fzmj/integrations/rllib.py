"""Ray RLlib: a turn-based ``MultiAgentEnv`` over the AEC env (``pip install fzmj[rllib]``).

    from fzmj.integrations.rllib import FzmjMultiAgentEnv, action_masking_module_spec
    config = (PPOConfig().environment(FzmjMultiAgentEnv, env_config={"hands_per_game": 1})
              .multi_agent(policies={"main"}, policy_mapping_fn=lambda agent_id, episode, **kw: "main")
              .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"main": action_masking_module_spec()})))

Turn-based, as RLlib's own turn-based examples: each ``step`` returns the observation of the
seat that must act next (only that one); when the game ends, every seat gets its final
observation, its reward and ``terminated``. Rewards: each seat's score change (R11.4) ×
``reward_scale``, handed out when a hand ends (RLlib keeps the rewards of seats that are not
acting until their next step).

**Seats that never acted.** RLlib drops an agent that receives its first observation together
with the end of the episode (``MultiAgentEpisode.add_env_step``: "the agent has never stepped
... not part of this episode"), so a seat with no decision in a game (an opponent's 天胡 / 抢金,
a win on the first discard) would vanish from its metrics and its reward would be lost. So,
by default (``acknowledge_end=True``), when a game ends with such seats, they are asked once,
together, with the final table in view and only ``pass`` legal; the step after that ends the
game for all four with every seat's reward. A forced action has log-probability 0 under the
masked policy, so it adds no policy gradient; the value function learns the outcome.

**Observations**: ``Dict(observations=Box float32 (2673,), action_mask=Box float32 (62,))``, the
keys and dtypes RLlib's action-masking module reads (``action_mask`` is float: it takes its
log); use :func:`action_masking_module_spec` (RLlib's ``ActionMaskingTorchRLModule``, PPO).

**Illegal actions** end the game with reward -1 for that seat (``fzmj_env.env()``'s wrapper;
RLlib's env checker steps random actions). ``env_config`` keys: ``rules``, ``hands_per_game``,
``reward_scale``, ``acknowledge_end``, ``obs_version`` (2, or 3: ``(292 * 27,)`` observations with the
public history, docs/observation.md; ``RLlibAgent(module, obs_version=3)`` then). Tested with Ray
2.60.0 (which pins gymnasium 1.2.2: give it its own venv if your project pins another).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from fzmj_env.actions import NUM_ACTIONS
from fzmj_env.aec import AGENTS, env
from fzmj_env.checks import check_obs_version
from fzmj_env.core.state import A_PASS
from fzmj_env.encode import NUM_COLUMNS, obs_channels

__all__ = ["FzmjMultiAgentEnv", "RLlibAgent", "action_masking_module_spec"]

_ENV_CONFIG = {"rules", "hands_per_game", "reward_scale", "acknowledge_end", "obs_version"}


class FzmjMultiAgentEnv(MultiAgentEnv):
    """Four seats ``player_0..3``, turn-based (see the module docstring)."""

    def __init__(self, config: dict | None = None):
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - _ENV_CONFIG
        if unknown:
            raise ValueError(f"unknown env_config key(s) {sorted(unknown)}; known: {sorted(_ENV_CONFIG)}")
        self.acknowledge_end = bool(config.pop("acknowledge_end", True))
        self._aec = env(obs_dtype="float32", flatten=True, info="none", **config)  # validates the rest
        self.agents = self.possible_agents = list(AGENTS)
        self.obs_version = self._aec.unwrapped.obs_version
        channels = obs_channels(self.obs_version)
        space = gymnasium.spaces.Dict(
            {
                "observations": gymnasium.spaces.Box(0.0, 1.0, (channels * NUM_COLUMNS,), np.float32),
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = {a: gymnasium.spaces.Discrete(NUM_ACTIONS) for a in self.agents}
        self._acted: set = set()
        self._pending_end = None  # (obs, rewards) of a game that ended while seats wait to acknowledge

    # ------------------------------------------------------------------------------------------
    def _obs(self, agent: str, final: bool = False, ack: bool = False) -> dict:
        o = self._aec.observe(agent)
        mask = np.zeros(NUM_ACTIONS, dtype=np.float32)
        if ack or final:  # final: a valid (pass-only) mask; nothing is stepped with it
            mask[A_PASS] = 1.0
        else:
            mask[:] = o["action_mask"]
        return {"observations": o["observation"], "action_mask": mask}

    def _acting(self) -> tuple[dict, dict]:
        agent = self._aec.agent_selection
        return {agent: self._obs(agent)}, {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._aec.reset(seed=seed, options=options)
        self._acted = set()
        self._pending_end = None
        return self._acting()

    def step(self, action_dict: dict):
        no = dict.fromkeys(self.agents, False) | {"__all__": False}
        if self._pending_end is not None:  # the acknowledgement step: end the game for everyone
            rewards = self._pending_end
            self._pending_end = None
            obs = {a: self._obs(a, final=True) for a in self.agents}
            return obs, rewards, dict.fromkeys(self.agents, True) | {"__all__": True}, no, {}
        agent = self._aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"{agent} is to act; got actions for {sorted(action_dict)}")
        self._acted.add(agent)
        before = dict(self._aec._cumulative_rewards)
        self._aec.step(int(action_dict[agent]))
        # rewards of this step for every seat (PettingZoo accumulates them until a seat acts)
        after = self._aec._cumulative_rewards
        rewards = {a: float(after.get(a, 0.0) - (0.0 if a == agent else before.get(a, 0.0))) for a in self.agents}
        if not all(self._aec.terminations.values()):
            obs, infos = self._acting()
            # RLlib wants a reward (0 included) for every seat that receives an observation
            rewards = {a: r for a, r in rewards.items() if r != 0.0 or a in obs}
            return obs, rewards, no, no, infos
        # game over
        waiting = [a for a in self.agents if a not in self._acted]
        if self.acknowledge_end and waiting:
            self._pending_end = rewards
            return {a: self._obs(a, ack=True) for a in waiting}, dict.fromkeys(waiting, 0.0), no, no, {}
        obs = {a: self._obs(a, final=True) for a in self.agents}
        return obs, rewards, dict.fromkeys(self.agents, True) | {"__all__": True}, no, {}


def action_masking_module_spec(hidden=(256, 256)):
    """An ``RLModuleSpec`` of RLlib's own ``ActionMaskingTorchRLModule`` (PPO) for this env."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": [], "vf_share_layers": False},
    )


class RLlibAgent:
    """An RLlib RLModule of this env (e.g. ``algo.get_module("main")``) as an agent for ``fzmj-eval``'s library call.

    Greedy: the most likely legal action of the module's action-distribution inputs.
    """

    def __init__(self, module, name: str = "rllib", obs_version: int | str = 2):
        self.module = module
        self.name = name
        self.obs_version = check_obs_version(obs_version)  # the layout the module was trained on
        self._channels = obs_channels(self.obs_version)

    def act(self, obs, mask) -> np.ndarray:
        import torch

        from fzmj.agents import as_batch

        obs, mask = as_batch(obs, mask, channels=self._channels)
        batch = {
            "obs": {
                "observations": torch.from_numpy(obs.reshape(len(obs), -1).astype(np.float32)),
                "action_mask": torch.from_numpy(mask.astype(np.float32)),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"]
        logits = logits.numpy().copy()
        logits[mask == 0] = -np.inf  # the module masks already; this keeps the argmax legal regardless
        return logits.argmax(1).astype(np.int64)
