"""The engine's own cost on the ``vllm:`` path, against the local server playing a vLLM of fixed latency
(``runners.fake_llm --max-num-seqs S --latency L``), side by side with a bare client: does anything the
engine does between a reply and the next request leave the server's batch short? Prints figures;
asserts nothing.

    .venv/bin/python benchmarks/bench_vllm_overhead.py --seqs 8 --latency 0.1 --seconds 20 --rounds 2

Each side runs for the same wall time against one server:

- bare: an aiohttp client keeping the batch and its headroom in flight (``vllm_headroom``), each request
  the first-turn prompt of an AsymPuzl game with its reply schema (the server takes the same time over any prompt);
- engine: AsymPuzl games (size 3, structured replies) through the ``vllm:`` path, twice S games in
  flight, steered by the server's ``/metrics`` (4 reads a second) as a run is.

For each: requests the server answered per second (of S / L at most), its running requests as a share
of S and the mean waiting (the server's own samples, every 0.1 s), and the client's CPU per answered
request. For the engine also: per call, the wait in its limiter and the time from a reply to the same
game's next request (the turn's messages: the reply read, the game's step, the next seat's prompt),
and how long one turn of its event loop took meanwhile. Where the engine keeps requests waiting at the
server (its headroom), that time is hidden from the batch.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_vllm import first_prompts  # noqa: E402
from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.backends.provider import ProviderBackend  # noqa: E402
from engine.backends.settings import CALL_GAME  # noqa: E402
from engine.backends.vllm import vllm_headroom  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.play.run import run_games  # noqa: E402

NAME = "vllm:smollm2"


def server_stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/fake/stats") as response:
        return json.loads(response.read())


class Calls:
    """Each engine call's (game, entered, sent, answered), from the provider backend's ``complete``."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float]] = []
        original = ProviderBackend.complete
        rows = self.rows

        async def complete(backend: ProviderBackend, request):  # type: ignore[no-untyped-def]
            entered = time.monotonic()
            completion = await original(backend, request)
            rows.append(((CALL_GAME.get() or "").split(";")[0], entered, entered + completion.usage.waited, time.monotonic()))
            return completion

        ProviderBackend.complete = complete  # type: ignore[method-assign]


async def bare(url: str, seqs: int, seconds: float, prompts: list) -> None:
    import aiohttp

    order = itertools.cycle(prompts)

    async def worker(session: aiohttp.ClientSession) -> None:
        while True:
            system, user, schema = next(order)
            body = {"model": "smollm2", "max_tokens": 300, "temperature": 0.0,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                    "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}}
            async with session.post(url + "/v1/chat/completions", json=body, headers={"Authorization": "Bearer x"}) as response:
                await response.read()

    with anyio.move_on_after(seconds):
        async with aiohttp.ClientSession() as session, anyio.create_task_group() as group:
            for _ in range(seqs + vllm_headroom(seqs)):
                group.start_soon(worker, session)


async def engine(url: str, seqs: int, seconds: float, lags: list[float]) -> None:
    import asyncio

    settings = BackendSettings(options=ModelOptions(structured=True, max_tokens=300, timeout=3600.0), urls={"vllm": url + "/v1"},
                               vllm_max_seqs=seqs)
    factory = PolicyFactory(settings)
    plan = Grid(game="asympuzl", seeds=100_000, seed=0, agents=[[NAME, NAME]], params={"size": [3]})

    async def loop_turns() -> None:
        while True:
            started = time.monotonic()
            await asyncio.sleep(0)
            lags.append(time.monotonic() - started)
            await asyncio.sleep(0.002)

    with anyio.move_on_after(seconds):
        async with factory, anyio.create_task_group() as group:
            group.start_soon(loop_turns)
            await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=2 * seqs, on_record=lambda record: None)
            group.cancel_scope.cancel()


def side(name: str, url: str, seconds: float, seqs: int, latency: float, play) -> dict:
    before, started, cpu = server_stats(url), time.time(), time.process_time()
    anyio.run(play)
    cpu, after, ended = time.process_time() - cpu, server_stats(url), time.time()
    served = after["served"] - before["served"]
    rows = [row for row in after["samples"] if started + 1 <= row[0] <= ended - 0.5]  # (time, running, waiting, served)
    found = {"side": name, "served_per_s": served / (ended - started), "most_per_s": seqs / latency,
             "running_share": statistics.fmean(r[1] for r in rows) / seqs, "waiting": statistics.fmean(r[2] for r in rows),
             "cpu_ms_per_call": 1000 * cpu / max(1, served)}
    return found


def engine_figures(calls: Calls, lags: list[float], after: float) -> dict:
    steady = [row for row in calls.rows if row[1] > after]
    games: dict[str, list[tuple[str, float, float, float]]] = {}
    for row in sorted(calls.rows, key=lambda r: r[1]):
        games.setdefault(row[0], []).append(row)
    gaps = sorted(b[1] - a[3] for rows in games.values() for a, b in itertools.pairwise(rows) if a[1] > after)
    lags = sorted(lags)
    return {"limiter_wait_ms": 1000 * statistics.fmean(r[2] - r[1] for r in steady),
            "reply_to_next_request_ms": {"median": 1000 * statistics.median(gaps), "mean": 1000 * statistics.fmean(gaps),
                                         "p90": 1000 * gaps[int(0.9 * len(gaps))]},
            "loop_turn_ms": {"median": 1000 * lags[len(lags) // 2], "p99": 1000 * lags[int(0.99 * len(lags))]}}


def rounded(found):  # type: ignore[no-untyped-def]
    if isinstance(found, dict):
        return {k: rounded(v) for k, v in found.items()}
    return round(found, 3) if isinstance(found, float) else found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seqs", type=int, default=8, help="the server's batch (--max-num-seqs)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the server takes per request")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-m", "runners.fake_llm", "--port", "0", "--latency", str(args.latency),
                               "--max-num-seqs", str(args.seqs), "--model", "smollm2"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    calls = Calls()
    prompts = first_prompts(2000)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[4]
        for round_ in range(args.rounds):
            a = side("bare", url, args.seconds, args.seqs, args.latency, lambda: bare(url, args.seqs, args.seconds, prompts))
            lags: list[float] = []
            calls.rows.clear()
            started = time.monotonic()
            e = side("engine", url, args.seconds, args.seqs, args.latency, lambda: engine(url, args.seqs, args.seconds, lags))
            e |= engine_figures(calls, lags, started + 3)
            print(json.dumps(rounded({"round": round_ + 1, "bare": a, "engine": e, "served_ratio": e["served_per_s"] / a["served_per_s"],
                                      "running_ratio": e["running_share"] / a["running_share"]})), flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
