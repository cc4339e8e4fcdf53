"""A run that asks for its calls' tokens (``--tokens``): each model turn of a transcript holds the
prompt's ids as the server consumed them, the completion's ids and their logprobs, through every
client and in both servers' forms (the local server speaking vLLM's and llama.cpp's); a server that
returns none ends the game with a reason naming what is missing, and a provider known to return
none is refused before any game; a run without ``--tokens`` asks for nothing and writes what it
always wrote."""

from __future__ import annotations

import argparse
import json

import aiohttp
import msgspec
import pytest

from bus import Tokens
from engine import Grid, PolicyFactory, run_games
from engine.backends import BackendSettings, CacheSettings, seat_trajectory
from engine.backends.endpoints import Endpoint
from engine.backends.provider import missing_tokens
from engine.backends.wire import openai_stream
from engine.records.transcribe import TranscriptMaker
from puzzles import GAMES
from runners.fake_llm.tokens import END, render, tokenize
from runners.flags.models import add_model_arguments, settings_from_args

from tests.engine.backends.helpers import FAST, KEYS, fake_server, settings_for, without_models

TOKENS = msgspec.structs.replace(FAST, tokens=True)


async def played(settings: BackendSettings, model: str, *, game: str = "asympuzl", games: int = 2, environ=None):
    """(records, full transcripts as plain data) of ``games`` games of ``model`` against the game's
    first scripted strategy."""
    maker = TranscriptMaker(full=True)
    rules = GAMES[game].rules
    agents = [[model] + [next(iter(rules.scripted))] * (len(rules.rosters[0]) - 1)]
    plan = Grid(game=game, seeds=games, seed=3, agents=agents, max_turns=[3])
    factory = PolicyFactory(settings, environ=KEYS if environ is None else environ)
    records = []
    async with factory:
        await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=4, on_record=records.append,
                        observers=[maker])
    lines = [json.loads(maker.take(r.game_id)) for r in records]
    return sorted(records, key=lambda r: r.game_id), lines


def model_turns(transcripts: list[dict]) -> list[dict]:
    return [turn for t in transcripts for turn in t["turns"] if turn["usage"] is not None]


def sent_messages(turn: dict, earlier: list[dict]) -> list[dict]:
    prompt = turn["prompt"]
    return [{"role": "system", "content": prompt["system"]}, *earlier, {"role": "user", "content": prompt["user"]}]


# Each way a call that asks for tokens can go: the provider (its server's form), the client, streamed or not.
PATHS = {
    "vllm-lean": ("vllm", "vllm", {}),
    "vllm-lean-stream": ("vllm", "vllm", {"stream": True}),
    "vllm-sdk": ("vllm", "vllm", {"clients": {"vllm": "sdk"}}),
    "vllm-sdk-stream": ("vllm", "vllm", {"clients": {"vllm": "sdk"}, "stream": True}),
    "llamacpp-lean": ("llamacpp", "llamacpp", {}),
}


@pytest.mark.parametrize("path", list(PATHS))
async def test_each_model_turn_holds_the_ids_the_server_consumed_and_sampled_and_their_logprobs(path):
    provider, form, extra = PATHS[path]
    async with fake_server(latency=0.0, token_form=form) as server:
        settings = settings_for(server, options=TOKENS, **extra)
        if provider == "llamacpp":
            settings = msgspec.structs.replace(settings, urls={"llamacpp": server.url + "/v1"})
        records, transcripts = await played(settings, f"{provider}:share_everything")
    assert all(r.error is None for r in records), [r.error for r in records]
    turns = model_turns(transcripts)
    assert turns and all(t["role"] == "alice" for t in turns)
    for turn in turns:
        tokens, usage = turn["tokens"], turn["usage"]
        # the prompt's ids: the server's tokenizer on its chat template of the messages sent
        assert tokens["prompt_ids"] == tokenize(render(sent_messages(turn, [])))
        assert tokens["completion_ids"][:-1] == tokenize(turn["reply"]) and tokens["completion_ids"][-1] == END
        assert len(tokens["logprobs"]) == len(tokens["completion_ids"]) and all(lp <= 0 for lp in tokens["logprobs"])
        assert (usage["prompt_tokens"], usage["completion_tokens"]) == (len(tokens["prompt_ids"]), len(tokens["completion_ids"]))


async def test_a_seat_that_keeps_its_chat_makes_one_sequence_whose_turns_begin_with_the_chat_so_far():
    assert GAMES["tsp"].faces.prompter.chat_memory
    async with fake_server(latency=0.0, token_form="vllm") as server:
        model = f"vllm:{next(iter(GAMES['tsp'].rules.scripted))}"
        records, transcripts = await played(settings_for(server, options=TOKENS), model, game="tsp", games=1)
    assert records[0].error is None
    turns = model_turns(transcripts)
    assert len(turns) >= 2
    trajectory = seat_trajectory([msgspec.convert(t["tokens"], Tokens) for t in turns])
    assert trajectory.mismatches == () and len(trajectory.sequences) == 1
    sequence = trajectory.sequences[0]
    earlier: list[dict] = []
    for turn, boundary in zip(turns, trajectory.turns):
        # what the trajectory gives as this turn's prompt is the server's tokens of the whole chat sent
        assert list(sequence.ids[: boundary.completion_start]) == tokenize(render(sent_messages(turn, earlier)))
        assert set(sequence.mask[boundary.prompt_start: boundary.completion_start]) == {0}
        assert set(sequence.mask[boundary.completion_start: boundary.completion_end]) == {1}
        assert list(sequence.logprobs[boundary.completion_start: boundary.completion_end]) == turn["tokens"]["logprobs"]
        earlier += [{"role": "user", "content": turn["prompt"]["user"]}, {"role": "assistant", "content": turn["reply"]}]


async def test_a_run_without_tokens_asks_for_none_and_its_transcripts_have_no_tokens_field():
    async with fake_server(latency=0.0, token_form="vllm") as server:
        records, transcripts = await played(settings_for(server), "vllm:share_everything")
        body = server.last_body
    assert all(r.error is None for r in records)
    assert not {"logprobs", "return_token_ids", "top_logprobs"} & set(body)
    assert all("tokens" not in turn for t in transcripts for turn in t["turns"])


async def test_the_same_games_with_tokens_are_the_same_games_and_their_messages_only_transcripts_add_only_tokens():
    async with fake_server(latency=0.0, token_form="vllm") as server:
        settings = settings_for(server)
        plain, _ = await played(settings, "vllm:share_everything")
        asked, _ = await played(msgspec.structs.replace(settings, options=TOKENS), "vllm:share_everything")
        maker = TranscriptMaker(full=False)
        plan = Grid(game="asympuzl", seeds=1, seed=3, agents=[["vllm:share_everything", "share_everything"]], max_turns=[3])
        factory = PolicyFactory(msgspec.structs.replace(settings, options=TOKENS), environ=KEYS)
        found = []
        async with factory:
            await run_games(plan.specs_for(range(1)), factory=factory, concurrency=1, on_record=found.append, observers=[maker])
    assert [without_models(r) for r in plain] == [without_models(r) for r in asked]
    line = json.loads(maker.take(found[0].game_id))
    with_tokens = [turn for turn in line["turns"] if "tokens" in turn]
    assert with_tokens and all(set(turn["tokens"]) == {"prompt_ids", "completion_ids", "logprobs"} for turn in with_tokens)


async def test_a_server_that_returns_no_tokens_ends_the_game_with_a_reason_naming_what_is_missing():
    async with fake_server(latency=0.0, token_form="none") as server:
        records, _ = await played(settings_for(server, options=TOKENS), "vllm:share_everything", games=1)
        served = server.stats.served
    error = records[0].error
    assert records[0].outcome == "error" and error is not None and error.kind == "request_error"  # not played again by --resume
    assert "no prompt token ids, no completion token ids, no logprobs" in error.message and "--tokens" in error.message
    assert served == 1  # refused at the first call, not retried


async def test_a_reply_whose_logprobs_miss_the_end_of_turn_token_is_refused_naming_it():
    # llama.cpp's server streams no entry for the end-of-turn token: its count then differs from the usage's
    async with fake_server(latency=0.0, token_form="llamacpp") as server:
        settings = msgspec.structs.replace(settings_for(server, options=TOKENS, stream=True), urls={"llamacpp": server.url + "/v1"})
        factory = PolicyFactory(settings, environ=KEYS)
        with pytest.raises(ValueError, match="--tokens with --stream"):
            factory.check("llamacpp:share_everything", GAMES["asympuzl"])
        body = {"model": "m", "messages": [{"role": "user", "content": "Turn 1"}], "stream": True, "logprobs": True, "top_logprobs": 1,
                "stream_options": {"include_usage": True}}
        async with aiohttp.ClientSession() as session:
            async with session.post(server.url + "/v1/chat/completions", json=body, headers={"Authorization": "Bearer x"}) as response:
                reply = await openai_stream(response.content)
    assert reply.tokens is not None and reply.tokens.completion_ids is not None
    assert len(reply.tokens.completion_ids) == reply.completion - 1
    with_prompt = msgspec.structs.replace(reply, tokens=msgspec.structs.replace(reply.tokens, prompt_ids=(1,)))
    assert missing_tokens(with_prompt) == [f"id of every completion token it counted ({reply.completion - 1} ids for {reply.completion} tokens)"]


@pytest.mark.parametrize("name, settings, reason", [
    ("openai:gpt-5-mini", {}, "which openai:gpt-5-mini's server does not return"),
    ("anthropic:claude-x", {}, "which anthropic:claude-x's server does not return"),
    ("openrouter:meta/llama", {}, "which openrouter:meta/llama's server does not return"),
    ("llamacpp:m", {"clients": {"llamacpp": "sdk"}}, "on the lean client"),
    ("llamacpp:m", {"stream": True}, "--tokens with --stream"),
])
def test_a_model_whose_server_returns_no_tokens_is_refused_before_any_game(name, settings, reason):
    environ = {**KEYS, "OPENROUTER_API_KEY": "sk-or-0000000", "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}
    factory = PolicyFactory(BackendSettings(options=TOKENS, **settings), environ=environ)
    with pytest.raises(ValueError, match=reason):
        factory.check(name, GAMES["asympuzl"])
    PolicyFactory(BackendSettings(options=FAST, **settings), environ=environ).check(name, GAMES["asympuzl"])  # fine without


def test_an_endpoint_names_its_token_form_and_a_vllm_one_has_vllm_s():
    environ = {**KEYS, "LLAMACPP_BASE_URL": "http://127.0.0.1:9/v1"}
    endpoints = {"mine": Endpoint(kind="openai", url="http://127.0.0.1:9/v1", tokens="vllm"),
                 "plain": Endpoint(kind="openai", url="http://127.0.0.1:9/v1")}
    settings = BackendSettings(options=TOKENS, endpoints=endpoints)
    assert [settings.token_form(p) for p in ("vllm", "llamacpp", "mine", "plain", "openai")] == ["vllm", "llamacpp", "vllm", None, None]
    PolicyFactory(settings, environ=environ).check("mine:m", GAMES["asympuzl"])
    with pytest.raises(ValueError, match="tokens needs kind openai or vllm"):
        Endpoint(kind="anthropic", tokens="vllm")


async def test_the_cache_answers_a_call_that_asks_for_tokens_only_from_an_entry_kept_with_them(tmp_path):
    cache = CacheSettings(mode="on", directory=str(tmp_path))
    async with fake_server(latency=0.0, token_form="vllm") as server:
        plain = settings_for(server, cache=cache)
        asked = msgspec.structs.replace(plain, options=TOKENS)
        await played(plain, "vllm:share_everything", games=1)  # kept without tokens
        first_calls = server.stats.served
        _, made = await played(asked, "vllm:share_everything", games=1)  # misses: made again, kept with them
        second_calls = server.stats.served
        _, answered = await played(asked, "vllm:share_everything", games=1)  # hits, with the tokens kept
        _, without = await played(plain, "vllm:share_everything", games=1)  # hits, and asks for no tokens
        assert server.stats.served == second_calls
    turns = model_turns(made)
    assert second_calls - first_calls == len(turns) > 0
    hit_turns = model_turns(answered)
    assert all(t["usage"]["cache_hits"] == 1 for t in hit_turns)
    assert [t["tokens"] for t in hit_turns] == [t["tokens"] for t in turns]
    assert all("tokens" not in t for t in model_turns(without))


def test_the_flag_asks_for_tokens_and_a_resume_keeps_the_run_s_choice():
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_model_arguments(parser)
    asked = settings_from_args(parser.parse_args(["--tokens"]))
    assert asked.options.tokens and not settings_from_args(parser.parse_args([])).options.tokens
    assert settings_from_args(parser.parse_args([]), asked).options.tokens  # a resume plays on with tokens
    with pytest.raises(ValueError, match="argument --tokens: the run being resumed was played with tokens False"):
        settings_from_args(parser.parse_args(["--tokens"]), BackendSettings())
