"""What a game reads from its played games beyond scores: the analyses its papers make from the
turns (strategies, failure signatures, how actions are used), as tables.

A game gives ``Records.analyses``: a function that makes an empty ``Analysis``. The report feeds it
every game that ended without error, as a ``PlayedGame`` (plain data read from the run's records and
transcripts), one at a time in game-id order, then prints the tables it returns. An analysis folds
each game into what it keeps per condition (counts and sums, never the games, nor a list of values
per game), so that memory is set by the conditions and does not grow with the run. The game never sees the engine's records or files: actions
arrive as the transcript holds them (``msgspec.to_builtins`` of the game's action structs).
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec


class PlayedTurn(msgspec.Struct, frozen=True, kw_only=True):
    turn: int
    role: str
    message: str = ""
    actions: tuple[Any, ...] = ()  # the parsed actions, as plain data
    rejected: tuple[Any, ...] = ()  # the actions that could not be parsed
    format_error: str | None = None  # the reply could not be read (nothing applied)
    heard: dict[str, str] | None = None  # recipient -> the message as the channel delivered it (None: not known, all others got it as sent)


class PlayedGame(msgspec.Struct, frozen=True, kw_only=True):
    """One game that ended without error, as an analysis reads it."""

    condition: str  # the report's label of the game's condition
    agents: dict[str, str]  # role -> policy label
    params: dict[str, Any]  # the game's parameters, as plain data
    seed: int
    outcome: str  # "success" or "failure"
    scores: dict[str, Any]
    metrics: dict[str, Any]
    turns: tuple[PlayedTurn, ...]
    max_turns: int = 0
    options: dict[str, Any] = {}  # the engine's options of the game, as plain data (turn_order, channel, ...)


Cell = str | int | float | None


class AnalysisTable(msgspec.Struct, kw_only=True):
    """One table of an analysis: ``labels`` leading columns name the row (left-aligned), the rest
    are numbers (a float is shown with one decimal; None is shown as "-")."""

    name: str  # file stem of its CSV, unique among the game's tables
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    labels: int = 1
    note: str = ""


class Analysis(Protocol):
    def add(self, game: PlayedGame) -> None:
        """Count one game."""

    def tables(self) -> list[AnalysisTable]:
        """The tables over the games counted so far (empty: nothing to show)."""


def percent(part: int, whole: int) -> float | None:
    """``part`` as a percentage of ``whole``; None when ``whole`` is 0."""
    return 100.0 * part / whole if whole else None
