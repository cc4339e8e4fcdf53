"""The local server held to a real vLLM server (vLLM 0.32, its CPU build, serving SmolLM2-135M as
``smollm2`` with a 2048-token context) on an exchange recorded from it (``tests/data/vllm``, made by
``tests/data/vllm/record.py``): the same requests get replies of the same shape, the same refusals,
and /metrics the engine reads the same way; and the engine reads the real replies, usage and errors
as its rules say."""

from __future__ import annotations

import json
import re
from pathlib import Path

import aiohttp
import msgspec
import pytest

from engine.backends.base import InfraError, RequestError
from engine.backends.lean import error_message
from engine.backends.provider import missing_tokens, status_failure
from engine.backends.vllm import read_vllm_metrics
from engine.backends.wire import openai_reply, openai_stream
from runners.fake_llm import FakeServer, build_parser, config_from_args

from tests.engine.backends.helpers import FAST, fake_server, play, settings_for
from tests.helpers import grid

DATA = Path(__file__).resolve().parent.parent / "data" / "vllm"
EXCHANGE = json.loads((DATA / "exchange.json").read_text(encoding="utf-8"))
METRICS = (DATA / "metrics.txt").read_text(encoding="utf-8")
MAX_MODEL_LEN = 2048  # the recorded server's --max-model-len
AS_RECORDED = {"models": ["smollm2"], "only_models": True, "max_model_len": MAX_MODEL_LEN, "latency": 0.0}
# The families the engine reads to steer and show the server's load (``engine.backends.vllm``), and the
# counters its benchmarks and the prefix-cache figures read.
READ = ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:num_requests_waiting_by_reason",
        "vllm:kv_cache_usage_perc", "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
        "vllm:num_preemptions_total", "vllm:prompt_tokens_total", "vllm:prompt_tokens_cached_total",
        "vllm:generation_tokens_total", "vllm:request_success_total")


def shape(value):
    """The structure of a JSON value: objects' keys with their values' shapes, a list's first item's."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "str" if isinstance(value, str) else "null"


def stream_shapes(lines: list[str]) -> list:
    """A stream's chunks as (first, a middle one, the one that finishes, the usage, the end)."""
    chunks = [shape(json.loads(line)) for line in lines[:-1]]
    return [chunks[0], chunks[1], chunks[-2], chunks[-1], lines[-1]]


async def send(base: str, recorded: dict) -> tuple[int, str, object]:
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer EMPTY"}) as session:
        async with session.request(recorded["method"], base + recorded["path"], json=recorded["request"]) as response:
            kind, text = response.headers.get("Content-Type", "").split(";")[0], await response.text()
            if kind == "text/event-stream":
                return response.status, kind, [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            return response.status, kind, json.loads(text) if "json" in kind else text


@pytest.mark.parametrize("name", sorted(EXCHANGE))
async def test_the_local_server_answers_each_recorded_request_as_vllm_did(name):
    recorded = EXCHANGE[name]
    async with fake_server(**AS_RECORDED) as server:
        status, kind, body = await send(server.url, recorded)
    assert (status, kind) == (recorded["status"], recorded["content_type"])
    if kind == "text/event-stream":
        assert stream_shapes(body) == stream_shapes(recorded["body"])
    else:
        assert shape(body) == shape(recorded["body"])
    if status >= 400:  # the same words, but for the counts (the local server counts tokens its own way)
        def words(reply: dict) -> str:
            return re.sub(r"\d+", "N", reply["error"]["message"])

        assert words(body) == words(recorded["body"])


def families(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """Each metric family of a /metrics text: its type and the label names of its samples."""
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    found: dict[str, tuple[str, frozenset[str]]] = {}
    for name, labels in re.findall(r"^([a-z_:]+)\{([^}]*)\} ", text, re.M):
        found[name] = (types.get(name, ""), frozenset(re.findall(r'(\w+)="', labels)))
    return found


async def test_the_local_server_exports_the_metrics_the_engine_reads_as_vllm_names_and_labels_them():
    async with fake_server(**AS_RECORDED) as server, aiohttp.ClientSession() as session:
        async with session.get(server.url + "/metrics") as response:
            text = await response.text()
    real, fake = families(METRICS), families(text)
    for name in READ:
        assert name in real, name  # the engine reads what vLLM exports
        assert fake.get(name) == real[name], name
    assert set(read_vllm_metrics(text)) == set(read_vllm_metrics(METRICS)) == {"running", "waiting", "deferred", "kv_cache"}


def test_the_engine_reads_vllm_s_load_its_deferred_requests_and_kv_cache_from_its_metrics():
    def value(name: str, where: str = "") -> float:
        return sum(float(line.rsplit(" ", 1)[1]) for line in METRICS.splitlines() if line.startswith(name + "{") and where in line)

    load = read_vllm_metrics(METRICS)
    assert load == {"running": value("vllm:num_requests_running"), "waiting": value("vllm:num_requests_waiting"),
                    "deferred": value("vllm:num_requests_waiting_by_reason", 'reason="deferred"'),
                    "kv_cache": value("vllm:kv_cache_usage_perc")}
    assert load["deferred"] > 0  # recorded with structured requests whose schemas were compiling


def test_the_engine_reads_vllm_s_replies_and_cached_prompt_tokens():
    for name in ("chat", "chat_again", "cut", "structured"):
        body = EXCHANGE[name]["body"]
        reply = openai_reply(json.dumps(body).encode())
        usage = body["usage"]
        assert (reply.prompt, reply.completion, reply.cached) == (
            usage["prompt_tokens"], usage["completion_tokens"], usage["prompt_tokens_details"]["cached_tokens"])
        assert reply.text == body["choices"][0]["message"]["content"]
        assert reply.finish == ("length" if body["choices"][0]["finish_reason"] == "length" else "stop")
    assert openai_reply(json.dumps(EXCHANGE["chat_again"]["body"]).encode()).cached > 0  # --enable-prompt-tokens-details


async def test_the_engine_reads_vllm_s_stream_with_its_usage():
    lines = EXCHANGE["stream"]["body"]

    async def events():
        for line in lines:
            yield f"data: {line}".encode()

    reply = await openai_stream(events())
    chunks = [json.loads(line) for line in lines[:-1]]
    usage = chunks[-1]["usage"]
    assert reply.text == "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert (reply.prompt, reply.completion, reply.cached) == (
        usage["prompt_tokens"], usage["completion_tokens"], usage["prompt_tokens_details"]["cached_tokens"])
    assert reply.finish == "length"


async def test_the_engine_reads_vllm_s_token_ids_and_logprobs_whole_and_streamed():
    whole = EXCHANGE["tokens"]["body"]
    reply = openai_reply(json.dumps(whole).encode())
    choice = whole["choices"][0]

    async def events():
        for line in EXCHANGE["tokens_stream"]["body"]:
            yield f"data: {line}".encode()

    streamed = await openai_stream(events())
    assert reply.tokens is not None and missing_tokens(reply) == [] and missing_tokens(streamed) == []
    assert reply.tokens.prompt_ids == tuple(whole["prompt_token_ids"]) and len(reply.tokens.prompt_ids) == reply.prompt
    assert reply.tokens.completion_ids == tuple(choice["token_ids"]) and len(reply.tokens.completion_ids) == reply.completion
    assert reply.tokens.logprobs == tuple(entry["logprob"] for entry in choice["logprobs"]["content"])
    # the same request, greedy: the same ids, as the stream gives them (the logprobs within the prefix
    # cache's rounding: the second request read the prompt from it)
    assert streamed.tokens is not None and streamed.tokens.logprobs is not None
    assert (streamed.tokens.prompt_ids, streamed.tokens.completion_ids) == (reply.tokens.prompt_ids, reply.tokens.completion_ids)
    assert streamed.tokens.logprobs == pytest.approx(reply.tokens.logprobs, abs=0.2)


@pytest.mark.parametrize("name, error", [
    ("max_tokens_over_context", RequestError), ("prompt_too_long", RequestError), ("bad_schema", RequestError),
    ("unknown_model", InfraError),
])
def test_vllm_s_refusals_are_sorted_as_the_engine_s_rules_say(name, error):
    recorded = EXCHANGE[name]
    failure = status_failure(recorded["status"], error_message(recorded["status"], json.dumps(recorded["body"]).encode()), {})
    assert not failure.retryable  # each would fail the same way again
    # a refused request ends its game as a request error (--resume leaves it); a model name to fix, as an
    # infrastructure error (--resume plays it again)
    assert failure.request_error == (error is RequestError)
    assert recorded["body"]["error"]["message"] in failure.reason


@pytest.mark.parametrize("model, max_tokens, kind, words", [
    ("smollm2", 4096, "request_error", "cannot be greater than max_model_len=2048"),
    ("nope", 300, "infra_error", "The model `nope` does not exist"),
])
async def test_a_game_against_the_local_server_meets_vllm_s_refusals_as_against_vllm(model, max_tokens, kind, words):
    config = grid(2, size=3, alice=f"vllm:{model}", bob=f"vllm:{model}")
    options = msgspec.structs.replace(FAST, max_tokens=max_tokens)
    async with fake_server(**AS_RECORDED) as server:
        records, factory = await play(config, settings_for(server, options=options))
    assert {r.error.kind for r in records} == {kind}
    assert all(words in r.error.message for r in records)
    assert factory.hub.backends()[0].limiter.stats.attempts == 2  # not retried


async def test_the_command_s_flags_make_a_server_with_vllm_s_context_intake_and_schema_compile():
    args = build_parser("fake-llm").parse_args(["--max-model-len", "2048", "--intake", "0.2", "--compile-delay", "1.5",
                                                "--model", "smollm2"])
    config = config_from_args(args)
    assert (config.max_model_len, config.intake, config.compile_delay) == (2048, 0.2, 1.5)
    server = FakeServer(config)
    await server.start()
    try:
        status, _, body = await send(server.url, EXCHANGE["max_tokens_over_context"])
    finally:
        await server.stop()
    assert status == 400 and body == EXCHANGE["max_tokens_over_context"]["body"]
