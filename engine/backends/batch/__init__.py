"""Batch mode (``--batch``): the calls of OpenAI and Anthropic models go through the providers' batch
APIs (OpenAI's Batch API, Anthropic's Message Batches), which answer within hours, often minutes, at
half the price. A turn-based game waits for each reply anyway, so a run advances every game in
flight one turn per batch: a slower run, a smaller bill, the same games.

**Where it sits.** ``build.compose`` puts ``BatchedCalls`` around the backend of each model
whose provider has a batch API (``openai:`` and ``anthropic:`` proper, and a named endpoint of their
kind that declares it: ``batches = true``; other models, vLLM's and the other named endpoints', are
called as usual), inside the response cache (the cache, if on, comes first: a hit makes no call
at all). A call becomes one request of a batch (the body the backend
would send, through ``batch.openai_api`` or ``batch.anthropic_api``: one module per provider); the model's
``batch.queue.BatchQueue`` sends a batch when it holds ``--batch-size`` calls or ``--batch-wait``
seconds after its first, through the provider's SDK, and hands each call its result. So that a
batch carries one turn of every game, the games in flight must be many: ``--batch`` raises the
default ``--concurrency`` to the batch size.

**Custom ids.** Each request is named ``TOKEN-GAME-SEED-DIGEST-N-ATTEMPT``: the run's token (kept in
``batches.jsonl``, the same in every process of the run), the game's id and seed (from the game the
call belongs to, ``settings.CALL_GAME``), a digest of everything the request holds (the model, the
prompts and earlier turns, the schema, the sample), N the how-manyth time the game makes this very
call, and the attempt. A game's calls are fixed by its seed and the replies so far, so a game played
again makes the same calls with the same ids: a resumed run answers them from the batches an earlier
process sent (``batch.log``, ``BatchQueue.recorded``), and sends none of them twice. The id is at
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

from engine.backends.batch.calls import (
    BATCH_PROVIDERS, BatchedCalls, Batches, batch_api, batchable, call_base, game_of, parse_custom_id,
)

__all__ = ["BATCH_PROVIDERS", "BatchedCalls", "Batches", "batch_api", "batchable", "call_base", "game_of", "parse_custom_id"]
