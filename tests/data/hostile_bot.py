"""A bot that misbehaves on purpose (tests/test_hostile_bots.py).

    hostile_bot.py HELLO ACT

HELLO and ACT are each ``ok`` (a proper answer), a mode below, or ``@PATH``: a file holding the
raw bytes to write instead of the answer (a newline is added; ``@ID@`` is replaced by the request's id,
``@FIRST@`` by the list of each row's first legal action, ``@EACH(X)@`` by a list holding X once
per row). Modes: ``exit`` (exit at once),
``close`` (close stdout, keep running), ``partial-exit`` / ``partial-hang`` (half a line, then
exit / sleep), ``blank`` (blank lines forever), ``sleep``, ``kill`` (SIGKILL itself), ``after:K:X``
(answer properly K times, then do X).
"""

import json
import os
import re
import signal
import sys
import time


def send(b: bytes) -> None:
    os.write(1, b)


def misbehave(mode: str, msg: dict) -> None:
    if mode == "exit":
        os._exit(3)
    if mode == "close":
        os.close(1)
        time.sleep(60)
    if mode.startswith("partial"):
        send(b'{"type": "act", "id": ')
        if mode == "partial-exit":
            os._exit(0)
        time.sleep(60)
    if mode == "blank":
        while True:
            send(b"\n" * 4096)
    if mode == "sleep":
        time.sleep(60)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    with open(mode[1:], "rb") as f:
        raw = f.read()
    rid = str(msg.get("id", 0)).encode()
    first = json.dumps([r["legal"][0] for r in msg.get("rows", [])]).encode()
    n = len(msg.get("rows", []))
    raw = re.sub(rb"@EACH\((.*?)\)@", lambda m: b"[" + b", ".join([m.group(1)] * n) + b"]", raw)
    send(raw.replace(b"@ID@", rid).replace(b"@FIRST@", first) + b"\n")


hello, act = sys.argv[1], sys.argv[2]
count = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if hello == "ok":
            send(b'{"type": "hello", "protocol": "fzmj-bot", "version": 1, "obs": []}\n')
        else:
            misbehave(hello, msg)
    elif msg["type"] == "act":
        count += 1
        mode = act
        if act.startswith("after:"):
            _, k, rest = act.split(":", 2)
            mode = "ok" if count <= int(k) else rest
        if mode == "ok":
            send(
                json.dumps({"type": "act", "id": msg["id"], "actions": [r["legal"][0] for r in msg["rows"]]}).encode()
                + b"\n"
            )
        else:
            misbehave(mode, msg)
