"""How much of a run's prompts a real server reads from its prefix cache, and the time that saves:
llama.cpp's ``llama-server`` with SmolLM2-135M (``asymgames setup-llamacpp``), S slots, the engine
playing G AsymPuzl games (size 3, structured replies, T turns each) with 2S in flight. Prints
figures; asserts nothing.

    .venv/bin/python benchmarks/bench_prefix_cache.py                  # S = 4, G = 16, T = 4
    .venv/bin/python benchmarks/bench_prefix_cache.py --slots 2 --games 8 --turns 6

Two figures of the hit rate, which should agree:
- the engine's: the cached prompt tokens the server reported per call (``usage.prompt_tokens_details
  .cached_tokens``, kept in every record) over all prompt tokens;
- the server's: from its ``/metrics``, the prompt tokens it evaluated (``llamacpp:prompt_tokens_total``)
  against the prompt tokens the engine sent.

Time saved: the cached tokens at the server's own prompt-evaluation rate over the run
(``llamacpp:prompt_seconds_total`` / ``llamacpp:prompt_tokens_total``): the seconds of prompt
evaluation the cache spared, beside the seconds the server spent evaluating prompts and the run's
wall time. Each agent's prompt starts with the same system part and carries the conversation so far
after it, so a later turn of a game shares its prefix with the turn before.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.play.run import run_games  # noqa: E402
from engine.serving import ServedModel, Servers  # noqa: E402
from engine.serving.install import bundled_model  # noqa: E402

NAME = "llamacpp:smollm2"
_METRIC = re.compile(r"^(llamacpp:[a-z_]+)(?:\{[^}]*\})?\s+([0-9.eE+-]+)$", re.M)


async def server_metrics(base: str) -> dict[str, float]:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(base + "/metrics") as response:
        return {name: float(value) for name, value in _METRIC.findall(await response.text())}


async def main_async(args: argparse.Namespace) -> None:
    model = bundled_model("smollm2")
    if model is None or not model.is_file():
        sys.exit("no model: asymgames setup-llamacpp")
    log_dir = Path(tempfile.mkdtemp(prefix="bench-prefix-"))
    async with Servers({NAME: ServedModel("llamacpp", str(model))}, log_dir, slots=args.slots, context=4096) as urls:
        url = urls[NAME]
        base = url.removesuffix("/v1")
        settings = BackendSettings(options=ModelOptions(structured=True, max_tokens=args.max_tokens), serve_slots=args.slots)
        factory = PolicyFactory(settings)
        factory.hub.served_urls = {NAME: url}  # the running server, as for a server the engine started
        plan = Grid(game="asympuzl", seeds=args.games, agents=[[NAME, NAME]], params={"size": [3]},
                    max_turns=[args.turns], history=["full"])  # the whole conversation: each turn extends the last
        records = []
        before = await server_metrics(base)
        started = time.monotonic()
        async with factory:
            await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=2 * args.slots,
                            on_record=records.append)
        wall = time.monotonic() - started
        after = await server_metrics(base)
    prompt = sum(u.prompt_tokens for r in records for u in (r.usage or {}).values())
    cached = sum(u.cached_tokens for r in records for u in (r.usage or {}).values())
    calls = sum(u.calls for r in records for u in (r.usage or {}).values())
    evaluated = after.get("llamacpp:prompt_tokens_total", 0.0) - before.get("llamacpp:prompt_tokens_total", 0.0)
    seconds = after.get("llamacpp:prompt_seconds_total", 0.0) - before.get("llamacpp:prompt_seconds_total", 0.0)
    rate = evaluated / seconds if seconds else float("nan")
    saved = cached / rate if rate == rate and rate else float("nan")
    figures = {
        "slots": args.slots, "games": len(records), "turns": args.turns, "calls": calls, "prompt_tokens": prompt,
        "cached_tokens": cached, "hit_rate_engine": round(cached / prompt, 3) if prompt else None,
        "hit_rate_server": round(1 - evaluated / prompt, 3) if prompt else None,
        "prompt_eval_seconds": round(seconds, 2), "prompt_eval_tokens_per_s": round(rate, 1),
        "seconds_saved": round(saved, 2), "wall_seconds": round(wall, 1),
    }
    print(json.dumps(figures))
    print(f"prefix-cache hit rate {figures['hit_rate_engine']} (engine's records) / {figures['hit_rate_server']} (server's "
          f"metrics); prompt evaluation {seconds:.1f} s at {rate:.0f} tokens/s; the cache spared about {saved:.1f} s of it "
          f"({saved / (seconds + saved):.0%} of the prompt work); wall time {wall:.1f} s; server log in {log_dir}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=96)
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
