"""Opening a run session: a new run directory for a plan, or a run directory being resumed; its model
settings (the saved ones, with what the caller changes over them) set on the policy factory and
saved; locked; its results upgraded to the current format and, on request, repaired; and what it
has recorded read. One function, so that every runner, and a notebook, opens a run the same way.

    session = open_session(factory, plan=lambda: grid, out=Path("runs/mine"))
    with session:                     # holds the lock
        await play_plan(session.run, session.plan, factory, recorded=session.recorded)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.backends import BackendSettings
from engine.policies.factory import PolicyFactory
from engine.records.ids import IdSet
from engine.records.rundir import Plan, RunDir, RunDirError
from engine.session.playing import read_usage, recorded_games
from engine.session.replaying import Replays, find_replays, set_aside_replays


class SessionError(Exception):
    """A run cannot be opened; the message says why in one line. ``about`` is what was given that
    it is about (``"resume"``, ``"out"``), or None."""

    def __init__(self, message: str, about: str | None = None) -> None:
        super().__init__(message)
        self.about = about


@dataclass(frozen=True)
class Before:
    """What is known of a session before anything is written: the plan, and for a resumed run its
    directory, what its earlier processes spent (``usage.json``) and which of its recorded games it
    plays again (``replay_errors``, ``transcripts``: ``engine.session.replaying``)."""

    plan: Plan
    run: RunDir | None  # the run being resumed
    earlier_usage: dict[str, Any] | None
    replay_errors: bool = False
    transcripts: bool = False

    @property
    def resumed(self) -> bool:
        return self.run is not None

    def recorded(self) -> IdSet:
        """The games already recorded (the resume rule) that the session does not play again;
        RunDirError if the run holds games outside its plan."""
        if self.run is None:
            return IdSet()
        recorded = recorded_games(self.run, self.plan.total)
        again = find_replays(self.run, self.plan, errors=self.replay_errors, transcripts=self.transcripts).replayed()
        return IdSet(game_id for game_id in recorded if game_id not in again) if len(again) else recorded


@dataclass
class Session:
    """An open run: its plan and directory, the lock held until ``close``, the ids of the games
    already recorded (the resume rule), what ``repair`` moved aside (lines, file) if asked, and what
    a resume set aside to play again (``engine.session.replaying``)."""

    plan: Plan
    run: RunDir
    lock: Any
    recorded: IdSet
    repaired: tuple[int, Path] | None = None
    replays: Replays = Replays()

    def close(self) -> None:
        self.lock.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def open_session(
    factory: PolicyFactory,
    *,
    plan: Callable[[], Plan] | None = None,
    resume: Path | None = None,
    out: Path | None = None,
    settings: Callable[[BackendSettings | None], BackendSettings] | None = None,
    check: Callable[[Before], None] | None = None,
    repair: bool = False,
    replay_errors: bool = False,
    transcripts: bool = False,
) -> Session:
    """Open the run in ``resume``, or create ``out`` for ``plan()``.

    ``settings(saved)`` gives the run's model settings from the saved ones (None for a new run);
    they configure ``factory`` and are saved with the run. ``check(before)`` sees the plan before
    anything is written (it may raise, or exit for a dry run). ``repair`` (a resumed run only) moves
    damaged lines and records of games outside the plan aside first. A resumed run plays again the
    games recorded without a transcript when it keeps them (``transcripts``), and with
    ``replay_errors`` the games that ended in an error not a player's (``engine.session.replaying``).
    Raises SessionError."""
    settings = settings or (lambda saved: saved or BackendSettings())
    if repair and resume is None:
        raise SessionError("it repairs a run being resumed; give the run directory to resume", about="repair")
    where, about = (resume, "resume") if resume is not None else (out, "out")
    try:
        if resume is not None:
            run = RunDir.open(resume)
            factory.configure(settings(run.model_settings()))
            saved = run.config()
            before = Before(saved, run, read_usage(run), replay_errors, transcripts)
        else:
            if plan is None or out is None:
                raise ValueError("a new run needs a plan and a directory")
            factory.configure(settings(None))
            before = Before(plan(), None, None)
        if check is not None:
            check(before)
        if resume is None:
            assert out is not None  # a new run has both (raised above otherwise)
            run = RunDir.create(out, before.plan)
        lock = run.lock()
    except (RunDirError, ValueError) as exc:
        raise SessionError(str(exc)) from None
    except OSError as exc:
        raise SessionError(f"cannot use {where or 'the run directory'}: {exc.strerror or exc}", about=about) from None
    try:
        run.save_model_settings(factory.hub.settings)
        run.upgrade()  # results of an earlier format are rewritten before any is added
        repaired = run.repair(before.plan.total, before.plan) if repair else None
        replays = Replays()
        if resume is not None:
            refused = run.contradiction_error(before.plan) or run.conflict_error()
            if refused is not None:
                raise refused
            replays = set_aside_replays(run, before.plan, errors=replay_errors, transcripts=transcripts)
        return Session(before.plan, run, lock, recorded_games(run, before.plan.total), repaired, replays)
    except (RunDirError, ValueError) as exc:
        lock.close()
        raise SessionError(str(exc)) from None
    except OSError as exc:
        lock.close()
        raise SessionError(f"cannot use {where}: {exc.strerror or exc}", about=about) from None
