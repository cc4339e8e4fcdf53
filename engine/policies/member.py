"""A model's seat in member k of a group (``engine.plan.spec.Options.member``): every call of the
game is sample k, as a resample of the whole game, so that the K members of one seed are K samples
of the model and each is cached, seeded and replayed apart (the run's model seed is sent plus the
sample number: ``engine.backends.Request``). A best-of-n turn of member k samples ``k * n`` to
``k * n + n - 1``. Member 0 is the seat as a run without groups plays it."""

from __future__ import annotations

from puzzles import Answer, Policy, TurnContext

from engine.policies.llm import LLMPolicy


class MemberPolicy:
    """The model policy ``inner``, every call sampled as member ``member``."""

    def __init__(self, inner: LLMPolicy, member: int) -> None:
        self.inner = inner
        self.member = member

    async def reply(self, context: TurnContext) -> Answer:
        return (await self.inner.replies(context, 1, first_sample=self.member))[0]

    async def replies(self, context: TurnContext, n: int) -> tuple[Answer, ...]:
        return await self.inner.replies(context, n, first_sample=self.member * n)

    def chose(self, index: int) -> None:
        self.inner.chose(index)


def member_seat(policy: Policy, member: int) -> Policy:
    """The seat's policy in member ``member`` of a group: a model's samples that member's; any
    other policy as it is (its randomness is seeded for the member when it is made)."""
    if member and isinstance(policy, LLMPolicy):
        return MemberPolicy(policy, member)
    return policy
