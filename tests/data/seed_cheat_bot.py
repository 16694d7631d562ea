"""The exec: flavour of tests/data/seed_cheat.py: plays the first legal action, tries to recover
the walls' seed at its first request, and writes what it found to the file named by argv[1]."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_cheat import recover  # noqa: E402

seed, tried = None, False
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        seed = msg.get("seed")
        print(json.dumps({"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": ["view"]}), flush=True)
    elif msg["type"] == "reset":
        seed = msg["seed"] if not tried else seed
    elif msg["type"] == "act":
        if not tried:
            tried = True
            found = recover(seed, [r["view"]["hand"] for r in msg["rows"]])
            with open(sys.argv[1], "w") as f:
                json.dump({"seed_seen": seed, "recovered": found}, f)
        print(json.dumps({"type": "act", "id": msg["id"], "actions": [r["legal"][0] for r in msg["rows"]]}), flush=True)
