"""A real language model (SmolLM2-135M-Instruct) through a real model server (llama.cpp's
``llama-server``), both fetched by ``asymgames setup-llamacpp``, started by the engine itself: every
game end to end, with and without structured output, whole replies and streamed; the records' token
counts against the server's own tokenizer; the server's batch kept busy.

Marked ``real_model``: skipped where the server or the model is missing (``-m 'not real_model'``
deselects them), unless ``ASYMGAMES_REQUIRE_REAL_MODEL=1`` (as CI sets), which makes a missing server
a failure. A 135M model plays badly; these tests check the path, not the play."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from engine.serving import ServeError, Servers, ServedModel, find_executable
from engine.serving.install import bundled_model
from puzzles import GAMES
from runners.concurrent import main as run_main
from tests.helpers import transcript_lines

pytestmark = pytest.mark.real_model

MODEL = bundled_model("smollm2")


def _missing() -> str | None:
    try:
        find_executable("llamacpp")
    except ServeError as exc:
        return str(exc)
    if MODEL is None or not MODEL.is_file():
        return f"no model at {MODEL}: asymgames setup-llamacpp --model-only"
    return None


if _missing():
    if os.environ.get("ASYMGAMES_REQUIRE_REAL_MODEL") == "1":
        raise RuntimeError(f"ASYMGAMES_REQUIRE_REAL_MODEL=1 but {_missing()}")
    pytest.skip(_missing(), allow_module_level=True)

# Small games, so that a 135M model on two cores plays each in seconds: two turns of each agent, and
# replies of at most 256 tokens where the server holds them to the reply's format (a JSON schema, or
# the game's own grammar), 128 otherwise (a 135M model's prose runs to the limit either way; a reply
# cut there is the model's format error, as any).
SMALL = {"asympuzl": ["--size", "3"], "chain": ["--size", "3"], "tsp": [], "einstein": ["--blocks", "4"]}
SCHEMA_GAMES = ("asympuzl", "chain")  # games whose replies have a JSON schema; the others a grammar


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def play(run: Path, game: str, *flags: str, games: int = 2) -> list[dict]:
    limit = "256" if "--structured" in flags else "128"
    code = run_main(["--game", game, "--games", str(games), *SMALL[game], "--max-turns", "2", "--max-tokens", limit, "--model", "llamacpp:smollm2",
                     "--serve-slots", "2", "--concurrency", "2", "--no-dashboard", "--out", str(run), *flags])
    assert code == 0  # every game recorded, none lost to the infrastructure
    return records(run)


@pytest.mark.parametrize("game", list(GAMES))
@pytest.mark.parametrize("structured", [True, False], ids=["structured", "plain"])
def test_every_game_is_played_by_the_real_model(game, structured, tmp_path):
    # TSP's prompts run to 4,000 tokens (a minute a game on two cores); Einstein's replies without a
    # reply schema run to the limit: one game of each is enough to show the path works
    games = 2 if game in SCHEMA_GAMES else 1
    found = play(tmp_path / "run", game, *(["--structured"] if structured else []), games=games)
    assert len(found) == games and all(r["outcome"] in ("success", "failure") for r in found)
    for record in found:
        assert all(u["calls"] > 0 and u["completion_tokens"] > 0 for u in record["usage"].values())
    format_errors = sum(sum(r["format_errors"].values()) for r in found)
    if structured:
        assert format_errors == 0  # the grammar makes every reply one the game reads
    assert (tmp_path / "run" / "server-1.log").stat().st_size > 0


def test_streamed_replies_are_read_with_their_usage(tmp_path):
    found = play(tmp_path / "run", "asympuzl", "--structured", "--stream")
    assert sum(sum(r["format_errors"].values()) for r in found) == 0
    turns = [t for r in found for t in r["turn_log"]]
    assert turns and all(t["usage"]["prompt_tokens"] > 0 and t["usage"]["completion_tokens"] > 0 for t in turns)


def test_the_records_token_counts_are_the_servers_tokenizer_on_the_prompt_sent(tmp_path):
    run = tmp_path / "run"
    found = play(run, "asympuzl", "--structured", "--transcripts", games=1)
    turns = transcript_lines(run)[0]["turns"]
    logged = [t for t in found[0]["turn_log"]]

    async def count() -> list[tuple[int, int]]:
        import aiohttp

        served = ServedModel("llamacpp", str(MODEL))
        pairs = []
        async with Servers({"m": served}, tmp_path, slots=1, context=4096) as urls:
            base = urls["m"].removesuffix("/v1")
            async with aiohttp.ClientSession() as session:
                for turn, entry in zip(turns, logged):
                    prompt = turn["prompt"]
                    messages = [{"role": "system", "content": prompt["system"]}, {"role": "user", "content": prompt["user"]}]
                    async with session.post(base + "/apply-template", json={"messages": messages}) as r:
                        text = (await r.json())["prompt"]
                    async with session.post(base + "/tokenize", json={"content": text, "add_special": False, "parse_special": True}) as r:
                        tokens = len((await r.json())["tokens"])
                    pairs.append((entry["usage"]["prompt_tokens"], tokens))
        return pairs

    pairs = anyio.run(count)
    assert pairs and all(recorded == counted for recorded, counted in pairs), pairs


def test_the_servers_slots_are_kept_busy(tmp_path):
    """Loose: with a game per slot, the engine reads the server's /metrics and its slots are all busy
    at some point (the figure itself is benchmarks/bench_llamacpp.py's)."""
    from engine import PolicyFactory
    from engine.backends import BackendSettings, ModelOptions
    from engine.plan.grid import Grid
    from engine.play.run import run_games

    slots = 2
    plan = Grid(game="asympuzl", seeds=slots, agents=[["llamacpp:smollm2", "llamacpp:smollm2"]], params={"size": [3]},
                max_turns=[2])
    factory = PolicyFactory(BackendSettings(options=ModelOptions(structured=True, max_tokens=128), serve_slots=slots))
    factory.hub.check("llamacpp:smollm2")
    factory.hub.log_dir = tmp_path
    seen: list[float] = []

    async def main() -> None:
        async with factory:
            async def watch() -> None:
                while True:
                    await anyio.sleep(0.2)
                    for value in factory.hub.loads.values():
                        seen.append(value.running)

            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=slots, on_record=lambda r: None)
                group.cancel_scope.cancel()

    anyio.run(main)
    assert seen and max(seen) == slots


def test_a_context_too_small_for_the_prompt_is_the_servers_400_recorded_once_per_game(tmp_path):
    """llama-server refuses a prompt longer than a slot's context with a 400 that says so: not
    retried, each game ends in a recorded request error quoting it, the run goes on."""
    run = tmp_path / "small-context"
    code = run_main(["--games", "2", "--size", "3", "--model", "llamacpp:smollm2", "--serve-slots", "2",
                     "--serve-context", "256", "--max-tokens", "128", "--no-dashboard", "--out", str(run)])
    assert code == 0
    found = records(run)
    assert len(found) == 2 and {r["outcome"] for r in found} == {"error"}
    for record in found:
        assert record["error"]["kind"] == "request_error"
        assert "after 1 attempt: HTTP 400" in record["error"]["message"]
        assert "exceeds the available context size" in record["error"]["message"]


def test_a_reply_the_server_cut_at_max_tokens_is_counted_as_cut_not_as_a_format_error(tmp_path):
    found = play(tmp_path / "cut", "asympuzl", "--max-tokens", "8")
    assert all(r["outcome"] in ("success", "failure") for r in found)
    # llama.cpp's server says finish_reason "length": every reply of both agents is cut, none the model's error
    assert all(sum(r["cut_replies"].values()) == 2 * 2 and sum(r["format_errors"].values()) == 0 for r in found)
    assert all(t["cut"] and t["usage"]["cut"] == 1 for r in found for t in r["turn_log"])
