"""A streamed reply's tokens are counted as they arrive, not only when its call returns: what the
dashboard and the status line show while a slow local model writes."""

import io
import json
import socket

import anyio
import pytest
from aiohttp import web
from rich.console import Console

from engine.backends import ModelHub, Request
from engine.backends.settings import BackendSettings, ModelOptions
from engine.backends.wire import MalformedReply, openai_stream
from engine import RunProgress
from runners.dashboard import model_line, render_dashboard


def chunk(data) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n"


def piece(text: str) -> bytes:
    return chunk({"choices": [{"delta": {"content": text}}]})


async def test_the_pieces_of_a_stream_are_counted_while_it_arrives_and_taken_back_at_its_end():
    counted = []
    arriving = [0]

    def count(n):
        arriving[0] += n

    async def stream():
        for text in ("one ", "two ", "three"):
            yield piece(text)
            counted.append(arriving[0])
        yield chunk({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}})
        yield b"data: [DONE]\n"

    reply = await openai_stream(stream(), count)
    assert reply.text == "one two three" and counted == [1, 2, 3] and arriving == [0]


async def test_a_stream_cut_short_takes_back_what_it_counted():
    arriving = [0]

    async def broken():
        yield piece("half ")
        yield piece("a reply")
        raise OSError("connection reset")

    with pytest.raises(OSError):
        await openai_stream(broken(), lambda n: arriving.__setitem__(0, arriving[0] + n))
    assert arriving == [0]
    with pytest.raises(MalformedReply):
        await openai_stream(anyio_lines(piece("x"), b"data: [DONE]\n"), lambda n: arriving.__setitem__(0, arriving[0] + n))
    assert arriving == [0]


async def anyio_lines(*items):
    for item in items:
        yield item


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_slow_servers_reply_shows_its_tokens_on_the_status_line_before_the_call_returns():
    """A server that sends five pieces of a reply, then waits: the model's counters already hold them."""
    sent, release = anyio.Event(), anyio.Event()

    async def completions(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for text in ("a", "b", "c", "d", "e"):
            await response.write(piece(text))
        sent.set()
        await release.wait()
        await response.write(chunk({"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 5}}))
        await response.write(b"data: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        settings = BackendSettings(options=ModelOptions(timeout=20.0, max_attempts=1), stream=True,
                                   urls={"vllm": f"http://127.0.0.1:{port}/v1"})
        async with ModelHub(settings, environ={}) as hub:
            backend = hub.backend("vllm:slow")
            replies = []

            async def call():
                replies.append(await backend.complete(Request("system", "user", None, (), 0)))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(20):
                    await sent.wait()
                    while backend.limiter.stats.arriving < 5:
                        await anyio.sleep(0.01)
                assert "0 reply tokens (+5 arriving)" in model_line(hub, 0.0)
                console = Console(record=True, width=200, file=io.StringIO())
                console.print(render_dashboard(RunProgress(total=1), 1.0, hub))
                assert "0/0 +5" in console.export_text()  # the models table's tokens in/out
                release.set()
            assert replies[0].text == "abcde"
            assert backend.limiter.stats.arriving == 0 and "5 reply tokens" in model_line(hub, 0.0)
            assert "arriving" not in model_line(hub, 0.0)
    finally:
        await runner.cleanup()


def test_the_default_reply_limit_is_the_one_the_docs_and_the_help_give():
    from pathlib import Path

    from engine import PolicyFactory
    from puzzles import get_game
    from runners.concurrent import build_parser

    root = Path(__file__).resolve().parents[3]
    default = ModelOptions().max_tokens
    assert default == 1024
    row = next(line for line in (root / "docs/models/index.md").read_text().splitlines() if "`--max-tokens`" in line)
    assert f"the provider's, {default}, none" in row
    assert f"default {default};" in " ".join(build_parser(PolicyFactory(), get_game("asympuzl")).format_help().split())
