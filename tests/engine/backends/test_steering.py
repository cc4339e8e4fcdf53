"""The calls in flight to a vLLM server, steered by its /metrics: our own requests, queued, deferred
(a reply schema compiling) or not yet counted, never lower the cap; another client's do."""

from __future__ import annotations

import aiohttp
import anyio
import msgspec

from engine.backends.vllm import ServerLoad, Steering, vllm_headroom

from engine import PolicyFactory, run_games
from tests.engine.backends.helpers import FAST, KEYS, fake_server, settings_for
from tests.helpers import grid


def cap_after(steering: Steering, reads: list[tuple[float, float, float, int]], settle: float = 1.0) -> tuple[int, ServerLoad]:
    """The cap after reads of (running, waiting, deferred, our calls in flight), a quarter second apart."""
    load = ServerLoad()
    cap = 0
    for i, (running, waiting, deferred, ours) in enumerate(reads):
        load.running, load.waiting, load.deferred = running, waiting, deferred
        cap = steering.cap(load, ours, i * 0.25, settle)
    return cap, load


def test_our_own_queue_and_calls_not_yet_counted_keep_the_batch_and_its_headroom():
    seqs = 8
    start = seqs + vllm_headroom(seqs)
    # Sent, not yet counted by the server (being read, tokenized): nothing is another client's.
    assert cap_after(Steering(seqs), [(0, 0, 0, start)])[0] == start
    # All ours, queued behind a full batch: the cap stays where it is.
    assert cap_after(Steering(seqs), [(8, 4, 0, start)])[0] == start
    # Ours waiting for their schema to compile (deferred): still ours.
    assert cap_after(Steering(seqs), [(2, 10, 10, start)])[0] == start


def test_another_client_s_requests_lower_the_cap_to_a_quarter_of_the_batch_at_least():
    seqs = 8
    cap, load = cap_after(Steering(seqs), [(8, 7, 0, 12)] * 5)
    assert load.others == 3 and cap == 12 - 3
    cap, load = cap_after(Steering(seqs), [(8, 30, 0, 12)] * 5)
    assert load.others == 26 and cap == seqs // 4
    # Deferred or not, the server's requests beyond our calls in flight are another client's.
    cap, load = cap_after(Steering(seqs), [(8, 14, 4, 12)] * 5)
    assert load.others == 10 and cap == seqs // 4


def test_a_moment_s_excess_is_not_another_client_and_one_that_left_frees_the_cap_at_once():
    seqs = 8
    # Our calls answered between the server's count and ours look like another client's for one read.
    cap, load = cap_after(Steering(seqs), [(8, 4, 0, 12), (8, 4, 0, 9), (8, 4, 0, 12)])
    assert load.others == 0 and cap == 12
    # Another client for a second and more: then it leaves, and the cap is back at the next read.
    steering = Steering(seqs)
    cap, _ = cap_after(steering, [(8, 12, 0, 12)] * 6)
    assert cap == 12 - 8
    load = ServerLoad()
    load.running, load.waiting = 8, 4
    assert steering.cap(load, 12, 6 * 0.25, 1.0) == 12 and load.others == 0


MODEL = "vllm:share_everything"


async def play_sampled(server, config, settings, concurrency: int, during=None):
    """Play ``config`` against ``server``, the limiter's cap sampled every 20 ms while games play;
    ``during(factory)`` runs beside the games and is cancelled when they end. (records, factory, caps)."""
    factory = PolicyFactory(settings, environ=KEYS)
    records: list = []
    caps: list[int] = []
    async with factory:
        limiter = factory.hub.backend(MODEL).limiter

        async def sample() -> None:
            while True:
                caps.append(limiter.cap)
                await anyio.sleep(0.02)

        async with anyio.create_task_group() as group:
            group.start_soon(sample)
            if during is not None:
                group.start_soon(during, factory)
            await run_games(config.specs_for(range(config.total)), factory=factory, concurrency=concurrency,
                            on_record=records.append)
            group.cancel_scope.cancel()
    return records, factory, caps


async def test_a_structured_run_keeps_the_batch_full_from_its_start():
    # As vLLM does: a request is read and tokenized before its scheduler counts it, and one whose reply
    # schema is new waits, counted as waiting (deferred), while the schema compiles.
    seqs, games = 8, 48
    config = grid(games, size=3, alice=MODEL, bob=MODEL)
    options = msgspec.structs.replace(FAST, structured=True)
    async with fake_server(latency=0.1, max_num_seqs=seqs, intake=0.3, compile_delay=1.5) as server:
        deferred: list[int] = []

        async def watch(factory) -> None:
            while True:
                deferred.append(server.stats.deferred)
                await anyio.sleep(0.02)

        records, factory, caps = await play_sampled(server, config, settings_for(server, vllm_max_seqs=seqs, options=options),
                                                    games, watch)
        samples = server.stats.samples
    assert [r.outcome for r in records] == ["success"] * games
    assert max(deferred) > 0 and server.schemas  # requests waited for the schema to compile
    assert min(caps) >= seqs + vllm_headroom(seqs)  # never cut for our own queued or deferred requests
    assert max(running for _, running, _, _ in samples) == seqs
    assert factory.hub.loads[MODEL].others == 0


async def test_another_client_on_the_server_lowers_the_cap_and_its_leaving_raises_it_again():
    seqs = 4
    start = seqs + vllm_headroom(seqs)
    config = grid(40, size=3, alice=MODEL, bob=MODEL)
    lowered: list[int] = []
    async with fake_server(latency=0.05, max_num_seqs=seqs) as server:

        async def other_client(factory) -> None:
            body = {"model": "other", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}
            load = factory.hub.loads[MODEL]
            async with aiohttp.ClientSession(headers={"Authorization": "Bearer x"}) as session:

                async def ask() -> None:
                    while not lowered:
                        async with session.post(server.url + "/v1/chat/completions", json=body) as response:
                            assert response.status == 200

                async with anyio.create_task_group() as group:
                    for _ in range(3 * seqs):  # another client keeping three batches' worth in flight
                        group.start_soon(ask)
                    limiter = factory.hub.backend(MODEL).limiter
                    while limiter.cap >= start:
                        await anyio.sleep(0.02)
                    lowered.append(limiter.cap)
                    assert load.others > 0

        records, factory, caps = await play_sampled(server, config, settings_for(server, vllm_max_seqs=seqs), 40, other_client)
    assert [r.outcome for r in records] == ["success"] * 40
    assert lowered and lowered[0] < start
    assert caps[-1] == start  # the other client gone, the cap is back at the batch and its headroom
