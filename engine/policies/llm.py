"""A policy backed by a language model: the game's prompt in, the model's text out.

The game's prompter renders the prompt (and, for structured outputs, the reply schema, or the reply
grammar of a game whose replies are not JSON: ``puzzles.base.ReplyGrammar``); the reply
is parsed by the agent actor like any other, and a reply that cannot be read uses up the turn and is
reported to the agent in its next prompt. Failures of the provider (``InfraError``) end the game as
an infrastructure error, never as the model's failure.

Where the game's prompter asks for them (``puzzles.base.Prompter``), the agent keeps its whole chat
with the model (``chat_memory``) and runs the game's agent modules before each turn
(``puzzles.base.AgentModules``), whose model calls are summed into the turn's usage. A best-of-n
turn (``replies``: the policy is a ``puzzles.policy.SamplingPolicy``) makes its n calls at once,
each with its own sampling seed where the run fixes one.

Each ``Answer`` carries the call's usage, the prompt sent, and the run's tokenizer to count the
message the reply sends; with ``tokens`` (``--tokens``), the call's token ids and log-probabilities
too (``bus.Tokens``; the agent modules' calls are not the turn's and are left out).
"""

from __future__ import annotations

from typing import Any

import anyio

from bus import Usage
from engine.backends import Backend, Completion, Request
from puzzles.base import AgentModules, Prompter, ReplyGrammar
from puzzles.turn import TurnContext, clean_text
from puzzles.optional import implements
from puzzles.policy import Answer


class LLMPolicy:
    def __init__(self, backend: Backend, prompter: Prompter, *, structured: bool = False, tokens: bool = False) -> None:
        self.backend = backend
        self.prompter = prompter
        self.structured = structured
        self.tokens = tokens
        self.chat_memory = prompter.chat_memory
        self.prepare = prompter.prepare if implements(prompter, AgentModules) else None
        self.grammar = prompter.grammar if structured and implements(prompter, ReplyGrammar) else None
        self.notes: dict[str, Any] = {}  # the agent modules' memory, kept across turns
        self.system: str | None = None  # with chat memory: the system prompt of the first turn
        self.history: list[tuple[str, str]] = []  # with chat memory: (user prompt, raw reply) per turn
        self._sampled: list[str] = []  # with chat memory: the last turn's sampled replies

    async def reply(self, context: TurnContext) -> Answer:
        return (await self.replies(context, 1))[0]

    async def replies(self, context: TurnContext, n: int, *, first_sample: int = 0) -> tuple[Answer, ...]:
        """``n`` replies sampled for one turn, the calls made at once (best of n; the agent modules
        run once, their calls counted in the first answer's usage). With chat memory, the chat goes
        on with the first unless ``chose`` says otherwise. ``first_sample``: the sample number of the first
        (a branch resamples a turn as samples after the one played)."""
        usages: list[Usage] = []
        modules: list[dict[str, str]] = []
        if self.prepare is not None:
            async def ask(system: str, user: str, purpose: str) -> str:
                completion = await self.backend.complete(Request(system, user, sample=first_sample))  # a group member's own sample
                usages.append(completion.usage)
                text = clean_text(completion.text)
                modules.append({"purpose": purpose, "system": system, "user": user, "reply": text})
                return text

            context = await self.prepare(context, self.notes, ask)
        system, user = self.prompter.render(context)
        if self.chat_memory:
            self.system = system = self.system or system
        schema = self.prompter.schema(context) if self.structured else None
        grammar = self.grammar(context) if self.grammar is not None and schema is None else None
        history = tuple(self.history)
        completions: list[Completion | None] = [None] * n

        async def sample(i: int) -> None:
            completions[i] = await self.backend.complete(Request(system, user, schema, history, first_sample + i, grammar, self.tokens))

        if n == 1:
            await sample(0)
        else:
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(sample, i)
        done = [c for c in completions if c is not None]
        texts = [c.text for c in done]
        if self.chat_memory:
            self.history.append((user, clean_text(texts[0])))
            self._sampled = texts
        prompt: dict[str, Any] = {"system": system, "user": user}
        if self.chat_memory and len(self.history) > 1:
            prompt["earlier_turns"] = str(len(self.history) - 1)
        if modules:
            prompt["modules"] = modules
        first = Usage.total([*usages, done[0].usage])
        return tuple(
            Answer(c.text, usage=first if i == 0 else c.usage, prompt=prompt, count_tokens=self._count_tokens,
                   cut=c.finish == "length", tokens=c.tokens)
            for i, c in enumerate(done)
        )

    def chose(self, index: int) -> None:
        """The agent plays sampled reply ``index``: with chat memory, that is the reply the chat keeps."""
        if self.chat_memory and self._sampled:
            self.history[-1] = (self.history[-1][0], clean_text(self._sampled[index]))
        self._sampled = []

    def _count_tokens(self, text: str) -> int:
        return self.backend.tokenizer.count(text)
