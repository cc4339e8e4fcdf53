"""The Environment actor: the game master. It owns the game state, asks each role to act in turn,
applies what they do, and ends the game."""

from __future__ import annotations

from typing import Any

import msgspec

from bus import Act, Bus, GameOver, TurnStart
from puzzles.base import GameRules

from .base import GAME_TOPIC, Actor

ENVIRONMENT = "environment"
FEEDBACK = "feedback"


class TurnLog(msgspec.Struct, frozen=True, gc=False):
    """One agent's turn as the Environment saw it."""

    turn: int
    role: str
    message_chars: int
    reply_chars: int
    applied: int
    rejected: tuple[Any, ...] = ()
    format_error: str | None = None
    progress: int = 0


class GameResult(msgspec.Struct):
    outcome: str  # "success" | "failure"
    turns: int
    solved_turn: int | None
    turn_log: list[TurnLog]
    metrics: dict[str, Any]


class ProtocolError(RuntimeError):
    """A message arrived that the game's protocol does not allow at this point."""


def _notices(act: Act, rejected: tuple[Any, ...]) -> tuple[str, ...]:
    """What the agent is told next turn about the problems of this one."""
    notes = []
    if act.format_error is not None:
        notes.append(f"Your last reply could not be read ({act.format_error}); nothing was applied.")
    for item in rejected:
        notes.append(f"Your action {item.action} was rejected: {item.reason}.")
    return tuple(notes)


class Environment(Actor):
    """Each turn every role acts once, in ``game.roles`` order; the game ends when solved or after
    ``game.max_turns`` turns."""

    def __init__(self, bus: Bus, game_id: int, game: GameRules, feedback_address: str = FEEDBACK) -> None:
        super().__init__(bus, ENVIRONMENT)
        self.game_id = game_id
        self.game = game
        self.feedback_address = feedback_address
        self.turn = 1
        self._index = 0
        self._notices: dict[str, tuple[str, ...]] = {}
        self._log: list[TurnLog] = []
        self.result: GameResult | None = None

    @property
    def current_role(self) -> str:
        return self.game.roles[self._index]

    async def on_start(self) -> None:
        await self._ask()

    async def _ask(self) -> None:
        role = self.current_role
        await self.bus.send(
            self.feedback_address,
            TurnStart(
                game_id=self.game_id,
                turn=self.turn,
                role=role,
                hypotheses=dict(self.game.hypotheses()),
                notices=self._notices.pop(role, ()),
                progress={r: self.game.progress(r) for r in self.game.roles},
            ),
        )

    async def handle(self, message: Any) -> None:
        if not isinstance(message, Act):
            raise ProtocolError(f"environment got unexpected {type(message).__name__}")
        if message.role != self.current_role or message.turn != self.turn:
            raise ProtocolError(
                f"act from {message.role} for turn {message.turn}, expected {self.current_role} "
                f"for turn {self.turn}"
            )
        game = self.game
        applied, rejected = 0, tuple(message.rejected)
        if message.format_error is None:
            applied, invalid = game.apply(message.role, tuple(message.actions))
            rejected += invalid
        self._notices[message.role] = _notices(message, rejected)
        self._log.append(
            TurnLog(
                turn=self.turn,
                role=message.role,
                message_chars=len(message.message),
                reply_chars=message.reply_chars,
                applied=applied,
                rejected=rejected,
                format_error=message.format_error,
                progress=game.progress(message.role),
            )
        )
        if game.solved():
            await self._finish("success")
            return
        self._index += 1
        if self._index == len(game.roles):
            self._index = 0
            self.turn += 1
            if self.turn > game.max_turns:
                self.turn = game.max_turns
                await self._finish("failure")
                return
        await self._ask()

    async def _finish(self, outcome: str) -> None:
        self.result = GameResult(
            outcome=outcome,
            turns=self.turn,
            solved_turn=self.turn if outcome == "success" else None,
            turn_log=self._log,
            metrics=self.game.metrics(),
        )
        self.stop()
        await self.bus.publish(GAME_TOPIC, GameOver(game_id=self.game_id, outcome=outcome, turn=self.turn))
