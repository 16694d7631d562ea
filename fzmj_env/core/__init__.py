"""The Numba rules engine: the only place where a rule of docs/rules.md lives."""
