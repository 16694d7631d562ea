"""``fzmj-play``: a person plays one seat against agents, in a local web page.

    fzmj-play --agents heuristic heuristic random --seat 0 --hands 4 --seed 7

The server (standard library ``http.server``, bound to 127.0.0.1 only) holds one ``Game``.
The page shows the person's view (R12) drawn by the replay viewer's renderer; the legal
actions are the engine's mask, sent as buttons and clickable tiles. Every request is checked
against the engine before anything changes: an action not legal for the person now, a request
while another seat is to act, or a stale one (an old state version) gets an error and changes
nothing. The finished game is saved as a record (``fzmj_env.record``), ready for fzmj-replay.
"""

from __future__ import annotations

import errno
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np

from fzmj.agents import SPEC_HELP, AgentSpecError, make_agent, reset_agent
from fzmj_env.actions import action_name
from fzmj_env.core import engine, state
from fzmj_env.encode import NUM_CHANNELS, encode_table
from fzmj_env.game import Game, IllegalActionError
from fzmj_env.record import make_record, replay, save_record
from fzmj_env.rules import DEFAULT_RULES, load_rules
from fzmj_env.validate import OneLineParser

from .frames import describe_step, end_frame, result_breakdown, snapshot
from .replay import asset, fill, page_meta, script_json

MAX_LOG = 200


def play_agents(agents: list, hands: int = 1, seed: int = 0, rules=DEFAULT_RULES) -> dict:
    """A record of four agents (objects or specs, seat order) playing a ``hands``-hand match."""
    if len(agents) != 4:
        raise ValueError(f"need 4 agents, one per seat, got {len(agents)}")
    objs = [make_agent(a) for a in agents]
    for s, a in enumerate(objs):
        reset_agent(a, seed * 4 + s)
    game = Game(rules, hands_per_game=hands)
    game.reset(seed=seed)
    obs = np.zeros((NUM_CHANNELS, 27), dtype=np.int8)
    while not game.done:
        s = game.seat
        encode_table(game.buf, 0, s, obs)
        game.step(int(np.asarray(objs[s].act(obs[None], game.mask[None])).reshape(-1)[0]))
    rec = make_record(game)
    rec["meta"] = {"source": "play_agents", "seats": [str(getattr(a, "name", "agent")) for a in objs]}
    return rec


class PlayError(ValueError):
    """A request the game refuses (illegal, not the person's turn, stale); the state is unchanged."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class Session:
    """One game: the person's seat, the agents of the other seats, and what the page shows.

    ``act`` and ``next_hand`` are the only ways to change it; both check the request first.
    """

    def __init__(
        self,
        agents: list,
        seat: int,
        hands: int = 1,
        seed: int = 0,
        rules=DEFAULT_RULES,
        record_path: Path | None = None,
    ):
        if not 0 <= seat <= 3:
            raise ValueError(f"seat must be 0..3, got {seat}")
        if len(agents) != 3:
            raise ValueError(f"need 3 agents for the other seats, got {len(agents)}")
        self.seat = seat
        self.rules = load_rules(rules)
        self.agents: list = []
        others = iter(agents)
        for s in range(4):
            self.agents.append(None if s == seat else next(others))
        self.names = ["you" if a is None else str(getattr(a, "name", "agent")) for a in self.agents]
        for s, a in enumerate(self.agents):
            if a is not None:
                reset_agent(a, seed * 4 + s)
        self.game = Game(self.rules, hands_per_game=hands)
        self.game.reset(seed=seed)
        self._scratch = Game(self.rules, hands_per_game=1)  # replays a hand-ending step to keep its final state
        self._obs = np.zeros((NUM_CHANNELS, 27), dtype=np.int8)
        self.version = 0
        self.log: list[str] = []
        self.pending_end: dict | None = None  # the last finished hand, shown until the person goes on
        self.record_path = record_path
        self.saved: Path | None = None
        self.lock = threading.Lock()
        self._advance()

    # ---- the game ------------------------------------------------------------------------
    def _step(self, action: int) -> None:
        """One engine step for the acting seat, with the lines it caused and a finished hand kept."""
        g = self.game
        seat = g.seat
        before = snapshot(g, self.seat)
        hand_no = int(g.view.m[state.HAND_NO])
        self._scratch.buf[:] = g.buf  # 2 KB: cheap enough to do at every step
        code = g.step(action)
        result = g.result if code in (engine.STEP_HAND_OVER, engine.STEP_GAME_OVER) else None
        if result is not None:
            # the match has already dealt the next hand: replay this step on the copy, told
            # that this hand is the last one, to keep the hand's final state for the page
            self._scratch.view.m[state.HANDS_PER_GAME] = hand_no + 1
            self._scratch._refresh()
            self._scratch.step(action)
            end = end_frame(self._scratch, self.seat)
            end["hand"] = hand_no
            after = end
            start = [a - b for a, b in zip(end["scores"], result["points"], strict=True)]
            self.pending_end = {"frame": end, "result": result_breakdown(result, self._scratch, start)}
        else:
            after = snapshot(g, self.seat)
        lines = describe_step(before, after, seat, action, self.seat, result)
        self.log.extend(f"hand {hand_no + 1}: {line}" for line in lines)
        del self.log[:-MAX_LOG]

    def _advance(self) -> None:
        """Let the agents act until the person must decide, a hand ends, or the game is over."""
        g = self.game
        while not g.done and self.pending_end is None and g.seat != self.seat:
            s = g.seat
            encode_table(g.buf, 0, s, self._obs)
            a = int(np.asarray(self.agents[s].act(self._obs[None], g.mask[None])).reshape(-1)[0])
            self._step(a)  # an illegal agent action raises IllegalActionError: an agent bug
        if g.done and self.saved is None and self.record_path is not None:
            self.saved = self.save(self.record_path)

    def _check(self, version) -> None:
        if not isinstance(version, int) or isinstance(version, bool) or version != self.version:
            raise PlayError(
                f"stale request: the game is at version {self.version}, the request was for {version!r}; reload the state",
                409,
            )

    def act(self, action, version) -> None:
        """The person's action (an int from the legal list), for state ``version``."""
        with self.lock:
            self._check(version)
            if self.pending_end is not None:
                raise PlayError("the hand is over: continue to the next hand first", 409)
            if self.game.done:
                raise PlayError("the game is over", 409)
            if self.game.seat != self.seat:
                raise PlayError(f"not your turn: seat {self.game.seat} is to act", 409)
            if not isinstance(action, int) or isinstance(action, bool):
                raise PlayError(f"action must be an integer, got {action!r}")
            try:
                self._step(action)  # Game.step checks the engine's mask before anything changes
            except IllegalActionError as e:
                raise PlayError(str(e)) from None
            self.version += 1
            self._advance()

    def next_hand(self, version) -> None:
        """Leave the result of the finished hand and let play go on."""
        with self.lock:
            self._check(version)
            if self.pending_end is None:
                raise PlayError("no finished hand to leave", 409)
            self.pending_end = None
            self.version += 1
            self._advance()

    def record(self) -> dict:
        rec = make_record(self.game)
        rec["meta"] = {"source": "fzmj-play", "seats": self.names}
        return rec

    def save(self, path: Path) -> Path:
        rec = self.record()
        replay(rec)  # never save a record that does not replay
        save_record(rec, path)
        print(f"game over: scores {self.game.scores}; record saved to {path}", flush=True)
        return path

    # ---- what the page gets --------------------------------------------------------------
    def state(self) -> dict:
        with self.lock:
            g = self.game
            if self.pending_end is not None:
                frame, result = self.pending_end["frame"], self.pending_end["result"]
            else:
                frame, result = snapshot(g, self.seat), None
                frame.update(step=None, action=None, events=[])
            mine = self.pending_end is None and not g.done and g.seat == self.seat
            return {
                "version": self.version,
                "seat": self.seat,
                "hands": g.hands_per_game,
                "frame": frame,
                "result": result,
                "legal": [[a, action_name(a)] for a in g.legal_actions] if mine else [],
                "your_turn": mine,
                "hand_over": self.pending_end is not None,
                "done": g.done and self.pending_end is None,
                "scores": g.scores,
                "log": self.log[-40:],
                "saved": str(self.saved) if self.saved else None,
            }


class PlayServer(HTTPServer):
    """The HTTP server of one session; bound before the session exists (a port in use fails
    before any game starts), the session attached with :meth:`attach`."""

    session: Session | None = None
    page: str = ""

    def attach(self, session: Session) -> None:
        self.page = play_page(session)
        self.session = session


def _handler():
    class Handler(BaseHTTPRequestHandler):
        server_version = "fzmj-play"

        def log_message(self, format, *args):  # quiet: the terminal shows only our own lines
            pass

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj) -> None:
            self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

        def do_GET(self):
            session = self.server.session
            if self.path in ("/", "/index.html"):
                self._send(200, self.server.page.encode("utf-8"), "text/html; charset=utf-8")
            elif self.path == "/state":
                self._json(200, session.state())
            elif self.path == "/record":  # the walls are in it: only once the game is over
                if session.game.done:
                    self._json(200, session.record())
                else:
                    self._json(409, {"error": "the record is available once the game is over"})
            else:
                self._json(404, {"error": f"no such page: {self.path}"})

        def do_POST(self):
            session = self.server.session
            try:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}") if n <= 65536 else None
                if not isinstance(body, dict):
                    raise PlayError("the request body must be a JSON object")
                if self.path == "/act":
                    session.act(body.get("action"), body.get("version"))
                elif self.path == "/next":
                    session.next_hand(body.get("version"))
                else:
                    self._json(404, {"error": f"no such action: {self.path}"})
                    return
            except PlayError as e:
                self._json(e.status, {"error": str(e), "state": session.state()})
                return
            except json.JSONDecodeError as e:
                self._json(400, {"error": f"the request body is not JSON ({e})"})
                return
            except Exception as e:  # noqa: BLE001 - an agent failed: say so on the page and the terminal
                sys.stderr.write(f"fzmj-play: error: {type(e).__name__}: {e}\n")
                self._json(500, {"error": f"{type(e).__name__}: {e}"})
                return
            self._json(200, session.state())

    return Handler


def play_page(session: Session) -> str:
    """The play page: the viewer's renderer plus the play controls, all inline."""
    return fill(
        asset("play.html"),
        {
            "CSS": asset("viewer.css"),
            "META": script_json(page_meta(session.names)),
            "VIEWER_JS": asset("viewer.js"),
            "PLAY_JS": asset("play.js"),
        },
    )


def make_server(session: Session | None, port: int = 0) -> PlayServer:
    """An HTTP server on 127.0.0.1 (``port`` 0: a free one) for ``session`` (or attach one
    later). Raises OSError if the port is taken."""
    server = PlayServer(("127.0.0.1", port), _handler())
    if session is not None:
        server.attach(session)
    return server


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog="fzmj-play",
        description="Play one seat against three agents in a local web page.",
        epilog=f"Agent specs: {SPEC_HELP}.",
    )
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="the agents of the other three seats, in seat order after yours (1 spec: all three)",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat, 0-3 (default 0)")
    p.add_argument("--hands", type=int, default=1, help="hands in the match (default 1)")
    p.add_argument("--seed", type=int, default=None, help="seed of the walls and agents (default: random)")
    p.add_argument("--rules", default=DEFAULT_RULES, help=f"rule preset (default {DEFAULT_RULES})")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)")
    p.add_argument("--out", metavar="RECORD.json", help="where to save the finished game (default fzmj-play-SEED.json)")
    args = p.parse_args(argv)
    if not 0 <= args.seat <= 3:
        p.error(f"--seat must be 0..3, got {args.seat}")
    if args.hands < 1:
        p.error("--hands must be >= 1")
    if len(args.agents) == 1:
        args.agents = args.agents * 3
    if len(args.agents) != 3:
        p.error(f"--agents takes 1 or 3 specs (the other seats), got {len(args.agents)}")
    if not 0 <= args.port <= 65535:
        p.error(f"--port must be 0..65535, got {args.port}")
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    if not 0 <= seed < 2**64:
        p.error("--seed must be in 0..2**64-1")
    out = Path(args.out) if args.out else Path(f"fzmj-play-{seed}.json")
    if not out.parent.is_dir():
        p.error(f"--out: directory {str(out.parent)!r} does not exist")
    try:
        rules = load_rules(args.rules)
    except ValueError as e:
        p.error(f"--rules: {e}")
    try:
        agents = [make_agent(s) for s in args.agents]
    except AgentSpecError as e:
        p.error(str(e))
    try:
        server = make_server(None, args.port)  # first: a port in use fails before any game starts
    except OSError as e:
        why = "is already in use" if e.errno == errno.EADDRINUSE else f"cannot be opened ({e.strerror})"
        p.error(f"port {args.port} on 127.0.0.1 {why}")
    t0 = time.perf_counter()
    session = Session(agents, args.seat, hands=args.hands, seed=seed, rules=rules, record_path=out)
    server.attach(session)
    host, port = server.server_address[:2]
    print(
        f"fzmj-play: seat {args.seat} against {', '.join(args.agents)}; {args.hands} hand(s), seed {seed}; ready in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    print(f"open http://{host}:{port}/  (Ctrl-C to stop; the game is saved to {out} when it ends)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nfzmj-play: stopped" + ("" if session.saved else " before the game ended (no record saved)"))
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
