"""The Environment actor: the game master. It owns the game state, asks each role to act in turn,
applies what they do, and ends the game."""

from __future__ import annotations

from typing import Any

import msgspec

from bus import Act, Bus, GameOver, TurnStart, Usage
from puzzles.base import GameRules, Rejected

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
    usage: Usage | msgspec.UnsetType = msgspec.UNSET  # the model call behind the turn, if any

    @property
    def reply_tokens(self) -> int | None:
        """The reply's tokens as the provider counted them (model turns only)."""
        return None if self.usage is msgspec.UNSET else self.usage.completion_tokens

    @property
    def message_tokens(self) -> int | None:
        """The message's tokens, one tokenizer for every model (model turns only)."""
        return None if self.usage is msgspec.UNSET else self.usage.message_tokens


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
    """Runs the game in rounds (turns). ``round_robin``: every role acts once per round, in
    ``game.roles`` order, each seeing what the others did before it. ``simultaneous``: every role is
    asked at once and acts on the state at the start of the round; the actions are applied together, in
    roster order. The game ends when solved or after ``game.max_turns`` rounds. ``max_actions`` caps
    the actions applied per agent turn; the rest are rejected with a reason."""

    def __init__(
        self,
        bus: Bus,
        game_id: int,
        game: GameRules,
        feedback_address: str = FEEDBACK,
        *,
        turn_order: str = "round_robin",
        max_actions: int | None = None,
    ) -> None:
        super().__init__(bus, ENVIRONMENT)
        if turn_order not in ("round_robin", "simultaneous"):
            raise ValueError(f"unknown turn order {turn_order!r}")
        self.game_id = game_id
        self.game = game
        self.feedback_address = feedback_address
        self.simultaneous = turn_order == "simultaneous"
        self.max_actions = max_actions
        self.turn = 1
        self._index = 0
        self._waiting: dict[str, Act] = {}  # simultaneous: acts received this round
        self._notices: dict[str, tuple[str, ...]] = {}
        self._log: list[TurnLog] = []
        self.result: GameResult | None = None

    @property
    def current_role(self) -> str:
        return self.game.roles[self._index]

    async def on_start(self) -> None:
        await self._start_round()

    async def _start_round(self) -> None:
        if self.simultaneous:
            for role in self.game.roles:
                await self._ask(role)
        else:
            await self._ask(self.current_role)

    async def _ask(self, role: str) -> None:
        await self.bus.turn_starting(role)
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
        if message.turn != self.turn or message.role not in self.game.roles:
            raise ProtocolError(f"act from {message.role} for turn {message.turn} during turn {self.turn}")
        if self.simultaneous:
            if message.role in self._waiting:
                raise ProtocolError(f"second act from {message.role} in turn {self.turn}")
            self._waiting[message.role] = message
            if len(self._waiting) < len(self.game.roles):
                return
            acts, self._waiting = [self._waiting[r] for r in self.game.roles], {}
            for act in acts:
                self._apply(act)
            if self.game.solved():
                await self._finish("success")
            else:
                await self._next_round()
            return
        if message.role != self.current_role:
            raise ProtocolError(f"act from {message.role}, expected {self.current_role} in turn {self.turn}")
        self._apply(message)
        if self.game.solved():
            await self._finish("success")
            return
        self._index += 1
        if self._index < len(self.game.roles):
            await self._ask(self.current_role)
        else:
            self._index = 0
            await self._next_round()

    def _apply(self, message: Act) -> None:
        game = self.game
        applied, rejected = 0, tuple(message.rejected)
        if message.format_error is None:
            actions = tuple(message.actions)
            if self.max_actions is not None and len(actions) > self.max_actions:
                rejected += tuple(
                    Rejected(str(action), f"over the limit of {self.max_actions} actions per turn")
                    for action in actions[self.max_actions :]
                )
                actions = actions[: self.max_actions]
            applied, invalid = game.apply(message.role, actions)
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
                usage=message.usage if isinstance(message.usage, Usage) else msgspec.UNSET,
            )
        )

    async def _next_round(self) -> None:
        if self.turn >= self.game.max_turns:
            await self._finish("failure")
            return
        self.turn += 1
        await self._start_round()

    def partial_result(self) -> GameResult:
        """What has been played so far (for a game that ended in an error)."""
        return GameResult(outcome="error", turns=self.turn, solved_turn=None, turn_log=list(self._log), metrics=self.game.metrics())

    async def _finish(self, outcome: str) -> None:
        self.result = GameResult(
            outcome=outcome,
            turns=self.turn,
            solved_turn=self.turn if outcome == "success" else None,
            turn_log=self._log,
            metrics=self.game.metrics(),
        )
        self.stop()
        self.bus.end()
        await self.bus.publish(GAME_TOPIC, GameOver(game_id=self.game_id, outcome=outcome, turn=self.turn))
