"""What a branch run costs: the engine's CPU per branch turn against the plain run's per turn, and,
against llama.cpp's real server, the share of the branches' prompt tokens it read from its prefix cache.
Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_branches.py                       # G = 1000 AsymPuzl games, K = 8
    .venv/bin/python benchmarks/bench_branches.py --games 100 --k 8
    .venv/bin/python benchmarks/bench_branches.py --llamacpp --games 10 --k 8 --max-tokens 32   # the prefix-cache share
    .venv/bin/python benchmarks/bench_branches.py --llamacpp --games 3 --k 8 --max-turns 1 --max-tokens 64 --structured \
        --server-threads 1 --serve-slots 16 --response-cache --breakdown                       # where the misses are

CPU: the local model server (``asymgames fake-llm``, its own process, not counted) plays a model in
both seats; the plain run plays G games with the response cache on; the branch run resamples every
message of every game K times (``--alternative resample --k K``, every turn any game played, both
seats), with the same cache. Each run is its own ``asymgames`` process, timed by its CPU (user + system,
from ``wait4``). A branch turn is a turn played at or after its branch point (what the branch plays
anew); the turns before it are replayed from the cache. The figure is the branch run's CPU per branch
turn over the plain run's CPU per turn (the target: at most 2).

Prefix cache (``--llamacpp``): the same two runs against ``llama-server`` with SmolLM2-135M
(``asymgames setup-llamacpp``; AsymPuzl of size 3, ``--max-turns`` rounds (default 2), replies of at
most ``--max-tokens`` tokens, ``--temperature`` (default 0.7: at 0 every resample would be the
recorded reply) and model seed 1, so sample i is sent seed 1 + i; ``--structured``: replies held to the
reply's JSON by llama.cpp's grammar, without which SmolLM2's replies are mostly format errors, which
send no message, so that a branch changes nothing after its point) and no response cache, so every turn before a branch point is
asked again with the prompt the original sent; with ``--response-cache``, the response cache on in
both runs, so the turns before a point are answered from it and the server is asked only for the
point (K samples of the recorded prompt) and the turns after it. Each run starts its own server (the
engine's), so the branch run's server starts cold; with ``--one-server``, the benchmark starts one
server with the engine's command line and each run's engine starts, in its stead, a stand-in that
passes every call on to it (``prefix_misses.py wrap --upstream``), so that both runs send the calls
the engine sends its own server (the reply's schema bounded, ``served_schema_bounds``) and the branch
run finds the first run's prompts in it. The figure is the share of the
branch run's prompt tokens the server reported as read from its cache: the sum over every reply of
llama.cpp's own count (``usage.prompt_tokens_details.cached_tokens``, its ``timings.cache_n``; the
records' ``cached_tokens``) over the sum of its prompt tokens (``usage.prompt_tokens``).

``--breakdown``: every server the engine starts is a stand-in that runs the real ``llama-server``
behind a proxy recording each call (``prefix_misses.py wrap``; with ``--one-server``, the stand-ins
record the calls they pass on);
after the runs, each prompt of the branch run, as the server's token ids, is split into cached,
intrinsic (past the longest prefix it shares with any earlier call of either run: what no earlier
call could have computed) and avoidable misses (a prefix an ended call, a call in flight, or only
the first run had computed), overall and by kind of call (a point's prompt the first time, again,
and the calls after a point), with the ceiling: the share with every avoidable miss removed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
COMMAND = [sys.executable, "-m", "asymgames"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Run one ``asymgames`` command; its CPU seconds (user + system)."""
    process = subprocess.Popen([*COMMAND, *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"asymgames {' '.join(argv)} failed:\n{process.stderr.read().decode() if process.stderr else ''}")
    return usage.ru_utime + usage.ru_stime


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def branch_turns(run: Path) -> tuple[int, int]:
    """(turns played at or after the branch point, all turns played) over a branch run's games."""
    new = played = 0
    for record in records(run):
        point = record["spec"]["options"]["branch"]
        for turn in record["turn_log"]:
            played += 1
            new += turn["turn"] >= point["turn"]
    return new, played


def fake_server() -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "runners.fake_llm", "--port", "0", "--latency", "0"], cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("fake model server on "):
        raise SystemExit("the local model server did not start")
    return process, line.split()[4]


def cpu_figures(args: argparse.Namespace, work: Path) -> None:
    server, url = fake_server()
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench-branches"}
    common = ["--no-dashboard", "--no-messages", "--openai-url", url + "/v1", "--cache", "on",
              "--cache-dir", str(work / "cache"), "--price", "share_everything=0,0,0"]
    try:
        plain = work / "plain"
        plain_cpu = timed(["run", "--games", str(args.games), "--model", "openai:share_everything", "--out", str(plain), *common], env)
        turns = sum(len(r["turn_log"]) for r in records(plain))
        branched = work / "branches"
        branch_cpu = timed(["branch", str(plain), "--alternative", "resample", "--k", str(args.k), "--out", str(branched), *common], env)
    finally:
        server.terminate()
        server.wait()
    new, played = branch_turns(branched)
    games = len(records(branched))
    print(f"plain run: {args.games} games, {turns} turns, {plain_cpu:.1f} s CPU: {1e3 * plain_cpu / turns:.2f} ms per turn")
    print(f"branch run: {games} branches (K = {args.k} at every message), {new} branch turns ({played} played, "
          f"{played - new} of them replayed from the cache), {branch_cpu:.1f} s CPU: {1e3 * branch_cpu / new:.2f} ms per branch turn")
    print(f"CPU per branch turn / CPU per plain turn: {(branch_cpu / new) / (plain_cpu / turns):.2f} (target <= 2)")


def prefix_figures(args: argparse.Namespace, work: Path) -> None:
    # an hour a call: no attempt given up under load (the server would evaluate it, no record hold it,
    # and its retry find its prompt cached)
    common = ["--no-dashboard", "--no-messages", "--max-tokens", str(args.max_tokens), "--temperature", str(args.temperature),
              "--model-seed", "1", "--request-timeout", "3600"]
    if args.response_cache:
        common += ["--cache", "on", "--cache-dir", str(work / "cache")]
    if args.structured:
        common += ["--structured"]
    env = dict(os.environ)
    calls = work / "calls"
    if args.server_threads:
        env["LLAMA_ARG_THREADS"] = str(args.server_threads)  # read by llama-server, which the engine starts with its environment
    slots = args.serve_slots or 4
    server = url = None
    if args.one_server:  # one server for both runs: each run's engine "starts" a stand-in that passes its calls to it
        server, url = llama_server(slots, env, work / "server.log")
        env["LLAMA_SERVER"] = recording_server(work, calls, upstream=url)
    elif args.breakdown:  # every server started records its calls (benchmarks/prefix_misses.py)
        env["LLAMA_SERVER"] = recording_server(work, calls)
    if args.serve_slots or args.one_server:
        common += ["--serve-slots", str(slots), "--serve-context", str(SLOT_CONTEXT)]
    plain, branched = work / "plain-llamacpp", work / "branches-llamacpp"
    try:
        timed(["run", "--games", str(args.games), "--size", "3", "--max-turns", str(args.max_turns), "--model", "llamacpp:smollm2",
               "--out", str(plain), *common], env)
        before = server_counts(url) if url is not None else None
        between = time.time()
        timed(["branch", str(plain), "--alternative", "resample", "--k", str(args.k), "--out", str(branched), *common], env)
        if before is not None and url is not None:
            evaluated, cached = (after - first for after, first in zip(server_counts(url), before))
            print(f"llama.cpp's /metrics over the branch run: {evaluated} prompt tokens evaluated, {cached} read from its cache: "
                  f"share {cached / max(evaluated + cached, 1):.3f}")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    for name, run in (("plain run", plain), ("branch run", branched)):
        prompt, cached, count = cached_share(run)
        print(f"llama.cpp, {name}: {len(records(run))} games, {count} calls, {prompt} prompt tokens, {cached} read from "
              f"the server's cache: share {cached / max(prompt, 1):.3f}" + (" (target >= 0.9)" if run == branched else ""))
    if args.breakdown:
        from prefix_misses import read_log, report

        from engine.serving.kinds import find_executable

        logged = sorted((call for log in sorted(calls.glob("*.jsonl")) for call in read_log(log)), key=lambda call: call["came"])
        origin = [call for call in logged if call["came"] < between]
        tokenizer, address = llama_server(1, env | {"LLAMA_SERVER": str(find_executable("llamacpp"))}, work / "tokenizer.log")
        try:
            report(origin, logged[len(origin):], address, one_server=args.one_server)
        finally:
            tokenizer.terminate()
            tokenizer.wait()


def recording_server(work: Path, calls: Path, upstream: str | None = None) -> str:
    """A program standing in for llama-server that runs the real one behind a proxy writing each
    call to ``calls`` (``prefix_misses.py wrap``), or, given ``upstream``, passes the calls to that
    server, already running, instead; its path."""
    from engine.serving.kinds import find_executable

    script = work / "recording-llama-server"
    real = find_executable("llamacpp")
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'benchmarks' / 'prefix_misses.py'} wrap --real {real} --log {calls}"
                      + (f" --upstream {upstream}" if upstream else "") + " -- \"$@\"\n")
    script.chmod(0o755)
    return str(script)


def server_counts(url: str) -> tuple[int, int]:
    """(prompt tokens evaluated, prompt tokens read from the cache) so far, by llama-server's /metrics."""
    import urllib.request

    with urllib.request.urlopen(url.removesuffix("/v1") + "/metrics", timeout=60) as response:
        lines = response.read().decode().splitlines()
    value = {line.split()[0]: float(line.split()[1]) for line in lines if line.startswith("llamacpp:")}
    return int(value["llamacpp:prompt_tokens_total"]), int(value["llamacpp:prompt_tokens_cached_total"])


SLOT_CONTEXT = 2048  # tokens of each slot of the server: an AsymPuzl prompt of size 3 is about 400


def llama_server(slots: int, env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    """llama-server on the bundled model, started as the engine starts it; (its process, its URL)."""
    import urllib.request

    from engine.serving import ServedModel, free_port
    from engine.serving.install import bundled_model

    port = free_port()
    command = ServedModel("llamacpp", str(bundled_model("smollm2"))).command(port, slots, SLOT_CONTEXT)
    process = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                return process, f"http://127.0.0.1:{port}/v1"
        except OSError:
            if process.poll() is not None:
                raise SystemExit(f"llama-server exited; its log: {log}") from None
            time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"llama-server did not answer; its log: {log}")


def cached_share(run: Path) -> tuple[int, int, int]:
    """(prompt tokens, of them read from the server's cache, calls) over a run's records."""
    prompt = cached = calls = 0
    for record in records(run):
        for usage in record.get("usage", {}).values():
            prompt += usage.get("prompt_tokens", 0)
            cached += usage.get("cached_tokens", 0)
            calls += usage.get("calls", 0)
    return prompt, cached, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--llamacpp", action="store_true", help="the prefix-cache share against llama.cpp's server instead")
    parser.add_argument("--max-tokens", type=int, default=96, help="with --llamacpp: the longest reply, in tokens (default 96)")
    parser.add_argument("--server-threads", type=int, metavar="N",
                        help="with --llamacpp: llama-server's threads (LLAMA_ARG_THREADS; on a loaded machine 1 is far faster)")
    parser.add_argument("--temperature", type=float, default=0.7,
                        help="with --llamacpp: the sampling temperature (default 0.7; at 0 every resample is the recorded reply)")
    parser.add_argument("--max-turns", type=int, default=2, help="with --llamacpp: the rounds of a game (default 2)")
    parser.add_argument("--structured", action="store_true",
                        help="with --llamacpp: replies through llama.cpp's grammar, so that a small model's messages are read (else most are format errors: no message)")
    parser.add_argument("--response-cache", action="store_true",
                        help="with --llamacpp: the response cache on in both runs, so the branch run asks only the turns from its points on")
    parser.add_argument("--serve-slots", type=int, metavar="N", help="with --llamacpp: the server's slots (default the engine's, 4), of 2,048 tokens each")
    parser.add_argument("--one-server", action="store_true",
                        help="with --llamacpp: both runs on one llama-server the benchmark starts (each engine's server a stand-in passing calls to it), not one each")
    parser.add_argument("--breakdown", action="store_true",
                        help="with --llamacpp: record every call to the servers and split the branch run's prompt tokens into cached, intrinsic and avoidable misses")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="play the runs into DIR and keep them (default: a temporary folder)")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        (prefix_figures if args.llamacpp else cpu_figures)(args, args.keep.resolve())
        return
    with tempfile.TemporaryDirectory() as folder:
        (prefix_figures if args.llamacpp else cpu_figures)(args, Path(folder))


if __name__ == "__main__":
    main()
