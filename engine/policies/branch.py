"""The seat of a branch point: the seat's own policy, with one turn's message changed.

Every turn but the branch point's is the policy's own, so a game played again from its seed is the
recorded game up to that turn (a model's seat replays its recorded calls from the first run's full
transcripts, ``engine.play.recorded``, or from the response cache; ``runners.branch`` refuses a
sampled first run that kept neither). At the point, the policy is asked as usual and its reply read; then the message
is replaced by the alternative (``engine.plan.branching``) and the reply written again in the game's
format, with the same actions. A resample replaces the whole reply with another sample of the seat's
model; another policy's message comes from that policy, which follows the seat's turns from the
start (its answers before the point are thrown away) so that a policy with memory knows what its
seat has heard.

A reply at the point that cannot be read sends no message, so no alternative changes it (but a
resample, which replaces the whole reply). A message changed at the point is, to the seat's own policy, the message it sent: a model with
chat memory remembers its own reply, as a message changed in transit would leave it.
"""

from __future__ import annotations

import random

import msgspec

from bus import ChannelSpec, Chat, PolicyChannel
from puzzles import Answer, Policy, Prompter, ReplyFormatError, SamplingPolicy, TurnContext, implements

from engine.plan.branching import BranchPoint, Drop, Noise, Original, OtherPolicy, Resample, Truncate, read_alternative
from engine.policies.llm import LLMPolicy


class BranchPolicy:
    """``inner`` plays the seat; at ``point.turn`` its message is replaced."""

    def __init__(self, inner: Policy, point: BranchPoint, prompter: Prompter, *, seed: int, other: Policy | None = None) -> None:
        self.inner = inner
        self.point = point
        self.alternative = read_alternative(point.alternative)
        self.prompter = prompter
        self.other = other
        self.seed = seed
        if isinstance(self.alternative, Resample) and not isinstance(inner, LLMPolicy):
            raise ValueError(f"a resample branch needs a model in seat {point.role}")
        if isinstance(self.alternative, OtherPolicy) and other is None:
            raise ValueError(f"branch alternative {point.alternative!r} needs the policy it names")

    async def reply(self, context: TurnContext) -> Answer:
        if context.turn != self.point.turn:
            answer = await self.inner.reply(context)
            if self.other is not None and context.turn < self.point.turn:
                await self.other.reply(context)  # it follows the seat, its answers thrown away
            return answer
        return await self._changed(context, await self._played(context))

    async def _played(self, context: TurnContext) -> Answer:
        if isinstance(self.alternative, Resample):
            assert isinstance(self.inner, LLMPolicy)
            return (await self.inner.replies(context, 1, first_sample=self.point.sample + 1))[0]
        return await self.inner.reply(context)

    async def _changed(self, context: TurnContext, answer: Answer) -> Answer:
        alternative = self.alternative
        if isinstance(alternative, Original | Resample):
            return answer
        try:
            read = self.prompter.parse(answer.text, context)
        except ReplyFormatError:
            return answer  # a reply that cannot be read sends no message: nothing to change, the turn is lost as recorded
        if isinstance(alternative, OtherPolicy):
            assert self.other is not None
            message = self.prompter.parse((await self.other.reply(context)).text, context).message
        elif isinstance(alternative, Drop):
            message = ""
        else:
            message = self._through_channel(read.message, alternative, context)
        changed = msgspec.structs.replace(read, message=message)
        return msgspec.structs.replace(answer, text=self.prompter.format(changed))

    def _through_channel(self, message: str, alternative: Truncate | Noise, context: TurnContext) -> str:
        """The message as a channel with that budget or noise delivers it."""
        if isinstance(alternative, Truncate):
            spec = ChannelSpec(max_tokens=alternative.tokens)
        else:
            spec = ChannelSpec(noise=alternative.rate)
        rng = random.Random(f"{self.seed}:branch:{self.point.label()}")
        channel = PolicyChannel(spec, rng)
        delivered, _, _ = channel.transmit(Chat(game_id=context.game_id, turn=context.turn, sender=self.point.role, recipient="", text=message))
        return delivered[0].text if delivered else ""


class SamplingBranchPolicy(BranchPolicy):
    """A branch point in a seat whose policy samples best of n itself: each candidate is changed."""

    async def replies(self, context: TurnContext, n: int) -> tuple[Answer, ...]:
        assert implements(self.inner, SamplingPolicy)
        answers = await self.inner.replies(context, n)
        if context.turn != self.point.turn:
            return answers
        return tuple([await self._changed(context, answer) for answer in answers])

    def chose(self, index: int) -> None:
        assert implements(self.inner, SamplingPolicy)
        self.inner.chose(index)


def branch_policy(inner: Policy, point: BranchPoint, prompter: Prompter, *, seed: int, other: Policy | None = None) -> BranchPolicy:
    """The seat's policy wrapped for the point, sampling best of n itself where ``inner`` does."""
    kind = SamplingBranchPolicy if implements(inner, SamplingPolicy) else BranchPolicy
    return kind(inner, point, prompter, seed=seed, other=other)
