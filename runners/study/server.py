"""The web side of a study: one link for everyone, a page per participant, an admin page.

    GET  /join                    the welcome and consent page; its button joins
    POST /join                    {}  -> {ok, url} (the participant's page) | 429 | {full}
    GET  /p/TOKEN                 the participant's page; /p/TOKEN/state, /shown, /check, /answer as a seat's
    POST /p/TOKEN/go              {step}  -> {ok}   (the button of a screen between games)
    POST /p/TOKEN/leave           {}      -> {ok}
    GET  /admin/TOKEN             live status;  /admin/TOKEN/status (JSON), /admin/TOKEN/participants.csv

A participant's token is the whole key to their page: an unknown one is a 404, and a known one
reaches only that participant's seat (``BrowserFront.state`` holds only what its seat is shown). The
admin token is printed when the server starts and is not kept. Every answer says not to be cached,
framed or given a referrer (the token is in the address).
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from engine.study import StudyHost

from runners.seats.browser.server import MAX_BODY, json_response, read_json, seat_routes
from runners.study.admin import ADMIN_PAGE, participants_csv, status
from runners.study.front import StudyFront
from runners.study.guard import JoinLimit, client_address, refusal

HEADERS = {
    "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                               "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}


class _Go(msgspec.Struct):
    step: str = ""


WELCOME = (Path(__file__).parent / "welcome.html").read_text(encoding="utf-8")


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{html.escape(p.strip())}</p>" for p in text.split("\n\n") if p.strip())


def welcome_page(host: StudyHost) -> str:
    """The join link's page: the welcome, the consent, the button (off when the study is full)."""
    texts = host.study.texts
    full = host.full()
    parts = {
        "title": html.escape(texts.title), "welcome": _paragraphs(texts.welcome), "consent": _paragraphs(texts.consent),
        "full": f"<p id=full>{html.escape(texts.full)}</p>" if full else "", "disabled": "disabled" if full else "",
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m[1]], WELCOME)


def make_app(host: StudyHost, admin_token: str, hosts: set[str]) -> web.Application:
    """The study's application; ``hosts``: the Host headers it answers (filled in once the port is known)."""
    limit = JoinLimit(host.study.join.per_minute, host.study.join.all_per_minute)

    def front_of(request: web.Request) -> StudyFront:
        front = host.front(request.match_info["token"])
        if not isinstance(front, StudyFront):  # None: no such token
            raise web.HTTPNotFound(text="no such page")
        return front

    def admin(answer: Callable[[], web.Response]):
        """A handler of the admin token's pages: ``answer()``, or a 404 for any other token."""

        async def handler(request: web.Request) -> web.Response:
            # As bytes: compare_digest refuses str with non-ASCII characters, which any address may hold.
            given = request.match_info["token"].encode("utf-8", "surrogatepass")
            if not secrets.compare_digest(given, admin_token.encode("utf-8")):
                raise web.HTTPNotFound(text="no such page")
            return answer()

        return handler

    async def welcome(request: web.Request) -> web.Response:
        return web.Response(text=welcome_page(host), content_type="text/html")

    async def join(request: web.Request) -> web.Response:
        if not limit.allow(client_address(request.headers, request.remote, host.study.trust_proxy)):
            return json_response({"error": "Too many people are joining just now; please try again in a minute."}, 429)
        token = host.join()
        if token is None:
            return json_response({"error": host.study.texts.full, "full": True})
        return json_response({"ok": True, "url": f"/p/{token}"})

    async def go(request: web.Request) -> web.Response:
        front = front_of(request)
        given = read_json(await request.read(), _Go)
        if given.step != "start" or front.screen is None or front.screen.get("step") != "start":
            return json_response({"error": "nothing to start now"})
        host.go(front)
        return json_response({"ok": True})

    async def leave(request: web.Request) -> web.Response:
        host.leave(front_of(request))
        return json_response({"ok": True})

    @web.middleware
    async def guarded(request: web.Request, handler: Any) -> web.StreamResponse:
        refused = refusal(request.method, request.headers, frozenset(hosts))
        if refused is not None:
            response: web.StreamResponse = json_response({"error": refused}, 403)
        else:
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                response = web.Response(status=exc.status, body=exc.body, content_type=exc.content_type)
        response.headers.update(HEADERS)
        return response

    app = web.Application(middlewares=[guarded], client_max_size=MAX_BODY)
    app.add_routes([
        web.get("/join", welcome), web.post("/join", join),
        web.post("/p/{token}/go", go), web.post("/p/{token}/leave", leave),
        web.get("/admin/{token}", admin(lambda: web.Response(text=ADMIN_PAGE, content_type="text/html"))),
        web.get("/admin/{token}/status", admin(lambda: json_response(status(host)))),
        web.get("/admin/{token}/participants.csv", admin(lambda: web.Response(text=participants_csv(host), content_type="text/csv"))),
        *seat_routes(front_of, "/p", lambda front: front.title),
    ])
    return app
