"""The engine against a real continuous-batching server: llama.cpp's ``llama-server`` with SmolLM2-135M
(``asymgames setup-llamacpp``), S slots, twice S games (or requests) in flight. Prints figures;
asserts nothing.

    .venv/bin/python benchmarks/bench_llamacpp.py                     # S = 4, 2 rounds of 60 s each side
    .venv/bin/python benchmarks/bench_llamacpp.py --slots 8 --seconds 90 --rounds 3

One server is started (``engine.serving.Servers``) and both sides run against it, interleaved
(anchor, engine, anchor, engine, ...), each for the same wall time:

- anchor: a bare aiohttp client keeping 2S requests in flight, each the first-turn prompt of an
  AsymPuzl game (a different game each time) with the same reply schema and ``max_tokens`` as the
  engine's calls: the server's best throughput on this work;
- engine: AsymPuzl games (size 3, structured replies) played by the engine with 2S games in flight,
  its calls steered by the server's ``/metrics`` as the engine steers every server it starts.

For each: completion tokens per second (from the replies' ``usage``), and the share of the server's
slots busy (``llamacpp:requests_processing`` sampled every 0.1 s, divided by S). Targets: the
engine's slots busy >= 0.95, and its completion tokens per second >= 0.95 of the anchor's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.backends.vllm import read_vllm_metrics  # noqa: E402
from engine.backends.wire import bounded  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.play.run import run_games  # noqa: E402
from engine.serving import ServedModel, Servers  # noqa: E402
from engine.serving.install import bundled_model  # noqa: E402
from puzzles import GAMES, TurnContext  # noqa: E402

NAME = "llamacpp:smollm2"
MAX_TOKENS = 300


async def sample_busy(base: str, slots: int, samples: list[float], stop: anyio.Event) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        while not stop.is_set():
            async with session.get(base + "/metrics") as response:
                samples.append(read_vllm_metrics(await response.text()).get("running", 0.0) / slots)
            await anyio.sleep(0.1)


def first_prompts(count: int) -> list[tuple[str, str, dict]]:
    """(system, user, schema) of the first turn of ``count`` AsymPuzl games of size 3."""
    from engine.backends import served_schema_bounds

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
        prompts.append((system, user, bounded(game.faces.prompter.schema(context), *served_schema_bounds(MAX_TOKENS))))
    return prompts


async def anchor(base: str, slots: int, seconds: float) -> tuple[float, float]:
    import aiohttp

    prompts = first_prompts(4000)
    tokens = 0
    samples: list[float] = []
    stop = anyio.Event()
    started = time.monotonic()
    counter = iter(range(len(prompts)))

    async def worker(session) -> None:
        nonlocal tokens
        while time.monotonic() - started < seconds:
            system, user, schema = prompts[next(counter)]
            body = {"model": "smollm2", "max_tokens": MAX_TOKENS, "temperature": 0.0,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                    "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}}
            async with session.post(base + "/v1/chat/completions", json=body) as response:
                tokens += (await response.json())["usage"]["completion_tokens"]

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:
        async with anyio.create_task_group() as group:
            group.start_soon(sample_busy, base, slots, samples, stop)
            async with anyio.create_task_group() as workers:
                for _ in range(2 * slots):
                    workers.start_soon(worker, session)
            wall = time.monotonic() - started
            stop.set()
    return tokens / wall, statistics.fmean(samples)


async def engine_side(base: str, url: str, slots: int, seconds: float, seed: int) -> tuple[float, float]:
    served = ServedModel("llamacpp", str(bundled_model("smollm2")))
    settings = BackendSettings(options=ModelOptions(structured=True, max_tokens=MAX_TOKENS), serve_slots=slots)
    factory = PolicyFactory(settings)
    factory.hub.served_urls = {NAME: url}  # the running server: the engine's path for a server it started
    plan = Grid(game="asympuzl", seeds=100_000, seed=seed, agents=[[NAME, NAME]], params={"size": [3]})
    tokens = 0
    samples: list[float] = []
    stop = anyio.Event()

    def on_record(record) -> None:
        nonlocal tokens
        tokens += sum(u.completion_tokens for u in record.usage.values())

    started = time.monotonic()
    async with factory:
        async with anyio.create_task_group() as group:
            group.start_soon(sample_busy, base, slots, samples, stop)
            with anyio.move_on_after(seconds):
                await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=2 * slots, on_record=on_record)
            # the calls of games cut short count too: read them off the limiter
            tokens = factory.hub.backend(NAME).limiter.stats.completion_tokens
            wall = time.monotonic() - started
            stop.set()
    assert served.kind == "llamacpp"
    return tokens / wall, statistics.fmean(samples)


async def main_async(args) -> None:
    model = bundled_model("smollm2")
    if model is None or not model.is_file():
        sys.exit("no model: asymgames setup-llamacpp")
    log_dir = Path(tempfile.mkdtemp(prefix="bench-llamacpp-"))
    async with Servers({NAME: ServedModel("llamacpp", str(model))}, log_dir, slots=args.slots, context=4096) as urls:
        url = urls[NAME]
        base = url.removesuffix("/v1")
        rows = []
        for round_ in range(args.rounds):
            a = await anchor(base, args.slots, args.seconds)
            e = await engine_side(base, url, args.slots, args.seconds, round_)
            rows.append((a, e))
            print(f"round {round_ + 1}: anchor {a[0]:6.1f} tok/s, slots busy {a[1]:.3f} | engine {e[0]:6.1f} tok/s, "
                  f"slots busy {e[1]:.3f} | tok/s engine/anchor {e[0] / a[0]:.3f}", flush=True)
    ratio = statistics.median(e[0] / a[0] for a, e in rows)
    busy = statistics.median(e[1] for _, e in rows)
    anchor_busy = statistics.median(a[1] for a, _ in rows)
    print(json.dumps({"slots": args.slots, "seconds": args.seconds, "rounds": args.rounds, "tokens_per_s_ratio": round(ratio, 3),
                      "engine_slots_busy": round(busy, 3), "anchor_slots_busy": round(anchor_busy, 3)}))
    print(f"engine/anchor completion tokens per second {ratio:.3f} (target >= 0.95); engine slots busy {busy:.3f} "
          f"(target >= 0.95; the bare client's {anchor_busy:.3f}); server log in {log_dir}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
