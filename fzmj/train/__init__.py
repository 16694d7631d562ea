"""PPO self-play training for Fuzhou Mahjong (``fzmj-train``); see ``docs/training.md``.

``fzmj.agents.checkpoint.load_policy(path, device)`` gives a trained policy with
``act(obs, mask, deterministic) -> actions`` for agents and the evaluator.
"""

if __name__ != "fzmj.train":  # the repository's top-level `train` is a link for browsing, not a second name
    raise ImportError(f"import fzmj.train, not {__name__}: one package, one name (docs/layers.md)")


import fzmj_env
from fzmj_env._numba_cache import clear_stale_cache

from .. import agents

# selfplay_buffer.py holds cached kernels that call the engine's and the heuristic's
clear_stale_cache(__path__[0], depends_on=(*fzmj_env.__path__, *agents.__path__))
