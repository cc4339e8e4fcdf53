"""``asymgames study STUDY.toml``: serve a study (``engine.study.spec``) to many people at once.

    python -m runners.study study.toml                       http://127.0.0.1:8770/join for everyone
    python -m runners.study study.toml --bind 0.0.0.0 --url https://study.example.org

The study's directory (``--out``, default ``runs/study-NAME``) holds a copy of the study file, the
journal, ``participants.csv`` and a run directory per block; starting the command again on it (after
a stop, a crash, a kill -9) goes on where it was: the same study file is required. The join link
and the admin page's link (a new admin token each start) are printed at the start, once each model
partner has answered one tiny call (a study whose model is down does not start).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path

import anyio

from engine.backends import Request
from engine.policies import PolicyFactory, is_model
from engine.records import RunDir, RunDirError
from engine.study import PERSON, Study, StudyError, StudyHost, load_study, partner_policy
from runners.args import OneLineParser, integer
from runners.flags.models import add_model_arguments, settings_from_args
from runners.printable import printable
from runners.runloop import Interrupt
from runners.seats.browser.server import serving

from runners.study.admin import write_participants
from runners.study.front import StudyFront
from runners.study.guard import allowed_hosts
from runners.study.server import make_app

PROG = "python -m runners.study"
DEFAULT_PORT = 8770
STUDY_FILE = "study.toml"
SUMMARY_EVERY = 2.0  # seconds between rewrites of participants.csv while the study changes
CHECK_SECONDS = 60.0  # the start-up call to each model partner, retries included


def build_parser(prog: str = PROG) -> OneLineParser:
    p = OneLineParser(prog=prog, description="Serve a study: one link for everyone, a waiting room, games in parallel, an admin page.")
    p.add_argument("study", type=Path, metavar="STUDY.toml", help="the study file (docs/seats.md, Studies; examples/studies/tsp.toml)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the study's directory (default runs/study-NAME); given again, the study goes on")
    p.add_argument("--port", type=integer(0), default=DEFAULT_PORT, metavar="P", help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--bind", default="127.0.0.1", metavar="ADDR", help="address to listen on (default 127.0.0.1; behind a TLS proxy, keep it)")
    p.add_argument("--url", metavar="URL", help="the address people reach the study at (https://study.example.org); its host is the only other Host answered")
    add_model_arguments(p)
    return p


def _study_dir(parser: OneLineParser, args: argparse.Namespace, study: Study) -> Path:
    """The study's directory with its copy of the study file (the same file when it goes on)."""
    out = args.out or Path("runs") / f"study-{study.name}"
    text = args.study.read_bytes()
    copy = out / STUDY_FILE
    try:
        if copy.exists():
            if copy.read_bytes() != text:
                parser.error(f"{out} is a study started with another study file ({copy}); give that file, or another --out")
        else:
            out.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(text)
    except OSError as exc:
        parser.error(f"cannot use {out}: {exc.strerror or exc}")
    return out


def _factory(parser: OneLineParser, args: argparse.Namespace, study: Study, out: Path) -> PolicyFactory:
    """The policy factory with the study's model settings (saved in its directory), every partner checked."""
    factory, run = PolicyFactory(), RunDir(out)  # the study's directory keeps models.json as a run's does
    try:
        factory.configure(settings_from_args(args, run.model_settings()))
        for b, block in enumerate(study.blocks):
            for condition in block.conditions:
                if condition.partner != PERSON:
                    factory.check(partner_policy(study, b, condition.name), study.game(b))
        run.save_model_settings(factory.hub.settings)
    except (ValueError, RunDirError) as exc:
        parser.error(str(exc))
    return factory


class StartError(Exception):
    """The study cannot start (its model partner does not answer); the message says why in one line."""


async def check_models(study: Study, factory: PolicyFactory) -> None:
    """One tiny call to each model partner of the study; StartError naming the first that fails."""
    names = dict.fromkeys(
        partner_policy(study, b, c.name) for b, block in enumerate(study.blocks) for c in block.conditions if c.partner != PERSON
    )
    for name in (n for n in names if is_model(n)):
        try:
            with anyio.fail_after(CHECK_SECONDS):
                await factory.hub.backend(factory.canonical(name)).complete(Request("Answer in one word.", "Say OK."))
        except TimeoutError:
            raise StartError(f"the model partner {name} did not answer within {CHECK_SECONDS:g} s; start it, or check --endpoint/--openai-url") from None
        except Exception as exc:  # noqa: BLE001 - said in one line: whatever it is, the study cannot start
            text = printable(" ".join(str(exc).split())) or type(exc).__name__
            raise StartError(f"the model partner {name} does not answer: {text}") from None


async def serve(host: StudyHost, factory: PolicyFactory, args: argparse.Namespace) -> None:
    admin_token = secrets.token_urlsafe(18)
    hosts: set[str] = set()
    failed: StartError | None = None
    async with factory:
        try:
            await check_models(host.study, factory)
        except StartError as exc:  # raised outside: the factory's task group would wrap it
            failed = exc
        else:
            await _serve(host, factory, args, admin_token, hosts)
    if failed is not None:
        raise failed


async def _serve(host: StudyHost, factory: PolicyFactory, args: argparse.Namespace, admin_token: str, hosts: set[str]) -> None:
    async with anyio.create_task_group() as group:
        host.group = group
        signals = Interrupt(group.cancel_scope)
        group.start_soon(signals.watch)
        host.open()
        try:
            async with serving(make_app(host, admin_token, hosts), args.bind, args.port) as port:
                hosts.update(allowed_hosts(args.url, port))
                base = (args.url or f"http://127.0.0.1:{port}").rstrip("/")
                print(f"Study {host.study.name}: {host.out}", flush=True)
                print(f"Join: {base}/join", flush=True)
                print(f"Admin: {base}/admin/{admin_token}", flush=True)
                group.start_soon(host.watch)
                seen = -1
                while True:
                    if host.ledger.events != seen:
                        seen = host.ledger.events
                        write_participants(host)
                    await anyio.sleep(SUMMARY_EVERY)
        finally:
            with anyio.CancelScope(shield=True):
                write_participants(host)
                host.close()


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        study = load_study(args.study)
    except StudyError as exc:
        parser.error(str(exc))
    out = _study_dir(parser, args, study)
    try:
        lock = RunDir(out).lock()
    except RunDirError as exc:
        parser.error(str(exc))
    with lock:
        factory = _factory(parser, args, study, out)
        try:
            host = StudyHost(study, out, factory, StudyFront)
        except (RunDirError, ValueError, OSError) as exc:
            parser.error(f"cannot go on with {out}: {exc}")
        try:
            anyio.run(serve, host, factory, args)
        except KeyboardInterrupt:
            pass
        except StartError as exc:
            parser.error(str(exc))
    print("The study's server stopped; start the same command again to go on.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
