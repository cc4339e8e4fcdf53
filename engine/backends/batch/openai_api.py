"""OpenAI's Batch API through the ``openai`` SDK: a JSONL file of requests uploaded with purpose
``batch`` (``client.files.create``), a batch over it for ``/v1/chat/completions`` with a 24-hour
window (``client.batches.create``, the batch's tag as metadata so a resumed run can find it),
looked at with ``client.batches.retrieve`` until its status is ``completed``, ``failed``,
``expired`` or ``cancelled``, and its output and error files read with ``client.files.content``.

Each request line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``, the
body the backend would post (``wire.openai_body``, never streamed). Each result line is
``{"custom_id", "response": {"status_code", "body"}, "error"}``: a 2xx body is read as a reply
(``wire.openai_reply``), another status is that HTTP failure, and an ``error`` (``batch_expired``,
``batch_cancelled``: the request never ran) is a failure to send again. A batch that failed as a
whole (its ``errors``: a file it would not take, a quota) fails each of its calls.
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine.backends.base import Failure
from engine.backends.provider import status_failure
from engine.backends.batch.log import BatchState
from engine.backends.lean import error_message
from engine.backends.sdk import openai_fixed, sdk_failure
from engine.backends.settings import History, ModelOptions, chat_turns
from engine.backends.wire import MalformedReply, Reply, encode, openai_body, openai_reply

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
FIND_PAGES = 10  # pages of 100 batches looked through for a batch by its tag


class _Response(msgspec.Struct):
    status_code: int
    body: msgspec.Raw = msgspec.Raw(b"null")


class _Error(msgspec.Struct):
    code: str | None = None
    message: str | None = None


class _Line(msgspec.Struct):
    custom_id: str
    response: _Response | None = None
    error: _Error | None = None


_read_line = msgspec.json.Decoder(_Line).decode


def read_line(line: bytes) -> tuple[str, Reply | Failure] | None:
    """One line of an output or error file: (custom id, its outcome); None for a line not of the form."""
    try:
        entry = _read_line(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    response, error = entry.response, entry.error
    if response is not None and 200 <= response.status_code < 300:
        try:
            return entry.custom_id, openai_reply(bytes(response.body))
        except MalformedReply as exc:
            return entry.custom_id, Failure(f"malformed reply: {exc}", True, None, False, "malformed")
    if response is not None:
        status = response.status_code
        return entry.custom_id, status_failure(status, error_message(status, bytes(response.body)), {})
    code = (error.code if error is not None else None) or "no_response"
    message = (error.message if error is not None else None) or "the request has no response"
    counter = "timeouts" if code in ("batch_expired", "batch_cancelled") else "server_errors"
    return entry.custom_id, Failure(f"{code}: {message}", True, None, False, counter)


class OpenAIBatches:
    """One model's batches on an ``openai.AsyncOpenAI`` client."""

    max_requests = 50_000  # per batch, as the API allows
    max_bytes = 190_000_000  # of the input file (the API allows 200 MB)
    verify = False  # a batch found by its tag is the one

    def __init__(self, client: Any, sdk: Any, model: str, options: ModelOptions, max_tokens_field: str = "max_completion_tokens") -> None:
        self.client = client
        self.reader = client.with_options(max_retries=3)  # looks and downloads are safe to repeat; sending is not
        self.sdk = sdk
        self.options = options
        self.fixed = openai_fixed(model, options, max_tokens_field, stream=False)

    def request(self, custom_id: str, system: str, user: str, schema: dict | None, history: History, sample: int) -> tuple[bytes, int]:
        messages = [{"role": "system", "content": system}, *chat_turns(history), {"role": "user", "content": user}]
        seed = None if self.options.seed is None else self.options.seed + sample
        body = openai_body(self.fixed, messages, seed, schema)
        line = b'{"custom_id":' + encode(custom_id) + b',"method":"POST","url":"' + ENDPOINT.encode() + b'","body":' + body + b"}\n"
        return line, len(line)

    async def submit(self, requests: list[bytes], tag: str) -> str:
        upload = await self.client.files.create(file=(f"asymgames-{tag}.jsonl", b"".join(requests), "application/jsonl"), purpose="batch")
        batch = await self.client.batches.create(
            input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h", metadata={"asymgames": tag},
        )
        return batch.id

    async def ended(self, batch_id: str) -> bool:
        return (await self.reader.batches.retrieve(batch_id)).status in ENDED

    async def results(self, batch_id: str) -> tuple[dict[str, Reply | Failure], Failure]:
        batch = await self.reader.batches.retrieve(batch_id)
        outcomes: dict[str, Reply | Failure] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                content = await self.reader.files.content(file_id)
                for line in content.content.splitlines():
                    read = read_line(line)
                    if read is not None:
                        outcomes[read[0]] = read[1]
        if batch.status == "failed":
            errors = "; ".join(f"{e.code}: {e.message}" for e in (batch.errors.data or [])) if batch.errors else ""
            return outcomes, Failure(f"batch {batch_id} failed: {errors or 'no reason given'}", True, None, False, "server_errors")
        reason = f"batch {batch_id} ended {batch.status} without a result for the request"
        return outcomes, Failure(reason, True, None, False, "timeouts" if batch.status != "completed" else "malformed")

    async def find(self, tag: str, entry: Any = None, taken: Any = ()) -> list[str]:
        """The batch whose metadata carries ``tag`` (a list of one), or none."""
        page = await self.reader.batches.list(limit=100)
        for _ in range(FIND_PAGES):
            for batch in page.data:
                if (batch.metadata or {}).get("asymgames") == tag:
                    return [batch.id]
            if not page.has_next_page():
                return []
            page = await page.get_next_page()
        return []

    async def state(self, batch_id: str) -> BatchState:
        batch = await self.reader.batches.retrieve(batch_id)
        counts = batch.request_counts
        return BatchState(
            batch.status, batch.status in ENDED, counts.total if counts else 0, counts.completed if counts else 0,
            counts.failed if counts else 0, batch.input_file_id,
            tuple(f for f in (batch.output_file_id, batch.error_file_id) if f),
        )

    async def cancel(self, batch_id: str) -> None:
        await self.client.batches.cancel(batch_id)

    async def delete_file(self, file_id: str) -> bool:
        """Delete an uploaded or output file; False if it was gone already."""
        try:
            await self.client.files.delete(file_id)
        except self.sdk.NotFoundError:
            return False
        return True

    def failure(self, exc: Exception) -> Failure | None:
        return sdk_failure(self.sdk, exc)


__all__ = ["OpenAIBatches", "read_line"]
