"""The local server's batch APIs: OpenAI's files and Batch API, and Anthropic's Message Batches, in
memory, authenticated as the server's other endpoints.

OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``GET /v1/files/{id}`` and its
``/content``, ``DELETE /v1/files/{id}``; ``POST /v1/batches`` over an uploaded file of
``/v1/chat/completions`` requests, ``GET /v1/batches`` (listed newest first, with ``limit`` and
``after``), ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``. A file it cannot take (a line
that is not a request, another endpoint, a custom id twice) fails the batch, as OpenAI's validation
does. Anthropic: ``POST /v1/messages/batches`` (custom ids of ``[A-Za-z0-9_-]``, at most 64, each
once, or a 400), ``GET /v1/messages/batches`` and ``/{id}``, ``/{id}/results`` (JSONL, once ended),
``POST /{id}/cancel``, ``DELETE /{id}``.

A batch ends ``batch_delay`` seconds after it was made (``POST /fake/batch-delay {"seconds": S}``
changes it, for the batches in flight too). Its requests are then answered one after another as
single calls are (``FakeServer.answer_batched``: the same players, with the game and the call read
from the custom id as from the ``X-Game-Id`` and ``X-Call-Id`` headers; the same injected faults,
``--fault``): a status fault is the request's error (OpenAI: its status and error body in the error
file; Anthropic: an ``errored`` result), a ``timeout`` fault leaves the request unrun (``batch_expired``
/ ``expired``), a broken reply is a body without its usage. ``--batch-fault expired=P``: the batch
expires with only its first half run; ``failed=P``: an OpenAI batch fails as a whole, an Anthropic
one is refused with a 500 when made. A batch cancelled before it ends runs none of its requests
(OpenAI: ``cancelling`` then ``cancelled``; Anthropic: ``canceling`` then ``ended``, ``canceled``
results). ``GET /fake/stats`` counts every custom id sent in a batch, and which were sent twice, and the
files kept (uploaded and written, less those deleted).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections import Counter
from typing import Any

from aiohttp import web

from engine.backends import parse_custom_id

from runners.fake_llm.batch_wire import BATCH_FAULT_KINDS, CUSTOM_ID, ENDPOINT, FakeBatch, openai_line, read_input, unrun_line
from runners.fake_llm.wire import Broken, Refused, anthropic_message, error_reply, openai_completion

def _not_found(what: str, anthropic: bool) -> web.Response:
    return error_reply(Refused(404, "not_found_error", f"No such {what}."), anthropic)


class BatchService:
    """The batch endpoints of ``server`` (a ``FakeServer``), added to its app."""

    def __init__(self, server: Any) -> None:
        self.server = server
        config = server.config
        self.delay = config.batch_delay
        self.faults = dict(config.batch_faults)
        self.rng = random.Random(f"batches:{config.seed}")
        self.files: dict[str, dict[str, Any]] = {}  # id -> the file object, its bytes under "data"
        self.batches: dict[str, FakeBatch] = {}
        self.sent: Counter[str] = Counter()  # custom id -> times sent in a batch
        self.ended: Counter[str] = Counter()  # how batches ended
        self.downloads = 0
        self._more = False  # whether the last page listed left batches out
        self._tasks: set[asyncio.Task] = set()
        openai, anthropic = self._guarded(False), self._guarded(True)
        server.app.add_routes([
            web.post("/v1/files", openai(self.upload)), web.get("/v1/files/{id}", openai(self.file)),
            web.get("/v1/files/{id}/content", openai(self.content)), web.delete("/v1/files/{id}", openai(self.delete_file)),
            web.post("/v1/batches", openai(self.create_openai)), web.get("/v1/batches", openai(self.list_openai)),
            web.get("/v1/batches/{id}", self._found(False, self.get)),
            web.post("/v1/batches/{id}/cancel", self._found(False, self.cancel)),
            web.post("/v1/messages/batches", anthropic(self.create_anthropic)),
            web.get("/v1/messages/batches", anthropic(self.list_anthropic)),
            web.get("/v1/messages/batches/{id}", self._found(True, self.get)),
            web.get("/v1/messages/batches/{id}/results", self._found(True, self.results_anthropic)),
            web.post("/v1/messages/batches/{id}/cancel", self._found(True, self.cancel)),
            web.delete("/v1/messages/batches/{id}", self._found(True, self.delete_anthropic)),
            web.post("/fake/batch-delay", self.set_delay),
        ])
        server.app.on_cleanup.append(self._stop)

    async def _stop(self, app: web.Application) -> None:
        for task in self._tasks:
            task.cancel()

    def stats(self) -> dict[str, Any]:
        return {
            "batches": len(self.batches), "batch_requests": sum(self.sent.values()), "batch_custom_ids": len(self.sent),
            "batch_repeats": sorted(i for i, n in self.sent.items() if n > 1)[:100], "batches_ended": dict(self.ended),
            "batch_result_downloads": self.downloads, "files": len(self.files),
        }

    def _guarded(self, anthropic: bool):
        """A wrapper of handlers that answers a request without a good key as the server's others do."""

        def guard(handler):
            async def guarded(request: web.Request) -> web.StreamResponse:
                try:
                    self.server._check_key(request, anthropic)
                except Refused as refusal:
                    return error_reply(refusal, anthropic)
                return await handler(request)

            return guarded

        return guard

    def _found(self, anthropic: bool, handler):
        """A guarded handler of one batch: ``handler(request, batch)`` for the batch of the kind the
        path names, a 404 for none (or one of the other kind)."""

        async def found(request: web.Request) -> web.Response:
            batch = self.batches.get(request.match_info["id"])
            if batch is None or batch.anthropic != anthropic:
                return _not_found("message batch" if anthropic else "batch", anthropic)
            return await handler(request, batch)

        return self._guarded(anthropic)(found)

    # ---- files ----

    def _file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file: dict[str, Any] = {"id": f"file-{uuid.uuid4().hex[:24]}", "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed", "expires_at": None, "status_details": None}
        self.files[file["id"]] = {**file, "data": data}
        return file

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        field, purpose = form.get("file"), form.get("purpose")
        if not isinstance(field, web.FileField) or purpose != "batch":
            return error_reply(Refused(400, "invalid_request_error", "Expected a file with purpose batch."), False)
        return web.json_response(self._file(field.file.read(), field.filename or "file", "batch"))

    async def file(self, request: web.Request) -> web.Response:
        file = self.files.get(request.match_info["id"])
        if file is None:
            return _not_found("file", False)
        return web.json_response({k: v for k, v in file.items() if k != "data"})

    async def content(self, request: web.Request) -> web.Response:
        file = self.files.get(request.match_info["id"])
        if file is None:
            return _not_found("file", False)
        self.downloads += file["purpose"] == "batch_output"
        return web.Response(body=file["data"], content_type="application/octet-stream")

    async def delete_file(self, request: web.Request) -> web.Response:
        if self.files.pop(request.match_info["id"], None) is None:
            return _not_found("file", False)
        return web.json_response({"id": request.match_info["id"], "object": "file", "deleted": True})

    # ---- OpenAI batches ----

    async def create_openai(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("endpoint") != ENDPOINT or body.get("completion_window") != "24h":
            return error_reply(Refused(400, "invalid_request_error", f"Expected endpoint {ENDPOINT} and completion_window 24h."), False)
        file = self.files.get(str(body.get("input_file_id")))
        if file is None or file["purpose"] != "batch":
            return error_reply(Refused(400, "invalid_request_error", "No such input file (uploaded with purpose batch)."), False)
        requests, errors = read_input(file["data"])
        batch = FakeBatch(False, requests, input_file_id=file["id"], metadata=body.get("metadata"))
        self._sent(batch)
        if errors or self._fault("failed"):
            errors = errors or [{"code": "token_limit_exceeded", "line": None, "message": "Injected failure.", "param": None}]
            batch.fields["errors"] = {"object": "list", "data": errors}
            self._end(batch, "failed", "failed")
        else:
            self._start(batch)
        return web.json_response(batch.openai())

    async def list_openai(self, request: web.Request) -> web.Response:
        data = [b.openai() for b in self._page(request, False, "after")]
        return web.json_response({"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None, "has_more": self._more})

    async def get(self, request: web.Request, batch: FakeBatch) -> web.Response:
        return web.json_response(batch.message_batch(str(request.url.origin())) if batch.anthropic else batch.openai())

    async def cancel(self, request: web.Request, batch: FakeBatch) -> web.Response:
        if batch.status == "in_progress":
            status = "canceling" if batch.anthropic else "cancelling"  # as each API spells it
            batch.status, batch.cancel = status, True
            batch.times[status] = time.time()
            batch.wake.set()
        return await self.get(request, batch)

    # ---- Anthropic message batches ----

    async def create_anthropic(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        entries = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(entries, list) or not entries:
            return error_reply(Refused(400, "invalid_request_error", "requests: expected a list of requests."), True)
        requests, seen = [], set()
        for entry in entries:
            custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
            if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id) or custom_id in seen or not isinstance(entry.get("params"), dict):
                return error_reply(Refused(400, "invalid_request_error", f"requests: bad or repeated custom_id {custom_id!r}."), True)
            seen.add(custom_id)
            requests.append((custom_id, entry["params"]))
        if self._fault("failed"):
            return error_reply(Refused(500, "api_error", "Injected failure."), True)
        batch = FakeBatch(True, requests)
        self._sent(batch)
        self._start(batch)
        return await self.get(request, batch)

    async def list_anthropic(self, request: web.Request) -> web.Response:
        data = [b.message_batch(str(request.url.origin())) for b in self._page(request, True, "after_id")]
        return web.json_response({"data": data, "has_more": self._more, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def results_anthropic(self, request: web.Request, batch: FakeBatch) -> web.Response:
        if batch.status != "ended":
            return error_reply(Refused(400, "invalid_request_error", "The batch has not ended: no results yet."), True)
        self.downloads += 1
        data = "".join(json.dumps(line) + "\n" for line in batch.results).encode()
        return web.Response(body=data, content_type="application/binary")

    async def delete_anthropic(self, request: web.Request, batch: FakeBatch) -> web.Response:
        if batch.status != "ended":
            return error_reply(Refused(400, "invalid_request_error", "Only an ended batch can be deleted."), True)
        del self.batches[batch.id]
        return web.json_response({"id": batch.id, "type": "message_batch_deleted"})

    # ---- running batches ----

    async def set_delay(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.delay = float(body["seconds"])
        for batch in self.batches.values():
            batch.wake.set()
        return web.json_response({"batch_delay": self.delay})

    def _fault(self, kind: str) -> bool:
        probability = self.faults.get(kind, 0.0)
        return probability > 0 and self.rng.random() < probability

    def _page(self, request: web.Request, anthropic: bool, after_name: str) -> list[FakeBatch]:
        """Batches of the kind newest first, after the id given, ``limit`` of them (``_more``: more remain)."""
        batches = [b for b in reversed(self.batches.values()) if b.anthropic == anthropic]
        after = request.query.get(after_name)
        if after is not None:
            ids = [b.id for b in batches]
            batches = batches[ids.index(after) + 1:] if after in ids else []
        limit = max(1, min(1000, int(request.query.get("limit", "20"))))
        self._more = len(batches) > limit
        return batches[:limit]

    def _sent(self, batch: FakeBatch) -> None:
        self.batches[batch.id] = batch
        self.sent.update(custom_id for custom_id, _ in batch.requests)

    def _start(self, batch: FakeBatch) -> None:
        batch.times["in_progress"] = time.time()
        task = asyncio.create_task(self._run(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: FakeBatch) -> None:
        while not batch.cancel and (left := batch.started + self.delay - time.monotonic()) > 0:
            batch.wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(batch.wake.wait(), left)
        expired = not batch.cancel and self._fault("expired")
        run = 0 if batch.cancel else len(batch.requests) // 2 if expired else len(batch.requests)
        for number, (custom_id, body) in enumerate(batch.requests):
            if number >= run:
                batch.results.append(unrun_line(batch.anthropic, custom_id, "cancelled" if batch.cancel else "expired"))
                batch.unrun += 1
                continue
            batch.results.append(await self._answer(batch, custom_id, body))
        outcome = "cancelled" if batch.cancel else "expired" if expired else "completed"
        if batch.anthropic:
            self._end(batch, "ended", outcome)
            return
        outputs: list[dict] = []
        errors: list[dict] = []
        for line in batch.results:
            (outputs if line["response"] is not None and line["response"]["status_code"] == 200 else errors).append(line)
        for key, lines in (("output_file_id", outputs), ("error_file_id", errors)):
            if lines:
                data = "".join(json.dumps(line) + "\n" for line in lines).encode()
                batch.fields[key] = self._file(data, f"{batch.id}_{key[:-8]}.jsonl", "batch_output")["id"]
        self._end(batch, outcome, outcome)

    def _end(self, batch: FakeBatch, status: str, outcome: str) -> None:
        batch.status = status
        batch.times[status] = time.time()
        self.ended[outcome] += 1

    async def _answer(self, batch: FakeBatch, custom_id: str, body: Any) -> dict:
        anthropic = batch.anthropic
        game, call = parse_custom_id(custom_id) or (None, None)
        model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        try:
            text, prompt, cached, completion, cut = await self.server.answer_batched(body, anthropic, game, call)
        except TimeoutError:
            batch.unrun += 1
            return unrun_line(batch.anthropic, custom_id, "expired")
        except Refused as refusal:
            batch.errored += 1
            if anthropic:
                error = {"type": "error", "error": {"type": refusal.kind, "message": refusal.message}}
                return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}
            error = {"error": {"message": refusal.message, "type": refusal.kind, "param": None, "code": refusal.kind}}
            return openai_line(custom_id, error, refusal.status)
        except Broken:  # a body without its usage
            batch.succeeded += 1
            if anthropic:
                return {"custom_id": custom_id, "result": {"type": "succeeded", "message": {"type": "message", "content": []}}}
            return openai_line(custom_id, {"id": "chatcmpl-x", "object": "chat.completion", "choices": []})
        batch.succeeded += 1
        if anthropic:
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": anthropic_message(model, text, prompt, cached, completion, cut)}}
        return openai_line(custom_id, openai_completion(model, text, prompt, cached, completion, cut))


__all__ = ["BATCH_FAULT_KINDS", "BatchService", "FakeBatch"]
