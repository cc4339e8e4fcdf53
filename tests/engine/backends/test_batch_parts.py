"""Batch mode's parts: custom ids, the providers' result lines sorted as calls' outcomes, the run's
batch log, batch prices in costs and in the forecast, and the flags."""

from __future__ import annotations

import argparse
import json
import re

import msgspec
import pytest

from engine.backends.base import Failure
from engine.backends.batch import call_base, game_of, parse_custom_id
from engine.backends.batch.anthropic_api import read_line as anthropic_line
from engine.backends.batch.log import BatchLog
from engine.backends.batch.openai_api import read_line as openai_line
from engine.backends.prices import PriceTable, read_price_file
from engine.backends.settings import BackendSettings, BatchSettings
from engine.backends.wire import Reply
from engine.spending.forecast import forecast, play_sampled
from runners.flags.models import settings_from_args
from runners.flags.running import add_running_arguments, concurrency
from tests.helpers import grid


def test_a_custom_id_names_the_game_and_the_call_in_anthropic_s_alphabet():
    longest = call_base("0123abcd", f"ffffffff-9999999;seed={2 ** 64 - 1}", "a" * 12, 99)
    for base in (longest, call_base("0123abcd", "run-7;seed=-12", "b" * 12, 1), call_base("0123abcd", None, "c" * 12, 3)):
        custom_id = f"{base}-17"
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", custom_id)
        game, call = parse_custom_id(custom_id)
        assert call == base
    assert parse_custom_id(f"{longest}-1") == (f"0123abcd-9999999;seed={2 ** 64 - 1}", longest)
    assert parse_custom_id(call_base("0123abcd", "run-7;seed=-12", "b" * 12, 1) + "-2")[0] == "0123abcd-7;seed=-12"
    assert parse_custom_id(call_base("0123abcd", None, "c" * 12, 3) + "-1")[0] is None
    assert game_of(f"{longest}-1") == 9999999 and parse_custom_id("someone-else's") is None


def _openai(custom_id: str, status: int | None, body=None, error=None) -> bytes:
    response = None if status is None else {"status_code": status, "request_id": "r", "body": body}
    return json.dumps({"id": "batch_req_1", "custom_id": custom_id, "response": response, "error": error}).encode()


def test_openai_result_lines_are_sorted_as_calls_outcomes():
    completion = {"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 2,
                                                                          "prompt_tokens_details": {"cached_tokens": 3}}}
    assert openai_line(_openai("a", 200, completion)) == ("a", Reply("hi", 5, 3, 0, 2))
    refused = openai_line(_openai("b", 400, {"error": {"message": "too long"}}))[1]
    assert isinstance(refused, Failure) and not refused.retryable and refused.request_error and "too long" in refused.reason
    assert openai_line(_openai("c", 500, {"error": {"message": "oops"}}))[1].retryable
    expired = openai_line(_openai("d", None, error={"code": "batch_expired", "message": "late"}))[1]
    assert expired.retryable and expired.counter == "timeouts" and not expired.request_error
    assert openai_line(_openai("e", 200, {"choices": []}))[1].counter == "malformed"
    assert openai_line(b"not json") is None


def test_anthropic_result_lines_are_sorted_as_calls_outcomes():
    message = {"type": "message", "content": [{"type": "text", "text": "hi"}],
               "usage": {"input_tokens": 4, "output_tokens": 2, "cache_read_input_tokens": 6, "cache_creation_input_tokens": 1}}
    line = lambda result: json.dumps({"custom_id": "x", "result": result})  # noqa: E731
    assert anthropic_line(line({"type": "succeeded", "message": message})) == ("x", Reply("hi", 11, 6, 1, 2))
    error = lambda kind: {"type": "errored", "error": {"type": "error", "error": {"type": kind, "message": "m"}}}  # noqa: E731
    refused = anthropic_line(line(error("invalid_request_error")))[1]
    assert not refused.retryable and refused.request_error
    overloaded = anthropic_line(line(error("overloaded_error")))[1]
    assert overloaded.retryable and overloaded.counter == "rate_limited"
    for kind in ("expired", "canceled"):
        outcome = anthropic_line(line({"type": kind}))[1]
        assert outcome.retryable and outcome.counter == "timeouts"


def test_the_batch_log_reads_what_a_killed_process_left(tmp_path):
    path = tmp_path / "batches.jsonl"
    log = BatchLog(path)
    token = log.token
    log.intent("t1", "openai:m", [f"{token}-1-5-aaaaaaaaaaaa-1-1", f"{token}-2-5-bbbbbbbbbbbb-1-1"])
    log.sent("t1", "batch_1")
    log.intent("t2", "openai:m", [f"{token}-1-5-cccccccccccc-1-1"])
    log.dropped("t2", "refused")
    log.intent("t3", "openai:m", [f"{token}-2-5-dddddddddddd-1-1"])
    log.close()
    with path.open("ab") as file:
        file.write(b'{"sent": "t3", "bat')  # cut short by a kill
    again = BatchLog(path, keep=lambda custom_id: game_of(custom_id) == 1)  # game 2 is recorded
    assert again.token == token
    assert again.index == {f"{token}-1-5-aaaaaaaaaaaa-1-1": "t1"}  # t2 never went out; game 2's ids are not kept
    assert again.batches["t1"].batch_id == "batch_1" and again.batches["t3"].batch_id is None
    assert again.served(f"{token}-1-5-aaaaaaaaaaaa-1-1") == "t1" and again.wanted == {}
    assert b"prompt" not in path.read_bytes()


def test_batch_prices_are_a_factor_per_provider_or_model(tmp_path):
    table = PriceTable()
    assert table.batch_factor("openai", "gpt-4o-2024-08-06") == table.batch_factor("anthropic", "claude-sonnet-4-5") == 0.5
    assert table.batch_factor("vllm", "qwen") == 1.0
    full = table.cost("openai", "gpt-4o", 1000, 200, 0, 300)
    assert table.cost("openai", "gpt-4o", 1000, 200, 0, 300, batch=True) == pytest.approx(full / 2)
    file = tmp_path / "prices.toml"
    file.write_text('[models."mine"]\ninput = 1\ncached_input = 0.5\noutput = 2\n\n[batch]\n"openai:mine" = 0.25\n')
    prices, factors = read_price_file(file)
    table = PriceTable({"mine": (1.0, 0.5, 2.0)}, batch=factors)
    assert table.batch_factor("openai", "mine") == 0.25 and table.batch_factor("openai", "gpt-4o") == 0.5
    file.write_text("[batch]\nopenai = 2\n")
    with pytest.raises(ValueError, match=r"\[batch\]"):
        read_price_file(file)


async def test_the_forecast_prices_batched_calls_at_the_batch_price():
    plan = grid(10, alice="openai:gpt-4o", bob="anthropic:claude-haiku-4-5")
    settings = BackendSettings(rpm={"openai": 600, "anthropic": 600})
    sampled = await play_sampled(plan, settings, reply_tokens=200)
    plain = forecast(plan, sampled, settings, to_play=range(10), reply_tokens=200)
    batched_settings = msgspec.structs.replace(settings, batch=BatchSettings(enabled=True))
    batched = forecast(plan, sampled, batched_settings, to_play=range(10), reply_tokens=200)
    assert batched.cost == pytest.approx(plain.cost / 2) and batched.models["openai:gpt-4o"].calls == plain.models["openai:gpt-4o"].calls
    assert batched.batched == ["anthropic:claude-haiku-4-5", "openai:gpt-4o"] and plain.batched == []
    assert plain.minutes is not None and batched.minutes is None  # the batches' time is the providers'


def _args(**given):
    parser = argparse.ArgumentParser()
    add_running_arguments(parser)
    flags = [f"--{k.replace('_', '-')}" if v is True else f"--{k.replace('_', '-')}={v}" for k, v in given.items()]
    return parser.parse_args(flags)


def test_the_batch_flags_are_saved_and_kept_on_a_resume():
    settings = settings_from_args(_args(batch=True, batch_size=500, batch_wait=2, batch_poll=1))
    assert settings.batch == BatchSettings(enabled=True, size=500, wait=2.0, poll=1.0, poll_max=120.0)
    assert settings_from_args(_args(), settings).batch == settings.batch  # a resume keeps batch mode
    assert settings_from_args(_args(batch=True, batch_size=500), settings).batch == settings.batch
    with pytest.raises(ValueError, match="argument --batch and its companions: the run being resumed"):
        settings_from_args(_args(batch=True, batch_size=100), settings)
    with pytest.raises(ValueError, match="argument --batch-wait: batch mode is off"):
        settings_from_args(_args(batch_wait=3))
    plan = grid(10, alice="openai:gpt-4o")
    assert concurrency(_args(), plan, 2000) == 2000 and concurrency(_args(), plan, 10) == 256
    assert concurrency(_args(concurrency=8), plan, 2000) == 8
