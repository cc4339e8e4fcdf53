"""A real language model (SmolLM2-135M-Instruct) through a real vLLM server, both from ``asymgames
setup-vllm`` (vLLM for this machine's CPU, the model as a folder): the server started once for the
module, as the engine starts it (``engine.serving.Servers``), and named to each run by URL; every
game end to end, with and without structured output, whole replies and streamed; the records' token
counts against the server's own tokenizer; cached prompt tokens recorded; a ``--max-tokens`` the
server's context cannot hold refused before any game.

Marked ``real_vllm``: skipped, saying why, where setup-vllm has not been run (``-m 'not real_vllm'``
deselects them), unless ``ASYMGAMES_REQUIRE_REAL_VLLM=1`` (as ``ASYMGAMES_CI_VLLM=1 .ci/run`` sets),
which makes that a failure. The server's start takes minutes on a loaded CPU; the games, seconds
each. A 135M model plays badly; these tests check the path, not the play."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from engine.serving import ServedModel, Servers, vllm_model_folder
from runners.concurrent import main as run_main
from tests.helpers import skip_without_real_vllm, transcript_lines

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

FOLDER = vllm_model_folder("smollm2")
SLOTS = 4
CONTEXT = 8192  # TSP's first prompts pass 2,048 tokens


skip_without_real_vllm(FOLDER)

SMALL = {"asympuzl": ["--size", "3"], "chain": ["--size", "3"], "tsp": [], "einstein": ["--blocks", "4"]}
SCHEMA_GAMES = ("asympuzl", "chain")  # games whose replies have a JSON schema (vLLM's structured output)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """One vLLM server for the module, started by the engine's own code; its base URL (``.../v1``).
    Its event loop runs in a thread that lives as long as the server (the server dies with the thread
    that started it)."""
    log_dir = tmp_path_factory.mktemp("vllm")
    ready, done = threading.Event(), threading.Event()
    found: dict[str, object] = {}

    async def serve() -> None:
        try:
            async with Servers({"vllm:smollm2": ServedModel("vllm", str(FOLDER), served_as="smollm2")}, log_dir,
                               slots=SLOTS, context=CONTEXT) as urls:
                found["url"] = urls["vllm:smollm2"]
                ready.set()
                while not done.is_set():
                    await anyio.sleep(0.2)
        except BaseException as exc:
            found["error"] = exc
            ready.set()

    thread = threading.Thread(target=anyio.run, args=(serve,), daemon=True)
    thread.start()
    ready.wait()
    if "error" in found:
        raise RuntimeError(f"vLLM did not start: {found['error']}")
    found["log"] = log_dir / "server-1.log"
    try:
        yield str(found["url"])
    finally:
        done.set()
        thread.join(timeout=60)


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def play(url: str, run: Path, game: str, *flags: str, games: int = 1) -> list[dict]:
    limit = "256" if "--structured" in flags and game in SCHEMA_GAMES else "128"
    # TSP's first prompts (over 2,000 tokens) can take minutes on a loaded CPU: a longer request timeout
    # than the default 120 s, so that the server does not do that work twice
    code = run_main(["--game", game, "--games", str(games), *SMALL[game], "--max-turns", "2", "--max-tokens", limit,
                     "--model", "vllm:smollm2", "--vllm-url", url, "--concurrency", str(SLOTS), "--request-timeout", "900",
                     "--no-dashboard", "--out", str(run), *flags])
    assert code == 0  # every game recorded, none lost to the infrastructure
    return records(run)


@pytest.mark.parametrize("game, structured, stream", [
    ("asympuzl", True, False), ("asympuzl", False, True), ("chain", True, True), ("chain", False, False),
    ("tsp", True, True), ("tsp", False, False), ("einstein", True, False), ("einstein", False, True),
])
def test_every_game_is_played_through_vllm(server, game, structured, stream, tmp_path):
    flags = [*(["--structured"] if structured else []), *(["--stream"] if stream else [])]
    games = 2 if game in SCHEMA_GAMES else 1
    found = play(server, tmp_path / "run", game, *flags, games=games)
    assert len(found) == games and all(r["outcome"] in ("success", "failure") for r in found), [r.get("error") for r in found]
    for record in found:
        assert all(u["calls"] > 0 and u["completion_tokens"] > 0 for u in record["usage"].values())
    if structured and game in SCHEMA_GAMES:
        assert sum(sum(r["format_errors"].values()) for r in found) == 0  # vLLM holds every reply to the schema


def test_the_records_token_counts_are_the_servers_tokenizer_on_the_prompt_sent(server, tmp_path):
    run = tmp_path / "run"
    found = play(server, run, "asympuzl", "--structured", "--transcripts")
    turns = transcript_lines(run)[0]["turns"]
    logged = found[0]["turn_log"]

    async def count() -> list[tuple[int, int]]:
        import aiohttp

        pairs = []
        async with aiohttp.ClientSession() as session:
            for turn, entry in zip(turns, logged):
                prompt = turn["prompt"]
                messages = [{"role": "system", "content": prompt["system"]}, {"role": "user", "content": prompt["user"]}]
                body = {"model": "smollm2", "messages": messages, "add_generation_prompt": True}
                async with session.post(server.removesuffix("/v1") + "/tokenize", json=body) as r:
                    pairs.append((entry["usage"]["prompt_tokens"], (await r.json())["count"]))
        return pairs

    pairs = anyio.run(count)
    assert pairs and all(recorded == counted for recorded, counted in pairs), pairs


def test_cached_prompt_tokens_are_recorded(server, tmp_path):
    """The engine starts vLLM with --enable-prompt-tokens-details: a game's later turns share their
    prefix with the earlier ones, and the records say how many prompt tokens came from the cache."""
    found = play(server, tmp_path / "run", "asympuzl", "--structured", games=2)
    cached = [t["usage"].get("cached_tokens", 0) for r in found for t in r["turn_log"]]
    assert sum(cached) > 0, cached


def test_a_max_tokens_the_servers_context_cannot_hold_is_refused_before_any_game(server, tmp_path):
    out = tmp_path / "run"
    code = run_main(["--games", "2", "--model", "vllm:smollm2", "--vllm-url", server, "--max-tokens", str(CONTEXT),
                     "--no-dashboard", "--out", str(out)])
    assert code == 3
    assert not (out / "results.jsonl").exists() or (out / "results.jsonl").read_text() == ""


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_with_tokens_each_turn_holds_the_servers_prompt_ids_and_ids_that_read_back_as_the_reply(server, stream, tmp_path):
    run = tmp_path / "run"
    play(server, run, "asympuzl", "--tokens", "--transcripts", *(["--stream"] if stream else []))
    base = server.removesuffix("/v1")
    turns = [turn for t in transcript_lines(run) for turn in t["turns"]]

    async def server_side() -> list[tuple[list[int], str]]:
        import aiohttp

        found = []
        async with aiohttp.ClientSession() as session:
            for turn in turns:
                prompt = turn["prompt"]
                messages = [{"role": "system", "content": prompt["system"]}, {"role": "user", "content": prompt["user"]}]
                body = {"model": "smollm2", "messages": messages, "add_generation_prompt": True}
                async with session.post(base + "/tokenize", json=body) as r:
                    ids = (await r.json())["tokens"]
                async with session.post(base + "/detokenize", json={"model": "smollm2", "tokens": turn["tokens"]["completion_ids"]}) as r:
                    found.append((ids, (await r.json())["prompt"]))
        return found

    assert turns
    for turn, (ids, text) in zip(turns, anyio.run(server_side)):
        tokens = turn["tokens"]
        assert tokens["prompt_ids"] == ids and len(ids) == turn["usage"]["prompt_tokens"]
        assert len(tokens["completion_ids"]) == len(tokens["logprobs"]) == turn["usage"]["completion_tokens"]
        assert text in (turn["reply"], turn["reply"] + "<|im_end|>")  # a reply the model ended: its end-of-turn token too
