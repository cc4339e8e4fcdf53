"""Reading replies off the wire, for both clients: what a body must hold to be a reply, what makes it
malformed (the provider's failure), and what a model may write that must still be read."""

from __future__ import annotations

import json

import pytest

from engine.backends.lean import error_message
from engine.backends.wire import (
    MalformedReply, Reply, anthropic_reply, anthropic_stream, openai_body, openai_reply, openai_stream,
)


def completion(content="hi", usage=None) -> bytes:
    usage = {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}} if usage is None else usage
    return json.dumps({"choices": [{"message": {"content": content}}], "usage": usage}).encode()


async def lines(*chunks):
    for chunk in chunks:
        yield chunk


def test_a_completion_gives_its_text_and_counts():
    assert openai_reply(completion()) == Reply("hi", 10, 4, 0, 3)
    assert openai_reply(completion(None, {"prompt_tokens": 1, "completion_tokens": 0})) == Reply("", 1, 0, 0, 0)


@pytest.mark.parametrize("body", [
    b'{"choices": [{"message": {"cont',  # cut short
    b'{"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}',
    b'{"choices": [{"message": {"content": "x"}}], "usage": null}',
    completion(usage={"prompt_tokens": -1, "completion_tokens": 1}),
    completion(usage={"prompt_tokens": "12", "completion_tokens": 1}),
    completion(usage={"prompt_tokens": 1.5, "completion_tokens": 1}),
    b"<html>Bad gateway</html>",
])
def test_a_body_that_is_not_a_completion_is_malformed(body):
    with pytest.raises(MalformedReply):
        openai_reply(body)


def test_half_a_surrogate_pair_and_bytes_that_are_not_utf8_are_read():
    escaped = openai_reply(completion("\udc00 and on").replace(b"\\udc00", b"\\ud800"))
    assert escaped.text == "\ud800 and on"
    raw = b'{"choices": [{"message": {"content": "\xed\xb0\x80 raw"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'
    assert openai_reply(raw).text.endswith(" raw") and "\ufffd" in openai_reply(raw).text


async def test_a_streamed_completion_joins_its_pieces_and_takes_the_usage_chunk():
    chunk = lambda d: b"data: " + json.dumps(d).encode() + b"\n"  # noqa: E731
    stream = lines(
        chunk({"choices": [{"delta": {"role": "assistant", "content": "Hel"}}]}), b"\n",
        chunk({"choices": [{"delta": {"content": "lo"}}]}), ": a comment\n",
        chunk({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
        chunk({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}), b"data: [DONE]\n",
    )
    assert await openai_stream(stream) == Reply("Hello", 7, 0, 0, 2)
    with pytest.raises(MalformedReply, match="without its usage"):
        await openai_stream(lines(chunk({"choices": [{"delta": {"content": "x"}}]}), b"data: [DONE]\n"))
    with pytest.raises(MalformedReply):
        await openai_stream(lines(b'{"not": "a stream"}'))


def test_an_anthropic_message_counts_cache_reads_and_writes_in_the_prompt():
    body = {"content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t"}, {"type": "text", "text": "b"}],
            "usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7}}
    assert anthropic_reply(json.dumps(body).encode()) == Reply("ab", 112, 100, 7, 2)
    with pytest.raises(MalformedReply):
        anthropic_reply(b'{"content": [], "usage_": {}}')


async def test_an_anthropic_stream_reads_start_deltas_and_the_final_usage():
    def event(name, data):
        return [f"event: {name}\n", f"data: {json.dumps(data)}\n", "\n"]

    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1, "cache_read_input_tokens": 2}}}
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "yes"}}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}
    events = event("message_start", start) + event("content_block_delta", delta) + event("message_delta", end)
    assert await anthropic_stream(lines(*events)) == Reply("yes", 5, 2, 0, 9)
    error = event("error", {"type": "error", "error": {"type": "overloaded_error"}})
    with pytest.raises(MalformedReply, match="reported an error"):
        await anthropic_stream(lines(*event("message_start", start), *error))


def test_the_body_adds_the_calls_seed_and_schema_to_the_fixed_parameters():
    fixed = {"model": "m", "temperature": 0.0, "max_tokens": 5}
    body = json.loads(openai_body(fixed, [{"role": "user", "content": "q"}], 12, {"type": "object"}))
    assert body["seed"] == 12 and body["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert body["model"] == "m" and body["messages"] == [{"role": "user", "content": "q"}]
    assert "seed" not in json.loads(openai_body(fixed, [], None, None)) and fixed == {"model": "m", "temperature": 0.0, "max_tokens": 5}


def test_an_error_body_is_worded_as_the_sdks_word_it():
    body = json.dumps({"error": {"message": "Rate limit reached.", "type": "rate_limit_error"}}).encode()
    assert error_message(429, body) == "Error code: 429 - Rate limit reached."
    assert error_message(502, b"<html>bad gateway</html>") == "Error code: 502"
    assert error_message(400, b'{"type": "error", "message": "top level"}') == "Error code: 400 - top level"
