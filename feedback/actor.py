"""The Feedback actor: sits between the Environment and the agents and adds the configured
feedback to every ``YourTurn``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from actors.base import Actor
from actors.environment import FEEDBACK
from bus import Bus, TurnStart, YourTurn

Evaluate = Callable[[Mapping[str, Any], str], Any]
"""``evaluate(hypotheses, role)`` -> the feedback for ``role``."""


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
                hypothesis=message.hypotheses[role],
                feedback=self.evaluate(message.hypotheses, role),
                notices=message.notices,
            ),
        )
