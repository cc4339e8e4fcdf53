"""A policy backed by a language model: the appendix-G prompt in, the model's text out.

The reply is parsed by the agent actor like any other; a reply that cannot be read uses up the turn
and is reported to the agent in its next prompt. Failures of the provider (``InfraError``) end the
game as an infrastructure error, never as the model's failure.
"""

from __future__ import annotations

from typing import Any

from puzzles.prompts import render_prompt, reply_schema

from .agent import TurnContext


class LLMPolicy:
    def __init__(self, backend: Any, *, structured: bool = False) -> None:
        self.backend = backend
        self.structured = structured
        self.last_usage = None
        self.last_prompt: dict[str, str] | None = None

    async def reply(self, context: TurnContext) -> str:
        system, user = render_prompt(context)
        self.last_prompt = {"system": system, "user": user}
        schema = reply_schema(context) if self.structured else None
        completion = await self.backend.complete(system, user, schema)
        self.last_usage = completion.usage
        return completion.text

    def count_tokens(self, text: str) -> int:
        return self.backend.tokenizer.count(text)
