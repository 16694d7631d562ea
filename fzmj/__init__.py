"""fzmj: everything above the environment, under one installed name.

Layers (each imports only the ones below it; ``docs/layers.md``):

* ``fzmj.web``, ``fzmj.integrations``: pages for people and adapters for RL libraries;
* ``fzmj.train``: the PPO self-play trainer (source folder ``train/``);
* ``fzmj.agents``: agents, agent specs, evaluation and leagues (source folder ``agents/``);
* ``fzmj_env``: the rules engine and the environments (its own top-level name).

One namespace keeps our names from colliding with a user's ``agents.py`` or ``train.py``.
"""

from pathlib import Path

# In a source checkout ``agents/`` and ``train/`` sit beside this folder, not inside it (an
# installed wheel has them inside): let ``fzmj.agents`` and ``fzmj.train`` resolve to them, so a
# checkout, a git worktree and an editable install import the same files.
_checkout = Path(__file__).resolve().parent.parent
if (_checkout / "agents" / "__init__.py").is_file() and not (Path(__file__).parent / "agents").exists():
    __path__.append(str(_checkout))  # noqa: F821  (a package's __path__)
