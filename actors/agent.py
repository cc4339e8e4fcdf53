"""The agent actor: holds a policy, remembers the conversation it has seen, and turns each
``YourTurn`` into a message for its partners and an ``Act`` for the Environment.

Each turn the policy gives an ``Answer`` (``puzzles.policy``): the reply text, which the agent reads
with the game's reader, and what the policy knows of the call (usage, prompt, a person's time), which
goes with the turn to the Environment.

On a best-of-n turn (``YourTurn.candidates`` > 1) it samples that many replies (at once where the
policy is a ``SamplingPolicy``, else ``reply`` n times), sends their actions to the Environment, and
plays the one it is told (``Chosen``); a ``SamplingPolicy`` is told too (``chose(index)``). The
model never sees why a candidate was or was not chosen."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from bus import Act, Bus, Candidate, Candidates, ChannelNotice, Chat, Chosen, Usage, YourTurn
from puzzles.turn import MAX_REPLY_CHARS, ChatLine, Reply, ReplyFormatError, TurnContext, clean_text
from puzzles.optional import implements
from puzzles.policy import Answer, Policy, SamplingPolicy
from puzzles.referee import ProtocolError

from .base import Actor
from .environment import ENVIRONMENT


class _Read(NamedTuple):
    """A reply as the agent read it: the text, its length, the parsed reply or why it could not be read."""

    text: str
    reply_chars: int
    reply: Reply | None
    error: str | None


class _Sampled(NamedTuple):
    """A best-of-n turn awaiting ``Chosen``: its context, the answers as read, the time they took
    and their usage summed."""

    context: TurnContext
    answers: tuple[Answer, ...]
    reads: list[_Read]
    latency: float
    usage: Usage | None


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
        parse: Callable[[str, TurnContext], Reply],
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
        self._candidates: _Sampled | None = None  # best of n, awaiting ``Chosen``

    async def handle(self, message: Any) -> None:
        if isinstance(message, Chat):
            self.log.append(ChatLine(message.turn, message.sender, message.text))
        elif isinstance(message, YourTurn):
            await self._act(message)
        elif isinstance(message, Chosen):
            await self._play_chosen(message)
        elif isinstance(message, ChannelNotice):
            self.pending_notices.append(message.text)
        else:
            raise TypeError(f"agent {self.role} got unexpected {type(message).__name__}")

    def _about_the_call(self, context: TurnContext, answer: Answer, usage: Usage | None, message: str = "") -> dict[str, Any]:
        if isinstance(usage, Usage) and answer.count_tokens is not None and message:
            usage = msgspec.structs.replace(usage, message_tokens=answer.count_tokens(message))
        return {"usage": usage, "prompt": answer.prompt, "context": context, "human": answer.human, "tokens": answer.tokens}

    def _recipients(self, reply: Reply, partners: tuple[str, ...]) -> tuple[str, ...]:
        if not self.directed:
            return partners
        to = reply.to
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
        if prompt.candidates > 1:
            await self._sample(context, prompt.candidates)
            return
        started = time.perf_counter()
        answer = self._checked(await self.policy.reply(context))
        latency = time.perf_counter() - started if answer.seconds is None else answer.seconds
        await self._play(context, self._read(answer.text, context), latency, answer, answer.usage)

    async def _sample(self, context: TurnContext, n: int) -> None:
        """Best of n: sample ``n`` replies, send their actions to the Environment, and wait for
        ``Chosen``. The turn's usage is every sample's; its latency, the sampling's as a whole."""
        started = time.perf_counter()
        if implements(self.policy, SamplingPolicy):  # it samples best of n itself (asked here: a best-of-n turn is rare)
            answers = tuple(self._checked(answer) for answer in await self.policy.replies(context, n))
        else:
            answers = tuple([self._checked(await self.policy.reply(context)) for _ in range(n)])
        latency = time.perf_counter() - started
        known = [answer.usage for answer in answers if isinstance(answer.usage, Usage)]
        reads = [self._read(answer.text, context) for answer in answers]
        self._candidates = _Sampled(context, answers, reads, latency, Usage.total(known) if known else None)
        await self.bus.send(
            self.environment,
            Candidates(
                game_id=self.game_id, turn=context.turn, role=self.role,
                actions=tuple(read.reply.actions if read.reply is not None else () for read in reads),
            ),
        )

    async def _play_chosen(self, chosen: Chosen) -> None:
        if self._candidates is None or self._candidates.context.turn != chosen.turn:
            raise ProtocolError(f"agent {self.role} was told to play a candidate of turn {chosen.turn} it did not sample")
        context, answers, reads, latency, usage = self._candidates
        self._candidates = None
        if implements(self.policy, SamplingPolicy):
            self.policy.chose(chosen.index)
        candidates = tuple(
            Candidate(reply=read.text, format_error=read.error) if read.reply is None else Candidate(
                reply=read.text, message=read.reply.message, actions=tuple(read.reply.actions),
                rejected=tuple(read.reply.rejected),
            )
            for read in reads
        )
        await self._play(context, reads[chosen.index], latency, answers[chosen.index], usage, candidates, chosen.index)

    def _checked(self, answer: Answer) -> Answer:
        if not isinstance(answer, Answer):
            raise TypeError(
                f"the policy of {self.role} answered with {type(answer).__name__}, not an Answer (puzzles.policy): "
                "return Answer(text)"
            )
        return answer

    def _read(self, text: Any, context: TurnContext) -> _Read:
        if isinstance(text, str):  # whatever a model sends, the run can store
            text = clean_text(text)
        reply_chars = len(text) if isinstance(text, str) else 0
        try:
            if reply_chars > MAX_REPLY_CHARS:
                raise ReplyFormatError(f"the reply is {reply_chars} characters long, over the limit of {MAX_REPLY_CHARS}")
            return _Read(text, reply_chars, self.parse(text, context), None)
        except ReplyFormatError as exc:
            return _Read(text[:MAX_REPLY_CHARS] if isinstance(text, str) else "", reply_chars, None, str(exc))

    async def _play(
        self, context: TurnContext, read: _Read, latency: float, answer: Answer, usage: Usage | None,
        candidates: tuple[Candidate, ...] = (), chosen: int | None = None,
    ) -> None:
        """Deliver the reply's message and send the turn to the Environment (``answer``: the reply
        played, ``usage``: the turn's, every sample's on a best-of-n turn)."""
        reply = read.reply
        if reply is None:
            act = Act(
                game_id=self.game_id, turn=context.turn, role=self.role, message="",
                format_error=read.error, cut=answer.cut, reply_chars=read.reply_chars, reply=read.text, latency=latency,
                candidates=candidates, chosen=chosen, **self._about_the_call(context, answer, usage),
            )
        else:
            if self.use_scratchpad:
                self.scratchpad = reply.scratchpad
            if reply.message:
                self.log.append(ChatLine(context.turn, self.role, reply.message))
                for partner in self._recipients(reply, context.partners):
                    await self.bus.say(
                        Chat(
                            game_id=self.game_id, turn=context.turn, sender=self.role,
                            recipient=partner, text=reply.message,
                        )
                    )
            act = Act(
                game_id=self.game_id, turn=context.turn, role=self.role, message=reply.message,
                actions=reply.actions, rejected=reply.rejected, reply_chars=read.reply_chars,
                reply=read.text, latency=latency, candidates=candidates, chosen=chosen,
                **self._about_the_call(context, answer, usage, reply.message),
            )
        await self.bus.send(self.environment, act)
