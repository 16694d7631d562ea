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
import hmac
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np

from fzmj.agents import SPEC_HELP, AgentSpecError, make_agent, reset_agent
from fzmj_env.actions import action_name
from fzmj_env.checks import MAX_HANDS_PER_GAME, short_repr
from fzmj_env.cli import OneLineParser
from fzmj_env.core import engine, state
from fzmj_env.encode import encode_table
from fzmj_env.game import Game, IllegalActionError
from fzmj_env.record import make_record, replay
from fzmj_env.rules import DEFAULT_RULES, load_rules
from fzmj_env.seeding import agent_key, draw_seed, keyed_agent_seed

from .frames import describe_step, end_frame, result_breakdown, snapshot
from .outpath import check_out_path, write_atomic
from .replay import asset, fill, json_safe, page_meta, replay_html, script_json
from .review import (  # one code path with fzmj-replay --review
    ReviewError,
    _probs,
    agent_name,
    danger_rows,
    observation_planes,
    top_actions,
)

MAX_LOG = 200


def play_agents(
    agents: list, hands: int = 1, seed: int = 0, rules=DEFAULT_RULES, agent_seed: int | None = None
) -> dict:
    """A record of four agents (objects or specs, seat order) playing a ``hands``-hand match.
    ``agent_seed``: the key of the agents' reset seeds (default: derived from ``seed``, one-way)."""
    if len(agents) != 4:
        raise ValueError(f"need 4 agents, one per seat, got {len(agents)}")
    objs = [make_agent(a) for a in agents]
    key = agent_key(seed) if agent_seed is None else agent_seed
    game = Game(rules, hands_per_game=hands)
    for s, a in enumerate(objs):
        reset_agent(a, _agent_seed(key, s), game.rules)
    game.reset(seed=seed)
    obs = np.zeros((observation_planes(*objs), 27), dtype=np.int8)
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


def _bounded_int(text: str) -> int:
    """A JSON integer of the request body: at most 18 digits (Python's own limit, 4,300 digits, is
    a ``ValueError`` that used to reach the client as a 500)."""
    if len(text.lstrip("-")) > 18:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits")
    return int(text)


MAX_STEPS = 400  # other seats' steps kept for the page to pace through (a hand has ~100-200)
_CALLS = {
    "chi": "吃 chi",
    "peng": "碰 peng",
    "exposed_kong": "杠 kong",
    "added_kong": "杠 kong",
    "concealed_kong": "杠 kong",
}


def _call(before: dict, after: dict, result: dict | None) -> str | None:
    """The call a step made, as the table announces it (吃 chi / 碰 peng / 杠 kong / 胡 hu), or None."""
    if result is not None and result.get("winner") is not None:
        return "胡 hu"
    for b, a in zip(before["seats"], after["seats"], strict=True):
        if len(a["melds"]) > len(b["melds"]) or [m[0] for m in a["melds"]] != [m[0] for m in b["melds"]]:
            return _CALLS.get(a["melds"][-1][0] if len(a["melds"]) > len(b["melds"]) else "added_kong")
    return None


class AgentError(RuntimeError):
    """An agent of another seat failed (raised, or answered an action the engine refuses)."""


def _agent_seed(key: int, seat: int) -> int:
    """The reset seed of the agent at ``seat``: a keyed hash that tells it nothing about the walls."""
    return keyed_agent_seed(key, seat)


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
        reviewer=None,
        agent_seed: int | None = None,
        danger=None,
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
        self.agent_seed = agent_key(seed) if agent_seed is None else agent_seed  # never shown to the agents
        for s, a in enumerate(self.agents):
            if a is not None:
                reset_agent(a, _agent_seed(self.agent_seed, s), self.rules)
        self.game = Game(self.rules, hands_per_game=hands)
        self.game.reset(seed=seed)
        self._scratch = Game(self.rules, hands_per_game=1)  # replays a hand-ending step to keep its final state
        self._obs = np.zeros((observation_planes(*self.agents), 27), dtype=np.int8)  # v3 if an agent reads it
        self.version = 0
        self.log: list[str] = []
        self.pending_end: dict | None = None  # the last finished hand, shown until the person goes on
        self.record_path = record_path
        self.saved: Path | None = None
        self.save_error: str | None = None
        self.steps: list[dict] = []  # the other seats' steps since the person's last request
        self.reviewer = reviewer  # an agent whose suggestion the page may show at the person's turns
        self.danger = danger  # a belief model: each discard's deal-in probability, shown with the hint
        self._hint: tuple[int, dict | None] | None = None
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
        if seat != self.seat and len(self.steps) < MAX_STEPS:  # what the page paces through
            # describe_step already leaves out another seat's claim answer (private, R12): dropping a
            # first line here again would drop a public one (the window's resolution, a flower laid out)
            frame = None if result is not None else after
            self.steps.append({"seat": seat, "lines": lines, "call": _call(before, after, result), "frame": frame})

    def _advance(self) -> None:
        """Let the agents act until the person must decide, a hand ends, or the game is over."""
        g = self.game
        while not g.done and self.pending_end is None and g.seat != self.seat:
            s = g.seat
            encode_table(g.buf, 0, s, self._obs)
            who = f"the agent of seat {s} ({self.names[s]})"
            try:
                a = int(np.asarray(self.agents[s].act(self._obs[None], g.mask[None])).reshape(-1)[0])
            except Exception as e:  # noqa: BLE001 - any failure of user code: one line, the game unchanged
                raise AgentError(f"{who} failed: {type(e).__name__}: {e}".replace("\n", " ")) from None
            try:
                self._step(a)
            except IllegalActionError as e:
                raise AgentError(f"{who} chose an illegal action: {e}".replace("\n", " ")) from None
        if g.done and self.saved is None and self.save_error is None and self.record_path is not None:
            try:
                self.saved = self.save(self.record_path)
            except OSError as e:  # the page still offers the record for download
                self.save_error = f"cannot save the record to {self.record_path}: {e.strerror or e}"
                sys.stderr.write(f"fzmj-play: error: {self.save_error}; download it from the page\n")

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
            if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < state.NUM_ACTIONS:
                raise PlayError(f"action must be an integer in 0..{state.NUM_ACTIONS - 1}, got {short_repr(action)}")
            self.steps = []
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
            self.steps = []
            self._advance()

    def _hint_now(self) -> dict | None:
        if self._hint is None or self._hint[0] != self.version:  # one evaluation per decision
            try:
                self._hint = (self.version, _hint_of(self))
            except ReviewError as e:  # a failing reviewer costs the hint, never the game
                self._hint = (self.version, {"error": str(e)})
        return self._hint[1]

    def record(self) -> dict:
        rec = make_record(self.game)
        rec["meta"] = {"source": "fzmj-play", "seats": self.names, "agent_seed": self.agent_seed}
        return rec

    def save(self, path: Path) -> Path:
        rec = self.record()
        replay(rec)  # never save a record that does not replay
        write_atomic(path, json.dumps(rec, ensure_ascii=False, indent=1))
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
                "last_hand": g.done,  # the hand shown (or played) is the match's last
                "steps": self.steps,
                "done": g.done and self.pending_end is None,
                "scores": g.scores,
                "log": self.log[-40:],
                "saved": str(Path(self.saved).resolve()) if self.saved else None,
                "save_error": self.save_error,
                "hint": self._hint_now() if mine and self.reviewer is not None else None,
            }


MAX_BODY = 64 * 1024  # a request body is a few dozen bytes; anything far larger is refused unread
SOCKET_TIMEOUT = 10.0  # seconds a connection may stay idle or half-sent before it is dropped


def _hint_of(session: Session) -> dict:
    """The reviewer's top actions for the person now, from the person's observation only."""
    g = session.game
    obs = np.zeros((observation_planes(session.reviewer, session.danger), 27), dtype=np.int8)
    encode_table(g.buf, 0, session.seat, obs)
    mask = g.mask
    probs, value = _probs(session.reviewer, obs[None], mask[None].copy())  # checked: legal, finite, >= 0
    p = probs[0]
    _, order = top_actions(p, mask, 3)
    return {
        "agent": agent_name(session.reviewer),
        "top": [[a, round(float(p[a]), 4), action_name(a)] for a in order],
        "value": None if value is None else round(float(value[0]), 4),
        "danger": danger_rows(session.danger, obs[None], g.mask[None])[0],
    }


class PlayServer(ThreadingHTTPServer):
    """The HTTP server of one session; bound before the session exists (a port in use fails
    before any game starts), the session attached with :meth:`attach`.

    One thread per connection (an idle or half-sent request never blocks the others; each
    socket times out), and every request must carry the session's ``token`` and a ``Host``
    (and ``Origin``, when the browser sends one) naming this server on 127.0.0.1/localhost:
    another web page or a DNS-rebound name can neither read nor play the game.
    """

    daemon_threads = True
    session: Session | None = None
    page: str = ""

    def __init__(self, address, handler, token: str | None = None):
        super().__init__(address, handler)
        self.token = token or secrets.token_urlsafe(18)
        port = self.server_address[1]
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    def attach(self, session: Session) -> None:
        self.page = play_page(session, self.token)
        self.session = session

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/?token={self.token}"

    def handle_error(self, request, client_address) -> None:  # one line, never a traceback
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return  # the browser went away or stalled: nothing to report
        sys.stderr.write(f"fzmj-play: error while answering a request: {type(exc).__name__}: {exc}\n")


class RequestError(Exception):
    """A request refused before it reaches the game (bad body, bad token, wrong host)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _handler():
    # Long only because it holds the request-handler class; each of its methods is short.
    class Handler(BaseHTTPRequestHandler):
        server_version = "fzmj-play"
        timeout = SOCKET_TIMEOUT  # applied to the connection's socket by StreamRequestHandler
        protocol_version = "HTTP/1.0"

        def log_message(self, format, *args):  # quiet: the terminal shows only our own lines
            pass

        def _send(self, status: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Referrer-Policy", "no-referrer")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
            except (ConnectionError, TimeoutError):
                self.close_connection = True  # the browser left early: nothing to say

        def _json(self, status: int, obj, extra: dict | None = None) -> None:
            body = json.dumps(json_safe(obj), ensure_ascii=False, allow_nan=False).encode("utf-8")
            self._send(status, body, "application/json; charset=utf-8", extra)

        def _route(self) -> tuple[str, dict]:
            """The path and query of an allowed request; ``RequestError`` for a foreign one."""
            srv = self.server
            if self.headers.get("Host", "") not in srv.hosts:
                raise RequestError(403, "wrong Host header: open the address fzmj-play printed")
            origin = self.headers.get("Origin")
            if origin is not None and origin not in srv.origins:
                raise RequestError(403, f"requests from another origin ({origin[:80]}) are refused")
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            token = self.headers.get("X-Fzmj-Token") or (query.get("token") or [""])[0]
            if url.path != "/favicon.ico" and not hmac.compare_digest(token.encode(), srv.token.encode()):
                raise RequestError(403, "missing or wrong session token: open the address fzmj-play printed")
            return url.path, query

        def _body(self) -> dict:
            raw = self.headers.get("Content-Length")
            if raw is None or not raw.strip().isdigit():
                raise RequestError(400, "the request needs a numeric Content-Length")
            n = int(raw)
            if n > MAX_BODY:
                raise RequestError(413, f"the request body is {n} bytes; at most {MAX_BODY} are accepted")
            data = self.rfile.read(n)
            if len(data) < n:
                raise RequestError(400, "the request body is shorter than its Content-Length")
            try:
                body = json.loads(data.decode("utf-8"), parse_int=_bounded_int) if data else {}
            except UnicodeDecodeError:
                raise RequestError(400, "the request body is not UTF-8") from None
            except ValueError as e:  # not JSON, or an integer of thousands of digits
                raise RequestError(400, f"the request body is not JSON this page sends ({str(e)[:120]})") from None
            except RecursionError:
                raise RequestError(400, "the request body is nested too deeply") from None
            if not isinstance(body, dict):
                raise RequestError(400, "the request body must be a JSON object")
            return body

        def do_GET(self):
            try:
                path, query = self._route()
            except RequestError as e:
                return self._json(e.status, {"error": str(e)})
            session = self.server.session
            if path in ("/", "/index.html"):
                self._send(200, self.server.page.encode("utf-8"), "text/html; charset=utf-8")
            elif path == "/favicon.ico":
                self._send(200, FAVICON.encode(), "image/svg+xml")
            elif path == "/state":
                self._json(200, session.state())
            elif path == "/replay" and session.game.done:  # the finished game as a replay page
                self._send(
                    200, replay_html(session.record(), title="fzmj-play replay").encode(), "text/html; charset=utf-8"
                )
            elif path == "/record":  # the walls are in it: only once the game is over
                if session.game.done:
                    name = Path(session.record_path).name if session.record_path else "fzmj-play.json"
                    extra = {"Content-Disposition": f'attachment; filename="{name}"'} if "download" in query else None
                    self._json(200, session.record(), extra)
                else:
                    self._json(409, {"error": "the record is available once the game is over"})
            else:
                self._json(404, {"error": "no such page"})

        def do_POST(self):
            session = self.server.session
            try:
                path, _ = self._route()
                body = self._body()
                if path == "/act":
                    session.act(body.get("action"), body.get("version"))
                elif path == "/next":
                    session.next_hand(body.get("version"))
                else:
                    return self._json(404, {"error": "no such action"})
            except RequestError as e:
                self.close_connection = True
                return self._json(e.status, {"error": str(e)})
            except PlayError as e:  # the page asks for these as 200s: a stale click is no console error
                soft = self.headers.get("X-Fzmj-Soft-Errors") == "1"
                return self._json(
                    200 if soft else e.status, {"error": str(e), "status": e.status, "state": session.state()}
                )
            except AgentError as e:
                sys.stderr.write(f"fzmj-play: error: {e}\n")
                return self._json(500, {"error": str(e)})
            except (ConnectionError, TimeoutError):
                self.close_connection = True
                return None
            except Exception as e:  # noqa: BLE001 - a bug of ours: one line on both ends, the server goes on
                sys.stderr.write(f"fzmj-play: internal error: {type(e).__name__}: {e}\n")
                return self._json(500, {"error": f"internal error: {type(e).__name__}: {e}"})
            self._json(200, session.state())

    return Handler


FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="2" y="1" width="12" height="14" rx="2" '
    'fill="#fbfaf3" stroke="#24422f"/><circle cx="8" cy="8" r="3" fill="#b3261e"/></svg>'
)


def play_page(session: Session, token: str = "") -> str:
    """The play page: the viewer's renderer plus the play controls, all inline; ``token`` is the
    session's, which the page sends with every request."""
    meta = page_meta(session.names)
    meta["token"] = token
    meta["record_name"] = Path(session.record_path).name if session.record_path else ""
    meta["reviewer"] = str(getattr(session.reviewer, "name", "agent")) if session.reviewer is not None else None
    return fill(
        asset("play.html"),
        {
            "CSS": asset("cjk_font.css") + asset("viewer.css"),  # the Chinese labels draw without a CJK font
            "META": script_json(meta),
            "VIEWER_JS": asset("viewer.js"),
            "PLAY_JS": asset("play.js"),
        },
    )


def make_server(session: Session | None, port: int = 0, token: str | None = None) -> PlayServer:
    """An HTTP server on 127.0.0.1 (``port`` 0: a free one) for ``session`` (or attach one
    later), with a fresh session token unless ``token`` is given (``server.url`` holds it).
    Raises OSError if the port is taken."""
    server = PlayServer(("127.0.0.1", port), _handler(), token)
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
    p.add_argument("--force", action="store_true", help="overwrite an existing record at --out")
    p.add_argument(
        "--review", metavar="AGENT_SPEC", help="offer this agent's suggestion at your turns (a toggle on the page)"
    )
    p.add_argument(
        "--danger",
        metavar="BELIEF_SPEC",
        default="belief",
        help="with --review: each discard's deal-in probability beside the hint (default: belief, the shipped "
        "model; none: off)",
    )
    args = p.parse_args(argv)
    if not 0 <= args.seat <= 3:
        p.error(f"--seat must be 0..3, got {args.seat}")
    if not 1 <= args.hands <= MAX_HANDS_PER_GAME:
        p.error(f"--hands must be 1..{MAX_HANDS_PER_GAME}, got {args.hands}")
    if len(args.agents) == 1:
        args.agents = args.agents * 3
    if len(args.agents) != 3:
        p.error(f"--agents takes 1 or 3 specs (the other seats), got {len(args.agents)}")
    if not 0 <= args.port <= 65535:
        p.error(f"--port must be 0..65535, got {args.port}")
    seed = args.seed if args.seed is not None else draw_seed()  # 64 secret bits: no bot can search them
    if not 0 <= seed < 2**64:
        p.error(f"--seed must be in 0..2**64-1, got {seed}")
    try:  # refused before anything starts: a directory, a device, an unwritable folder, an existing record
        out = check_out_path(args.out or f"fzmj-play-{seed}.json", args.force, what="--out")
    except ValueError as e:
        p.error(str(e))
    try:
        rules = load_rules(args.rules)
    except ValueError as e:
        p.error(f"--rules: {e}")
    try:
        agents = [make_agent(s) for s in args.agents]
    except AgentSpecError as e:
        p.error(str(e))
    try:
        reviewer = make_agent(args.review) if args.review else None
    except AgentSpecError as e:
        p.error(f"--review: {e}")
    args.reviewer = reviewer
    args.danger_model = None
    if reviewer is not None and args.danger != "none":
        from .review import danger_model

        try:  # before anything starts; a model of another preset shows no danger (said on the page)
            args.danger_model, note = danger_model(args.danger, rules.name)
        except AgentSpecError as e:
            p.error(f"--danger: {e}")
        if note:
            print(note, file=sys.stderr)
    try:
        server = make_server(None, args.port)  # first: a port in use fails before any game starts
    except OSError as e:
        why = "is already in use" if e.errno == errno.EADDRINUSE else f"cannot be opened ({e.strerror})"
        p.error(f"port {args.port} on 127.0.0.1 {why}")
    return _serve(server, args, agents, seed, rules, out)


def _serve(server: PlayServer, args, agents: list, seed: int, rules, out: Path) -> int:
    t0 = time.perf_counter()
    try:
        session = Session(
            agents, args.seat, hands=args.hands, seed=seed, rules=rules, record_path=out, reviewer=args.reviewer,
            agent_seed=draw_seed(),  # the agents' key: secret, written into the record at the end
            danger=getattr(args, "danger_model", None),
        )  # fmt: skip
    except AgentError as e:  # an agent failed before the person's first turn
        server.server_close()
        print(f"fzmj-play: error: {e}", file=sys.stderr)
        return 1
    server.attach(session)
    print(
        f"fzmj-play: seat {args.seat} against {', '.join(args.agents)}; {args.hands} hand(s), seed {seed}; ready in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    print(f"open {server.url}  (Ctrl-C to stop; the game is saved to {out} when it ends)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        if session.saved:
            print("\nfzmj-play: stopped")
        elif session.save_error:
            print(f"\nfzmj-play: stopped; the record was NOT saved ({session.save_error})")
            return 1
        else:
            print("\nfzmj-play: stopped before the game ended (no record saved)")
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
