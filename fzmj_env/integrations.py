"""Moved: ``fzmj_env.integrations`` is now ``fzmj.integrations`` (it sits above the agents, which the env never imports)."""

raise ImportError("fzmj_env.integrations moved to fzmj.integrations: change the import to 'fzmj.integrations'")
