"""Where a run's uncached prompt tokens are, request by request, against llama.cpp's server.

Two parts:

- ``wrap``: a stand-in for ``llama-server`` (``LLAMA_SERVER`` names a script that runs it) that
  starts the real one on another port and passes every request on to it unchanged, writing a line
  per chat call to ``--log``: when it came and when its reply ended, its messages, and the reply's
  usage and ``timings`` (``cache_n``: the prompt tokens the server read from its cache). So a run
  that starts its own server is recorded as it plays, with nothing in the engine changed.
- ``analyse``: reads such logs (the first run's, then the branch run's) and the token ids of every
  prompt (the server's ``/apply-template`` and ``/tokenize``), and splits each call's prompt tokens:

  * read from the cache (``cache_n``);
  * intrinsic: the tokens after the longest prefix the call shares with any call before it (and
    the one token the server always evaluates): what no earlier call could have computed;
  * avoidable, by where the prefix was: a call that had ended before this one came (``done``), a
    call still in flight when it came (``concurrent``), or only a call of the first run (``origin``:
    a cold server's miss when each run has its own).

    python benchmarks/prefix_misses.py analyse --server URL --origin plain.jsonl --branch branches.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def proxy(port: int, upstream: str, log: Path) -> None:
    import aiohttp
    from aiohttp import web

    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
    out = log.open("a")

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        came = time.time()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        try:
            async with session.request(request.method, upstream + request.path_qs, data=body or None, headers=headers) as answer:
                data = await answer.read()
                status = answer.status
                kind = answer.headers.get("Content-Type", "application/json")
        except aiohttp.ClientError:
            return web.Response(status=502)
        if request.path.endswith("/chat/completions") and request.method == "POST":
            line: dict[str, Any] = {"came": came, "ended": time.time(), "status": status}
            try:
                sent = json.loads(body)
                line["messages"] = sent.get("messages")
                line["seed"] = sent.get("seed")
                if sent.get("stream"):
                    events = [json.loads(chunk[5:]) for chunk in data.decode().split("\n") if chunk.startswith("data: {")]
                    reply: dict[str, Any] = next((e for e in reversed(events) if "timings" in e or "usage" in e), {})
                else:
                    reply = json.loads(data)
                line["usage"] = reply.get("usage")
                line["timings"] = reply.get("timings")
            except (ValueError, AttributeError):
                pass
            out.write(json.dumps(line) + "\n")
            out.flush()
        return web.Response(status=status, body=data, headers={"Content-Type": kind})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await asyncio.Event().wait()


def wrap(args: argparse.Namespace, rest: list[str]) -> None:
    """Run the real server on a port of its own and the recording proxy on the port it was given."""
    port = int(rest[rest.index("--port") + 1])
    args.log.mkdir(parents=True, exist_ok=True)
    log = args.log / f"{time.time():.3f}-{os.getpid()}.jsonl"
    if args.upstream:  # a server already running, the same for every run: nothing started
        asyncio.run(proxy(port, args.upstream.removesuffix("/v1"), log))
        return
    inner = free_port()
    command = list(rest)
    command[command.index("--port") + 1] = str(inner)
    server = subprocess.Popen([args.real, *command, *args.extra.split()])
    try:
        asyncio.run(proxy(port, f"http://127.0.0.1:{inner}", log))
    finally:
        server.terminate()
        server.wait()


# ---- the analysis ----


def read_log(path: Path) -> list[dict[str, Any]]:
    calls = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return sorted((c for c in calls if c.get("status") == 200 and c.get("timings")), key=lambda c: c["came"])


def tokens_of(calls: list[dict[str, Any]], server: str) -> None:
    """Each call's prompt as the server's token ids (``call["ids"]``), by its own template and tokenizer."""
    import urllib.request

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(server + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read())

    seen: dict[str, list[int]] = {}
    for call in calls:
        key = json.dumps(call["messages"])
        if key not in seen:
            prompt = post("/apply-template", {"messages": call["messages"]})["prompt"]
            seen[key] = post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True})["tokens"]
        call["ids"] = seen[key]


def prefixes(calls: list[dict[str, Any]]) -> Any:
    """``shared[i, j]``: the tokens the prompts of calls i and j share from their start."""
    import numpy as np

    longest = max((len(c["ids"]) for c in calls), default=0)
    ids = np.full((len(calls), longest + 1), -1, dtype=np.int64)
    for i, call in enumerate(calls):
        ids[i, :len(call["ids"])] = call["ids"]
    shared = np.zeros((len(calls), len(calls)), dtype=np.int64)
    for i, call in enumerate(calls):
        same = ids[:, :len(call["ids"])] == ids[i, :len(call["ids"])]
        shared[i] = np.cumprod(same, axis=1).sum(axis=1)
    return shared


def breakdown(origin: list[dict[str, Any]], branch: list[dict[str, Any]], *, one_server: bool) -> dict[str, Any]:
    """The branch run's prompt tokens split as the module says; per call too (``call["split"]``)."""
    totals: dict[str, int] = defaultdict(int)
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    origin_prompts = {tuple(c["ids"]) for c in origin}
    asked: set[tuple[int, ...]] = set()  # the prompts the branch run has sent so far
    shared = prefixes(origin + branch)
    before = len(origin)
    for i, call in enumerate(branch):
        ids = call["ids"]
        n = len(ids)
        row = shared[before + i]
        cached = int(call["timings"].get("cache_n", 0))
        done = max((int(row[before + j]) for j, q in enumerate(branch[:i]) if q["ended"] <= call["came"]), default=0)
        flying = max((int(row[before + j]) for j, q in enumerate(branch[:i]) if q["ended"] > call["came"]), default=0)
        first = int(row[:before].max()) if before else 0
        if one_server:
            done = max(done, first)
        ceiling = min(n - 1, max(done, flying, first))
        at_done = min(n - 1, done)
        at_flying = min(n - 1, max(done, flying)) - at_done
        at_origin = ceiling - at_done - at_flying
        rest = cached
        missed = {}
        for name, part in (("done", at_done), ("concurrent", at_flying), ("origin", at_origin)):
            missed[name] = max(0, part - rest)
            rest = max(0, rest - part)
        split = {"prompt": n, "cached": cached, "intrinsic": n - ceiling, **{f"avoidable_{k}": v for k, v in missed.items()},
                 "over": rest}
        call["split"] = split
        kind = "after point" if tuple(ids) not in origin_prompts else "point, again" if tuple(ids) in asked else "point, first"
        asked.add(tuple(ids))
        for key, value in split.items():
            totals[key] += value
            kinds[kind][key] += value
        kinds[kind]["calls"] += 1
    totals["calls"] = len(branch)
    return {"all": dict(totals), **{k: dict(v) for k, v in kinds.items()}}


def analyse(args: argparse.Namespace) -> None:
    origin = read_log(args.origin) if args.origin else []
    branch = read_log(args.branch)
    if args.origin_count:  # one server for both runs: its log's first calls are the first run's
        origin, branch = branch[:args.origin_count], branch[args.origin_count:]
    report(origin, branch, args.server, one_server=args.one_server, per_call=args.per_call)


def report(origin: list[dict[str, Any]], branch: list[dict[str, Any]], server: str, *, one_server: bool, per_call: bool = False) -> None:
    """Print the branch run's breakdown (``breakdown``), the prompts tokenized by ``server``."""
    tokens_of(origin + branch, server.removesuffix("/v1"))
    for call in origin + branch:
        reported = (call.get("usage") or {}).get("prompt_tokens")
        if reported is not None and reported != len(call["ids"]):
            print(f"note: a prompt of {reported} tokens by the server tokenizes to {len(call['ids'])}", file=sys.stderr)
    result = breakdown(origin, branch, one_server=one_server)
    for kind, figures in result.items():
        prompt = max(figures.get("prompt", 0), 1)
        parts = ", ".join(f"{k} {v} ({v / prompt:.3f})" for k, v in figures.items() if k not in ("prompt", "calls"))
        print(f"{kind}: {figures.get('calls', 0)} calls, {figures.get('prompt', 0)} prompt tokens: {parts}")
    ceiling = 1 - result["all"]["intrinsic"] / max(result["all"]["prompt"], 1)
    print(f"the share with every avoidable miss removed (the ceiling): {ceiling:.3f}")
    if per_call:
        for call in branch:
            print(json.dumps({"came": round(call["came"], 3), "ended": round(call["ended"], 3), **call["split"]}))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "wrap":
        parser = argparse.ArgumentParser(prog="prefix_misses.py wrap")
        parser.add_argument("--real", required=True)
        parser.add_argument("--upstream", help="pass the calls to this server, already running, instead of starting one")
        parser.add_argument("--log", type=Path, required=True, help="a folder: a file of calls for each server started")
        parser.add_argument("--extra", default="", help="more options for the real server")
        split = sys.argv.index("--")
        wrap(parser.parse_args(sys.argv[2:split]), sys.argv[split + 1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("analyse")
    a.add_argument("--server", required=True, help="a llama-server on the same model, for its template and tokenizer")
    a.add_argument("--origin", type=Path, help="the first run's log")
    a.add_argument("--branch", type=Path, required=True, help="the branch run's log")
    a.add_argument("--one-server", action="store_true", help="both runs were played on one server")
    a.add_argument("--origin-count", type=int, default=0, help="with --one-server and one log: its first N calls are the first run's")
    a.add_argument("--per-call", action="store_true")
    args = parser.parse_args()
    analyse(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
