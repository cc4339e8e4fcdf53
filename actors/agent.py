"""The agent actor: holds a policy, remembers the conversation it has seen, and turns each
``YourTurn`` into a message for its partners and an ``Act`` for the Environment."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from bus import Act, Bus, ChannelNotice, Chat, Usage, YourTurn
from puzzles.base import MAX_REPLY_CHARS, ChatLine, Policy, ReplyFormatError, TurnContext, clean_text

from .base import Actor
from .environment import ENVIRONMENT


class ParsedReply(Protocol):
    message: str
    actions: tuple[Any, ...]
    rejected: tuple[Any, ...]


def recent_lines(log: list[ChatLine], history: int | None, me: str) -> tuple[ChatLine, ...]:
    """The conversation an agent is shown, in the order it happened.

    ``history`` is how many of the latest messages of each sender are kept (None: all). Each partner's
    newest message is always kept, since it is the only way information reaches the agent; so 0 means
    the partners' newest messages and none of the agent's own.
    """
    if history is None:
        return tuple(log)
    kept: list[ChatLine] = []
    seen: dict[str, int] = {}
    for line in reversed(log):
        count = seen.get(line.sender, 0)
        limit = history if line.sender == me else max(history, 1)
        if count < limit:
            seen[line.sender] = count + 1
            kept.append(line)
    kept.reverse()
    return tuple(kept)


class AgentActor(Actor):
    """``parse(text, context)`` reads a reply to ``context`` (the game's reader). ``directed``: each
    message goes to the one partner named in the reply's "to" (or to the only partner).
    ``scratchpad``: the agent's private starting information is shown on its first turn only, and
    the reply's "scratchpad" is shown on its next turn instead."""

    def __init__(
        self,
        bus: Bus,
        role: str,
        policy: Policy,
        *,
        game_id: int,
        parse: Callable[[str, TurnContext], ParsedReply],
        history: int | None = 1,
        environment: str = ENVIRONMENT,
        directed: bool = False,
        scratchpad: bool = False,
    ) -> None:
        super().__init__(bus, role)
        self.role = role
        self.policy = policy
        self.game_id = game_id
        self.parse = parse
        self.history = history
        self.environment = environment
        self.directed = directed
        self.use_scratchpad = scratchpad
        self.scratchpad: str | None = None
        self.turns_taken = 0
        self.log: list[ChatLine] = []
        self.pending_notices: list[str] = []

    async def handle(self, message: Any) -> None:
        if isinstance(message, Chat):
            self.log.append(ChatLine(message.turn, message.sender, message.text))
        elif isinstance(message, YourTurn):
            await self._act(message)
        elif isinstance(message, ChannelNotice):
            self.pending_notices.append(message.text)
        else:
            raise TypeError(f"agent {self.role} got unexpected {type(message).__name__}")

    def _about_the_call(self, context: TurnContext, message: str = "") -> dict[str, Any]:
        usage = getattr(self.policy, "last_usage", None)
        count_tokens = getattr(self.policy, "count_tokens", None)
        if isinstance(usage, Usage) and count_tokens is not None and message:
            usage = msgspec.structs.replace(usage, message_tokens=count_tokens(message))
        return {
            "usage": usage,
            "prompt": getattr(self.policy, "last_prompt", None),
            "context": context,
        }

    def _recipients(self, reply: ParsedReply, partners: tuple[str, ...]) -> tuple[str, ...]:
        if not self.directed:
            return partners
        to = getattr(reply, "to", None)
        if to in partners:
            return (to,)
        if to is None and len(partners) == 1:
            return partners
        names = ", ".join(partners)
        self.pending_notices.append(
            f"Your message was not delivered: name one recipient in \"to\" (one of {names})."
        )
        return ()

    async def _act(self, prompt: YourTurn) -> None:
        partners = tuple(self.bus.talks_to(self.role))
        reinjected = not self.use_scratchpad or self.turns_taken == 0
        notices = prompt.notices + tuple(self.pending_notices)
        self.pending_notices.clear()
        self.turns_taken += 1
        context = TurnContext(
            game_id=self.game_id,
            role=self.role,
            turn=prompt.turn,
            max_turns=prompt.max_turns,
            view=prompt.view,
            feedback=prompt.feedback,
            conversation=recent_lines(self.log, self.history, self.role),
            notices=notices,
            partners=partners,
            directed=self.directed,
            scratchpad=self.scratchpad if self.use_scratchpad else None,
            keeps_notes=self.use_scratchpad,
            reinjected=reinjected,
        )
        started = time.perf_counter()
        text = await self.policy.reply(context)
        latency = time.perf_counter() - started
        if isinstance(text, str):  # whatever a model sends, the run can store
            text = clean_text(text)
        reply_chars = len(text) if isinstance(text, str) else 0
        try:
            if reply_chars > MAX_REPLY_CHARS:
                raise ReplyFormatError(f"the reply is {reply_chars} characters long, over the limit of {MAX_REPLY_CHARS}")
            reply = self.parse(text, context)
        except ReplyFormatError as exc:
            act = Act(
                game_id=self.game_id, turn=prompt.turn, role=self.role, message="",
                format_error=str(exc), reply_chars=reply_chars,
                reply=text[:MAX_REPLY_CHARS] if isinstance(text, str) else "", latency=latency,
                **self._about_the_call(context),
            )
        else:
            if self.use_scratchpad:
                self.scratchpad = getattr(reply, "scratchpad", None)
            if reply.message:
                self.log.append(ChatLine(prompt.turn, self.role, reply.message))
                for partner in self._recipients(reply, partners):
                    await self.bus.say(
                        Chat(
                            game_id=self.game_id, turn=prompt.turn, sender=self.role,
                            recipient=partner, text=reply.message,
                        )
                    )
            act = Act(
                game_id=self.game_id, turn=prompt.turn, role=self.role, message=reply.message,
                actions=reply.actions, rejected=reply.rejected, reply_chars=reply_chars,
                reply=text, latency=latency, **self._about_the_call(context, reply.message),
            )
        await self.bus.send(self.environment, act)
