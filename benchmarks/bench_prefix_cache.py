"""How much of a run's prompts a real server reads from its prefix cache, and the time that saves:
llama.cpp's ``llama-server`` with SmolLM2-135M (``asymgames setup-llamacpp``), S slots, the engine
playing G AsymPuzl games (size 3, structured replies, T turns each) with 2S in flight. Prints
figures; asserts nothing.

    .venv/bin/python benchmarks/bench_prefix_cache.py                  # S = 4, G = 16, T = 4
    .venv/bin/python benchmarks/bench_prefix_cache.py --slots 2 --games 8 --turns 6

Two figures of the hit rate, over the same requests:
- the engine's: the cached prompt tokens the server reported per call (``usage.prompt_tokens_details
  .cached_tokens``, kept in every record) over all prompt tokens;
- the server's: from its ``/metrics``, the prompt tokens it evaluated (``llamacpp:prompt_tokens_total``)
  against the prompt tokens the records hold.

Per request they are one count: llama-server sets a task's ``n_prompt_tokens_cache`` (the reply's
``cached_tokens``) to the prefix it kept (less one token when the whole prompt matched: it evaluates
at least one), resets ``n_prompt_tokens_processed`` and counts each token it then evaluates; at the end
of the prompt it adds that count to ``prompt_tokens_total`` (``server_metrics::on_prompt_eval``). So
cached + evaluated = prompt for every request, whatever the slots, and the two figures differ only by
requests the records do not hold: an attempt the engine gave up on (its timeout; the server, still
evaluating it, finishes its prompt) is in the server's count and in no record, and its retry finds the
same prompt in the cache that attempt left, so the records count hits the server paid for once
already. The run's timeout (``--timeout``, default an hour) is therefore far above a call's time here,
and the output gives the attempts given up and the prompt tokens the server evaluated outside the
records; a difference that remains is theirs.

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
        options = ModelOptions(structured=True, max_tokens=args.max_tokens, timeout=args.timeout)
        settings = BackendSettings(options=options, serve_slots=args.slots)
        factory = PolicyFactory(settings)
        factory.hub.served_urls[NAME] = url  # the running server, as for a server the engine started
        plan = Grid(game="asympuzl", seeds=args.games, agents=[[NAME, NAME]], params={"size": [3]},
                    max_turns=[args.turns], history=["full"])  # the whole conversation: each turn extends the last
        records = []
        before = await server_metrics(base)
        started = time.monotonic()
        async with factory:
            await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=2 * args.slots,
                            on_record=records.append)
        wall = time.monotonic() - started
        stats = factory.hub.backend(NAME).limiter.stats
        given_up = stats.attempts - stats.calls  # attempts without a reply in the records (timeouts, errors)
        after = await server_metrics(base)
    prompt = sum(u.prompt_tokens for r in records for u in (r.usage or {}).values())
    cached = sum(u.cached_tokens for r in records for u in (r.usage or {}).values())
    calls = sum(u.calls for r in records for u in (r.usage or {}).values())
    evaluated = after.get("llamacpp:prompt_tokens_total", 0.0) - before.get("llamacpp:prompt_tokens_total", 0.0)
    seconds = after.get("llamacpp:prompt_seconds_total", 0.0) - before.get("llamacpp:prompt_seconds_total", 0.0)
    predicted = after.get("llamacpp:tokens_predicted_total", 0.0) - before.get("llamacpp:tokens_predicted_total", 0.0)
    completion = sum(u.completion_tokens for r in records for u in (r.usage or {}).values())
    outside = evaluated - (prompt - cached)  # prompt tokens the server evaluated for requests in no record
    rate = evaluated / seconds if seconds else float("nan")
    saved = cached / rate if rate == rate and rate else float("nan")
    figures = {
        "slots": args.slots, "games": len(records), "turns": args.turns, "calls": calls, "prompt_tokens": prompt,
        "cached_tokens": cached, "hit_rate_engine": round(cached / prompt, 3) if prompt else None,
        "hit_rate_server": round(1 - evaluated / prompt, 3) if prompt else None,
        "prompt_eval_seconds": round(seconds, 2), "prompt_eval_tokens_per_s": round(rate, 1),
        "seconds_saved": round(saved, 2), "wall_seconds": round(wall, 1),
        "attempts_given_up": given_up, "timeouts": stats.timeouts, "prompt_tokens_evaluated_outside_records": round(outside),
        "completion_tokens_outside_records": round(predicted - completion),
    }
    print(json.dumps(figures))
    if given_up or abs(outside) > calls:  # at most one token a request apart: the same count
        print(f"the figures differ: the server evaluated {outside:.0f} prompt tokens (and predicted {predicted - completion:.0f}) "
              f"for requests in no record: {given_up} attempts the engine gave up on ({stats.timeouts} timeouts), whose retries "
              f"found their prompts cached; raise --timeout (now {args.timeout:.0f} s) so that none is given up")
    print(f"prefix-cache hit rate {figures['hit_rate_engine']} (engine's records) / {figures['hit_rate_server']} (server's "
          f"metrics); prompt evaluation {seconds:.1f} s at {rate:.0f} tokens/s; the cache spared about {saved:.1f} s of it "
          f"({saved / (seconds + saved):.0%} of the prompt work); wall time {wall:.1f} s; server log in {log_dir}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per attempt (an attempt given up is in no record)")
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
