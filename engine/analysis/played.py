"""The games' own analyses over a run (``Records.analyses``): every game that ended without error,
read from its record and its transcript as a ``puzzles.PlayedGame``, folded into its game's
analysis, which returns the tables of the game's papers that scores do not give.

Transcripts are read through ``engine.records.transcripts.TranscriptIndex``: each game's last
copy (a resumed run may have written a game twice), one block in memory at a time, so memory holds
a few bytes per game rather than the transcripts. A damaged copy (a line, or a block of the
compressed file) is skipped; its games count as without a transcript.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from engine.analysis.conditions import condition_fields, field_values
from engine.records.record import GameRecord
from engine.records.transcripts import Transcript, TranscriptIndex, has_transcripts
from puzzles import AnalysisTable, InvalidParameter, PlayedGame, PlayedTurn, get_game


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


def condition_labels(records: Sequence[GameRecord]) -> dict[int, str]:
    """Each game's condition, named by the fields that vary in the run ("all" when none does)."""
    fields = condition_fields(records)
    labels = {}
    for record in records:
        values = field_values(record)
        labels[record.spec.game_id] = ", ".join(f"{f}={values.get(f, '')}" for f in fields) or "all"
    return labels


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


def run_analyses(records: Sequence[GameRecord], run_path: Path) -> RunAnalyses:
    """Every game's analyses over ``records``, reading their transcripts from ``run_path``."""
    by_game: dict[str, list[GameRecord]] = {}
    for record in records:
        by_game.setdefault(record.spec.game, []).append(record)
    kept = has_transcripts(run_path)
    index = TranscriptIndex(run_path)
    if kept:
        index.refresh()  # where each game's last copy lies: a few bytes a game
    labels = condition_labels(records)
    found, without = [], []
    for name, game_records in by_game.items():
        try:
            make = get_game(name).records.analyses
        except InvalidParameter:
            make = None
        if make is None:
            without.append(name)
            continue
        analysis = make()
        scored = {r.spec.game_id: r for r in game_records if r.outcome != "error"}
        games = 0
        if kept and scored:
            for game_id, transcript in index.transcripts(scored):
                analysis.add(played_game(scored[game_id], transcript, labels[game_id]))
                games += 1
        found.append(GameAnalyses(game=name, tables=analysis.tables(), games=games,
                                  without_transcript=len(scored) - games, errors=len(game_records) - len(scored)))
    return RunAnalyses(games=found, without_analyses=without, transcripts=kept)
