"""A first-legal bot that outlives the end of its stdin (tests/test_hostile_bots.py).

    stubborn_bot.py PID_DIR [setsid|daemon]

It writes its pid into PID_DIR; ``setsid`` also starts a child in a new session (out of the
bot's process group), ``daemon`` a double-forked grandchild in a new session (out of its tree);
each writes its pid there too. At the end of stdin, every one of them keeps sleeping.
"""

import json
import os
import signal
import sys
import time

pid_dir, extra = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
signal.signal(signal.SIGTERM, signal.SIG_IGN)


def mark(kind: str) -> None:
    with open(os.path.join(pid_dir, f"{kind}-{os.getpid()}"), "w") as f:
        f.write(str(os.getpid()))


def sleep_forever() -> None:
    os.closerange(0, 3)  # hold no pipe of the engine: only a kill ends it
    while True:
        time.sleep(60)


mark("bot")
if extra == "setsid" and os.fork() == 0:
    os.setsid()
    mark("setsid")
    sleep_forever()
if extra == "daemon" and os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        mark("daemon")
        sleep_forever()
    os._exit(0)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": []}), flush=True)
    elif msg["type"] == "act":
        print(json.dumps({"type": "act", "id": msg["id"], "actions": [r["legal"][0] for r in msg["rows"]]}), flush=True)
while True:  # stdin ended: ignore it
    time.sleep(60)
