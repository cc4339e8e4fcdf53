"""Rollout collection against the model server's own limit: the rollouts API (``engine.rollouts``)
playing groups on llama.cpp's ``llama-server`` with SmolLM2-135M (``asymgames setup-llamacpp``),
side by side with a bare client replaying exactly the rollout's own requests. Prints figures;
asserts nothing.

    .venv/bin/python benchmarks/bench_rollouts.py                                # every game, 2 rounds
    .venv/bin/python benchmarks/bench_rollouts.py --games chain --phase-games 64 --max-tokens 48 --rounds 3

One server is started (``engine.serving.Servers``: S slots, its ``/metrics`` on) and every phase runs
against it. For each game and round, two phases, one after the other:

- rollouts: ``rollouts(plan, k=K)`` with every seat played by the model, 2S games in flight (as a
  run on a server it starts), each model turn's tokens asked for (``Settings(tokens=True)``: what a
  trainer takes; on llama.cpp that is its ``/apply-template`` and ``/tokenize`` after each reply), the
  groups taken as they finish, until ``--phase-games`` games have been played to their end (the
  last ones finishing with fewer in flight: collection as a trainer gets it);
- bare: an aiohttp client keeping 2S requests in flight, sending the chat requests the rollout
  phase sent and the server answered, byte for byte, in the order they were sent.

For each: completion tokens per second (the replies' ``usage``), the server's busy slots per decode
(``llamacpp:n_busy_slots_per_decode`` and ``llamacpp:n_decode_total`` read before and after the phase:
the phase's own mean), and the mean requests in flight; for the rollouts also the games finished per
hour and the groups yielded. Target: the rollouts' completion tokens per second >= 0.95 of the bare
client's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine.serving  # noqa: E402
from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.backends.hub import ModelHub  # noqa: E402
from engine.backends.lean import LeanBackend  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.records import RunDir, is_infra_error  # noqa: E402
from engine.rollouts import Settings, rollouts  # noqa: E402
from engine.serving import ServedModel, Servers  # noqa: E402
from engine.serving.install import bundled_model  # noqa: E402

NAME = "llamacpp:smollm2"
# Small games, as the token benchmark plays them (``bench_token_trajectories.py``): a 135M model on two cores.
SMALL: Mapping[str, dict[str, list[Any]]] = {"asympuzl": {"size": [3]}, "chain": {"size": [3]},
                                             "tsp": {"board": ["generated"], "rooms": [4]}, "einstein": {"blocks": [4]}}


class Sent:
    """The chat requests the engine's calls sent and the server answered: (sent, answered, body,
    completion tokens), from the lean client's ``_post``."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, float, bytes, int]] = []
        original = LeanBackend._post
        rows = self.rows

        async def post(backend: LeanBackend, client, body: bytes, call: str):  # type: ignore[no-untyped-def]
            sent = time.monotonic()
            reply, headers = await original(backend, client, body, call)
            rows.append((sent, time.monotonic(), body, reply.completion))
            return reply, headers

        LeanBackend._post = post  # type: ignore[method-assign]


class RunningServer:
    """What the engine's model hub takes for the servers it starts: here the one server of the
    benchmark, already running, so that the rollouts play it on the engine's path for a server it
    started (its limiter, its ``/metrics`` steering, its grammar form and token form)."""

    url = ""

    def __init__(self, models: Mapping[str, ServedModel], *args: object, **kwargs: object) -> None:
        self.names = list(models)

    async def __aenter__(self) -> dict[str, str]:
        return {name: self.url for name in self.names}

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    async def watch(self) -> None:
        await anyio.sleep_forever()

    def starting(self, now: float) -> list[str]:
        return []


async def metrics(base: str) -> dict[str, float]:
    import aiohttp

    found = {}
    async with aiohttp.ClientSession() as session, session.get(base + "/metrics") as response:
        for line in (await response.text()).splitlines():
            if line.startswith("llamacpp:"):
                name, _, value = line.partition(" ")
                found[name.removeprefix("llamacpp:")] = float(value)
    return found


def busy_per_decode(before: Mapping[str, float], after: Mapping[str, float]) -> float:
    """The server's mean busy slots per decode between two reads of its cumulative figures."""
    decodes = after["n_decode_total"] - before["n_decode_total"]
    busy = after["n_busy_slots_per_decode"] * after["n_decode_total"] - before["n_busy_slots_per_decode"] * before["n_decode_total"]
    return busy / decodes if decodes else 0.0


def in_flight(rows: list[tuple[float, float, bytes, int]], start: float, end: float) -> float:
    """Mean requests in flight over [start, end]."""
    return sum(min(b, end) - max(a, start) for a, b, *_ in rows if b > start and a < end) / (end - start)


async def rollout_phase(base: str, game: str, args: argparse.Namespace, seed: int, sent: Sent) -> tuple[dict[str, float], list[bytes]]:
    slots, k, tokens = args.slots, args.group, not args.no_tokens
    options = ModelOptions(structured=True, max_tokens=args.max_tokens, temperature=args.temperature, seed=args.model_seed)
    models = BackendSettings(options=options, serve_slots=slots)
    plan = Grid(game=game, seeds=100_000, seed=seed, agents=[[NAME, NAME]], params=dict(SMALL.get(game, {})),
                max_turns=[args.max_turns])
    out = Path(tempfile.mkdtemp(prefix=f"bench-rollouts-{game}-")) / "run"
    sent.rows.clear()
    groups_seen = 0
    before = await metrics(base)
    started = time.monotonic()
    async with rollouts(plan, k=k, out=out, factory=PolicyFactory(), models=models, settings=Settings(tokens=tokens),
                        concurrency=2 * slots, limit=args.phase_games) as groups:
        async for _ in groups:
            groups_seen += 1
    wall = time.monotonic() - started
    after = await metrics(base)
    games = sum(1 for record in RunDir.open(out).iter_records() if not is_infra_error(record) and record.outcome != "error")
    rows = sorted(sent.rows)
    completion = sum(row[3] for row in rows)
    return ({"tokens_per_s": completion / wall, "games_per_hour": 3600 * games / wall, "games": games, "groups": groups_seen,
             "requests": len(rows), "busy_slots_per_decode": busy_per_decode(before, after),
             "in_flight": in_flight(rows, started, started + wall), "wall_s": wall}, [row[2] for row in rows])


async def bare_phase(base: str, bodies: list[bytes], in_flight_target: int) -> dict[str, float]:
    import aiohttp

    todo = iter(bodies)
    completion = 0
    spans: list[tuple[float, float, bytes, int]] = []

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal completion
        for body in todo:
            sent = time.monotonic()
            async with session.post(base + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}) as response:
                got = await response.json()
            completion += got["usage"]["completion_tokens"]
            spans.append((sent, time.monotonic(), b"", 0))

    before = await metrics(base)
    started = time.monotonic()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3600)) as session, anyio.create_task_group() as group:
        for _ in range(in_flight_target):
            group.start_soon(worker, session)
    wall = time.monotonic() - started
    after = await metrics(base)
    return {"tokens_per_s": completion / wall, "requests": len(bodies), "busy_slots_per_decode": busy_per_decode(before, after),
            "in_flight": in_flight(spans, started, started + wall), "wall_s": wall}


def rounded(found: Any) -> Any:
    if isinstance(found, dict):
        return {key: rounded(value) for key, value in found.items()}
    return round(found, 3) if isinstance(found, float) else found


async def main_async(args: argparse.Namespace) -> None:
    model = bundled_model("smollm2")
    if model is None or not model.is_file():
        sys.exit("no model: asymgames setup-llamacpp")
    sent = Sent()
    log_dir = Path(tempfile.mkdtemp(prefix="bench-rollouts-"))
    async with Servers({NAME: ServedModel("llamacpp", str(model))}, log_dir, slots=args.slots, context=args.context) as urls:
        RunningServer.url = urls[NAME]
        engine.serving.Servers = RunningServer  # type: ignore[attr-defined, misc]  # the hub's servers: the running one
        for_run = ModelHub.for_run

        def run_hub(hub: ModelHub, context: Any) -> ModelHub:  # a run's hub knows the running server from the start
            made = for_run(hub, context)
            made.served[NAME] = ServedModel("llamacpp", str(model))
            made.served_urls[NAME] = urls[NAME]
            return made

        ModelHub.for_run = run_hub  # type: ignore[method-assign]
        base = urls[NAME].removesuffix("/v1")
        ratios: dict[str, list[float]] = {}
        for round_ in range(args.rounds):
            for game in args.games:
                r, bodies = await rollout_phase(base, game, args, round_, sent)
                b = await bare_phase(base, bodies, 2 * args.slots)
                ratio = r["tokens_per_s"] / b["tokens_per_s"] if b["tokens_per_s"] else 0.0
                ratios.setdefault(game, []).append(ratio)
                print(json.dumps(rounded({"round": round_ + 1, "game": game, "rollouts": r, "bare": b, "tokens_per_s_ratio": ratio})),
                      flush=True)
    summary = {game: round(statistics.median(found), 3) for game, found in ratios.items()}
    print(json.dumps({"slots": args.slots, "phase_games": args.phase_games, "max_tokens": args.max_tokens, "max_turns": args.max_turns,
                      "group": args.group, "rounds": args.rounds, "median_tokens_per_s_ratio": summary}))
    print(f"rollouts/bare completion tokens per second, median of the rounds: {summary} (target >= 0.95); server log in {log_dir}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=lambda text: text.split(","), default=list(SMALL), help="games, comma-separated")
    parser.add_argument("--slots", type=int, default=4, help="the server's slots (S); 2S games and 2S bare requests in flight")
    parser.add_argument("--group", type=int, default=4, help="games per seed (K)")
    parser.add_argument("--phase-games", type=int, default=32, help="games each rollout phase plays to their end")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--max-turns", type=int, default=4, help="turns of each game")
    parser.add_argument("--temperature", type=float, default=0.0, help="the replies' sampling temperature")
    parser.add_argument("--model-seed", type=int, default=None, help="the sampling seed (member k of a group: seed + k)")
    parser.add_argument("--context", type=int, default=4096, help="tokens of context per slot")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-tokens", action="store_true", help="text-only trajectories (no token ids asked)")
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
