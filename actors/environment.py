"""The Environment actor: the game master on the bus. A thin async shell around the referee
(``puzzles.referee``): it asks each role to act in turn, hands what the agents did to the referee,
sends what the game says through the channels, and ends the game. On a best-of-n turn the agent
first sends its sampled ``Candidates``; the referee has the game choose one, and the agent is told
which (``Chosen``) and plays it."""

from __future__ import annotations

from typing import Any

from bus import Act, Bus, Candidates, Chat, Chosen, GameOver, TurnStart
from puzzles.referee import GameResult, ProtocolError, Referee, Turn

from .base import GAME_TOPIC, Actor

ENVIRONMENT = "environment"
FEEDBACK = "feedback"


class Environment(Actor):
    def __init__(self, bus: Bus, game_id: int, referee: Referee, feedback_address: str = FEEDBACK) -> None:
        super().__init__(bus, ENVIRONMENT)
        self.game_id = game_id
        self.referee = referee
        self.feedback_address = feedback_address
        self.result: GameResult | None = None

    async def on_start(self) -> None:
        for role in self.referee.start():
            await self._ask(role)

    async def _ask(self, role: str) -> None:
        referee = self.referee
        await self.bus.turn_starting(role)
        await self.bus.send(
            self.feedback_address,
            TurnStart(
                game_id=self.game_id,
                turn=referee.turn,
                role=role,
                view=referee.state.view(role),
                notices=referee.notices(role),
                progress=referee.progress(),
                candidates=referee.candidates_wanted(role),
            ),
        )

    async def handle(self, message: Any) -> None:
        if isinstance(message, Candidates):
            index = self.referee.choose(message.role, message.turn, message.actions)
            await self.bus.send(message.role, Chosen(game_id=self.game_id, turn=message.turn, index=index))
            return
        if not isinstance(message, Act):
            raise ProtocolError(f"environment got unexpected {type(message).__name__}")
        turn = self.referee.turn
        following = self.referee.play(
            Turn(
                turn=message.turn, role=message.role, message=message.message, actions=tuple(message.actions),
                rejected=tuple(message.rejected), format_error=message.format_error, cut=message.cut,
                reply_chars=message.reply_chars, usage=message.usage, human=message.human,
            )
        )
        for said in following.say:
            recipients = (said.to,) if said.to is not None else tuple(self.bus.talks_to(message.role))
            for recipient in recipients:
                await self.bus.say(
                    Chat(game_id=self.game_id, turn=turn, sender=message.role, recipient=recipient, text=said.text)
                )
        if following.over:
            await self._finish()
            return
        for role in following.ask:
            await self._ask(role)

    def partial_result(self) -> GameResult:
        """What has been played so far (for a game that ended in an error)."""
        return self.referee.result()

    async def _finish(self) -> None:
        self.result = self.referee.result()
        self.stop()
        self.bus.end()
        await self.bus.publish(
            GAME_TOPIC, GameOver(game_id=self.game_id, outcome=self.result.outcome, turn=self.referee.turn)
        )
