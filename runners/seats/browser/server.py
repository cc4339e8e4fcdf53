"""The web side of ``runners.seats.browser``: an aiohttp application on the run's own event loop, so a
page's answer reaches the game waiting for it without threads or queues in between.

    GET  /seat/TOKEN              the page (everything inlined)
    GET  /seat/TOKEN/state?since=V  what the seat sees now; waits (up to LONG_POLL s) for a newer version than V
    POST /seat/TOKEN/participant  {participant}          -> {ok, participant} | {error}
    POST /seat/TOKEN/shown        {game, turn}           -> {ok, seconds_left} | {error}   (the turn's clock starts)
    POST /seat/TOKEN/check        {kind, values, ...}    -> {ok, text} | {error}
    POST /seat/TOKEN/answer       SeatAnswer + {game, turn} -> {ok} | 400 {error}

A token is the whole key to a seat: an unknown one is a 404, and a known one only ever reaches its
own seat's data. The server binds 127.0.0.1 only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import msgspec
from aiohttp import web

from engine.policies import SeatAnswer

from runners.local_http import refusal
from runners.seats.browser.page import page_html
from runners.seats.browser.seats import BrowserFront, BrowserSeats

HOST = "127.0.0.1"
MAX_BODY = 256 * 1024  # bytes of a request body: a turn's answer is a few KB
LONG_POLL = 10.0  # seconds a state request waits for a change before answering with the same state


class _Stamp(msgspec.Struct):
    """Which turn a check or an answer is for (the page sends the one it shows): an answer to a turn
    that is over never lands on the next one."""

    game: int | None = None
    turn: int | None = None


class _Check(_Stamp):
    kind: str = ""
    values: dict[str, Any] = {}


class _Participant(msgspec.Struct):
    participant: str = ""


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=msgspec.json.encode(data), status=status, content_type="application/json",
                        headers={"Cache-Control": "no-store"})


def read_json(body: bytes, kind: type) -> Any:
    """A request body as ``kind``; a 400 with the reason if it is not one."""
    try:
        return msgspec.json.decode(body, type=kind)
    except (msgspec.DecodeError, RecursionError) as exc:  # ValidationError is a DecodeError
        raise web.HTTPBadRequest(text=msgspec.json.encode({"error": f"cannot read the request: {exc}"}).decode(),
                                 content_type="application/json") from None


FrontT = TypeVar("FrontT", bound=BrowserFront)


def seat_routes(front_of: Callable[[web.Request], FrontT], prefix: str, title: Callable[[FrontT], str]) -> list[web.RouteDef]:
    """The page of a seat and its API under ``PREFIX/{token}``; ``front_of`` finds the token's front
    (or raises a 404), ``title`` names its page."""

    async def page(request: web.Request) -> web.Response:
        front = front_of(request)
        return web.Response(text=page_html(title(front)), content_type="text/html", headers={"Cache-Control": "no-store"})

    async def state(request: web.Request) -> web.Response:
        front = front_of(request)
        try:
            since = int(request.query.get("since", "-1"))
        except ValueError:
            since = -1
        await front.wait_change(since, LONG_POLL)
        seen = front.state()
        if seen["status"] == "done":
            front.told.set()
        return json_response(seen)

    def replying(kind: type, reply: Callable[[BrowserFront, Any], dict[str, Any]]):
        """A handler that reads a ``kind`` body and answers ``{ok, ...}`` with what ``reply`` gives,
        or ``{error}`` when the front refuses it."""

        async def handler(request: web.Request) -> web.Response:
            front = front_of(request)
            given = read_json(await request.read(), kind)
            try:
                return json_response({"ok": True, **reply(front, given)})
            except ValueError as exc:
                return json_response({"error": str(exc)})

        return handler

    async def answer(request: web.Request) -> web.Response:
        front = front_of(request)
        body = await request.read()
        try:
            stamp = msgspec.json.decode(body, type=_Stamp)
            given = msgspec.json.decode(body, type=SeatAnswer)
        except (msgspec.DecodeError, RecursionError) as exc:
            return json_response({"error": f"cannot read the answer: {exc}"}, 400)
        try:
            front.answer(given, stamp.game, stamp.turn)
        except ValueError as exc:
            return json_response({"error": str(exc)}, 400)
        return json_response({"ok": True})

    return [
        web.get(prefix + "/{token}", page),
        web.get(prefix + "/{token}/state", state),
        web.post(prefix + "/{token}/participant", replying(_Participant, lambda front, given: {"participant": front.name(given.participant)})),
        web.post(prefix + "/{token}/shown", replying(_Stamp, lambda front, given: {"seconds_left": round(front.shown(given.game, given.turn), 1)})),
        web.post(prefix + "/{token}/check", replying(_Check, lambda front, given: {"text": front.check(given.kind, given.values, given.game, given.turn)})),
        web.post(prefix + "/{token}/answer", answer),
    ]


def make_app(seats: BrowserSeats) -> web.Application:
    def front_of(request: web.Request) -> BrowserFront:
        front = seats.by_token.get(request.match_info["token"])
        if front is None:
            raise web.HTTPNotFound(text="no such seat")
        return front

    @web.middleware
    async def only_this_machine(request: web.Request, handler: Any) -> web.StreamResponse:
        sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
        refused = refusal(request.method, request.headers, sockname[1] if sockname else -1)
        if refused is not None:
            return json_response({"error": refused}, 403)
        return await handler(request)

    app = web.Application(middlewares=[only_this_machine], client_max_size=MAX_BODY)
    app.add_routes(seat_routes(front_of, "/seat", lambda front: f"Seat {front.role}"))
    return app


@asynccontextmanager
async def serving(app: web.Application, bind: str, port: int) -> AsyncIterator[int]:
    """Serve ``app`` (the seats' pages, a study's) on ``bind``:``port`` (0: any free port) while inside;
    yields the port."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, bind, port).start()
        yield runner.addresses[0][1]
    finally:
        with anyio.CancelScope(shield=True):  # closed also when the run is interrupted
            await runner.cleanup()
