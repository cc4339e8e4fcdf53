"""The engine against a real vLLM server, side by side with a bare client sending the engine's own
requests: is the server's batch kept as full by the engine as by a client that does nothing else?
Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_vllm.py --url http://127.0.0.1:PORT --seqs 8
    .venv/bin/python benchmarks/bench_vllm.py --url http://127.0.0.1:PORT --seqs 8 --seconds 90 --rounds 4

The server is one already running, started as the engine starts it (``vllm serve FOLDER
--served-model-name smollm2 --max-num-seqs S --max-model-len 2048 --enable-prompt-tokens-details``; on a
CPU ``--enforce-eager`` too, and ``VLLM_CPU_KVCACHE_SPACE``; ``asymgames setup-vllm`` makes the folder).
After a warm-up (``--warmup`` seconds of the engine's games, counted in no round), both sides run
against it in rounds, each side for the same wall time, their order alternating (engine then bare
client, bare client then engine, ...):

- engine: AsymPuzl games (size 3, structured replies) played by the engine through the ``vllm:`` path
  at the server's URL, twice S games in flight, its calls steered by the server's ``/metrics``. The
  body of every request it sends is recorded, in the order sent.
- bare: an aiohttp client keeping as many requests in flight as the engine keeps at most (the batch
  plus its headroom, ``engine.backends.vllm.vllm_headroom``), sending the bodies the engine's last side
  recorded, byte for byte and in the same order (first turns and later ones with the conversation so
  far, the same reply schemas, ``max_tokens`` and temperature), each with a ``cache_salt`` of its own
  side, so that none is read from the prefix cache the engine's side left behind (they share the cache
  among themselves as the engine's calls do). Past the last body it starts again under a new salt.

For each, from the server's own ``/metrics``: the tokens it generated per second over the side's time
(``vllm:generation_tokens_total``; the side's requests still in flight at its end are cancelled, so both
sides are counted over the same kind of window), and its running requests (``vllm:num_requests_running``
sampled every 0.1 s) as a share of S, with the mean waiting, deferred among them, KV-cache usage, and the
prompt tokens it took in per second (``vllm:prompt_tokens_total``) with the share read from its prefix
cache (``vllm:prompt_tokens_cached_total``); also the requests sent, and this process's CPU time per
request. Target: the engine's completion tokens per second >= 0.95 of the bare client's (the median of
the rounds' ratios; also printed: all the engine's tokens over all the bare client's, the sides being of
equal length). On a machine other work loads, the server's rate moves between sides by more than the
engine could cost it: run several rounds, and read the running requests beside the rates.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
import time
from pathlib import Path

import anyio
import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions, read_vllm_metrics  # noqa: E402
from engine.backends.lean import LeanBackend  # noqa: E402
from engine.backends.vllm import vllm_headroom  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.play.run import run_games  # noqa: E402
from puzzles import GAMES, TurnContext  # noqa: E402

MODEL = "smollm2"
NAME = f"vllm:{MODEL}"
COUNTER = r"^vllm:{}(?:\{{[^}}]*\}})?\s+([0-9.eE+-]+)$"
GENERATED = re.compile(COUNTER.format("generation_tokens_total"), re.M)
PROMPTED = re.compile(COUNTER.format("prompt_tokens_total"), re.M)
CACHED = re.compile(COUNTER.format("prompt_tokens_cached_total"), re.M)


class Samples:
    """The server's load, read from /metrics every 0.1 s, and the side's own counts."""

    def __init__(self) -> None:
        self.rows: list[dict[str, float]] = []
        self.steering: list[tuple[int, float]] = []  # the engine's: (cap, others) every 0.1 s
        self.prompted = 0.0  # prompt tokens per second the server took in
        self.cached = 0.0  # the share of them read from its prefix cache
        self.requests = 0  # requests the side sent
        self.failed = 0  # of them, answered with an error
        self.cpu = 0.0  # this process's CPU seconds over the side

    def mean(self, key: str) -> float:
        return statistics.fmean(row.get(key, 0.0) for row in self.rows) if self.rows else 0.0


class Recorded:
    """The body of every request the engine's lean client sends, in the order sent (``LeanBackend._body``
    wrapped while ``on`` is set)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.on = False
        original = LeanBackend._body
        recorded = self

        def body(backend: LeanBackend, request):  # type: ignore[no-untyped-def]
            data = original(backend, request)
            if recorded.on:
                recorded.bodies.append(data)
            return data

        LeanBackend._body = body  # type: ignore[method-assign]


async def sample(base: str, samples: Samples, stop: anyio.Event) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        while not stop.is_set():
            async with session.get(base + "/metrics") as response:
                samples.rows.append(read_vllm_metrics(await response.text()))
            await anyio.sleep(0.1)


def first_prompts(count: int) -> list[tuple[str, str, dict]]:
    """(system, user, schema) of the first turn of ``count`` AsymPuzl games of size 3, the schema as the
    engine sends it to vLLM (as the game gives it)."""
    game = GAMES["asympuzl"]
    params = game.rules.Params(size=3)
    prompts = []
    for seed in range(count):
        state = game.rules.new(params, seed, ("alice", "bob"), 6)
        role = ("alice", "bob")[seed % 2]
        context = TurnContext(game_id=seed, role=role, turn=1, max_turns=6, view=state.view(role),
                              feedback=game.rules.feedback[game.rules.default_feedback](state, role), conversation=(),
                              partners=tuple(r for r in ("alice", "bob") if r != role))
        system, user = game.faces.prompter.render(context)
        prompts.append((system, user, game.faces.prompter.schema(context)))
    return prompts


def counted(counter: re.Pattern, text: str) -> float:
    """A counter of the server's, summed over its engines."""
    return sum(float(value) for value in counter.findall(text))


async def measured(base: str, seconds: float, work) -> tuple[float, Samples]:
    """Run ``work()`` for ``seconds`` (cancelled then: the server drops what it was writing), the
    server's load sampled: (tokens per second the server generated meanwhile, the samples). Then wait
    for the server to be idle again."""
    import aiohttp

    samples = Samples()
    stop = anyio.Event()
    async with aiohttp.ClientSession() as session:
        async def read() -> str:
            async with session.get(base + "/metrics") as response:
                return await response.text()

        text = await read()
        before, started, cpu = [counted(c, text) for c in (GENERATED, PROMPTED, CACHED)], time.monotonic(), time.process_time()
        async with anyio.create_task_group() as group:
            group.start_soon(sample, base, samples, stop)
            with anyio.move_on_after(seconds):
                await work()
            text = await read()
            after, wall = [counted(c, text) for c in (GENERATED, PROMPTED, CACHED)], time.monotonic() - started
            samples.cpu = time.process_time() - cpu
            stop.set()
        while True:  # the next side starts on an idle server
            load = read_vllm_metrics(await read())
            if load.get("running", 0.0) + load.get("waiting", 0.0) == 0:
                break
            await anyio.sleep(0.5)
    samples.prompted = (after[1] - before[1]) / wall
    samples.cached = (after[2] - before[2]) / max(1.0, after[1] - before[1])
    return (after[0] - before[0]) / wall, samples


def salted(bodies: list[bytes], salt: str) -> list[bytes]:
    """The bodies, each with ``cache_salt``: the server's prefix cache is shared only among requests of one salt."""
    return [msgspec.json.encode({**msgspec.json.decode(body), "cache_salt": salt}) for body in bodies]


async def bare(base: str, in_flight: int, seconds: float, bodies: list[bytes], salt: str) -> tuple[float, Samples]:
    """The recorded bodies sent again, in order, ``in_flight`` at a time (a new salt each time through)."""
    import aiohttp

    passes = (salted(bodies, f"{salt}.{n}") for n in itertools.count())
    order = itertools.chain.from_iterable(passes)
    sent, failed = [0], [0]
    headers = {"Content-Type": "application/json", "Authorization": "Bearer none"}  # a key for a server that asks for one

    async def worker(session: aiohttp.ClientSession) -> None:
        while True:
            body = next(order)
            sent[0] += 1
            async with session.post(base + "/v1/chat/completions", data=body, headers=headers) as response:
                await response.read()
                failed[0] += response.status != 200

    async def work() -> None:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
            async with anyio.create_task_group() as workers:
                for _ in range(in_flight):
                    workers.start_soon(worker, session)

    rate, samples = await measured(base, seconds, work)
    samples.requests, samples.failed = sent[0], failed[0]
    return rate, samples


async def engine_side(base: str, seqs: int, seconds: float, seed: int, max_tokens: int, recorded: Recorded) -> tuple[float, Samples]:
    options = ModelOptions(structured=True, max_tokens=max_tokens, timeout=3600.0)
    settings = BackendSettings(options=options, urls={"vllm": base + "/v1"}, vllm_max_seqs=seqs)
    factory = PolicyFactory(settings)
    plan = Grid(game="asympuzl", seeds=100_000, seed=seed, agents=[[NAME, NAME]], params={"size": [3]})

    steering: list[tuple[int, float]] = []  # (the cap on calls in flight, another client's requests as the engine saw them)

    async def watch() -> None:
        limiter, load = factory.hub.backend(NAME).limiter, factory.hub.loads
        while True:
            steering.append((limiter.cap, load[NAME].others if NAME in load else 0.0))
            await anyio.sleep(0.1)

    async def work() -> None:
        async with factory:
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=2 * seqs, on_record=lambda record: None)
                group.cancel_scope.cancel()

    recorded.bodies.clear()
    recorded.on = True
    try:
        rate, samples = await measured(base, seconds, work)
    finally:
        recorded.on = False
    samples.steering = steering
    samples.requests = len(recorded.bodies)
    return rate, samples


def line(name: str, rate: float, samples: Samples, seqs: int) -> str:
    text = (f"{name} {rate:6.1f} tok/s, running {samples.mean('running') / seqs:.3f} of {seqs}, waiting "
            f"{samples.mean('waiting'):.1f} ({samples.mean('deferred'):.1f} deferred), KV cache {100 * samples.mean('kv_cache'):.0f}%, "
            f"prompt {samples.prompted:.0f} tok/s ({100 * samples.cached:.0f}% cached), {samples.requests} requests "
            f"({samples.failed} failed), "
            f"CPU {1000 * samples.cpu / max(1, samples.requests):.1f} ms a request")
    if samples.steering:
        caps = [cap for cap, _ in samples.steering]
        text += (f", cap {min(caps)}-{max(caps)} (mean {statistics.fmean(caps):.1f}), another client's requests seen "
                 f"at most {max(others for _, others in samples.steering):.0f}")
    return text


async def main_async(args) -> None:
    base = args.url.rstrip("/").removesuffix("/v1")
    in_flight = args.seqs + vllm_headroom(args.seqs)
    recorded = Recorded()
    rows = []
    bodies: list[bytes] = []
    if args.warmup > 0:  # the server's first requests (its first reply schema compiled, say) are counted in no round
        w = await engine_side(base, args.seqs, args.warmup, args.rounds, args.max_tokens, recorded)
        print(f"warm-up: {line('engine', w[0], w[1], args.seqs)}", flush=True)
    for round_ in range(args.rounds):
        engine_first = round_ % 2 == 0  # the first round has no bodies yet; then the order alternates
        if engine_first:
            e = await engine_side(base, args.seqs, args.seconds, round_, args.max_tokens, recorded)
            bodies = list(recorded.bodies)
        a = await bare(base, in_flight, args.seconds, bodies, f"bare-{round_}")
        if not engine_first:
            e = await engine_side(base, args.seqs, args.seconds, round_, args.max_tokens, recorded)
            bodies = list(recorded.bodies)
        rows.append((a, e))
        order = "engine, bare" if engine_first else "bare, engine"
        print(f"round {round_ + 1} ({order}): {line('bare', a[0], a[1], args.seqs)} | {line('engine', e[0], e[1], args.seqs)} | "
              f"tok/s engine/bare {e[0] / a[0]:.3f}", flush=True)
    ratio = statistics.median(e[0] / a[0] for a, e in rows)
    pooled = sum(e[0] for _, e in rows) / sum(a[0] for a, _ in rows)  # all the engine's tokens over all the bare client's
    running = statistics.median(e[1].mean("running") / args.seqs for _, e in rows)
    bare_running = statistics.median(a[1].mean("running") / args.seqs for a, _ in rows)
    print(json.dumps({"seqs": args.seqs, "in_flight": in_flight, "seconds": args.seconds, "rounds": args.rounds,
                      "max_tokens": args.max_tokens, "tokens_per_s_ratios": [round(e[0] / a[0], 3) for a, e in rows],
                      "tokens_per_s_ratio": round(ratio, 3), "pooled_ratio": round(pooled, 3), "engine_running_share": round(running, 3),
                      "bare_running_share": round(bare_running, 3)}))
    print(f"engine/bare completion tokens per second {ratio:.3f} (median of {args.rounds} rounds; target >= 0.95; "
          f"{pooled:.3f} over all the rounds' tokens); the server's "
          f"running requests {running:.3f} of its batch with the engine, {bare_running:.3f} with the bare client")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the vLLM server, http://HOST:PORT")
    parser.add_argument("--seqs", type=int, default=8, help="the server's --max-num-seqs")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds of the engine's games before the first round, not counted")
    parser.add_argument("--max-tokens", type=int, default=300)
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
