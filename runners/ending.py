"""How a run ended, said in one place for every runner: the closing line, the command that continues
the run, and the exit status.

| ending | exit status |
| --- | --- |
| every game recorded, none lost | 0 |
| the games ``--limit`` asked for recorded, none lost (the rest of the plan left for ``--resume``) | 0 |
| games lost to the infrastructure (played again by ``--resume``), or the run gave up early (its failed games played again by ``--resume --replay-errors``) | 3 |
| the run's files could not be written | 4 |
| games stopped starting at a spending cap | 5 |
| interrupted (Ctrl-C, SIGTERM) | 130 |
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console

from engine.session import Tally

from runners.printable import printable

EXIT_LOST_GAMES = 3
EXIT_STORAGE = 4
EXIT_CAPPED = 5
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Ending:
    """``reason`` says what stopped a run that did not finish: the cap it reached, the file it could
    not write, how its first games were all lost."""

    kind: Literal["finished", "limited", "capped", "interrupted", "storage", "gave_up"]
    tally: Tally | None = None
    elapsed: float = 0.0
    reason: str = ""
    cut: int = 0  # games in flight that an interruption stopped (played again on resume)
    replay_errors: bool = False  # the run gave up on games that ended in errors, which only --replay-errors plays again


def say_ending(console: Console, ending: Ending, *, total: int, results: Path, command: str) -> int:
    """Print how the run ended, with the command that continues it; the exit status."""
    tally = ending.tally

    def say(text: str) -> None:  # a reason may quote a provider's error: shown as text, controls escaped
        console.print(printable(text), soft_wrap=True, markup=False, emoji=False, highlight=False)

    if ending.kind == "gave_up":
        again = " --replay-errors" if ending.replay_errors else ""
        say(f"Stopped early: {ending.reason}. Fix that, then continue with: {command}{again}")
        return EXIT_LOST_GAMES
    if ending.kind == "storage":
        say(f"Stopped: {ending.reason}. Every game finished before it is in {results}; free the space, then continue with: {command}")
        return EXIT_STORAGE
    if ending.kind == "capped" and tally is not None:
        say(f"Stopped starting games at {ending.reason}. {tally.games} of {total} games recorded in {results}; continue with a higher cap: {command}")
        return EXIT_CAPPED
    if ending.kind == "limited" and tally is not None:
        say(f"Played as far as {ending.reason}: {tally.games} of {total} games recorded in {results} ({tally.lost} lost to the "
            f"infrastructure). Play the rest with: {command}")
        return EXIT_LOST_GAMES if tally.lost else 0
    if ending.kind == "finished" and tally is not None:
        say(
            f"{tally.games} game{'s' * (tally.games != 1)} in {ending.elapsed:.1f}s: {tally.scored} scored, "
            f"{tally.lost} lost to the infrastructure, {tally.other_errors} ended in other errors. Results: {results}"
        )
        if tally.lost:
            say(f"Play the lost games again with: {command}")
            return EXIT_LOST_GAMES
        return 0
    count = f"{tally.games} of {total} games" if tally is not None else "finished games"
    cut = f"; {ending.cut} game{'s' * (ending.cut != 1)} in flight stopped, to be played again" if ending.cut else ""
    say(f"Interrupted: {count} recorded in {results}{cut}. Continue with: {command}")
    return EXIT_INTERRUPTED
