"""PPO self-play training for Fuzhou Mahjong (``fzmj-train``); see ``docs/training.md``.

``agents.policy.load_policy(path, device)`` (also ``train.checkpoint.load_policy``) gives a trained policy with
``act(obs, mask, deterministic) -> actions`` for agents and the evaluator.
"""
