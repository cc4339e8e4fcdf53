"""The games' own analyses over a run (``Records.analyses``): every game that ended without error,
read from its record and its transcript as a ``puzzles.PlayedGame``, folded into its game's
analysis, which returns the tables of the game's papers that scores do not give.

Transcripts are read in two passes, so that memory holds one offset per game rather than the
transcripts: the first finds the last whole line of each game (a resumed run may have written a
game twice), the second decodes those lines one at a time. A damaged line is skipped; its game
counts as one without a transcript.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from engine.analysis.conditions import condition_fields, field_values
from engine.records.record import GameRecord
from engine.records.transcripts import TRANSCRIPTS_FILE, Transcript
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
    transcripts: bool  # the run directory has a transcripts file


def condition_labels(records: Sequence[GameRecord]) -> dict[int, str]:
    """Each game's condition, named by the fields that vary in the run ("all" when none does)."""
    fields = condition_fields(records)
    labels = {}
    for record in records:
        values = field_values(record)
        labels[record.spec.game_id] = ", ".join(f"{f}={values.get(f, '')}" for f in fields) or "all"
    return labels


def last_lines(path: Path) -> dict[int, int]:
    """The offset of the last whole line of each game id in a transcripts file."""
    offsets: dict[int, int] = {}
    prefix = b'{"game_id":'
    offset = 0
    with path.open("rb") as f:
        for line in f:
            if line.startswith(prefix) and line.endswith(b"\n"):
                end = line.find(b",", len(prefix))
                digits = line[len(prefix):end]
                if end > 0 and digits.isdigit():
                    offsets[int(digits)] = offset
            offset += len(line)
    return offsets


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


def _transcripts(path: Path, wanted: dict[int, int]) -> Iterator[tuple[int, Transcript]]:
    """The transcripts at ``wanted`` (game id -> offset), in file order; damaged ones left out."""
    decoder = msgspec.json.Decoder(Transcript)
    with path.open("rb") as f:
        for game_id, offset in sorted(wanted.items(), key=lambda item: item[1]):
            f.seek(offset)
            try:
                transcript = decoder.decode(f.readline())
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            if transcript.game_id == game_id:
                yield game_id, transcript


def run_analyses(records: Sequence[GameRecord], run_path: Path) -> RunAnalyses:
    """Every game's analyses over ``records``, reading their transcripts from ``run_path``."""
    path = Path(run_path) / TRANSCRIPTS_FILE
    by_game: dict[str, list[GameRecord]] = {}
    for record in records:
        by_game.setdefault(record.spec.game, []).append(record)
    offsets = last_lines(path) if path.is_file() else {}
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
        wanted = {game_id: offsets[game_id] for game_id in scored if game_id in offsets}
        games = 0
        if wanted:
            for game_id, transcript in _transcripts(path, wanted):
                analysis.add(played_game(scored[game_id], transcript, labels[game_id]))
                games += 1
        found.append(GameAnalyses(game=name, tables=analysis.tables(), games=games,
                                  without_transcript=len(scored) - games, errors=len(game_records) - len(scored)))
    return RunAnalyses(games=found, without_analyses=without, transcripts=path.is_file())
