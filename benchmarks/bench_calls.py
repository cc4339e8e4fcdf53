"""Engine CPU per model call on the OpenAI-compatible path. Prints figures and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_calls.py              # 5 interleaved rounds
    .venv/bin/python benchmarks/bench_calls.py --rounds 9 --games 400

The local server (``python -m runners.fake_llm --latency 0``) runs in its own process; this process
makes the calls, and what is measured is this process's CPU time (user + system) per call, so the
server's own work does not count. Variants, run in turn within each round, 64 calls (or games) at once:

- bare: an aiohttp session posting the body of an engine call (encoded with msgspec) and decoding
  the reply with msgspec: the anchor;
- the openai SDK alone: ``AsyncOpenAI`` on its aiohttp transport, ``chat.completions.create``;
- the engine's call path: ``Backend.complete`` of a ``vllm:`` model from the ``ModelHub`` (limiter,
  retries, usage, cost, the client), the same prompt, with the lean client and with the SDK;
- whole games: AsymPuzl games of two ``vllm:`` agents through ``run_games``, CPU per call, which adds
  the game's own work (prompt, reading the reply, rules, records) and the actors and bus;
- the call path with a token limit that never binds (``--tpm``): the same calls, each counted
  (``engine.backends.tokens``) before it is sent, as a token bucket needs;
- the same games offline: the same seeds played by the scripted ``share_everything`` policy in
  process (the policy the local server plays), CPU divided by the calls the whole games made. The
  whole games' CPU less this, per call, is what a model call costs the engine beyond the game itself
  (prompt, client, reading the reply): ``extra per call``, against the bare client.

The ratios are taken within each round (every variant saw the same machine); the medians are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Grid, PolicyFactory, run_games  # noqa: E402
from engine.backends import BackendSettings, ModelOptions, Request  # noqa: E402

CONCURRENCY = 64


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Usage(msgspec.Struct):
    prompt_tokens: int
    completion_tokens: int


class Reply(msgspec.Struct):
    """What the bare client reads of a reply."""

    choices: list[_Choice]
    usage: _Usage
ENVIRON = {"OPENAI_API_KEY": "sk-bench-0000", "VLLM_API_KEY": "token-bench"}


class Server:
    """The local model server in its own process, answering at once."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runners.fake_llm", "--port", "0", "--latency", "0"],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )
        self.url = self.process.stdout.readline().split()[4]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def settings(url: str, client: str = "lean", tpm: float | None = None) -> BackendSettings:
    limits = {"vllm": tpm} if tpm is not None else {}
    return BackendSettings(options=ModelOptions(timeout=30), urls={"vllm": url + "/v1"}, clients={"vllm": client}, tpm=limits)


async def capture_body(url: str) -> dict:
    """The body of an engine call: the first call of a game, as the engine builds it."""
    factory = PolicyFactory(settings(url), environ=ENVIRON)
    async with factory:
        backend = factory.hub.provider("vllm:share_everything")
        captured: list = []
        original = type(backend)._send

        async def spy(self, request, call):
            captured.append((request.system, request.user))
            return await original(self, request, call)

        type(backend)._send = spy
        try:
            config = Grid(seeds=1, agents=[["vllm:share_everything", "vllm:share_everything"]])
            await run_games(config.specs_for(range(1)), factory=factory, concurrency=1, on_record=lambda r: None)
        finally:
            type(backend)._send = original
    system, user = captured[0]
    return {
        "model": "share_everything", "temperature": 0.0, "max_tokens": 4096,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }


async def calls_bare(url: str, body: dict, calls: int) -> int:
    import aiohttp

    decode = msgspec.json.Decoder(Reply).decode
    encode = msgspec.json.Encoder().encode
    headers = {"Authorization": "Bearer token-bench", "Content-Type": "application/json"}
    endpoint = url + "/v1/chat/completions"
    queue = iter(range(calls))
    async with aiohttp.ClientSession() as session:

        async def worker() -> None:
            for _ in queue:
                async with session.post(endpoint, data=encode(body), headers=headers) as response:
                    reply = decode(await response.read())
                    assert reply.choices[0].message.content is not None

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return calls


async def calls_sdk(url: str, body: dict, calls: int) -> int:
    import openai

    client = openai.AsyncOpenAI(api_key="token-bench", base_url=url + "/v1", max_retries=0, http_client=openai.DefaultAioHttpClient())
    queue = iter(range(calls))

    async def worker() -> None:
        for _ in queue:
            reply = await client.chat.completions.create(**body)
            assert reply.choices[0].message.content is not None

    async with client:
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return calls


async def calls_backend(url: str, client: str, body: dict, calls: int, tpm: float | None = None) -> int:
    factory = PolicyFactory(settings(url, client, tpm), environ=ENVIRON)
    request = Request(*(m["content"] for m in body["messages"]))
    queue = iter(range(calls))
    async with factory:
        backend = factory.hub.backend("vllm:share_everything")

        async def worker() -> None:
            for _ in queue:
                completion = await backend.complete(request)
                assert completion.text

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return calls


async def calls_games(url: str, client: str, games: int) -> int:
    factory = PolicyFactory(settings(url, client), environ=ENVIRON)
    config = Grid(seeds=games, agents=[["vllm:share_everything", "vllm:share_everything"]])
    async with factory:
        await run_games(config.specs_for(range(games)), factory=factory, concurrency=CONCURRENCY, on_record=lambda r: None)
    stats = factory.hub.backends()[0].limiter.stats
    assert stats.failed == 0, "calls failed"
    return stats.attempts


async def games_offline(games: int, calls: int) -> int:
    """The games of ``calls_games`` played by the scripted policy in process; ``calls`` is what the
    whole games made, so that the figure is CPU per call."""
    factory = PolicyFactory()
    config = Grid(seeds=games, agents=[["share_everything", "share_everything"]])
    async with factory:
        await run_games(config.specs_for(range(games)), factory=factory, concurrency=CONCURRENCY, on_record=lambda r: None)
    return calls


def cpu_per_call(run) -> float:
    """Microseconds of this process's CPU per call."""
    gc.collect()
    started = time.process_time()
    calls = asyncio.run(run)
    return (time.process_time() - started) / calls * 1e6


BARE, SDK = "bare aiohttp + msgspec", "openai SDK alone"
OFFLINE = "same games offline"
TOKEN_LIMIT = "call path, token limit"


def extra_per_call(figures: dict[str, list[float]], client: str = "lean") -> list[float]:
    """Per round: CPU per call of the whole games less the same games offline, in microseconds."""
    return [w - o for w, o in zip(figures[f"whole games, {client} client"], figures[OFFLINE])]


def measure(rounds: int, calls: int = 2000, games: int = 300, clients: tuple[str, ...] = ("lean", "sdk")) -> dict[str, list[float]]:
    """Microseconds of CPU per call of each variant, one figure per round."""
    server = Server()
    try:
        body = asyncio.run(capture_body(server.url))
        variants = {BARE: lambda: calls_bare(server.url, body, calls), SDK: lambda: calls_sdk(server.url, body, calls)}
        for client in clients:
            variants[f"call path, {client} client"] = lambda client=client: calls_backend(server.url, client, body, calls)
        # a token limit that never binds: what counting each call's tokens up front costs
        variants[TOKEN_LIMIT] = lambda: calls_backend(server.url, clients[0], body, calls, tpm=1e12)
        made = {}  # the calls the whole games made, for the offline figure per call

        async def whole(client: str) -> int:
            made["calls"] = await calls_games(server.url, client, games)
            return made["calls"]

        for client in clients:
            variants[f"whole games, {client} client"] = lambda client=client: whole(client)
        variants[OFFLINE] = lambda: games_offline(games, made["calls"])
        for make in variants.values():  # warm up: imports, connections, caches
            asyncio.run(make())
        figures: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, make in variants.items():
                figures[name].append(cpu_per_call(make()))
    finally:
        server.close()
    return figures


def paired(figures: dict[str, list[float]], name: str, anchor: str) -> float:
    return statistics.median(v / a for v, a in zip(figures[name], figures[anchor]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round of the bare client, the SDK and the call paths")
    parser.add_argument("--games", type=int, default=300, help="games per round of each whole-games variant")
    parser.add_argument("--clients", default="lean,sdk", help="engine clients to measure (default lean,sdk)")
    args = parser.parse_args()
    figures = measure(args.rounds, args.calls, args.games, tuple(args.clients.split(",")))
    print(f"CPU of this process per call, server in its own process with no latency, {args.rounds} interleaved rounds:")
    for name, values in figures.items():
        print(f"  {name:<26} {statistics.median(values):7.0f} us (median)  {paired(figures, name, BARE):5.2f} x bare"
              f"  {paired(figures, name, SDK):5.2f} x SDK alone")
    first = args.clients.split(",")[0]
    counting = statistics.median(t / c - 1 for t, c in zip(figures[TOKEN_LIMIT], figures[f"call path, {first} client"]))
    print(f"  counting tokens up front (a token limit set): {counting * 100:+.1f}% CPU per call (target <= 3%)")
    for client in args.clients.split(","):
        extra = extra_per_call(figures, client)
        ratio = statistics.median(e / b for e, b in zip(extra, figures[BARE]))
        print(f"  extra per call, {client} client (whole games less the same games offline): "
              f"{statistics.median(extra):.0f} us, {ratio:.2f} x bare (target <= 2x)")


if __name__ == "__main__":
    main()
