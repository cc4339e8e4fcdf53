"""The batch APIs' objects and lines as the local server writes them (``batches``): OpenAI's batch
object and result lines, Anthropic's message batch and results, and the reading of an input file."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from datetime import datetime, timezone
from typing import Any

BATCH_FAULT_KINDS = ("expired", "failed")
ENDPOINT = "/v1/chat/completions"
CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DAY = 24 * 3600


def _rfc3339(stamp: float | None) -> str | None:
    return None if stamp is None else datetime.fromtimestamp(stamp, timezone.utc).isoformat().replace("+00:00", "Z")


class FakeBatch:
    def __init__(self, anthropic: bool, requests: list[tuple[str, Any]], **fields: Any) -> None:
        self.id = f"msgbatch_{uuid.uuid4().hex[:24]}" if anthropic else f"batch_{uuid.uuid4().hex[:24]}"
        self.anthropic = anthropic
        self.requests = requests
        self.created = time.time()
        self.started = time.monotonic()
        self.status = "in_progress"
        self.times: dict[str, float] = {}  # status -> when it was reached
        self.results: list[dict] = []
        self.succeeded = self.errored = self.unrun = 0
        self.cancel = False
        self.wake = asyncio.Event()
        self.fields = fields  # OpenAI: input_file_id, metadata, output_file_id, error_file_id, errors

    def openai(self) -> dict[str, Any]:
        at = {f"{s}_at": int(self.times[s]) if s in self.times else None
              for s in ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")}
        done = self.succeeded
        return {
            "id": self.id, "object": "batch", "endpoint": ENDPOINT, "completion_window": "24h", "status": self.status,
            "created_at": int(self.created), "expires_at": int(self.created + _DAY), "model": None,
            "request_counts": {"total": len(self.requests), "completed": done, "failed": self.errored + self.unrun},
            "input_file_id": self.fields.get("input_file_id"), "output_file_id": self.fields.get("output_file_id"),
            "error_file_id": self.fields.get("error_file_id"), "errors": self.fields.get("errors"),
            "metadata": self.fields.get("metadata"), **at,
        }

    def message_batch(self, origin: str) -> dict[str, Any]:
        ended = self.status == "ended"
        counts = {"processing": 0 if ended else len(self.requests), "succeeded": self.succeeded, "errored": self.errored,
                  "canceled": self.unrun if self.cancel else 0, "expired": 0 if self.cancel else self.unrun}
        return {
            "id": self.id, "type": "message_batch", "processing_status": self.status, "request_counts": counts,
            "created_at": _rfc3339(self.created), "expires_at": _rfc3339(self.created + _DAY),
            "ended_at": _rfc3339(self.times.get("ended")), "cancel_initiated_at": _rfc3339(self.times.get("canceling")),
            "archived_at": None, "results_url": f"{origin}/v1/messages/batches/{self.id}/results" if ended else None,
        }


def read_input(data: bytes) -> tuple[list[tuple[str, Any]], list[dict]]:
    """(requests, validation errors) of an OpenAI batch's input file: each line a POST to the one
    endpoint served, with a custom id used once."""
    requests, errors, seen = [], [], set()
    for number, line in enumerate(data.splitlines(), 1):
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str) or not isinstance(entry.get("body"), dict):
            errors.append({"code": "invalid_json_line", "line": number, "message": "The line is not a request.", "param": None})
        elif entry.get("method") != "POST" or entry.get("url") != ENDPOINT:
            errors.append({"code": "invalid_url", "line": number, "message": f"Only POST {ENDPOINT} is served.", "param": "url"})
        elif entry["custom_id"] in seen:
            errors.append({"code": "duplicate_custom_id", "line": number, "message": "The custom id is used twice.", "param": "custom_id"})
        else:
            seen.add(entry["custom_id"])
            requests.append((entry["custom_id"], entry["body"]))
    return requests, errors


def unrun_line(anthropic: bool, custom_id: str, why: str) -> dict:
    """The result of a request that never ran: the batch was cancelled or expired first."""
    if anthropic:
        return {"custom_id": custom_id, "result": {"type": "canceled" if why == "cancelled" else "expired"}}
    message = "The batch was cancelled before the request ran." if why == "cancelled" else "The request did not run before the batch expired."
    return {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": custom_id, "response": None,
            "error": {"code": f"batch_{why}", "message": message}}


def openai_line(custom_id: str, body: dict, status: int = 200) -> dict:
    response = {"status_code": status, "request_id": f"req_{uuid.uuid4().hex[:16]}", "body": body}
    return {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": custom_id, "response": response, "error": None}


__all__ = ["BATCH_FAULT_KINDS", "CUSTOM_ID", "ENDPOINT", "FakeBatch", "openai_line", "read_input", "unrun_line"]
