"""A batched model's calls (``BatchedCalls``), their custom ids, and the run's batch mode
(``Batches``): see ``engine.backends.batch``."""

from __future__ import annotations

import hashlib
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec


from engine.backends.base import Backend, Completion, Failure, InfraError, Request, RequestError
from engine.backends.batch.log import BATCHES_FILE, BatchLog
from engine.backends.batch.queue import Answer, BatchAPI, BatchQueue
from engine.backends.provider import ProviderBackend, completion, count_answer
from engine.backends.settings import CALL_GAME, BackendSettings, split_name
from engine.backends.wrappers import Wrapper

SDKClients = Callable[[str], tuple[Any, Any]]
"""The SDK client of a provider and its SDK (``build.Builder.sdk_client``): batch calls go through the SDK."""

BATCH_PROVIDERS = ("openai", "anthropic")
MAX_ID = 64
GAMES_KEPT = 100_000  # games whose calls are counted (the number of times each call was made)
_GAME = re.compile(r"-(\d+);seed=(-?\d+)$")
_encode = msgspec.json.Encoder().encode


def batchable(provider: str, kind: str, declared: bool = False) -> bool:
    """Whether the model's calls can go in batches: the providers proper, and a named endpoint of
    either's kind that declares their batch API (``batches = true`` in its entry)."""
    return kind in BATCH_PROVIDERS and (kind == provider or declared)


def batch_api(settings: BackendSettings, sdk_clients: SDKClients, name: str) -> BatchAPI:
    """The batch API (``openai_api``, ``anthropic_api``: by the endpoint's kind) of the model ``name``."""
    provider, model = split_name(name)
    client, sdk = sdk_clients(provider)
    options = settings.options
    if settings.endpoint(provider).kind == "anthropic":
        from engine.backends.batch.anthropic_api import AnthropicBatches

        return AnthropicBatches(client, sdk, model, options)
    from engine.backends.batch.openai_api import OpenAIBatches

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


class BatchedCalls(Wrapper):
    """One model's calls through its batches (the provider's backend inside is not called: its
    settings, prices and back-off are the batches')."""

    def __init__(self, inner: Backend, provider: ProviderBackend, api: BatchAPI, queue: BatchQueue) -> None:
        super().__init__(inner)
        self.api = api
        self.queue = queue
        self.provider, self.model = provider.provider, provider.model
        self.options = provider.options
        self.prices = provider.prices
        self.secrets = provider.secrets
        self.stats = provider.limiter.stats
        self.backoff = provider._backoff
        self._made: OrderedDict[str | None, Counter[str]] = OrderedDict()  # game -> digest -> calls made

    def base(self, request: Request) -> str:
        """The custom id of this call less its attempt; counts the call as made."""
        # batch APIs (OpenAI's, Anthropic's) take no grammar and return no tokens
        system, user, schema, history, sample = request.system, request.user, request.schema, request.history, request.sample
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

    async def complete(self, request: Request) -> Completion:
        base = self.base(request)
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
            body, size = self.api.request(custom_id, *request[:5])  # no grammar: a batch API takes none
            outcome = await self.queue.send(custom_id, body, size)
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
        if answer.counted:
            self.stats.calls += 1
            self.stats.batched += 1
            count_answer(self.stats, reply, answer.latency, cost)
        return completion(self.name, reply, cost, attempts=attempt, latency=answer.latency, waited=answer.waited, batched=1)


class Batches:
    """A hub's batch mode: the run's log of batches (``RUN_DIR/batches.jsonl`` when the run has a
    directory) and each batched model's queue. Made with the first model of a run with ``--batch``;
    ``wrapper`` puts a model's calls in batches, or leaves a model without a batch API
    (``unbatched``) to be called as usual."""

    def __init__(
        self, settings: BackendSettings, sdk_clients: SDKClients, *, served: Container[str],
        task_group: Callable[[], anyio.abc.TaskGroup | None], run_dir: Path | None, replayed: Callable[[int], bool] | None,
    ) -> None:
        self.settings, self.sdk_clients, self.served, self.task_group = settings, sdk_clients, served, task_group

        def keep(custom_id: str) -> bool:
            game = game_of(custom_id)
            return game is None or replayed is None or replayed(game)

        self.log = BatchLog(run_dir / BATCHES_FILE if run_dir is not None else None, keep)
        self.queues: dict[str, BatchQueue] = {}
        self.unbatched: list[str] = []

    def wrapper(self, name: str, provider: ProviderBackend) -> Callable[[Backend], Backend] | None:
        """What puts the calls of ``name`` (``provider``'s model) in batches, or None where its
        provider has no batch API."""
        settings = self.settings
        endpoint = settings.endpoint(split_name(name)[0])
        if not batchable(split_name(name)[0], endpoint.kind, endpoint.batches) or name in self.served:
            self.unbatched.append(name)
            return None
        api = batch_api(settings, self.sdk_clients, name)

        def batched(inner: Backend) -> Backend:
            queue = self.queues[name] = BatchQueue(
                name, api, self.log, settings.batch, provider.limiter.stats, self.task_group, provider.secrets.scrub,
            )
            return BatchedCalls(inner, provider, api, queue)

        return batched

    def summary(self) -> dict[str, Any]:
        """For ``usage.json``: the batch settings, the batches sent and collected, the models not batched."""
        settings = self.settings.batch
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


__all__ = ["BATCH_PROVIDERS", "BatchedCalls", "Batches", "batch_api", "batchable", "call_base", "game_of", "parse_custom_id"]
