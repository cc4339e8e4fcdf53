"""A flat table of a run's games: one row per game, with its condition fields and scores.

Columns, in this order: ``game_id``, ``seed``, ``condition`` (the condition's label), each condition
field (``game``, the game's own labels, ``feedback``, ``T``, ``h``, one per role, the extensions),
``outcome``, ``error`` (the error's kind, empty without one), ``turns``, ``solved_turn``, each score
as ``score_<key>``, the format errors, cut replies and invalid actions summed over the roles, and,
where a model played, ``calls``, ``prompt_tokens``, ``completion_tokens`` and ``cost_usd`` summed
over the roles (``cost_usd`` empty where a price is unknown). A column a game does not have is empty
in its row (a score another game of the run gives, a field another condition sets).

``write_games_csv`` writes ``games.csv`` into a run directory at the end of a run; ``games_df``
gives the same rows as a pandas or polars data frame, from any run directory's results (a run still
playing, or one from before ``games.csv`` was written, included).
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from engine.analysis.reading import recorded_games
from engine.records.record import GameRecord
from engine.records.rundir import RESULTS_FILE

GAMES_FILE = "games.csv"
SCORE_PREFIX = "score_"

Row = dict[str, Any]


def game_row(record: GameRecord) -> Row:
    """One game as a flat row (see the module's docstring for the columns)."""
    fields = record.spec.condition_fields()
    row: Row = {"game_id": record.game_id, "seed": record.spec.seed, "condition": record.spec.condition()}
    row.update(fields)
    row.update(outcome=record.outcome, error=record.error.kind if record.error is not None else None,
               turns=record.turns, solved_turn=record.solved_turn)
    row.update({SCORE_PREFIX + key: value for key, value in record.scores.items()})
    row["format_errors"] = sum(record.format_errors.values())
    row["cut_replies"] = sum(record.cut_replies.values()) if isinstance(record.cut_replies, dict) else 0
    row["invalid_actions"] = sum(record.invalid_actions.values())
    if isinstance(record.usage, dict):
        usages = record.usage.values()
        row["calls"] = sum(u.calls for u in usages)
        row["prompt_tokens"] = sum(u.prompt_tokens for u in usages)
        row["completion_tokens"] = sum(u.completion_tokens for u in usages)
        costs = [u.cost_usd for u in usages]
        row["cost_usd"] = None if None in costs else round(sum(c for c in costs if c is not None), 6)
    return row


def columns_of(rows: Iterable[Row]) -> list[str]:
    """Every column of ``rows``, in the order they first appear."""
    return list(dict.fromkeys(key for row in rows for key in row))


def write_games_csv(records: Callable[[], Iterator[GameRecord]], path: Path | str) -> int:
    """Write the table of the games ``records()`` yields to ``path`` as CSV; the number of rows.
    ``records`` is called twice (the columns, then the rows), so that one record is in memory at a time."""
    columns = columns_of(game_row(r) for r in records())
    count = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        for record in records():
            writer.writerow(game_row(record))
            count += 1
    return count


def games_df(run_dir: Path | str, library: Literal["pandas", "polars"] = "pandas") -> Any:
    """The run's games, one row each, as a ``pandas.DataFrame`` (or a ``polars.DataFrame`` with
    ``library="polars"``), read from the run directory's ``results.jsonl``: the last record of each
    game, in game-id order. Neither library is a dependency of the engine: install the one you use
    (``pip install pandas``). ImportError naming it if it is not installed."""
    if library not in ("pandas", "polars"):
        raise ValueError(f"library must be 'pandas' or 'polars', got {library!r}")
    try:
        module = importlib.import_module(library)
    except ImportError:
        raise ImportError(f"games_df(library={library!r}) needs {library}: pip install {library}") from None
    rows = [game_row(record) for record in recorded_games(Path(run_dir) / RESULTS_FILE)]
    columns = columns_of(rows)
    if library == "pandas":
        return module.DataFrame(rows, columns=columns)
    return module.DataFrame([{c: row.get(c) for c in columns} for row in rows], schema=columns, infer_schema_length=None)
