"""PPO self-play training for Fuzhou Mahjong (``fzmj-train``); see ``docs/training.md``.

``train.checkpoint.load_policy(path, device)`` gives a trained policy with
``act(obs, mask, deterministic) -> actions`` for agents and the evaluator.
"""
