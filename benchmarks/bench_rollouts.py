"""Rollout collection against the model server's own limit: the rollouts API (``engine.rollouts``)
playing groups with SmolLM2-135M, on llama.cpp's ``llama-server`` (``asymgames setup-llamacpp``) or
on a vLLM server already running (``--vllm-url``), side by side with a bare client replaying exactly
the rollout's own requests. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_rollouts.py                                # every game, 2 rounds
    .venv/bin/python benchmarks/bench_rollouts.py --games chain --phase-games 64 --max-tokens 48 --rounds 3
    .venv/bin/python benchmarks/bench_rollouts.py --vllm-url http://127.0.0.1:PORT --slots 8
    .venv/bin/python benchmarks/bench_rollouts.py --games chain --seconds 60 --rounds 4      # windows of 60 s

Without ``--vllm-url`` a server is started for each phase (``engine.serving.Servers``: S slots, its
``/metrics`` on), so that no phase reads prompts an earlier one left in the server's cache (its slots'
and its RAM cache, ``--cache-ram``, which keeps them across slots: a bare client replaying the
rollouts' bodies on the server they just ran on evaluated a third to a half of the prompt tokens). With it, no server is started: the phases play ``vllm:smollm2``
through the engine's ``vllm:`` path at that URL, S being the server's ``--max-num-seqs`` (started as
``benchmarks/bench_vllm.py`` says). For each game and round, two phases, one after the other, their
order alternating (rollouts then bare in odd rounds, bare then rollouts in even ones):

- rollouts: ``rollouts(plan, k=K)`` with every seat played by the model, 2S games in flight
  (``--games-in-flight``; a game has one call in flight at a time, between its calls the game's
  turn and, on llama.cpp, its token calls, so 2S games keep fewer than the 2S calls a run on a
  server it starts keeps at most), each model turn's tokens asked for (``Settings(tokens=True)``: what a
  trainer takes; on llama.cpp that is its ``/apply-template`` and ``/tokenize`` after each reply, on
  vLLM its ``return_token_ids`` in the reply), the groups taken as they finish, until
  ``--phase-games`` games have been played to their end (the last ones finishing with fewer in
  flight: collection as a trainer gets it);
- bare: an aiohttp client sending the chat requests the game's latest rollout phase sent and the
  server answered, byte for byte, in the order they were sent, with as many in flight as the engine
  keeps at most (2S on llama.cpp; on vLLM the batch plus the engine's headroom,
  ``engine.backends.vllm.vllm_headroom``, each body with a ``cache_salt`` of the phase's own, so
  that none is read from the prefix cache the rollouts left behind).

Replies are held to the game's schema (its grammar on llama.cpp) unless ``--free``: llama.cpp samples
under a grammar many times slower on a CPU, so a run of every game there takes ``--free``. llama.cpp
runs its graph on spinning threads: another busy llama-server on the same two cores, even at the
lowest priority, slowed its decoding here about fifty times (0.5 against 28 tokens a second a slot),
so run this on an otherwise idle machine.

Two modes. By default (``--phase-games``) each phase runs to its end: the rollouts play a fixed number
of games and the bare client sends each body once, so the figures are those of collecting a fixed
batch as a trainer gets it, the tail included (the rollouts' last games finish with fewer in flight;
the bare client's tail is one request long). With ``--seconds S`` each phase runs for S seconds of
wall time and is then cancelled, its requests still in flight dropped (as ``benchmarks/bench_vllm.py``
does): the rollouts play groups with no game limit, the bare client sends the latest rollout phase's
bodies in order, starting again from the first when it runs out (on vLLM under a new ``cache_salt``
each time through), so the figures are the steady rate with the cap kept full. There the completion
tokens counted are those of the requests answered within the window, over S, on both sides; the
server is let go idle before the next phase.

For each: completion tokens per second (the replies' ``usage``), the mean requests in flight and this
process's CPU seconds over the phase (``time.process_time``); the
server's own figures: on llama.cpp its busy slots per decode (``llamacpp:n_busy_slots_per_decode``
and ``llamacpp:n_decode_total`` read before and after the phase: the phase's own mean), the prompt
tokens it evaluated (those not read from a cache) and its seconds on prompts and on generation
(summed over slots), on vLLM the
tokens it generated per second over the phase (``vllm:generation_tokens_total``) and its running
requests (``vllm:num_requests_running`` sampled every 0.1 s) as a share of S; for the rollouts also
the games finished per hour (with ``--seconds``: those finished within the window) and the groups yielded. Target: the rollouts' completion tokens per
second >= 0.95 of the bare client's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine.serving  # noqa: E402
from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions  # noqa: E402
from engine.backends.hub import ModelHub  # noqa: E402
from engine.backends.lean import LeanBackend  # noqa: E402
from engine.backends.vllm import vllm_headroom  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.records import RunDir, is_infra_error  # noqa: E402
from engine.rollouts import Settings, rollouts  # noqa: E402
from engine.serving import ServedModel, Servers  # noqa: E402
from engine.serving.install import bundled_model  # noqa: E402

from bench_vllm import measured, salted  # noqa: E402

NAME = "llamacpp:smollm2"
VLLM_NAME = "vllm:smollm2"
# Small games, as the token benchmark plays them (``bench_token_trajectories.py``): a 135M model on two cores.
SMALL: Mapping[str, dict[str, list[Any]]] = {"asympuzl": {"size": [3]}, "chain": {"size": [3]},
                                             "tsp": {"board": ["generated"], "rooms": [4]}, "einstein": {"blocks": [4]}}


class Sent:
    """The chat requests the engine's calls sent and the server answered: (sent, answered, body,
    completion tokens), from the lean client's ``_post``; and those that got no reply (cancelled at
    the end of a window, or failed): (sent, given up, b"", 0)."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, float, bytes, int]] = []
        self.dropped: list[tuple[float, float, bytes, int]] = []
        original = LeanBackend._post
        rows, dropped = self.rows, self.dropped

        async def post(backend: LeanBackend, client, body: bytes, call: str):  # type: ignore[no-untyped-def]
            sent = time.monotonic()
            try:
                reply, headers = await original(backend, client, body, call)
            except BaseException:
                dropped.append((sent, time.monotonic(), b"", 0))
                raise
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


# llama.cpp's cumulative figures printed per phase: the prompt tokens it evaluated (those read from a
# slot's cache are not counted) and the seconds it spent on them, and on the tokens it generated.
SERVER_TOTALS = ("prompt_tokens_total", "prompt_seconds_total", "tokens_predicted_seconds_total")


def busy_per_decode(before: Mapping[str, float], after: Mapping[str, float]) -> float:
    """The server's mean busy slots per decode between two reads of its cumulative figures."""
    decodes = after["n_decode_total"] - before["n_decode_total"]
    busy = after["n_busy_slots_per_decode"] * after["n_decode_total"] - before["n_busy_slots_per_decode"] * before["n_decode_total"]
    return busy / decodes if decodes else 0.0


class Target:
    """The server the phases play: llama.cpp's, started afresh for each phase (``start``), or a vLLM
    server running at ``base``."""

    def __init__(self, base: str, slots: int, vllm: bool, start: Callable[[], AbstractAsyncContextManager[str]] | None = None) -> None:
        self.base, self.slots, self.vllm, self.start = base, slots, vllm, start
        self.name = VLLM_NAME if vllm else NAME
        self.in_flight = slots + vllm_headroom(slots) if vllm else 2 * slots  # the engine's calls in flight at most
        self.headers = {"Content-Type": "application/json"}
        if vllm:
            self.headers["Authorization"] = "Bearer none"  # a key for a server that asks for one

    def models(self, options: ModelOptions) -> BackendSettings:
        if self.vllm:
            return BackendSettings(options=options, urls={"vllm": self.base + "/v1"}, vllm_max_seqs=self.slots)
        return BackendSettings(options=options, serve_slots=self.slots)

    def replayed(self, bodies: list[bytes], salt: str) -> list[bytes]:
        """The bodies as the bare client sends them: on vLLM under a prefix-cache salt of their own."""
        return salted(bodies, salt) if self.vllm else bodies

    async def watched(self, work: Callable[[], Awaitable[None]], seconds: float) -> dict[str, float]:
        """Run ``work()`` to its end, or for ``seconds`` (then cancelled, and the server let go idle);
        the server's own figures over it, and this process's CPU seconds."""
        if self.vllm:
            rate, samples = await measured(self.base, seconds, work)
            return {"server_tokens_per_s": rate, "running_share": samples.mean("running") / self.slots,
                    "waiting": samples.mean("waiting"), "cpu_s": samples.cpu}
        assert self.start is not None
        async with self.start() as url:  # no prompt cache, in its slots or its RAM, from an earlier phase
            self.base = url.removesuffix("/v1")
            return await self._watched_llamacpp(work, seconds)

    async def _watched_llamacpp(self, work: Callable[[], Awaitable[None]], seconds: float) -> dict[str, float]:
        before, cpu = await metrics(self.base), time.process_time()
        with anyio.move_on_after(seconds):
            await work()
        cpu = time.process_time() - cpu
        after = await metrics(self.base)
        figures = {"busy_slots_per_decode": busy_per_decode(before, after), "cpu_s": cpu,
                   **{name: after.get(name, 0.0) - before.get(name, 0.0) for name in SERVER_TOTALS}}
        while math.isfinite(seconds) and (await metrics(self.base)).get("requests_processing", 0.0) > 0:
            await anyio.sleep(0.5)  # the next phase starts on an idle server
        return figures


def in_flight(rows: list[tuple[float, float, bytes, int]], start: float, end: float) -> float:
    """Mean requests in flight over [start, end]."""
    return sum(min(b, end) - max(a, start) for a, b, *_ in rows if b > start and a < end) / (end - start)


async def rollout_phase(target: Target, game: str, args: argparse.Namespace, seed: int, sent: Sent) -> tuple[dict[str, float], list[bytes]]:
    slots, k, tokens = args.slots, args.group, not args.no_tokens
    options = ModelOptions(structured=not args.free, max_tokens=args.max_tokens, temperature=args.temperature, seed=args.model_seed)
    plan = Grid(game=game, seeds=100_000, seed=seed, agents=[[target.name, target.name]], params=dict(SMALL.get(game, {})),
                max_turns=[args.max_turns])
    out = Path(tempfile.mkdtemp(prefix=f"bench-rollouts-{game}-")) / "run"
    sent.rows.clear()
    sent.dropped.clear()
    groups_seen = 0
    span = [0.0, 0.0]
    seconds = args.seconds or math.inf

    async def work() -> None:
        nonlocal groups_seen
        span[0] = time.monotonic()
        try:
            async with rollouts(plan, k=k, out=out, factory=PolicyFactory(), models=target.models(options), settings=Settings(tokens=tokens),
                                concurrency=args.games_in_flight or 2 * slots, limit=None if args.seconds else args.phase_games) as groups:
                async for _ in groups:
                    groups_seen += 1
        finally:
            span[1] = time.monotonic()

    server = await target.watched(work, seconds)
    started, wall = span[0], span[1] - span[0]
    per = args.seconds or wall  # with --seconds: what was answered within the window, over the window
    games = sum(1 for record in RunDir.open(out).iter_records() if not is_infra_error(record) and record.outcome != "error")
    rows = sorted(sent.rows)
    completion = sum(row[3] for row in rows)
    return ({"tokens_per_s": completion / per, "games_per_hour": 3600 * games / per, "games": games, "groups": groups_seen,
             "requests": len(rows), "dropped": len(sent.dropped), **server,
             "in_flight": in_flight(rows + sent.dropped, started, started + wall), "wall_s": wall},
            [row[2] for row in rows])


def bare_order(target: Target, bodies: list[bytes], salt: str, seconds: float | None) -> Iterator[bytes]:
    """The bodies in the order the bare client sends them: once; or, with ``seconds``, again and again
    from the first (on vLLM under a new salt each time through)."""
    if not seconds:
        return iter(target.replayed(bodies, salt))
    return itertools.chain.from_iterable(target.replayed(bodies, f"{salt}.{n}") for n in itertools.count())


async def bare_phase(target: Target, todo: Iterator[bytes], seconds: float | None) -> dict[str, float]:
    import aiohttp

    completion = 0
    spans: list[tuple[float, float, bytes, int]] = []
    dropped: list[tuple[float, float, bytes, int]] = []
    span = [0.0, 0.0]

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal completion
        for body in todo:
            sent = time.monotonic()
            try:
                async with session.post(target.base + "/v1/chat/completions", data=body, headers=target.headers) as response:
                    got = await response.json()
            except BaseException:
                dropped.append((sent, time.monotonic(), b"", 0))
                raise
            if response.status != 200:
                raise RuntimeError(f"the server answered a bare request with {response.status}: {got}")
            completion += got["usage"]["completion_tokens"]
            spans.append((sent, time.monotonic(), b"", 0))

    async def work() -> None:
        span[0] = time.monotonic()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3600)) as session, anyio.create_task_group() as group:
                for _ in range(target.in_flight):
                    group.start_soon(worker, session)
        finally:
            span[1] = time.monotonic()

    server = await target.watched(work, seconds or math.inf)
    started, wall = span[0], span[1] - span[0]
    return {"tokens_per_s": completion / (seconds or wall), "requests": len(spans), "dropped": len(dropped), **server,
            "in_flight": in_flight(spans + dropped, started, started + wall), "wall_s": wall}


def rounded(found: Any) -> Any:
    if isinstance(found, dict):
        return {key: rounded(value) for key, value in found.items()}
    return round(found, 3) if isinstance(found, float) else found


async def play_rounds(target: Target, args: argparse.Namespace, sent: Sent) -> dict[str, dict[str, float]]:
    """Every round of every game, the two phases in alternating order; the median ratios per game
    (rollouts over bare: completion tokens per second, and on vLLM the tokens the server generated per second)."""
    ratios: dict[str, dict[str, list[float]]] = {}
    bodies: dict[str, list[bytes]] = {}  # each game's latest rollout phase's bodies
    for round_ in range(args.rounds):
        rollouts_first = round_ % 2 == 0  # the first round has no bodies yet; then the order alternates
        for game in args.games:
            salt = f"bare-{game}-{round_}"
            if rollouts_first:
                r, bodies[game] = await rollout_phase(target, game, args, round_, sent)
            b = await bare_phase(target, bare_order(target, bodies[game], salt, args.seconds), args.seconds)
            if not rollouts_first:
                r, bodies[game] = await rollout_phase(target, game, args, round_, sent)
            figures = ("tokens_per_s", "server_tokens_per_s") if target.vllm else ("tokens_per_s",)
            found = {f"{key}_ratio": r[key] / b[key] if b[key] else 0.0 for key in figures}
            for key, ratio in found.items():
                ratios.setdefault(key, {}).setdefault(game, []).append(ratio)
            print(json.dumps(rounded({"round": round_ + 1, "order": "rollouts, bare" if rollouts_first else "bare, rollouts",
                                      "game": game, "rollouts": r, "bare": b, **found})), flush=True)
    return {key: {game: round(statistics.median(values), 3) for game, values in by_game.items()} for key, by_game in ratios.items()}


async def main_async(args: argparse.Namespace) -> None:
    sent = Sent()
    if args.vllm_url:
        summary = await play_rounds(Target(args.vllm_url.rstrip("/").removesuffix("/v1"), args.slots, vllm=True), args, sent)
        where = f"vLLM at {args.vllm_url}"
    else:
        model = bundled_model("smollm2")
        if model is None or not model.is_file():
            sys.exit("no model: asymgames setup-llamacpp")
        log_dir = Path(tempfile.mkdtemp(prefix="bench-rollouts-"))
        served = ServedModel("llamacpp", str(model))
        phases = itertools.count(1)

        @asynccontextmanager
        async def start() -> AsyncIterator[str]:
            async with Servers({NAME: served}, log_dir / f"phase-{next(phases)}", slots=args.slots, context=args.context) as urls:
                RunningServer.url = urls[NAME]
                yield urls[NAME]

        engine.serving.Servers = RunningServer  # type: ignore[attr-defined, misc]  # the hub's servers: the phase's one
        for_run = ModelHub.for_run

        def run_hub(hub: ModelHub, context: Any) -> ModelHub:  # a run's hub knows the running server from the start
            made = for_run(hub, context)
            made.served[NAME] = served
            made.served_urls[NAME] = RunningServer.url
            return made

        ModelHub.for_run = run_hub  # type: ignore[method-assign]
        summary = await play_rounds(Target("", args.slots, vllm=False, start=start), args, sent)
        where = f"server logs in {log_dir}"
    print(json.dumps({"server": "vllm" if args.vllm_url else "llamacpp", "slots": args.slots, "seconds": args.seconds,
                      "phase_games": None if args.seconds else args.phase_games,
                      "max_tokens": args.max_tokens, "max_turns": args.max_turns, "group": args.group, "rounds": args.rounds,
                      **{f"median_{key}": value for key, value in summary.items()}}))
    print(f"rollouts/bare completion tokens per second, median of the rounds: {summary['tokens_per_s_ratio']} (target >= 0.95); {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=lambda text: text.split(","), default=list(SMALL), help="games, comma-separated")
    parser.add_argument("--slots", type=int, default=4,
                        help="the server's slots (S; with --vllm-url its --max-num-seqs); 2S games in flight")
    parser.add_argument("--vllm-url", help="play a vLLM server running at http://HOST:PORT (serving smollm2) instead of starting llama.cpp's")
    parser.add_argument("--group", type=int, default=4, help="games per seed (K)")
    parser.add_argument("--phase-games", type=int, default=32, help="games each rollout phase plays to their end (the default mode)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="instead: each phase runs S seconds of wall time, then is cancelled (the steady rate with the cap kept full)")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--max-turns", type=int, default=4, help="turns of each game")
    parser.add_argument("--temperature", type=float, default=0.0, help="the replies' sampling temperature")
    parser.add_argument("--model-seed", type=int, default=None, help="the sampling seed (member k of a group: seed + k)")
    parser.add_argument("--context", type=int, default=4096, help="tokens of context per slot (llama.cpp's)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--games-in-flight", type=int, default=None, metavar="G", help="games the rollouts play at once (default 2S: a game has one call in flight at a time, so fewer games than the cap leave it short)")
    parser.add_argument("--free", action="store_true", help="replies not held to the game's schema or grammar (llama.cpp samples a grammar's tokens many times slower on a CPU)")
    parser.add_argument("--no-tokens", action="store_true", help="text-only trajectories (no token ids asked)")
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
