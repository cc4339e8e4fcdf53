"""Calls of one prompt to a server that caches prompt prefixes go one after another
(``engine.backends.wrappers.OnePromptAtOnce``): the server computes the prompt once."""

from __future__ import annotations

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from bus import Usage
from engine.backends import ModelHub, Request
from engine.backends.base import Completion
from engine.backends.settings import BackendSettings
from engine.backends.wrappers import OnePromptAtOnce, Wrapper

pytestmark = pytest.mark.anyio


class HeldServer:
    """A backend whose calls stay in flight until released, one event per call, in the order sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int]] = []
        self.release: list[anyio.Event] = []

    name = "llamacpp:m"
    limiter = None
    tokenizer = None

    async def complete(self, request: Request) -> Completion:
        self.sent.append((request.user, request.sample))
        done = anyio.Event()
        self.release.append(done)
        await done.wait()
        return Completion(f"{request.user}#{request.sample}", Usage(model="m"))


async def test_calls_of_one_prompt_go_one_after_another_and_other_prompts_do_not_wait():
    server = HeldServer()
    gate = OnePromptAtOnce(server)  # type: ignore[arg-type]
    replies: list[str] = []

    async def ask(user: str, sample: int) -> None:
        replies.append((await gate.complete(Request("system", user, sample=sample))).text)

    async with anyio.create_task_group() as group:
        for sample in range(3):
            group.start_soon(ask, "same", sample)
            await wait_all_tasks_blocked()
        group.start_soon(ask, "other", 0)
        await wait_all_tasks_blocked()
        assert server.sent == [("same", 0), ("other", 0)]  # the second and third wait; the other prompt does not
        server.release[0].set()
        await wait_all_tasks_blocked()
        assert server.sent[2:] == [("same", 1)]  # the next in the order they came
        server.release[1].set()
        server.release[2].set()
        await wait_all_tasks_blocked()
        assert server.sent[3:] == [("same", 2)]
        server.release[3].set()
    assert sorted(replies) == ["other#0", "same#0", "same#1", "same#2"]
    assert gate._queues == {}  # nothing kept once the calls end


async def test_a_failed_call_lets_the_next_of_its_prompt_go():
    class Refusing(HeldServer):
        async def complete(self, request: Request) -> Completion:
            self.sent.append((request.user, request.sample))
            if request.sample == 0:
                raise RuntimeError("refused")
            return Completion("ok", Usage(model="m"))

    server = Refusing()
    gate = OnePromptAtOnce(server)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        await gate.complete(Request("system", "same"))
    assert (await gate.complete(Request("system", "same", sample=1))).text == "ok"
    assert gate._queues == {}


def _layers(backend):
    while isinstance(backend, Wrapper):
        yield type(backend).__name__
        backend = backend.inner
    yield type(backend).__name__


def test_only_llama_cpp_servers_get_the_one_prompt_at_once_layer():
    settings = BackendSettings(urls={"openai": "http://127.0.0.1:9/v1", "llamacpp": "http://127.0.0.1:9/v1"})
    keys = {"OPENAI_API_KEY": "sk-test-0000"}
    assert "OnePromptAtOnce" in _layers(ModelHub(settings, environ=keys).backend("llamacpp:m"))
    assert "OnePromptAtOnce" not in _layers(ModelHub(settings, environ=keys).backend("openai:m"))
