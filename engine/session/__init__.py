"""A run session: a new or resumed run directory (``opening``) played to records on disk (``playing``),
giving up on a run that cannot work (``giveup``), stopping game starts (``stopping``), the run's log
(``runlog``), and the batches a run sent, at the provider (``batches``, loaded on first use)."""

from __future__ import annotations

from engine.lazy import lazy_exports
from engine.session.giveup import SameFailure
from engine.session.opening import Before, Session, SessionError, open_session
from engine.session.playing import (
    Tally, counted_keys, finish, new_progress, play_order, play_plan, read_usage, recorded_games,
)
from engine.session.stopping import StopStarting

__all__ = [
    "Before", "SameFailure", "Session", "SessionError", "Shown", "StopStarting", "Tally", "counted_keys", "finish",
    "new_progress", "open_session", "play_order", "play_plan", "read_usage", "recorded_games", "survey",
]

# the batch clients load only for a look at a run's batches
__getattr__, __dir__ = lazy_exports(__name__, {"Shown": ".batches", "survey": ".batches"})
