"""A policy backed by a language model: the game's prompt in, the model's text out.

The game's prompter renders the prompt (and, for structured outputs, the reply schema); the reply
is parsed by the agent actor like any other, and a reply that cannot be read uses up the turn and is
reported to the agent in its next prompt. Failures of the provider (``InfraError``) end the game as
an infrastructure error, never as the model's failure.

Where the game's prompter asks for them (``puzzles.base.Prompter``), the agent keeps its whole chat
with the model (``chat_memory``) and runs the game's agent modules before each turn (``prepare``),
whose model calls are summed into the turn's usage.
"""

from __future__ import annotations

from typing import Any

from bus import Usage
from puzzles.base import Prompter, TurnContext, clean_text


class LLMPolicy:
    def __init__(self, backend: Any, prompter: Prompter, *, structured: bool = False) -> None:
        self.backend = backend
        self.prompter = prompter
        self.structured = structured
        self.chat_memory = bool(getattr(prompter, "chat_memory", False))
        self.prepare = getattr(prompter, "prepare", None)
        self.notes: dict[str, Any] = {}  # the agent modules' memory, kept across turns
        self.system: str | None = None  # with chat memory: the system prompt of the first turn
        self.history: list[tuple[str, str]] = []  # with chat memory: (user prompt, raw reply) per turn
        self.last_usage: Usage | None = None
        self.last_prompt: dict[str, Any] | None = None

    async def reply(self, context: TurnContext) -> str:
        usages: list[Usage] = []
        modules: list[dict[str, str]] = []
        if self.prepare is not None:
            async def ask(system: str, user: str, purpose: str) -> str:
                completion = await self.backend.complete(system, user, None)
                usages.append(completion.usage)
                text = clean_text(completion.text)
                modules.append({"purpose": purpose, "system": system, "user": user, "reply": text})
                return text

            context = await self.prepare(context, self.notes, ask)
        system, user = self.prompter.render(context)
        if self.chat_memory:
            self.system = system = self.system or system
        schema = self.prompter.schema(context) if self.structured else None
        completion = await self.backend.complete(system, user, schema, tuple(self.history))
        usages.append(completion.usage)
        if self.chat_memory:
            self.history.append((user, clean_text(completion.text)))
        self.last_usage = Usage.total(usages)
        self.last_prompt = {"system": system, "user": user}
        if self.chat_memory and len(self.history) > 1:
            self.last_prompt["earlier_turns"] = str(len(self.history) - 1)
        if modules:
            self.last_prompt["modules"] = modules  # type: ignore[assignment]
        return completion.text

    def count_tokens(self, text: str) -> int:
        return self.backend.tokenizer.count(text)
