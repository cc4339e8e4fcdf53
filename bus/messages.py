"""Every message that travels on a game's bus: frozen msgspec Structs in one tagged union.

Messages travel in process as objects and are encoded only at the edges. Game-specific payloads
(views, feedback, actions) are typed ``Any`` here so that the bus knows no game.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Usage(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """One model call as the provider reported it, plus what the engine measured around it.

    Token counts are the provider's. ``message_tokens`` counts the message sent to partners with the
    run's one tokenizer (the same for every model); ``attempts`` includes retries; ``latency`` is the
    successful attempt, ``waited`` the time spent in the rate limiter and in back-off before it.
    ``calls`` is more than 1 when one agent turn took several model calls (``Usage.total``);
    ``cache_hits`` counts those answered from the response cache (``--cache``), which made no attempt
    and cost no tokens and nothing; ``batched`` those answered through a provider's batch API
    (``--batch``), at its batch price; ``cut`` those whose reply the server cut at the token limit.
    """

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    message_tokens: int = 0
    attempts: int = 1
    latency: float = 0.0
    waited: float = 0.0
    cost_usd: float | None = None
    calls: int = 1
    cache_hits: int = 0
    batched: int = 0
    cut: int = 0

    @staticmethod
    def total(usages: list[Usage]) -> Usage:
        """Several calls of one agent turn as one: counts, times and costs summed (the cost is None
        if any call's is)."""
        if len(usages) == 1:
            return usages[0]
        costs = [u.cost_usd for u in usages if u.cost_usd is not None]
        counts = {name: sum(getattr(u, name) for u in usages) for name in USAGE_COUNTS}
        times = {name: round(sum(getattr(u, name) for u in usages), 4) for name in USAGE_TIMES}
        cost = round(sum(costs), 8) if len(costs) == len(usages) else None
        return Usage(model=usages[-1].model, cost_usd=cost, **counts, **times)


class Tokens(msgspec.Struct, frozen=True, gc=False):
    """A model call's tokens as the server gave them: the prompt's token ids as the server consumed
    them, the ids of the tokens it sampled (the end-of-turn token too, where it sampled one) and the
    log-probability of each. None where the server did not return them."""

    prompt_ids: tuple[int, ...] | None = None
    completion_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None


# What of a call adds up over calls (``Usage.total``; per agent and game, the records' ``UsageTotals``):
# the whole counts, and the times in seconds rounded to 0.1 ms; the cost adds up to 1e-8 $, unknown
# once any call's is. Derived from the fields above: a count added to ``Usage`` is summed everywhere.
USAGE_TIMES: tuple[str, ...] = ("latency", "waited")
USAGE_COUNTS: tuple[str, ...] = tuple(
    name for name in Usage.__struct_fields__ if name not in ("model", "cost_usd", *USAGE_TIMES)
)


class Message(msgspec.Struct, frozen=True, tag_field="kind", gc=False):
    game_id: int


class TurnStart(Message, tag="turn_start", frozen=True):
    """Environment -> Feedback actor: ``role`` is to act now and sees ``view``."""

    turn: int
    role: str
    view: Any
    notices: tuple[str, ...] = ()
    progress: dict[str, Any] = {}  # how far each role is, in the game's own measure
    candidates: int = 1  # replies to sample for this turn (best of n: the game chooses one)


class YourTurn(Message, tag="your_turn", frozen=True):
    """Feedback actor -> agent: act now, with this view, this feedback and these notices."""

    turn: int
    max_turns: int
    role: str
    view: Any
    feedback: Any
    notices: tuple[str, ...] = ()
    candidates: int = 1  # replies to sample; more than 1: send ``Candidates`` and play the ``Chosen`` one


class Chat(Message, tag="chat", frozen=True):
    """Agent -> agent text. Goes through the channel between them; only this reaches the partner."""

    turn: int
    sender: str
    recipient: str
    text: str


class Candidate(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """One reply sampled for a best-of-n turn, as read (kept in ``Act.candidates`` for transcripts)."""

    reply: str
    message: str = ""
    actions: tuple[Any, ...] = ()
    rejected: tuple[Any, ...] = ()
    format_error: str | None = None


class HumanTurn(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A turn a person played: the seconds from the turn being shown to the answer, and whether the
    person gave no answer in time (the turn is then played with no message and no action)."""

    seconds: float
    timed_out: bool = False


class Act(Message, tag="act", frozen=True):
    """Agent -> Environment: what the agent did this turn.

    ``actions`` are the parsed actions to apply; ``rejected`` the ones that could not even be parsed;
    ``format_error`` is set (and nothing applied) when the reply itself could not be read; ``cut``
    then says whether the server had cut it at the run's token limit.
    """

    turn: int
    role: str
    message: str
    actions: tuple[Any, ...] = ()
    rejected: tuple[Any, ...] = ()
    format_error: str | None = None
    cut: bool = False
    reply_chars: int = 0
    reply: str = ""  # the raw reply, for transcripts
    usage: Any = None  # what the policy reports about the call (tokens, latency), if anything
    prompt: Any = None  # the prompt the policy sent, if it reports one
    context: Any = None  # everything the agent was shown this turn (for transcripts and audits)
    latency: float | None = None  # seconds the policy took to reply
    candidates: tuple[Candidate, ...] = ()  # on a best-of-n turn: every sampled reply, as read
    chosen: int | None = None  # which of them was played
    human: HumanTurn | None = None  # a person played the turn: how long it took
    tokens: Tokens | None = None  # the call's token ids and log-probabilities, where the run asked for them


class Candidates(Message, tag="candidates", frozen=True):
    """Agent -> Environment, on a best-of-n turn: the actions of each sampled reply (empty for a
    reply that could not be read), for the game to choose the one to play."""

    turn: int
    role: str
    actions: tuple[tuple[Any, ...], ...]


class Chosen(Message, tag="chosen", frozen=True):
    """Environment -> agent: play candidate ``index`` of turn ``turn``. The game's reasons stay with the game."""

    turn: int
    index: int


class ChannelNotice(Message, tag="channel_notice", frozen=True):
    """Bus -> agent: what happened to a message it sent (for instance rejected as over budget)."""

    turn: int
    role: str
    text: str


class GameOver(Message, tag="game_over", frozen=True):
    """Environment -> everyone (topic ``game``): the game has ended."""

    outcome: str
    turn: int


AnyMessage = TurnStart | YourTurn | Chat | Act | Candidates | Chosen | ChannelNotice | GameOver
