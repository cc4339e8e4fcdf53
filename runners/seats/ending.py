"""How a game ended, in the words a person in a seat reads (the terminal's end of game and a page's):
the outcome, the scores the game puts in words (``Records.score_words``), the turns, and why it
ended early. A score of one role is the person's own ("you") or names the partner."""

from __future__ import annotations

from typing import Any

from engine.policies import HumanAbsent
from puzzles import Game

HEADLINES = {"success": "solved together", "failure": "not solved"}


def _whose(key: str, roles: set[str]) -> str:
    """A score's role as a person reads it: "" for a score of the game, "you", or the partner's name."""
    role = key.partition(".")[2]
    if not role:
        return ""
    return "you" if role in roles else role.capitalize()


def score_words(game: Game, key: str, roles: set[str]) -> str:
    """A score in words (its words without the role, then whose it is)."""
    name = key.partition(".")[0]
    words = game.records.score_words.get(name, game.score_label(name))
    whose = _whose(key, roles)
    return f"{words} ({whose})" if whose else words


def ending(record: Any, game: Game, roles: str | set[str]) -> dict[str, Any]:
    """The outcome (``headline``), the scores in words (a list of [words, value]; none after an
    error), the turns, and why the game ended early (None when it did not)."""
    roles = {roles} if isinstance(roles, str) else set(roles)
    error = record.error
    why = None
    if error is not None and error.kind == HumanAbsent.kind:
        who = "you" if error.actor in roles else "your partner"
        why = f"The game ended early: {who} left or stopped answering."
    elif error is not None:
        why = "The game ended early because of a problem on our side; it is not counted against you."
    scores = [
        [score_words(game, key, roles), value] for key, value in record.scores.items()
        if key.partition(".")[0] in game.records.score_words
    ] if error is None else []
    return {
        "outcome": record.outcome, "headline": HEADLINES.get(record.outcome, "ended early"),
        "turns": record.turns, "scores": scores, "error": why,
    }
