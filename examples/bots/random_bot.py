#!/usr/bin/env python3
"""A random bot for the fzmj-bot protocol (docs/protocol.md), standard library only.

    fzmj-eval --agents "exec:python3 examples/bots/random_bot.py" random --hands 400

It reads one JSON message per line on stdin and answers on stdout: the hello with its own
hello, each ``act`` request with one action per table (uniform among the legal ones, from a
generator reseeded by every ``reset``). Logs go to stderr; stdout carries only the protocol.
It asks for the legal actions only (``"obs": []``); ``--obs view`` (or ``planes``, or
``view,planes``, or ``last_claim``, ...) asks for more, as a real bot would, and ignores it (to time the protocol).
``--obs-version v3`` asks for observation v3 (the public history; docs/protocol.md).
"""

import gc
import json
import random
import sys


def options(argv):
    """(obs fields, obs_version or None) from ``--obs A,B`` and ``--obs-version V``; None if bad."""
    obs, version = [], None
    it = iter(argv)
    for flag in it:
        value = next(it, None)
        if flag == "--obs" and value is not None:
            obs = value.split(",")
        elif flag == "--obs-version" and value is not None:
            version = value
        else:
            return None
    return obs, version


def main() -> int:
    opts = options(sys.argv[1:])
    if opts is None:
        print(
            "usage: random_bot.py [--obs view|planes|last_claim|view,planes,...] [--obs-version v2|v3]", file=sys.stderr
        )
        return 2
    obs, version = opts
    rng = random.Random(0)
    out = sys.stdout
    # A parsed request is a tree of many small lists and dicts, freed by reference counting:
    # the cycle collector would only scan it again and again (3x slower parsing with "view").
    gc.disable()
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            if msg.get("version") != 1:
                print(f"random_bot: protocol version {msg.get('version')} not supported", file=sys.stderr)
                return 1
            rng.seed(msg.get("seed"))
            reply = {"type": "hello", "protocol": "fzmj-bot", "version": 1, "name": "random_bot", "obs": obs}
            if version is not None:
                reply["obs_version"] = version  # "v3": rows carry the v3 planes / view fields
        elif kind == "reset":
            rng.seed(msg.get("seed"))
            continue
        elif kind == "act":
            actions = [rng.choice(row["legal"]) for row in msg["rows"]]
            reply = {"type": "act", "id": msg["id"], "actions": actions}
        else:
            continue  # a message type this bot does not know: ignored (forward compatible)
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0  # stdin closed: the engine is done with us


if __name__ == "__main__":
    sys.exit(main())
