"""The episodes of an ``EpisodeHost`` as an OpenEnv environment server (``openenv-core``, the
``openenv`` extra): OpenEnv's own HTTP and WebSocket server over an ``Environment`` whose reset starts
an episode and whose step plays the client's reply.

- ``WS /ws``: one connection is one session; ``{"type": "reset", "data": {"seed": S}}``, then
  ``{"type": "step", "data": {"reply": TEXT}}`` until ``done``. Closing the connection mid-episode
  ends the game (recorded with the error ``client_left``).
- ``POST /reset`` and ``POST /step`` (OpenEnv's HTTP, one environment per request): an episode lives
  across requests under a name, the one the reset's body gives (``{"episode_id": ID}``) or, without
  one, the ``episode_id`` its first observation shows; each step's body names it. It ends when it is
  done, or after the server's idle time without a step.
- ``GET /health``, ``/metadata``, ``/schema``, ``/state`` as OpenEnv serves them.
"""

from __future__ import annotations

import asyncio
import functools
from contextvars import ContextVar
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from openenv.core.env_server import Action, Environment, HTTPEnvServer, Observation, State
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field

from engine.rollouts.episodes import Episode, EpisodeError, EpisodeHost, Shown

OVER_HTTP: ContextVar[bool] = ContextVar("over_http", default=False)  # set for OpenEnv's HTTP requests, not its WebSocket sessions


class GameReply(Action):
    """The client's reply to the seat's prompt: the text a model in the seat would write."""

    reply: str = Field(description="the seat's reply, in the game's reply format (its prompt says how)")


class SeatPrompt(Observation):
    """The seat's next prompt as chat messages (empty once done); ``reward``: the turn just played."""

    episode_id: str = ""
    game_id: int = 0
    seed: int = 0
    role: str = ""
    turn: int = 0
    messages: list[dict[str, str]] = Field(default_factory=list)
    progress: float = 0.0
    format_error: str | None = None
    outcome: str | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    error: str | None = None


class SeatState(State):
    """The session's episode: which game, which seat, whether it is over."""

    game_id: int | None = None
    seed: int | None = None
    role: str = ""
    done: bool = False


def observation(shown: Shown) -> SeatPrompt:
    return SeatPrompt(
        episode_id=shown.episode_id, game_id=shown.game_id, seed=shown.seed, role=shown.role, turn=shown.turn,
        messages=[{"role": m.role, "content": m.content} for m in shown.messages], reward=shown.reward,
        progress=shown.progress, format_error=shown.format_error, done=shown.done, outcome=shown.outcome, rewards=shown.rewards, error=shown.error,
    )


class SeatEnv(Environment[GameReply, SeatPrompt, SeatState]):
    """One session's environment over the host's episodes (OpenEnv makes one per WebSocket session
    and one per HTTP request)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, host: EpisodeHost, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.host, self.loop = host, loop
        self.episode: Episode | None = None  # the session's own episode (one reset without a name)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> SeatPrompt:
        raise EpisodeError("reset is served asynchronously")

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> SeatPrompt:
        """A new episode: the session's own over the WebSocket; over HTTP, where the environment
        lasts one request, kept under its name (the one given, else the one it is shown with)."""
        self._leave_own()
        over_http = OVER_HTTP.get()
        episode, shown = await self.host.reset(seed, episode_id, keep=over_http)
        if episode_id is None and not over_http:
            self.episode = episode
        return observation(shown)

    def step(self, action: GameReply, timeout_s: float | None = None, **kwargs: Any) -> SeatPrompt:
        raise EpisodeError("step is served asynchronously")

    async def step_async(self, action: GameReply, timeout_s: float | None = None, episode_id: str | None = None,
                         **kwargs: Any) -> SeatPrompt:
        if episode_id is not None:
            episode = self.host.named(episode_id)
        elif self.episode is None:
            raise EpisodeError("step before reset: reset an episode first (over HTTP, send its episode_id with each step)")
        else:
            episode = self.episode
        return observation(await episode.step(action.reply))

    @property
    def state(self) -> SeatState:
        e = self.episode
        if e is None:
            return SeatState(role=self.host.role)
        return SeatState(episode_id=e.episode_id, step_count=e.steps, game_id=e.spec.game_id, seed=e.spec.seed,
                         role=e.role, done=e.done)

    def get_metadata(self) -> EnvironmentMetadata:
        host = self.host
        others = ", ".join(f"{r}={p}" for r, p in host.template.agents.items() if r != host.role)
        return EnvironmentMetadata(
            name=f"asymgames-{host.game.name}", version="1",
            description=f"{host.game.faces.description.rstrip('.')}. The client plays {host.role}; the engine plays {others}.",
        )

    def close(self) -> None:
        """The session ended (the connection closed): its own episode ends where it stands."""
        if self.episode is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._leave_own()
        else:  # OpenEnv closes a WebSocket session's environment in a worker thread
            self.loop.call_soon_threadsafe(self._leave_own)

    def _leave_own(self) -> None:
        episode, self.episode = self.episode, None
        if episode is not None and not episode.done:
            episode.leave()


def make_app(host: EpisodeHost, loop: asyncio.AbstractEventLoop, *, sessions: int = 256) -> FastAPI:
    """OpenEnv's server over ``host``'s episodes, at most ``sessions`` WebSocket sessions at once,
    on ``loop`` (the loop the host serves on). A request no episode can answer is a 400 with the
    reason over HTTP, an error message over the WebSocket."""
    app = FastAPI(title=f"asymgames {host.game.name}")

    @app.middleware("http")
    async def over_http(request: Request, call_next: Any) -> Response:
        OVER_HTTP.set(True)  # the request's handler runs in a copy of this context
        response: Response = await call_next(request)
        return response

    server = HTTPEnvServer(functools.partial(SeatEnv, host, loop), action_cls=GameReply, observation_cls=SeatPrompt,
                           max_concurrent_envs=sessions)
    server.register_routes(app)

    async def refused(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    app.add_exception_handler(EpisodeError, refused)
    return app
