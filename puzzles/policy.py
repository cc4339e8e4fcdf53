"""The policy contract: what decides an agent's turn, and what it answers.

A policy gets a ``TurnContext`` (what its agent is shown this turn) and returns an ``Answer``: the
raw reply text in the game's reply format, which the agent actor reads exactly as it reads a model's
reply, and what the policy knows about how it came to it (the model calls' usage, the prompt it
sent, a person's response time). Scripted strategies, the model policy (``engine.policies.llm.LLMPolicy``),
a person's seat (``engine.policies.seat.HumanPolicy``) and policies of the user's own all speak it.

A policy that can sample several replies to one turn at once (best of n) is also a
``SamplingPolicy``; any other policy is asked n times.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import msgspec

from bus.messages import HumanTurn, Tokens, Usage

if TYPE_CHECKING:
    from .turn import TurnContext


class Answer(msgspec.Struct, frozen=True):
    """A policy's answer to one turn.

    - ``text``: the raw reply, in the game's reply format (the agent reads it as a model's reply).
    - ``usage``: what the turn's model calls cost (tokens, latency, cost), if any were made.
    - ``prompt``: the prompt the policy sent (``{"system": ..., "user": ...}``, and where they apply
      ``earlier_turns`` and the agent modules' calls, ``modules``), for transcripts.
    - ``human``: a person played the turn: how long it took, whether it timed out.
    - ``seconds``: how long the policy took, if it measured itself; otherwise the agent measures it.
    - ``count_tokens``: how the message the reply sends is counted into ``usage.message_tokens``
      (the run's one tokenizer; the model policy gives it); None: not counted.
    - ``cut``: the server cut the reply at the run's token limit before the model ended it.
    - ``tokens``: the call's token ids and log-probabilities, where the run asked for them
      (``--tokens``): the prompt's ids as the server consumed them, the reply's, and each sampled
      token's log-probability; the agent carries them to the turn's record.
    """

    text: str
    usage: Usage | None = None
    prompt: dict[str, Any] | None = None
    human: HumanTurn | None = None
    seconds: float | None = None
    count_tokens: Callable[[str], int] | None = None
    cut: bool = False
    tokens: Tokens | None = None


class Policy(Protocol):
    """Decides what an agent says and does: ``await reply(context)`` is the turn's ``Answer``."""

    async def reply(self, context: TurnContext) -> Answer: ...


@runtime_checkable
class SamplingPolicy(Protocol):
    """A policy that samples best-of-n replies itself (the model policy: the n calls at once).

    ``replies(context, n)`` gives n answers to one turn; the turn's usage is the sum of theirs (the
    agent modules' calls, made once, counted in the first). ``chose(index)`` then tells the policy
    which of them its agent played. The agent decides once, when it is built, whether its policy is one."""

    async def reply(self, context: TurnContext) -> Answer: ...

    async def replies(self, context: TurnContext, n: int) -> tuple[Answer, ...]: ...

    def chose(self, index: int) -> None: ...


ScriptedFactory = Callable[[str, random.Random], Policy]
"""``factory(role, rng)``: a scripted policy for one role of one game."""


class Demonstration(msgspec.Struct, frozen=True):
    """One way to play a game from its start to its end, fixed in advance (a game's planner, say):
    each role's replies in the game's reply format, in the order the role plays them, and a label
    saying what kind of play it is (``optimal``, ``optimal+1``, ...)."""

    label: str
    replies: dict[str, tuple[str, ...]]


ParamsT = TypeVar("ParamsT")
DemonstrationsFn = Callable[[ParamsT, int, int, int], "tuple[Demonstration, ...]"]
"""``demonstrations(params, seed, count, max_turns)``: up to ``count`` distinct demonstrations of the
game of ``seed``, each within ``max_turns`` rounds; the same arguments give the same ones."""
