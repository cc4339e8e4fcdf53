"""Batch mode (``--batch``): the calls of OpenAI and Anthropic models go through the providers' batch
APIs (OpenAI's Batch API, Anthropic's Message Batches), which answer within hours, often minutes, at
half the price. A turn-based game waits for each reply anyway, so a run advances every game in
flight one turn per batch: a slower run, a smaller bill, the same games.

**Where it sits.** ``ModelHub.backend`` puts ``BatchedCalls`` in front of the backend of each model
whose provider has a batch API (``openai:`` and ``anthropic:`` proper, and a named endpoint of their
kind that declares it: ``batches = true``; other models, vLLM's and the other named endpoints', are
called as usual), as the response cache is put in front (the cache, if on, comes
first: a hit makes no call at all). A call becomes one request of a batch (the body the backend
would send, through ``batch_openai`` or ``batch_anthropic``: one module per provider); the model's
``batch_queue.BatchQueue`` sends a batch when it holds ``--batch-size`` calls or ``--batch-wait``
seconds after its first, through the provider's SDK, and hands each call its result. So that a
batch carries one turn of every game, the games in flight must be many: ``--batch`` raises the
default ``--concurrency`` to the batch size.

**Custom ids.** Each request is named ``TOKEN-GAME-SEED-DIGEST-N-ATTEMPT``: the run's token (kept in
``batches.jsonl``, the same in every process of the run), the game's id and seed (from the game the
call belongs to, ``settings.CALL_GAME``), a digest of everything the request holds (the model, the
prompts and earlier turns, the schema, the sample), N the how-manyth time the game makes this very
call, and the attempt. A game's calls are fixed by its seed and the replies so far, so a game played
again makes the same calls with the same ids: a resumed run answers them from the batches an earlier
process sent (``batch_log``, ``BatchQueue.recorded``), and sends none of them twice. The id is at
most 64 of ``[A-Za-z0-9_-]`` (Anthropic's rule); the local server reads the game from it as from the
``X-Game-Id`` header (``parse_custom_id``).

**Failures** are sorted as a call's (``base``): a request the batch failed, one it never ran (the
batch expired or was cancelled), a batch the provider refused or that can no longer be looked at,
each counts as a failed attempt and is sent again in a later batch, after the usual back-off, while
attempts are left and the failure is one to retry (a 400 is not: the game ends in a request error). A call an earlier process
sent and that failed is sent again without counting against this process's attempts.

**Cost.** A reply through a batch is priced at the model's batch factor (``prices.toml``'s
``[batch]``: 0.5 for both providers) and marked ``batched`` in the records and ``usage.json``.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, OrderedDict
from typing import Any

import anyio
import msgspec

from bus import Usage

from engine.backends.admission import GAME_CALLED
from engine.backends.base import Backend, Completion, Failure, InfraError, RequestError
from engine.backends.batch_queue import Answer, BatchQueue
from engine.backends.settings import CALL_GAME, History

BATCH_PROVIDERS = ("openai", "anthropic")
MAX_ID = 64
GAMES_KEPT = 100_000  # games whose calls are counted (the number of times each call was made)
_GAME = re.compile(r"-(\d+);seed=(-?\d+)$")
_encode = msgspec.json.Encoder().encode


def batchable(provider: str, kind: str, declared: bool = False) -> bool:
    """Whether the model's calls can go in batches: the providers proper, and a named endpoint of
    either's kind that declares their batch API (``batches = true`` in its entry)."""
    return kind in BATCH_PROVIDERS and (kind == provider or declared)


def batch_client(hub: Any, provider: str) -> tuple[Any, Any]:
    """The SDK client of the batch calls to ``provider`` and the SDK: the hub's, or (when the lean
    client speaks to the provider) one of its own, closed with the hub's clients."""
    from engine.backends.sdk import import_sdk, sdk_client

    kind = hub.settings.endpoint(provider).kind
    if hub.settings.client(provider) == "sdk":
        return hub._client(provider), import_sdk(kind)
    name = f"{provider}#batches"
    if name not in hub._clients:
        endpoint = hub.settings.endpoint(provider)
        key = hub.environ.get(endpoint.key_env) if endpoint.key_env else None
        hub._clients[name] = sdk_client(kind, key or ("EMPTY" if not endpoint.key_env else None), hub.base_url(provider), 16)
    return hub._clients[name], import_sdk(kind)


def batch_api(hub: Any, name: str) -> Any:
    """The batch API (``batch_openai``, ``batch_anthropic``: by the endpoint's kind) of the model ``name``."""
    from engine.backends.settings import split_name

    provider, model = split_name(name)
    client, sdk = batch_client(hub, provider)
    options = hub.settings.options
    if hub.settings.endpoint(provider).kind == "anthropic":
        from engine.backends.batch_anthropic import AnthropicBatches

        return AnthropicBatches(client, sdk, model, options)
    from engine.backends.batch_openai import OpenAIBatches

    # OpenAI's own API caps a reply with max_completion_tokens, the compatible servers with max_tokens
    return OpenAIBatches(client, sdk, model, options, "max_completion_tokens" if provider == "openai" else "max_tokens")


def call_base(token: str, game: str | None, digest: str, occurrence: int) -> str:
    """A call's custom id less its attempt (see the module's docstring)."""
    number, seed = "x", "x"
    found = _GAME.search(game) if game else None
    if found is not None:
        number, seed = found[1], found[2].replace("-", "n")
    base = f"{token}-{number}-{seed}-{digest}-{occurrence}"
    if len(base) > MAX_ID - 4:  # an id that would not fit: without the seed (the local server then draws its own)
        base = f"{token}-{number}-x-{digest}-{occurrence}"
    return base


def parse_custom_id(custom_id: str) -> tuple[str | None, str] | None:
    """(the game as the ``X-Game-Id`` header names it, or None; the call, the same for each of its
    attempts) of one of our custom ids; None for another's."""
    parts = custom_id.split("-")
    if len(parts) != 6:
        return None
    token, number, seed = parts[:3]
    if number == "x":
        return None, "-".join(parts[:5])
    game = f"{token}-{number}" + ("" if seed == "x" else f";seed={seed.replace('n', '-')}")
    return game, "-".join(parts[:5])


def game_of(custom_id: str) -> int | None:
    """The game id in one of our custom ids, if it names one."""
    parts = custom_id.split("-")
    return int(parts[1]) if len(parts) == 6 and parts[1].isdigit() else None


class BatchedCalls:
    """One model's calls through its batches. ``install`` puts it in front of the backend."""

    def __init__(self, backend: Backend, api: Any, queue: BatchQueue) -> None:
        self.api = api
        self.queue = queue
        self.name = f"{backend.provider}:{backend.model}"
        self.provider, self.model = backend.provider, backend.model
        self.options = backend.options
        self.prices = backend.prices
        self.secrets = backend.secrets
        self.stats = backend.limiter.stats
        self.backoff = backend._backoff
        self._made: OrderedDict[str | None, Counter[str]] = OrderedDict()  # game -> digest -> calls made

    def install(self, backend: Backend) -> None:
        backend.complete = self.complete  # type: ignore[method-assign]

    def base(self, system: str, user: str, schema: dict | None, history: History, sample: int) -> str:
        """The custom id of this call less its attempt; counts the call as made."""
        digest = hashlib.sha256(_encode((self.name, system, history, user, schema, sample))).hexdigest()[:12]
        game = CALL_GAME.get()
        made = self._made.get(game)
        if made is None:
            made = self._made[game] = Counter()
            if len(self._made) > GAMES_KEPT:
                self._made.popitem(last=False)
        else:
            self._made.move_to_end(game)
        made[digest] += 1
        return call_base(self.queue.log.token, game, digest, made[digest])

    async def complete(
        self, system: str, user: str, schema: dict | None = None, history: History = (), *, sample: int = 0,
    ) -> Completion:
        called = GAME_CALLED.get()
        if called is not None:  # the run may start its next game
            called.set()
        base = self.base(system, user, schema, history, sample)
        attempt = 1
        while (custom_id := f"{base}-{attempt}") in self.queue.log.index:  # sent by an earlier process
            outcome = await self.queue.recorded(custom_id)
            if isinstance(outcome, Answer):
                return self._answered(outcome, attempt)
            attempt += 1
        failure: Failure | None = None
        tries = 0
        while tries < self.options.max_attempts:
            tries += 1
            custom_id = f"{base}-{attempt}"
            request, size = self.api.request(custom_id, system, user, schema, history, sample)
            outcome = await self.queue.send(custom_id, request, size)
            if isinstance(outcome, Answer):
                return self._answered(outcome, attempt)
            failure = outcome
            setattr(self.stats, failure.counter, getattr(self.stats, failure.counter) + 1)
            if not failure.retryable or tries == self.options.max_attempts:
                break
            attempt += 1
            await anyio.sleep(self.backoff(tries))  # as any retry: a batch refused as a whole is not sent again at once
        assert failure is not None
        self.stats.failed += 1
        error = RequestError if failure.request_error else InfraError
        tried = f"after {tries} attempt{'s' * (tries > 1)} in batches"
        raise error(self.secrets.scrub(f"{self.name} {tried}: {failure.reason}"))

    def _answered(self, answer: Answer, attempt: int) -> Completion:
        reply = answer.reply
        cost = self.prices.cost(self.provider, self.model, reply.prompt, reply.cached, reply.written, reply.completion, batch=True)
        stats = self.stats
        if answer.counted:
            stats.calls += 1
            stats.batched += 1
            stats.prompt_tokens += reply.prompt
            stats.completion_tokens += reply.completion
            stats.cached_tokens += reply.cached
            stats.latency_sum += answer.latency
            if stats.cost_usd is not None:
                stats.cost_usd = None if cost is None else stats.cost_usd + cost
        usage = Usage(
            model=self.name, prompt_tokens=reply.prompt, completion_tokens=reply.completion, cached_tokens=reply.cached,
            attempts=attempt, latency=round(answer.latency, 4), waited=round(answer.waited, 4), cost_usd=cost, batched=1,
        )
        return Completion(reply.text, usage)





class Batches:
    """A hub's batch mode: the run's log of batches (``RUN_DIR/batches.jsonl`` when the hub has a
    run directory) and each batched model's queue. Made with the first model of a run with
    ``--batch``; ``install`` puts a model's calls in batches, or leaves a model without a batch API
    (``unbatched``) to be called as usual."""

    def __init__(self, hub: Any) -> None:
        from pathlib import Path

        from engine.backends.batch_log import BATCHES_FILE, BatchLog

        self.hub = hub
        replayed = hub.replayed

        def keep(custom_id: str) -> bool:
            game = game_of(custom_id)
            return game is None or replayed is None or replayed(game)

        self.log = BatchLog(Path(hub.run_dir) / BATCHES_FILE if hub.run_dir is not None else None, keep)
        self.queues: dict[str, BatchQueue] = {}
        self.unbatched: list[str] = []

    def install(self, name: str, backend: Backend) -> None:
        from engine.backends.settings import split_name

        hub, settings = self.hub, self.hub.settings
        provider, _ = split_name(name)
        endpoint = settings.endpoint(provider)
        if not batchable(provider, endpoint.kind, endpoint.batches) or name in hub.served:
            self.unbatched.append(name)
            return
        api = batch_api(hub, name)
        queue = self.queues[name] = BatchQueue(
            name, api, self.log, settings.batch, backend.limiter.stats, lambda: hub._task_group, backend.secrets.scrub,
        )
        BatchedCalls(backend, api, queue).install(backend)

    def summary(self) -> dict[str, Any]:
        """For ``usage.json``: the batch settings, the batches sent and collected, the models not batched."""
        settings = self.hub.settings.batch
        return {
            "size": settings.size, "wait": settings.wait, "poll": settings.poll, "unbatched_models": self.unbatched,
            "batches_sent": sum(q.sent for q in self.queues.values()),
            "earlier_batches_collected": sum(q.resumed for q in self.queues.values()),
        }

    def rows(self, now: float) -> list[tuple[str, dict[str, object]]]:
        """For the dashboard: each batched model's batches (``BatchQueue.figures``)."""
        return [(name, queue.figures(now)) for name, queue in self.queues.items()]

    def close(self) -> None:
        self.log.close()


__all__ = ["BATCH_PROVIDERS", "BatchedCalls", "Batches", "batch_api", "batch_client", "batchable", "call_base", "game_of", "parse_custom_id"]
