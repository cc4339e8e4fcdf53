"""The games' own analyses over a run (``Records.analyses``): every game that ended without error,
read from its record and its transcript as a ``puzzles.PlayedGame``, folded into its game's
analysis, which returns the tables of the game's papers that scores do not give.

The records go by one at a time in game-id order (``engine.analysis.reading.recorded_games``),
each with its transcript, and each game's analysis keeps what it counts per condition, so memory
is set by the conditions, not the games: neither records nor transcripts are kept. Games are
folded in game-id order, so the tables are the same whatever order the games finished in. The one
cost per game is the transcripts' index (``engine.records.transcripts.TranscriptIndex``: where
each game's last copy lies, 8 bytes a game); a transcript is read from its block, the last block
read kept. A damaged copy (a line, or a block of the compressed file) is skipped; its games count
as without a transcript. Conditions are named by the fields that vary in the run, read from the
run's totals (``engine.analysis.totals.RunTotals``: a few per condition) or from the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
import msgspec

from engine.analysis.conditions import condition_fields, field_values
from engine.analysis.totals import Source
from engine.records.record import GameRecord
from engine.records.transcripts import Transcript, TranscriptIndex, has_transcripts
from puzzles import Analysis, AnalysisTable, InvalidParameter, PlayedGame, PlayedTurn, get_game


class GameAnalyses(msgspec.Struct):
    """The analyses of one game over a run's records."""

    game: str
    tables: list[AnalysisTable]
    games: int  # games analysed
    without_transcript: int  # games that ended without error but have no readable transcript
    errors: int  # games left out because they ended in an error


class RunAnalyses(msgspec.Struct):
    games: list[GameAnalyses]
    without_analyses: list[str]  # games of the run that give no analyses
    transcripts: bool  # the run directory has a transcripts file (either format)


def condition_label(record: GameRecord, fields: Sequence[str]) -> str:
    """A game's condition, named by ``fields`` (the fields that vary in the run; "all" when none does)."""
    values = field_values(record)
    return ", ".join(f"{f}={values.get(f, '')}" for f in fields) or "all"


def played_game(record: GameRecord, transcript: Transcript, condition: str) -> PlayedGame:
    turns = tuple(
        PlayedTurn(turn=t.turn, role=t.role, message=t.message, actions=tuple(t.actions),
                   rejected=tuple(t.rejected), format_error=t.format_error,
                   heard={d.recipient: d.text for d in t.recipients()})
        for t in transcript.turns
    )
    spec = record.spec
    return PlayedGame(
        condition=condition, agents=dict(spec.agents), params=msgspec.to_builtins(spec.params), seed=spec.seed,
        outcome=record.outcome, scores=dict(record.scores), metrics=dict(record.metrics), turns=turns,
        max_turns=spec.options.max_turns, options=msgspec.to_builtins(spec.options),
    )


class _Counts:
    """One game's analysis over a run, and what it read."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.games = self.without_transcript = self.errors = 0


def run_analyses(records: Iterable[GameRecord], run_path: Path, conditions: Source | None = None) -> RunAnalyses:
    """Every game's analyses over ``records`` (folded one at a time, in their order), reading their
    transcripts from ``run_path``. ``conditions``: the run's totals, or its records, whose varying
    fields name the conditions; by default ``records`` themselves (which are then kept)."""
    if conditions is None:
        records = conditions = list(records)
    fields = condition_fields(conditions)
    kept = has_transcripts(run_path)
    index = TranscriptIndex(run_path)
    if kept:
        index.refresh()  # where each game's last copy lies: a few bytes a game
    found: dict[str, _Counts | None] = {}  # each game of the run, first seen first; None: it has no analyses
    for record in records:
        name = record.spec.game
        if name not in found:
            found[name] = _analysis(name)
        counts = found[name]
        if counts is None:
            continue
        if record.outcome == "error":
            counts.errors += 1
            continue
        transcript = index.get(record.game_id) if kept else None
        if transcript is None or transcript.game_id != record.game_id:
            counts.without_transcript += 1
            continue
        counts.analysis.add(played_game(record, transcript, condition_label(record, fields)))
        counts.games += 1
    games = [
        GameAnalyses(game=name, tables=c.analysis.tables(), games=c.games, without_transcript=c.without_transcript, errors=c.errors)
        for name, c in found.items() if c is not None
    ]
    return RunAnalyses(games=games, without_analyses=[name for name, c in found.items() if c is None], transcripts=kept)


def _analysis(name: str) -> _Counts | None:
    try:
        make = get_game(name).records.analyses
    except InvalidParameter:
        make = None
    return None if make is None else _Counts(make())
