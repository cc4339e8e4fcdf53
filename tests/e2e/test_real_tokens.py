"""Token ids and log-probabilities from a real server: llama.cpp's ``llama-server`` with SmolLM2-135M
(``asymgames setup-llamacpp``), started once for the module by the engine's own code and named to
each run by URL (the ``llamacpp`` endpoint). A run with ``--tokens`` keeps, per model turn, the
prompt's ids as the server's own ``/tokenize`` makes them of its ``/apply-template`` of the messages
sent, and completion ids the server's ``/detokenize`` turns back into the reply; the local server's
llama.cpp form has the real server's fields.

Marked ``real_model`` (skipped without the server or the model, as ``test_real_model.py``) and ``slow``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import anyio
import pytest

from engine.serving import ServedModel, Servers
from runners.concurrent import main as run_main
from tests.e2e.test_real_model import MODEL  # its module skips, saying why, without the server or the model: so does this one
from tests.helpers import transcript_lines

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """One llama.cpp server for the module, started by the engine's own code; its base URL (``.../v1``)."""
    log_dir = tmp_path_factory.mktemp("llamacpp")
    ready, done = threading.Event(), threading.Event()
    found: dict[str, object] = {}

    async def serve() -> None:
        try:
            async with Servers({"llamacpp:smollm2": ServedModel("llamacpp", str(MODEL))}, log_dir, slots=2, context=4096) as urls:
                found["url"] = urls["llamacpp:smollm2"]
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
        raise RuntimeError(f"llama-server did not start: {found['error']}")
    try:
        yield str(found["url"])
    finally:
        done.set()
        thread.join(timeout=60)


def post(url: str, body: dict) -> dict:
    async def send() -> dict:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            async with session.post(url, json=body, headers={"Authorization": "Bearer x"}) as response:
                assert response.status == 200, await response.text()
                return await response.json()

    return anyio.run(send)


def test_each_model_turn_holds_the_servers_prompt_ids_and_completion_ids_that_read_back_as_the_reply(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LLAMACPP_BASE_URL", server)
    run = tmp_path / "run"
    code = run_main(["--game", "asympuzl", "--size", "3", "--games", "1", "--max-turns", "2", "--max-tokens", "32",
                     "--model", "llamacpp:smollm2", "--tokens", "--transcripts", "--request-timeout", "900", "--no-dashboard",
                     "--out", str(run)])
    assert code == 0
    assert json.loads((run / "models.json").read_text())["options"]["tokens"] is True
    base = server.removesuffix("/v1")
    turns = [turn for t in transcript_lines(run) for turn in t["turns"]]
    assert len(turns) == 4
    for turn in turns:
        tokens, prompt = turn["tokens"], turn["prompt"]
        messages = [{"role": "system", "content": prompt["system"]}, {"role": "user", "content": prompt["user"]}]
        rendered = post(base + "/apply-template", {"messages": messages})["prompt"]
        assert tokens["prompt_ids"] == post(base + "/tokenize", {"content": rendered, "add_special": True})["tokens"]
        assert turn["usage"]["prompt_tokens"] == len(tokens["prompt_ids"])
        assert turn["usage"]["completion_tokens"] == len(tokens["completion_ids"]) == len(tokens["logprobs"])
        assert all(lp <= 0 for lp in tokens["logprobs"])
        text = post(base + "/detokenize", {"tokens": tokens["completion_ids"]})["content"]
        assert text in (turn["reply"], turn["reply"] + "<|im_end|>")  # a reply the model ended: its end-of-turn token too


def _shape(value):
    """The fields of a reply, nested (lists by their first item), without the values."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_the_local_server_returns_tokens_in_the_fields_the_real_server_does(server):
    from tests.engine.backends.helpers import fake_server

    body = {"model": "smollm2", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi"}],
            "max_tokens": 4, "temperature": 0, "logprobs": True, "top_logprobs": 1}
    real = post(server + "/chat/completions", body)
    real_without = post(server + "/chat/completions", {**body, "top_logprobs": 0})

    async def local() -> tuple[dict, dict]:
        import aiohttp

        async with fake_server(latency=0.0, token_form="llamacpp") as fake:
            async with aiohttp.ClientSession() as session:
                replies = []
                for sent in (body, {**body, "top_logprobs": 0}):
                    async with session.post(fake.url + "/v1/chat/completions", json=sent, headers={"Authorization": "Bearer x"}) as r:
                        replies.append(await r.json())
                return replies[0], replies[1]

    fake, fake_without = anyio.run(local)
    entry = _shape(real["choices"][0]["logprobs"]["content"][0])
    assert entry == _shape(fake["choices"][0]["logprobs"]["content"][0]) == {
        "id": "int", "token": "str", "bytes": ["int"], "logprob": "float",
        "top_logprobs": [{"id": "int", "token": "str", "bytes": ["int"], "logprob": "float"}]}
    assert "logprobs" not in real_without["choices"][0] and not fake_without["choices"][0].get("logprobs")
    assert "prompt_token_ids" not in real  # llama.cpp's chat endpoint gives no prompt ids: /tokenize does
