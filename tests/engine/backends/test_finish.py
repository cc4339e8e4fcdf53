"""Why the server stopped: each API's finish reason read on every path, and a reply the run's token
limit cut counted as cut, apart from the model's format errors, in the records, the usage, the cache
and the report."""

from __future__ import annotations

import json

import msgspec
import pytest

from engine.backends import finish_reason
from engine.backends.settings import CacheSettings
from engine.backends.wire import anthropic_reply, anthropic_stream, openai_reply, openai_stream
from engine.records.rundir import RunDir
from runners.concurrent import main as run_main
from runners.report.tables import errors_table

from tests.engine.backends.helpers import FAST, fake_server, play, settings_for
from tests.engine.backends.test_clients import EVERY_BACKEND
from tests.e2e.test_model_runs import server_process
from tests.helpers import grid


def test_each_api_s_stop_reason_reads_as_one_of_four():
    said = {None: "stop", "stop": "stop", "end_turn": "stop", "tool_calls": "stop", "stop_sequence": "stop",
            "length": "length", "max_tokens": "length", "model_context_window_exceeded": "length",
            "content_filter": "content_filter", "refusal": "content_filter", "abort": "error", "error": "error"}
    assert {reason: finish_reason(reason) for reason in said} == said


async def _lines(*events: dict | str):
    for event in events:
        yield f"data: {event if isinstance(event, str) else json.dumps(event)}".encode()


async def test_the_reply_s_finish_reason_is_read_whole_and_streamed():
    usage = {"prompt_tokens": 5, "completion_tokens": 3}
    whole = {"choices": [{"message": {"content": "ab"}, "finish_reason": "length"}], "usage": usage}
    assert openai_reply(json.dumps(whole).encode()).finish == "length"
    assert openai_reply(json.dumps({**whole, "choices": [{"message": {"content": "ab"}}]}).encode()).finish == "stop"
    chunks = [{"choices": [{"delta": {"content": "a"}, "finish_reason": None}]},
              {"choices": [{"delta": {}, "finish_reason": "length"}]}, {"choices": [], "usage": usage}, "[DONE]"]
    streamed = await openai_stream(_lines(*chunks))
    assert (streamed.text, streamed.finish, streamed.completion) == ("a", "length", 3)
    message = {"content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": 4, "output_tokens": 2},
               "stop_reason": "refusal"}
    assert anthropic_reply(json.dumps(message).encode()).finish == "content_filter"
    events = [{"type": "message_start", "message": {"usage": {"input_tokens": 4, "output_tokens": 1}}},
              {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}},
              {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}}]
    assert (await anthropic_stream(_lines(*events))).finish == "length"


@pytest.mark.parametrize("backend", ["openai-sdk", "openai-lean-stream", "anthropic", "anthropic-stream", "vllm"])
async def test_a_reply_cut_at_the_token_limit_is_counted_as_cut_not_as_the_model_s_format_error(backend):
    provider, how = EVERY_BACKEND[backend]
    config = grid(6, size=4, alice=f"{provider}:share_everything", bob=f"{provider}:share_everything")
    cut = msgspec.structs.replace(FAST, max_tokens=4)  # no reply of the game fits in four tokens
    async with fake_server(latency=0.0) as server:
        records, factory = await play(config, settings_for(server, options=cut, **how))
        whole, _ = await play(config, settings_for(server, **how))
    turns = [t for r in records for t in r.turn_log]
    assert turns and all(t.format_error is not None and t.cut is True for t in turns)
    for record in records:
        assert record.format_errors == {"alice": 0, "bob": 0}
        assert record.cut_replies == {role: sum(t.role == role for t in record.turn_log) for role in ("alice", "bob")}
        assert all(u.cut == u.calls > 0 for u in record.usage.values())
    assert sum(b.limiter.stats.cut for b in factory.hub.backends()) == len(turns)
    assert factory.hub.summary()["models"][f"{provider}:share_everything"]["cut"] == len(turns)
    # Replies within the limit are whole: nothing is marked cut, and the record says nothing of it.
    assert all(r.outcome == "success" and r.cut_replies is msgspec.UNSET for r in whole)
    assert b'"cut"' not in b"".join(msgspec.json.encode(r) for r in whole)


async def test_a_cut_reply_answered_from_the_cache_is_still_cut(tmp_path):
    config = grid(2, size=4, alice="vllm:share_everything", bob="vllm:share_everything")
    options = msgspec.structs.replace(FAST, max_tokens=4)
    cache = CacheSettings(mode="on", directory=str(tmp_path))
    async with fake_server(latency=0.0) as server:
        first, _ = await play(config, settings_for(server, options=options, cache=cache))
        again, factory = await play(config, settings_for(server, options=options, cache=cache))
    assert [r.cut_replies for r in again] == [r.cut_replies for r in first]
    usage = [u for r in again for u in r.usage.values()]
    assert usage and all(u.cache_hits == u.calls == u.cut for u in usage)
    assert factory.hub.summary()["models"]["vllm:share_everything"]["cut"] == sum(u.cut for u in usage)


def test_the_errors_table_and_the_final_table_show_cut_replies(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # room for every column of the final table
    with server_process() as url:
        args = ["--games", "4", "--alice", "vllm:share_everything", "--bob", "share_everything", "--max-tokens", "4",
                "--vllm-url", url + "/v1", "--no-dashboard", "--out", str(tmp_path / "run")]
        assert run_main(args) == 0
    out = capsys.readouterr().out
    assert "format errors" in out and "cut replies" in out
    table = errors_table(RunDir.open(tmp_path / "run").records(), [])
    assert "cut replies alice" in table.header and "cut replies bob" not in table.header
    row = dict(zip(table.header, table.rows[0]))
    assert int(row["cut replies alice"]) > 0 and row["format errors alice"] == "0"


@pytest.mark.parametrize("turn_order", ["round_robin", "simultaneous"])
async def test_cut_replies_are_counted_per_seat_with_three_agents_a_channel_and_either_turn_order(turn_order):
    from bus import ChannelSpec

    config = grid(4, game="chain", size=4, alice="vllm:share_everything", bob="share_everything",
                  carol="vllm:share_everything", turn_order=turn_order, channel=ChannelSpec(max_tokens=15))
    cut = msgspec.structs.replace(FAST, max_tokens=4)
    async with fake_server(latency=0.0) as server:
        records, _ = await play(config, settings_for(server, options=cut))
    for record in records:
        per_role = {role: sum(t.role == role and t.cut is True for t in record.turn_log) for role in ("alice", "bob", "carol")}
        assert per_role["alice"] > 0 and per_role["carol"] > 0 and per_role["bob"] == 0  # the scripted seat is never cut
        assert record.cut_replies == per_role
        assert record.format_errors == {"alice": 0, "bob": 0, "carol": 0}
        assert {role: u.cut for role, u in record.usage.items()} == {"alice": per_role["alice"], "carol": per_role["carol"]}
