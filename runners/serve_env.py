"""Serve one seat of a game as an OpenEnv environment for a trainer: the trainer's model plays the
seat, turn by turn over HTTP or a WebSocket, the engine plays the other seats (the openenv extra).

    python -m runners.serve_env --game NAME --seat ROLE --agent OTHER=POLICY --port 8010

Each episode is one game, recorded in the run directory (``--out``) with its full transcript, as a
run records its games (``engine.rollouts.EpisodeHost``); the protocol is OpenEnv's
(``engine.rollouts.openenv``, [Rollouts for training](docs/rollouts.md)).
"""

from __future__ import annotations

import sys

import msgspec

from engine.policies import PolicyFactory
from engine.rollouts import CLIENT, EpisodeHost
from engine.session import SessionError, open_session
from runners.args import OneLineParser, bounded, integer
from runners.flags.game import add_game_arguments, chosen_game, config_from_args
from runners.flags.models import add_model_arguments, settings_from_args
from runners.flags.running import default_out

PROG = "python -m runners.serve_env"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    factory = PolicyFactory()
    game = chosen_game(argv)
    p = OneLineParser(prog=prog, description=(
        "Serve one seat of a game as an OpenEnv environment (HTTP and WebSocket): a trainer's model plays the seat, "
        "the engine the others; every episode is recorded in the run directory (pip install -e '.[openenv]')."))
    add_game_arguments(p, game, factory)
    serve = p.add_argument_group("serving")
    serve.add_argument("--seat", required=True, metavar="ROLE", help=f"the seat the client plays: one of {', '.join(game.roles)}")
    serve.add_argument("--host", default="127.0.0.1", metavar="ADDR", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=integer(0), default=8010, metavar="PORT", help="port (default 8010; 0: any free one)")
    serve.add_argument("--sessions", type=integer(1), default=256, metavar="N", help="WebSocket sessions at once (default 256)")
    serve.add_argument("--idle", type=bounded(float, 0.0, above=True), default=600.0, metavar="SECONDS",
                       help="a named episode (HTTP) with no step for SECONDS is ended (default 600)")
    serve.add_argument("--out", metavar="RUN_DIR", help="run directory of the episodes (default runs/<UTC time>-env)")
    add_model_arguments(p)
    p.set_defaults(dry_run=False)
    args = p.parse_args(argv)
    try:
        import uvicorn

        from engine.rollouts import make_app
    except ImportError as exc:
        p.error(f"the environment server needs the openenv extra (pip install -e '.[openenv]'): {exc}")
    plan = config_from_args(p, args, game, factory)
    roster = list(plan.spec(0).agents)
    if args.seat not in roster:
        p.error(f"argument --seat: {args.seat!r} is not a seat of {game.name} ({', '.join(roster)})")
    plan = msgspec.structs.replace(plan, name="serve-env", agents=[[CLIENT if r == args.seat else n for r, n in zip(roster, plan.agents[0])]])
    try:
        session = open_session(factory, plan=lambda: plan, out=args.out or default_out("env"),
                               settings=lambda saved: settings_from_args(args, saved))
    except SessionError as exc:
        p.error(f"argument --{exc.about}: {exc}" if exc.about else str(exc))
    import anyio

    async def serving() -> None:
        import asyncio

        host = EpisodeHost(session, factory, args.seat, idle=args.idle)
        async with factory, host.serving():
            app = make_app(host, asyncio.get_running_loop(), sessions=args.sessions)
            server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", ws_ping_interval=None))

            async def announce() -> None:
                while not server.started:
                    await anyio.sleep(0.05)
                port = server.servers[0].sockets[0].getsockname()[1]
                print(f"Serving {game.name}, seat {args.seat}, on http://{args.host}:{port} (OpenEnv: /ws, /reset, /step); "
                      f"episodes recorded in {session.run.path}", flush=True)

            async with anyio.create_task_group() as tg:
                tg.start_soon(announce)
                await server.serve()
                tg.cancel_scope.cancel()
        print(f"Episodes: {host.started} started; records in {session.run.path}")

    with session:
        anyio.run(serving)
    return 0


if __name__ == "__main__":
    sys.exit(main())
