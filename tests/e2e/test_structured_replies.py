"""``--structured`` holds every game's reply to its format: a JSON schema where the reply is JSON
(AsymPuzl, chain), a GBNF grammar where it is text of the game's own (Traveling Adventurers,
Einstein), sent in each server's form; a model whose API takes no grammar is refused for those games
in one line. Played against the local server, which reads the constraint as the servers do."""

from __future__ import annotations

import hashlib
import json
import types
import urllib.request

import anyio
import msgspec
import pytest

from engine.backends import Request
from engine.backends.cache import CachedCalls
from engine.backends.wire import bounded_grammar, openai_body
from puzzles import GAMES, ReplyGrammar, implements
from puzzles.einstein.prompt import REPLY_GRAMMAR
from puzzles.tsp.replies import reply_grammar
from runners.concurrent import main as run_main
from runners.fake_llm.grammar import grammar_regex
from tests.e2e.test_model_runs import server_process
from tests.engine.backends.helpers import fake_server

JSON_GAMES = ("asympuzl", "chain")


def _stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/fake/stats") as response:
        return json.loads(response.read())


@pytest.mark.parametrize("game", list(GAMES))
def test_every_game_s_replies_are_held_to_their_format(game, tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_API_KEY", "test-key")
    run = tmp_path / "run"
    policy = GAMES[game].default_policy  # the local server plays the strategy a model is named after
    with server_process("--latency", "0") as url:
        assert run_main(["--game", game, "--games", "2", "--max-turns", "4", "--structured", "--model", f"vllm:{policy}",
                         "--vllm-url", url + "/v1", "--out", str(run), "--no-dashboard"]) == 0
        stats = _stats(url)
    form = "json_schema" if game in JSON_GAMES else "structured_outputs"
    assert stats["constrained"] == {form: stats["requests"]} and stats["requests"] > 0
    assert stats["off_grammar"] == 0  # the grammar takes every reply the game's strategy writes
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert sum(sum(r["format_errors"].values()) for r in records) == 0


def test_each_game_declares_a_schema_or_a_grammar():
    for name, game in GAMES.items():
        grammar = implements(game.faces.prompter, ReplyGrammar)
        assert grammar == (name not in JSON_GAMES), name


@pytest.mark.parametrize("game", ["tsp", "einstein"])
def test_a_model_whose_api_takes_no_grammar_is_refused_in_one_line(game, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--game", game, "--games", "1", "--structured", "--model", "openai:gpt-4o", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1
    assert "--structured" in err and game in err and "grammar" in err and "openai:gpt-4o" in err
    assert not (tmp_path / "run").exists()


def test_the_grammar_reaches_llamacpp_and_vllm_each_in_its_own_field():
    grammar = reply_grammar(("suggest", "end"))
    body = {"model": "m", "messages": []}
    assert json.loads(openai_body(body, [], None, None, grammar, "llamacpp"))["grammar"] == grammar
    assert json.loads(openai_body(body, [], None, None, grammar, "vllm"))["structured_outputs"] == {"grammar": grammar}
    assert set(json.loads(openai_body(body, [], None, None, grammar, None))) == {"model", "messages"}
    schema = {"type": "object"}
    sent = json.loads(openai_body(body, [], None, schema, None, "llamacpp"))
    assert "grammar" not in sent and sent["response_format"]["json_schema"]["schema"] == schema


def test_the_engine_s_own_server_gets_the_grammar_with_its_bounds_lowered():
    lowered = bounded_grammar(reply_grammar(("suggest", "end")), 32, 2)
    assert "free ::= [^\\[]{0,32}" in lowered and '(", " action){0,2}' in lowered
    pattern = grammar_regex(lowered)
    assert pattern.match('[Thought]: go\n[Action]: suggest(["L", "E"])\n[Message]: ok')
    assert not pattern.match("[Thought]: " + "x" * 33 + "\n[Action]: \n[Message]: ok")
    assert grammar_regex(bounded_grammar(REPLY_GRAMMAR, 16, 1)).match("<THINK>short</THINK><ACTION>pass</ACTION>")


def test_the_local_server_refuses_a_grammar_it_cannot_read_or_one_sent_with_a_schema():
    async def main() -> list[tuple[int, str]]:
        import aiohttp

        answers = []
        async with fake_server() as server, aiohttp.ClientSession() as session:
            base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            for extra in ({"grammar": "root ::= [a-z"}, {"grammar": 'root ::= "a" root'},
                          {"grammar": 'root ::= "x"', "response_format": {"type": "json_schema", "json_schema": {"schema": {}}}},
                          {"structured_outputs": {"grammar": 'root ::= "x"'}}):
                async with session.post(server.url + "/v1/chat/completions", json={**base, **extra},
                                        headers={"Authorization": "Bearer test-key"}) as response:
                    answers.append((response.status, (await response.json()).get("error", {}).get("message", "")))
            # Counted as read (a pair is refused before); the one served is not a game's reply: off its grammar.
            assert server.stats.constrained == {"grammar": 2, "structured_outputs": 1} and server.stats.off_grammar == 1
        return answers

    answers = anyio.run(main)
    assert [status for status, _ in answers] == [400, 400, 400, 200]
    assert "parse grammar" in answers[0][1] and "refers to itself" in answers[1][1] and "not both" in answers[2][1]


def test_a_call_without_a_grammar_keeps_the_cache_key_it_had():
    cached = types.SimpleNamespace(_prefix=hashlib.sha256(b"model"), _model="model", seed=None)
    request = Request("system", "user", {"type": "object"}, (("a", "b"),), 0)
    before = hashlib.sha256(b"model")
    before.update(msgspec.json.encode(("system", (("a", "b"),), "user", {"type": "object"}, None, 0)))
    assert CachedCalls.key(cached, request) == before.digest()  # the entries kept before grammars are still hits
    assert CachedCalls.key(cached, request._replace(grammar='root ::= "x"')) != before.digest()


@pytest.mark.parametrize("kind, field", [("llamacpp", "grammar"), ("vllm", "structured_outputs")])
def test_a_server_the_engine_starts_gets_the_grammar_in_its_form(kind, field):
    """The engine's own llama.cpp server (stood in for by the local server at its address) gets the
    grammar as ``grammar``, its bounds lowered to the reply's tokens as a schema's; vLLM's as given."""
    from engine.backends import BackendSettings, ModelHub, ModelOptions
    from engine.serving import ServedModel

    grammar = reply_grammar(("suggest", "end"))

    async def main() -> dict:
        async with fake_server(api_key=None) as server:
            hub = ModelHub(BackendSettings(options=ModelOptions(structured=True, max_tokens=128)))
            name = f"{kind}:model"
            hub.served[name] = ServedModel(kind, "model")
            hub.served_urls[name] = server.url + "/v1"
            assert hub.takes_grammar(name)
            try:  # the hub not entered: it would start a server of its own
                await hub.backend(name).complete(Request("system", "user", grammar=grammar))
            finally:
                await hub.builder.close()
            assert server.stats.constrained == {field: 1}
            return server.last_body

    body = anyio.run(main)
    sent = body["grammar"] if kind == "llamacpp" else body["structured_outputs"]["grammar"]
    assert sent == (bounded_grammar(grammar, 32, 2) if kind == "llamacpp" else grammar)


@pytest.mark.parametrize("client", ["lean", "sdk"])
@pytest.mark.parametrize("version, field", [("0.10.1", "guided_grammar"), ("0.11.2", "guided_grammar"), ("0.32.0", "structured_outputs")])
def test_a_vllm_server_gets_the_grammar_in_the_field_its_version_takes(version, field, client, tmp_path, monkeypatch):
    """vLLM took a reply grammar as ``guided_grammar`` until 0.12 and as ``structured_outputs`` from
    0.10.2, ignoring a field it does not take: the engine reads the server's version before any game
    and sends the field it takes, so every reply of a game whose replies are not JSON is constrained."""
    monkeypatch.setenv("VLLM_API_KEY", "test-key")
    run = tmp_path / "run"
    with server_process("--latency", "0", "--vllm-version", version) as url:
        with urllib.request.urlopen(url + "/version") as response:
            assert json.loads(response.read()) == {"version": version}
        assert run_main(["--game", "tsp", "--games", "2", "--max-turns", "4", "--structured", "--model", f"vllm:{GAMES['tsp'].default_policy}",
                         "--vllm-url", url + "/v1", "--client", f"vllm={client}", "--out", str(run), "--no-dashboard"]) == 0
        stats = _stats(url)
    assert stats["constrained"] == {field: stats["requests"]} and stats["requests"] > 0
    assert stats["ignored"] == {} and stats["off_grammar"] == 0


def test_the_local_server_ignores_a_grammar_field_its_vllm_version_does_not_take():
    async def main() -> dict[str, dict[str, int]]:
        import aiohttp

        seen = {}
        for version in ("0.10.1", "0.12.0"):
            async with fake_server(vllm_version=version) as server, aiohttp.ClientSession() as session:
                base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
                for extra in ({"guided_grammar": 'root ::= "x"'}, {"structured_outputs": {"grammar": 'root ::= "x"'}}):
                    async with session.post(server.url + "/v1/chat/completions", json={**base, **extra},
                                            headers={"Authorization": "Bearer test-key"}) as response:
                        assert response.status == 200
                seen[version] = {"constrained": server.stats.constrained, "ignored": server.stats.ignored}
        return seen

    assert anyio.run(main) == {
        "0.10.1": {"constrained": {"guided_grammar": 1}, "ignored": {"structured_outputs": 1}},
        "0.12.0": {"constrained": {"structured_outputs": 1}, "ignored": {"guided_grammar": 1}},
    }


@pytest.mark.parametrize("version, form", [("0.11.2+cpu", "vllm_guided"), ("0.9.0", "vllm_guided"), ("v0.12.0", "vllm"),
                                           ("0.32.0", "vllm"), ("1.0.0", "vllm"), (None, "vllm"), ("dev", "vllm")])
def test_the_grammar_form_follows_the_version_a_vllm_server_says(version, form):
    from engine.backends.wire import vllm_grammar_form

    assert vllm_grammar_form(version) == form
    body = json.loads(openai_body({}, [], None, None, 'root ::= "x"', vllm_grammar_form(version)))
    assert ("guided_grammar" in body, "structured_outputs" in body) == (form == "vllm_guided", form == "vllm")


def test_a_vllm_server_the_engine_starts_gets_the_grammar_in_the_field_its_version_takes():
    """The engine's own ``vllm serve`` (stood in for by the local server playing vLLM 0.10.1 at its
    address) is asked its version as any named server is, and gets ``guided_grammar``."""
    from engine.backends import BackendSettings, ModelHub, ModelOptions
    from engine.serving import ServedModel

    grammar = reply_grammar(("suggest", "end"))

    async def main() -> dict:
        async with fake_server(api_key=None, vllm_version="0.10.1") as server:
            hub = ModelHub(BackendSettings(options=ModelOptions(structured=True, max_tokens=128)))
            name = "vllm:model"
            hub.served[name] = ServedModel("vllm", "model")
            hub.served_urls[name] = server.url + "/v1"
            await hub._ask_grammar_forms()  # what entering the hub does once its servers are up
            try:
                await hub.backend(name).complete(Request("system", "user", grammar=grammar))
            finally:
                await hub.builder.close()
            assert server.stats.constrained == {"guided_grammar": 1} and server.stats.ignored == {}
            return server.last_body

    assert anyio.run(main)["guided_grammar"] == grammar
