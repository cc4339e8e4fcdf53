"""A run on Ray workers (a local cluster) against its limits. Prints ratios.

- offline: games per second in one process and on the workers, the cluster's start-up apart;
- limit: the workers against one ``runners.fake_llm --rpm 6000`` whose limit they learn from its
  headers: the rate sustained over the limit, and the share of requests refused;
- vllm: the workers against 4 fake vLLM servers (``--max-num-seqs 64`` each), one ``--vllm-url``
  list: how full each server's batch is kept.

    .venv/bin/python benchmarks/bench_cluster.py                 # all three; 100,000 offline games
    .venv/bin/python benchmarks/bench_cluster.py --only offline --games 20000 --workers 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from engine import Grid, PolicyFactory, RunDir  # noqa: E402
from engine.play.collector import tuned_collector  # noqa: E402
from engine.executors import make_executor  # noqa: E402
from engine.executors.startup import Startup  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.records.ids import IdSet  # noqa: E402
from engine.session.playing import play_plan  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_backends import Server, served_between  # noqa: E402


def play(plan: Grid, executor, concurrency: int, settings: BackendSettings | None = None) -> float:
    with tempfile.TemporaryDirectory() as folder:
        run = RunDir.create(Path(folder) / "run", plan)

        async def main() -> None:
            factory = PolicyFactory(settings)
            await play_plan(run, plan, factory, recorded=IdSet(), concurrency=concurrency, executor=executor)

        started = time.perf_counter()
        with tuned_collector():  # as the runner plays, in one process or as a cluster's driver
            anyio.run(main)
        return time.perf_counter() - started


def steady(samples: list, warmup: float = 5.0, share: float = 0.9) -> tuple[float, float]:
    """From ``warmup`` s after the first request to when ``share`` of all requests were served."""
    first = next(t for t, running, waiting, served in samples if running or served)
    total = samples[-1][3]
    end = next(t for t, _, _, served in samples if served >= share * total)
    return first + warmup, end


def bench_offline(games: int, workers: int, concurrency: int) -> tuple[float, float]:
    """Prints the figures; returns (the speed of the workers over one process with start-up, the start-up in seconds)."""
    plan = Grid(seeds=games, agents=[["share_everything", "share_everything"]])
    print(f"offline: {games} games, share_everything, N=5")
    local = play(plan, make_executor("local"), concurrency)
    started = time.perf_counter()
    executor = make_executor("ray", workers=workers)  # starts the cluster as a run does
    executor.startup.wait()
    up = time.perf_counter() - started
    warm = play(Grid(seeds=workers * 64, agents=plan.agents), executor, concurrency)
    start_up = time.perf_counter() - started
    remote = play(plan, make_executor("ray", workers=workers), concurrency)
    print(f"  one process: {games / local:,.0f} games/s ({local:.1f} s)")
    print(
        f"  {workers} Ray workers: {games / remote:,.0f} games/s ({remote:.1f} s; cluster start-up {start_up:.1f} s apart, "
        f"of which ray.init {up:.1f} s and a first run of {workers * 64} games {warm:.1f} s) = {local / remote:.2f}x; "
        f"with start-up {local / (remote + start_up):.2f}x"
    )
    return local / (remote + start_up), start_up


def bench_limit(workers: int, rpm: int = 6000, seconds: float = 40.0) -> None:
    latency = 0.3
    server = Server("--rpm", str(rpm), "--latency", str(latency), "--jitter", "0.2")
    try:
        games = int(rpm / 60 * seconds / 3)  # share_everything solves N=5 in 3 calls
        plan = Grid(seeds=games, agents=[["openai:share_everything", "openai:share_everything"]])
        settings = BackendSettings(options=ModelOptions(timeout=30), urls={"openai": server.url + "/v1"}, clients={"openai": "lean"})
        play(plan, make_executor("ray", workers=workers), 512, settings)
        stats = server.stats()
    finally:
        server.close()
    start, end = steady(stats["samples"])
    span, served = served_between(stats["samples"], start, end)
    refused = stats["refused"].get("429", 0)
    print(
        f"limit: {workers} workers, {games} games against one server at {rpm} rpm (learned from its headers): "
        f"{served / span * 60:,.0f} rpm sustained over {span:.0f} s = {served / span * 60 / rpm:.3f} of the limit; "
        f"{refused} of {stats['requests']} requests refused ({100 * refused / stats['requests']:.2f}%)"
    )


def bench_vllm(workers: int, servers: int = 4, seqs: int = 64, games: int = 3000) -> None:
    fleet = [Server("--max-num-seqs", str(seqs), "--latency", "2.0", "--jitter", "1.0", "--model", "bench") for _ in range(servers)]
    try:
        plan = Grid(seeds=games, agents=[["vllm:share_everything", "vllm:share_everything"]])
        urls = ",".join(s.url + "/v1" for s in fleet)
        settings = BackendSettings(options=ModelOptions(timeout=60), urls={"vllm": urls}, vllm_max_seqs=seqs)
        play(plan, make_executor("ray", workers=workers), 2 * seqs * servers, settings)
        stats = [s.stats() for s in fleet]
    finally:
        for s in fleet:
            s.close()
    shares = []
    for each in stats:
        start, end = steady(each["samples"], warmup=3.0)
        running = [r for t, r, _, _ in each["samples"] if start <= t <= end]
        shares.append(sum(running) / len(running) / seqs)
    print(
        f"vllm: {workers} workers, {games} games over {servers} servers of --max-num-seqs {seqs}: batch occupied "
        + ", ".join(f"{share:.3f}" for share in shares) + f" (mean {sum(shares) / len(shares):.3f}); "
        + f"served {[each['served'] for each in stats]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000, help="offline games")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--only", choices=["offline", "limit", "vllm"])
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0000")  # the local server takes any key; workers inherit it
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if args.only in (None, "offline"):
        bench_offline(args.games, args.workers, args.concurrency)
    Startup(args.workers, None).wait()  # the cluster as a run starts it (none when the offline part did)
    if args.only in (None, "limit"):
        bench_limit(args.workers)
    if args.only in (None, "vllm"):
        bench_vllm(args.workers)


if __name__ == "__main__":
    main()
