"""fzmj: everything above the environment, under one installed name.

Layers (each imports only the ones below it; ``docs/layers.md``):

* ``fzmj.web``, ``fzmj.integrations``: pages for people and adapters for RL libraries;
* ``fzmj.train``: the PPO self-play trainer (folder ``fzmj/train/``);
* ``fzmj.agents``: agents, agent specs, evaluation and leagues (folder ``fzmj/agents/``);
* ``fzmj_env``: the rules engine and the environments (its own top-level name).

One namespace keeps our names from colliding with a user's ``agents.py`` or ``train.py``. The
repository's top-level ``agents`` and ``train`` are links to the folders here, for browsing only.
"""


def __getattr__(name: str):
    """``fzmj.__version__``: the package's version (``fzmj_env/_version.py``), read on first use so
    that ``import fzmj`` stays light."""
    if name == "__version__":
        from fzmj_env._version import __version__

        return __version__
    raise AttributeError(f"module 'fzmj' has no attribute {name!r}")
