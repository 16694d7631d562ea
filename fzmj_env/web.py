"""Moved: ``fzmj_env.web`` is now ``fzmj.web`` (it sits above the agents, which the env never imports)."""

raise ImportError("fzmj_env.web moved to fzmj.web: change the import to 'fzmj.web'")
