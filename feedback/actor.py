"""The Feedback actor: sits between the Environment and the agents and adds the configured
feedback to every ``YourTurn``.

``evaluate(role)`` reads the game state as it is when the role is prompted; the state cannot change
in between, since the Environment applies nothing until the prompted roles have acted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from actors.base import Actor
from actors.environment import FEEDBACK
from bus import Bus, TurnStart, YourTurn

Evaluate = Callable[[str], Any]
"""``evaluate(role)`` -> the feedback for ``role`` now."""


class FeedbackActor(Actor):
    def __init__(self, bus: Bus, *, game_id: int, max_turns: int, evaluate: Evaluate) -> None:
        super().__init__(bus, FEEDBACK)
        self.game_id = game_id
        self.max_turns = max_turns
        self.evaluate = evaluate

    async def handle(self, message: Any) -> None:
        if not isinstance(message, TurnStart):
            raise TypeError(f"feedback actor got unexpected {type(message).__name__}")
        role = message.role
        await self.bus.send(
            role,
            YourTurn(
                game_id=self.game_id,
                turn=message.turn,
                max_turns=self.max_turns,
                role=role,
                view=message.view,
                feedback=self.evaluate(role),
                notices=message.notices,
                candidates=message.candidates,
            ),
        )
