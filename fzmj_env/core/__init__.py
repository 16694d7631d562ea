"""The Numba rules engine: the only place where a rule of RULES.md lives."""
