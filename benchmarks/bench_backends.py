"""How close the engine runs to the limits of a model server: sustained requests per minute under a
rate limit, and requests running on a continuously batching server. Prints ratios.

    .venv/bin/python benchmarks/bench_backends.py            # R = 600 and 6000, vLLM at 256
    .venv/bin/python benchmarks/bench_backends.py --quick    # shorter runs
    .venv/bin/python benchmarks/bench_backends.py --only lockstep   # one workload (rate, lockstep,
                                                                   # overload, shared, forecast, vllm)

The local server (``python -m runners.fake_llm``) runs in its own process and enforces the limit with
real 429s; the engine runs here with the real openai SDK. For each R the limit is given once with
``--rpm`` and once left to be learned from the rate-limit headers.

- Rate: successful requests per minute served between 5 s after the first request and the moment
  fewer games remain than it takes to keep the limit busy, divided by R. Target >= 0.95. No game lost.
- Batching: mean of ``vllm:num_requests_running`` sampled every 0.1 s over the same kind of window,
  divided by ``max_num_seqs`` = 256. Target >= 0.90.
- Lock-step: 300 games of 3 calls under R = 1800 rpm at concurrency 30 and 300; at 300 as the
  engine runs them (calls of earlier games first, starts paced by the limits) and, for comparison,
  every game started at once with calls in priority or in arrival order: throughput over the limit,
  when the first game finished, each game's latency (start to end), the median and p90 completion
  time over the run's wall time (arrival order gives about 1.0, finishing games in order about 0.5),
  and the most games in flight.
- 3% 529s: games a second with a share of calls refused as overloaded, over the fault-free run.
- Shared limit: two models against one server-wide limit, as one limit group and each on its own:
  the share of attempts refused with 429.
- Forecast: ``--dry-run``'s figures (no call) over those of the same run through the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Grid, PolicyFactory, run_games  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.play.pacing import GameStarts  # noqa: E402


class Server:
    def __init__(self, *flags: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runners.fake_llm", "--port", "0", *flags],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )
        self.url = self.process.stdout.readline().split()[4]

    def stats(self) -> dict:
        with urlopen(self.url + "/fake/stats") as response:
            return json.loads(response.read())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class Latency:
    """When each game started and finished (wall clock)."""

    def __init__(self) -> None:
        self.started: dict[int, float] = {}
        self.latency: list[float] = []
        self.running = self.peak = 0

    def game_started(self, spec) -> None:
        self.started[spec.game_id] = time.time()
        self.running += 1
        self.peak = max(self.peak, self.running)

    def game_finished(self, spec, record) -> None:
        self.latency.append(time.time() - self.started[spec.game_id])
        self.running -= 1


async def play(config: Grid, settings: BackendSettings, concurrency: int, *, paced: bool = True, latency: Latency | None = None):
    """Play every game as the runners do (starts paced by the limits unless ``paced`` is False);
    (records, wall time at which each game finished, factory)."""
    factory = PolicyFactory(settings, environ={"OPENAI_API_KEY": "sk-bench-0000", "VLLM_API_KEY": "x"})
    records, finished = [], []

    def keep(record) -> None:
        records.append(record)
        finished.append(time.time())

    async with factory:
        await run_games(
            config.specs_for(range(config.total)), factory=factory, concurrency=concurrency, on_record=keep,
            observers=[latency] if latency is not None else [], starts=GameStarts(factory.hub) if paced else None,
        )
    return records, finished, factory


def window(samples: list, finished: list[float], total: int, keep_busy: int, warmup: float) -> tuple[float, float]:
    """From ``warmup`` s after the first request to when fewer than ``keep_busy`` games remain."""
    first = next(t for t, running, waiting, served in samples if running or served)
    end = finished[max(0, total - keep_busy - 1)]
    return first + warmup, end


def served_between(samples: list, start: float, end: float) -> tuple[float, int]:
    inside = [(t, served) for t, _, _, served in samples if start <= t <= end]
    (t0, s0), (t1, s1) = inside[0], inside[-1]
    return t1 - t0, s1 - s0


def bench_rate(rpm: int, given: bool, seconds: float) -> dict:
    latency = 0.3
    server = Server("--rpm", str(rpm), "--latency", str(latency), "--jitter", "0.2")
    try:
        calls_per_game = 3  # share_everything solves N=5 in 2 turns: Alice, Bob, Alice
        games = int(rpm / 60 * seconds / calls_per_game) + 60
        config = Grid(seeds=games, agents=[["openai:share_everything", "openai:share_everything"]])
        settings = BackendSettings(
            options=ModelOptions(timeout=30), urls={"openai": server.url + "/v1"},
            rpm={"openai": rpm} if given else {},
        )
        records, finished, factory = asyncio.run(play(config, settings, concurrency=512))
        stats = server.stats()
    finally:
        server.close()
    keep_busy = int(rpm / 60 * (latency + 0.2) * 2) + 8  # games needed to keep R/60 calls a second going
    start, end = window(stats["samples"], sorted(finished), games, keep_busy, warmup=5.0)
    span, served = served_between(stats["samples"], start, end)
    limiter = factory.hub.backends()[0].limiter.stats
    return {
        "rpm": rpm, "limit": "given" if given else "learned", "games": games,
        "lost": sum(r.outcome != "success" for r in records), "window_s": round(span, 1),
        "sustained_rpm": round(served / span * 60, 1), "ratio": round(served / span * 60 / rpm, 3),
        "429s": stats["refused"].get("429", 0), "attempts": limiter.attempts,
    }


def bench_vllm(seqs: int, games: int) -> dict:
    latency, jitter = 2.0, 1.0
    server = Server("--max-num-seqs", str(seqs), "--latency", str(latency), "--jitter", str(jitter), "--model", "bench")
    try:
        config = Grid(seeds=games, agents=[["vllm:share_everything", "vllm:share_everything"]])
        settings = BackendSettings(options=ModelOptions(timeout=60), urls={"vllm": server.url + "/v1"}, vllm_max_seqs=seqs)
        records, finished, factory = asyncio.run(play(config, settings, concurrency=2 * seqs))
        stats = server.stats()
    finally:
        server.close()
    start, end = window(stats["samples"], sorted(finished), games, seqs + seqs // 8, warmup=3.0)
    running = [r for t, r, _, _ in stats["samples"] if start <= t <= end]
    waiting = [w for t, _, w, _ in stats["samples"] if start <= t <= end]
    mean = sum(running) / len(running)
    return {
        "max_num_seqs": seqs, "games": games, "lost": sum(r.outcome != "success" for r in records),
        "window_s": round(end - start, 1), "mean_running": round(mean, 1), "ratio": round(mean / seqs, 3),
        "mean_waiting": round(sum(waiting) / len(waiting), 1), "max_running": stats["max_running"],
    }


class _ArrivalOrder:
    """Stands in for ``CALL_PRIORITY`` in ``engine.play.run``: every game the same priority (FIFO)."""

    def set(self, value: int) -> None:
        return None


LOCKSTEP_ORDERS = {
    "engine": "earlier games first, starts paced",
    "priority": "earlier games first, all started",
    "arrival": "arrival order, all started",
}


def bench_lockstep(order: str, concurrency: int = 300, rpm: int = 1800, games: int = 300) -> dict:
    import engine.play.run

    saved = engine.play.run.CALL_PRIORITY
    if order == "arrival":
        engine.play.run.CALL_PRIORITY = _ArrivalOrder()
    server = Server("--rpm", str(rpm), "--latency", "0.2")
    latency = Latency()
    try:
        config = Grid(seeds=games, agents=[["openai:share_everything", "openai:share_everything"]])
        settings = BackendSettings(options=ModelOptions(timeout=60), urls={"openai": server.url + "/v1"}, rpm={"openai": rpm})
        started = time.time()
        records, finished, factory = asyncio.run(
            play(config, settings, concurrency=concurrency, paced=order == "engine", latency=latency)
        )
        wall = time.time() - started
    finally:
        server.close()
        engine.play.run.CALL_PRIORITY = saved
    done = sorted(t - started for t in finished)
    each = sorted(latency.latency)
    calls = factory.hub.backends()[0].limiter.stats.calls
    return {
        "order": LOCKSTEP_ORDERS[order], "concurrency": concurrency, "games": games,
        "lost": sum(r.outcome != "success" for r in records), "wall": wall,
        "throughput": calls / wall * 60 / rpm, "first": done[0],
        "latency_median": each[len(each) // 2], "latency_p90": each[int(0.9 * (len(each) - 1))],
        "median": done[len(done) // 2] / wall, "p90": done[int(0.9 * (len(done) - 1))] / wall,
        "peak_in_flight": latency.peak,
    }


def bench_shared(shared: bool, rpm: int = 1200, games: int = 200) -> dict:
    """Two models on one server-wide limit: told apart (each learns the whole limit) or as one group."""
    server = Server("--rpm", str(rpm), "--latency", "0.05")
    try:
        config = Grid(seeds=games, agents=[["openai:share_everything", "openai:one_piece"]])
        settings = BackendSettings(
            options=ModelOptions(timeout=60), urls={"openai": server.url + "/v1"}, rpm={"openai": 0.95 * rpm},
            shared_limits=["openai"] if shared else [],
        )
        records, _, factory = asyncio.run(play(config, settings, concurrency=256))
        served = server.stats()
    finally:
        server.close()
    attempts = sum(b.limiter.stats.attempts for b in factory.hub.backends())
    refused = sum(b.limiter.stats.rate_limited for b in factory.hub.backends())
    return {"shared": shared, "attempts": attempts, "refused": refused, "share_429": refused / attempts,
            "lost": sum(r.outcome != "success" for r in records), "served": served.get("requests")}


def bench_forecast(rpm: int = 1200, games: int = 200) -> dict:
    """The forecast (no call) against the same run through the server: calls, tokens and minutes."""
    from engine.spending.forecast import forecast, play_sampled

    server = Server("--rpm", str(rpm), "--latency", "0.05")
    try:
        config = Grid(seeds=games, agents=[["openai:share_everything", "openai:one_piece"]])
        settings = BackendSettings(
            options=ModelOptions(timeout=60), urls={"openai": server.url + "/v1"}, rpm={"openai": rpm}, shared_limits=["openai"],
        )
        fc = forecast(config, asyncio.run(play_sampled(config, settings)), settings, to_play=range(games))
        started = time.time()
        _, _, factory = asyncio.run(play(config, settings, concurrency=256))
        minutes = (time.time() - started) / 60
    finally:
        server.close()
    stats = [b.limiter.stats for b in factory.hub.backends()]
    calls = sum(s.calls for s in stats)
    tokens = sum(s.prompt_tokens + s.completion_tokens for s in stats)
    return {"calls": fc.calls / calls, "tokens": fc.tokens / tokens, "minutes": fc.minutes / minutes,
            "forecast_minutes": fc.minutes, "actual_minutes": minutes}


def bench_overload(fault: float, games: int = 2000, latency: float = 0.5) -> dict:
    """Games a second with one model, no rate limit, and a share of calls refused with 529."""
    flags = ["--latency", str(latency)] + (["--fault", f"529={fault}"] if fault else [])
    server = Server(*flags)
    try:
        config = Grid(seeds=games, agents=[["openai:share_everything", "openai:share_everything"]])
        settings = BackendSettings(options=ModelOptions(timeout=60), urls={"openai": server.url + "/v1"})
        started = time.time()
        records, _, factory = asyncio.run(play(config, settings, concurrency=256))
        wall = time.time() - started
    finally:
        server.close()
    limiter = factory.hub.backends()[0].limiter
    return {"fault": fault, "games_per_s": games / wall, "lost": sum(r.outcome != "success" for r in records),
            "refused": limiter.stats.rate_limited, "cap": limiter.cap, "note": limiter.cap_note}


def print_lockstep(result: dict) -> None:
    print(
        f"lock-step at concurrency {result['concurrency']}, {result['order']:>33}: {result['games']} games in "
        f"{result['wall']:.1f} s, throughput {result['throughput']:.3f} of R | first finished at {result['first']:.1f} s | "
        f"game latency median {result['latency_median']:.1f} s, p90 {result['latency_p90']:.1f} s | completion median "
        f"{result['median']:.2f}, p90 {result['p90']:.2f} of the wall | peak games in flight {result['peak_in_flight']} | lost {result['lost']}"
    )


def print_overload() -> None:
    clean, faulty = bench_overload(0.0), bench_overload(0.03)
    print(
        f"3% 529s: {faulty['games_per_s']:.1f} games/s against {clean['games_per_s']:.1f} without faults = "
        f"{faulty['games_per_s'] / clean['games_per_s']:.3f} | cap at the end {faulty['cap']} | lost {faulty['lost']}"
    )


def print_shared() -> None:
    for shared in (True, False):
        r = bench_shared(shared)
        print(
            f"two models, one server-wide limit, {'one limit group' if shared else 'a limit each':>15}: "
            f"{100 * r['share_429']:.1f}% of attempts got a 429 ({r['refused']} of {r['attempts']}) | lost {r['lost']}"
        )


def print_forecast() -> None:
    r = bench_forecast()
    print(
        f"forecast / actual: calls {r['calls']:.3f}, tokens {r['tokens']:.3f}, time {r['minutes']:.3f} "
        f"({r['forecast_minutes']:.2f} min forecast, {r['actual_minutes']:.2f} min run)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--only", choices=["rate", "lockstep", "overload", "shared", "forecast", "vllm"], help="one workload")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if args.only in (None, "rate"):
        seconds = 20 if args.quick else 45
        for rpm in (600, 6000):
            for given in (True, False):
                result = bench_rate(rpm, given, seconds)
                print(
                    f"R={rpm:>5} ({result['limit']:>7}): sustained {result['sustained_rpm']:>7.1f} rpm over "
                    f"{result['window_s']:>5.1f} s = {result['ratio']:.3f} of R | games {result['games']}, lost "
                    f"{result['lost']} | 429s {result['429s']}, attempts {result['attempts']}"
                )
    if args.only in (None, "lockstep"):
        for concurrency in (30, 300):
            for order in LOCKSTEP_ORDERS if concurrency == 300 else ("engine",):
                print_lockstep(bench_lockstep(order, concurrency))
    if args.only in (None, "overload"):
        print_overload()
    if args.only in (None, "shared"):
        print_shared()
    if args.only in (None, "forecast"):
        print_forecast()
    if args.only in (None, "vllm"):
        result = bench_vllm(256, 1200 if args.quick else 2400)
        print(
            f"vLLM max_num_seqs={result['max_num_seqs']}: mean running {result['mean_running']} over "
            f"{result['window_s']} s = {result['ratio']:.3f} of the batch | mean waiting {result['mean_waiting']}, "
            f"max running {result['max_running']} | games {result['games']}, lost {result['lost']}"
        )


if __name__ == "__main__":
    main()
