"""The model-call contract: a ``Request`` in, a ``Completion`` out, through a ``Backend``; and the
errors a call may end in.

Every backend has one method, ``complete(request) -> Completion``: a provider's backend
(``engine.backends.provider``) makes the call; the response cache, batch mode, a worker's usage
reports and the run's pacing are backends too, each around an inner one
(``engine.backends.wrappers``), put together in one place in a fixed order
(``engine.backends.build.compose``).

Failures are sorted in two:
- the provider or the network failed (429 after all retries, 5xx, 529, timeouts, connection errors,
  bodies that are not the API's JSON, and 4xx refusals such as a bad key): ``InfraError``, which ends
  the game as an ``infra_error``; ``--resume`` plays such games again;
- the model answered: whatever text it wrote is the agent's reply, and a reply that cannot be read
  is the agent's format error, scored as the model's failure, unless the server cut it at the
  token limit (``Completion.finish == "length"``): then the run cut it, and it is counted as cut.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

from bus import Tokens, Usage

from engine.backends.settings import History

if TYPE_CHECKING:
    from engine.backends.limiter import Limiter
    from engine.backends.tokens import Tokenizer

FinishReason = Literal["stop", "length", "content_filter", "error"]
"""Why the server stopped writing: the reply is whole (``stop``), cut at the token limit
(``length``), withheld by a filter (``content_filter``), or the server gave up on it (``error``)."""

_FINISH: dict[str | None, FinishReason] = {
    "length": "length", "max_tokens": "length", "model_context_window_exceeded": "length",
    "content_filter": "content_filter", "refusal": "content_filter",
    "error": "error", "abort": "error",
}


def finish_reason(said: str | None) -> FinishReason:
    """The finish reason of what a server said (OpenAI's ``finish_reason``, Anthropic's
    ``stop_reason``): anything that is not a cut, a filter or an error is a reply the model ended."""
    return _FINISH.get(said, "stop")


class Request(NamedTuple):
    """One model call: ``system``, then the earlier turns of a chat (``history``, pairs of user prompt
    and the model's reply), then ``user``; the reply ``schema`` for structured output; ``sample``
    numbers the calls of a best-of-n turn (where the run fixes a seed, sample i is sent seed + i so
    that the samples differ); ``grammar``, for structured output of a reply that is not JSON, the
    reply as a GBNF grammar (``puzzles.base.ReplyGrammar``); ``tokens``: bring back the call's token
    ids and log-probabilities (``Completion.tokens``), from a server that returns them
    (``TokensMissing`` where it does not)."""

    system: str
    user: str
    schema: dict | None = None
    history: History = ()
    sample: int = 0
    grammar: str | None = None
    tokens: bool = False


class Completion(NamedTuple):
    """What a call brought back: the text, its usage, why the server stopped, its tokens if returned."""

    text: str
    usage: Usage
    finish: FinishReason = "stop"
    tokens: Tokens | None = None


class Backend(Protocol):
    """One model, as the run calls it: ``name`` (``provider:model``), the limiter its calls go
    through, the run's tokenizer, and the call."""

    @property
    def name(self) -> str: ...

    @property
    def limiter(self) -> Limiter: ...

    @property
    def tokenizer(self) -> Tokenizer: ...

    async def complete(self, request: Request) -> Completion: ...


class InfraError(RuntimeError):
    """The provider or the network failed, not the model. Ends the game as an infrastructure error."""

    kind = "infra_error"


class RequestError(InfraError):
    """The provider refused the request itself (400, 413, 422: a prompt over the context window, say).
    Not the model's failure, but playing the game again would fail the same way, so ``--resume``
    leaves it."""

    kind = "request_error"


class TokensMissing(RequestError):
    """A call asked for its tokens and the server's reply lacks them (the prompt's token ids, the
    completion's, or the log-probabilities): the server does not return them, so playing the game
    again would fail the same way."""

    kind = "request_error"


class StatusError(Exception):
    """The server answered with an HTTP error: its status, the message of its error body, its headers."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


class Failure(NamedTuple):
    reason: str
    retryable: bool
    pause: float | None  # what the provider asked for (retry-after)
    overloaded: bool  # lower the in-flight cap
    counter: str  # which of the call counters (``limiter.COUNTERS``) the failed attempt counts
    request_error: bool = False  # the request itself was refused: RequestError
    refused: Mapping[str, str] | None = None  # the headers of an HTTP refusal, for the limiter


class Secrets:
    """The API keys in use, to scrub from anything written (error messages end up in records)."""

    _KEYLIKE = re.compile(r"\b(sk|key)-[A-Za-z0-9_\-*.]{6,}")

    def __init__(self, values: list[str]) -> None:
        self.values = [v for v in values if v and len(v) >= 6 and v != "EMPTY"]

    def scrub(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "[redacted]")
            for part in (value[:12], value[-8:]):  # providers echo a masked key: its ends
                if len(part) >= 8:
                    text = text.replace(part, "[redacted]")
        return self._KEYLIKE.sub("[redacted]", text)


__all__ = [
    "Backend", "Completion", "Failure", "FinishReason", "InfraError", "Request", "RequestError", "Secrets",
    "StatusError", "Tokens", "TokensMissing", "finish_reason",
]
