"""Anthropic's Message Batches through the ``anthropic`` SDK: ``client.messages.batches.create`` with
``requests=[{"custom_id", "params"}]`` (the params the backend would post: ``sdk.anthropic_params``,
never streamed), looked at with ``client.messages.batches.retrieve`` until its
``processing_status`` is ``ended``, and its results read from ``client.messages.batches.results``
(the JSONL behind the batch's ``results_url``, streamed).

Each result line is ``{"custom_id", "result": {"type", ...}}``: ``succeeded`` carries the message,
read as a reply (``wire.anthropic_reply``); ``errored`` carries the API's error, sorted as the HTTP
status of its type would be (``invalid_request_error`` is a 400, not sent again; ``api_error`` a 500,
``overloaded_error`` a 529); ``canceled`` and ``expired`` requests never ran and are sent again.
A Message Batch takes no metadata: one whose id was not recorded is found by when it was made, its
size and then its results' custom ids (``find``, ``batch.log``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine.backends.base import Failure
from engine.backends.provider import status_failure
from engine.backends.batch.log import BatchState, Recorded
from engine.backends.sdk import anthropic_params, sdk_failure
from engine.backends.settings import History, ModelOptions
from engine.backends.wire import MalformedReply, Reply, anthropic_reply, encode

CLOCK_SLACK = 300.0  # seconds the provider's clock may be behind ours
WINDOW = 900.0  # seconds after its intent a batch may have been made (sending it takes one request)

# The HTTP status each error type of the API stands for.
ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
    "timeout_error": 504, "overloaded_error": 529,
}


class _ErrorObject(msgspec.Struct, frozen=True):
    type: str = "api_error"
    message: str = ""


class _ErrorResponse(msgspec.Struct):
    error: _ErrorObject = _ErrorObject()


class _Result(msgspec.Struct):
    type: str
    message: msgspec.Raw = msgspec.Raw(b"null")
    error: _ErrorResponse | None = None


class _Line(msgspec.Struct):
    custom_id: str
    result: _Result


_read_line = msgspec.json.Decoder(_Line).decode


def read_line(line: bytes | str) -> tuple[str, Reply | Failure] | None:
    """One line of a batch's results: (custom id, its outcome); None for a line not of the form."""
    try:
        entry = _read_line(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    result = entry.result
    if result.type == "succeeded":
        try:
            return entry.custom_id, anthropic_reply(bytes(result.message))
        except MalformedReply as exc:
            return entry.custom_id, Failure(f"malformed reply: {exc}", True, None, False, "malformed")
    if result.type == "errored":
        error = (result.error or _ErrorResponse()).error
        status = ERROR_STATUS.get(error.type, 500)
        return entry.custom_id, status_failure(status, f"Error code: {status} - {error.type}: {error.message}", {})
    return entry.custom_id, Failure(f"the request was {result.type} before it ran", True, None, False, "timeouts")


class AnthropicBatches:
    """One model's batches on an ``anthropic.AsyncAnthropic`` client."""

    max_requests = 100_000  # per batch, as the API allows
    max_bytes = 240_000_000  # of the request (the API allows 256 MB)
    verify = True  # a batch found by its time and size is checked by its custom ids

    def __init__(self, client: Any, sdk: Any, model: str, options: ModelOptions) -> None:
        self.client = client
        self.reader = client.with_options(max_retries=3)  # looks and downloads are safe to repeat; sending is not
        self.sdk = sdk
        self.fixed: dict[str, Any] = {"model": model, "max_tokens": options.max_tokens}

    def request(self, custom_id: str, system: str, user: str, schema: dict | None, history: History, sample: int) -> tuple[dict, int]:
        request = {"custom_id": custom_id, "params": anthropic_params(self.fixed, system, user, schema, history)}
        return request, len(encode(request))

    async def submit(self, requests: list[dict], tag: str) -> str:
        return (await self.client.messages.batches.create(requests=requests)).id

    async def ended(self, batch_id: str) -> bool:
        return (await self.reader.messages.batches.retrieve(batch_id)).processing_status == "ended"

    async def results(self, batch_id: str) -> tuple[dict[str, Reply | Failure], Failure]:
        outcomes: dict[str, Reply | Failure] = {}
        async with self.reader.messages.batches.with_streaming_response.results(batch_id) as response:
            async for line in response.iter_lines():
                read = read_line(line) if line.strip() else None
                if read is not None:
                    outcomes[read[0]] = read[1]
        reason = f"batch {batch_id} ended without a result for the request"
        return outcomes, Failure(reason, True, None, False, "malformed")

    async def find(self, tag: str, entry: Recorded, taken: set[str]) -> list[str]:
        """The batches that may be the one ``entry`` records without its id (a Message Batch carries no
        metadata): made from ``CLOCK_SLACK`` seconds before the intent to ``WINDOW`` after it, with as
        many requests, not another batch of the log; the nearest in time first. Each is checked by its
        results' custom ids before it is taken (``verify``)."""
        if entry.at is None or not entry.requests:
            return []
        found: list[tuple[float, str]] = []
        async for batch in self.reader.messages.batches.list(limit=100):  # newest first, page by page
            made = batch.created_at.timestamp()
            if made < entry.at - CLOCK_SLACK:
                break
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            if made <= entry.at + WINDOW and total == entry.requests and batch.id not in taken:
                found.append((abs(made - entry.at), batch.id))
        return [batch_id for _, batch_id in sorted(found)]

    async def state(self, batch_id: str) -> BatchState:
        batch = await self.reader.messages.batches.retrieve(batch_id)
        c = batch.request_counts
        status = "canceled" if batch.processing_status == "ended" and c.canceled else batch.processing_status
        return BatchState(status, batch.processing_status == "ended", c.processing + c.succeeded + c.errored + c.canceled + c.expired,
                          c.succeeded, c.errored + c.canceled + c.expired)

    async def cancel(self, batch_id: str) -> None:
        await self.client.messages.batches.cancel(batch_id)

    def failure(self, exc: Exception) -> Failure | None:
        return sdk_failure(self.sdk, exc)


__all__ = ["AnthropicBatches", "read_line"]
