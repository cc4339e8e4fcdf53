"""A policy backed by a language model: the game's prompt in, the model's text out.

The game's prompter renders the prompt (and, for structured outputs, the reply schema); the reply
is parsed by the agent actor like any other, and a reply that cannot be read uses up the turn and is
reported to the agent in its next prompt. Failures of the provider (``InfraError``) end the game as
an infrastructure error, never as the model's failure.
"""

from __future__ import annotations

from typing import Any

from puzzles.base import Prompter, TurnContext


class LLMPolicy:
    def __init__(self, backend: Any, prompter: Prompter, *, structured: bool = False) -> None:
        self.backend = backend
        self.prompter = prompter
        self.structured = structured
        self.last_usage = None
        self.last_prompt: dict[str, str] | None = None

    async def reply(self, context: TurnContext) -> str:
        system, user = self.prompter.render(context)
        self.last_prompt = {"system": system, "user": user}
        schema = self.prompter.schema(context) if self.structured else None
        completion = await self.backend.complete(system, user, schema)
        self.last_usage = completion.usage
        return completion.text

    def count_tokens(self, text: str) -> int:
        return self.backend.tokenizer.count(text)
