"""Pages for people: the replay viewer (``fzmj-replay``) and the local play server (``fzmj-play``).

This package sits above ``agents/`` (the play server takes agent specs); nothing in the env core
imports it. The pages never apply a rule: Python replays or steps the engine and hands the page
finished snapshots (``frames.py``) and the engine's legal actions.
"""
