"""Reasoning traces through the engine's model clients, against the local model server: every traced
reply reads back to the actions played, the traces are kept beside the samples, the response cache
answers a second tracing of the same samples, batch mode sends them as batches, the cost is said
before any call, and a server that fails leaves the dataset as it was."""

import json
import shutil

import anyio
import msgspec
import pytest

from engine.backends import BatchSettings, CacheSettings
from engine.dataset import (
    TRACED, DatasetError, DatasetPlan, Part, build, forecast, prepare, read_dataset, trace, trace_request, write_dataset,
)
from puzzles import get_game
from tests.engine.backends.helpers import KEYS, fake_server, settings_for

MODEL = "openai:fake"
NO_GAME = "I cannot read this prompt (no game wrote it), so I have nothing to answer."  # the server's reply to a prompt no game wrote


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_CACHE", str(tmp_path / "cache"))


def dataset(folder, game="einstein", **params):
    g = get_game(game)
    plan = DatasetPlan(game=game, parts=[Part(g.rules.Params(**params), 2)], holdout=2,
                       demonstrations=2 if g.rules.demonstrations is not None else 0)
    write_dataset(folder, plan, anyio.run(build, plan))
    return folder


def _json(value):
    return json.loads(msgspec.json.encode(value))


async def _traced(folder, **settings):
    async with fake_server(latency=0.0) as server:
        return await trace(folder, MODEL, settings_for(server, **settings), environ=KEYS), server


@pytest.mark.parametrize("game", ["einstein", "tsp"])
def test_traced_replies_carry_the_models_reasoning_and_read_back_to_the_actions_played(tmp_path, game):
    folder = dataset(tmp_path / "d", game)
    card0, samples, infos = read_dataset(folder)
    done, _ = anyio.run(_traced, folder)
    card, traced, _ = read_dataset(folder, TRACED)
    plain = read_dataset(folder)[1]
    assert plain == samples, "the plain samples stay as they were"
    assert done["calls"] == len(samples) == len(traced) and card["files"]["traced"] == TRACED
    assert TRACED in (folder / "README.md").read_text()
    prompter = get_game(game).faces.prompter
    for sample, new, info in zip(samples, traced, infos):
        assert new.messages[:2] == sample.messages[:2] and new.messages[-2] == sample.messages[-2]
        assert NO_GAME in new.messages[-1]["content"]
        context, _ = prompter.read(new.messages[0]["content"], new.messages[-2]["content"])
        assert _json(list(prompter.parse(new.messages[-1]["content"], context).actions)) == _json(info.actions)
    if game == "einstein":  # the reasoning is the THINK part
        assert all(t.messages[-1]["content"].startswith(f"<THINK>{NO_GAME}</THINK><ACTION>") for t in traced)
    if prompter.chat_memory:  # a seat's earlier turns are its traced replies
        assert any(len(t.messages) > 3 and NO_GAME in t.messages[2]["content"] for t in traced)


def test_the_request_shows_the_turn_and_the_action_played(tmp_path):
    folder = dataset(tmp_path / "d")
    card, samples, _ = read_dataset(folder)
    prepared = prepare(get_game("einstein"), samples)
    request = trace_request(samples[0], prepared[0].bare)
    assert samples[0].messages[1]["content"] in request.user and samples[0].messages[0]["content"] in request.user
    assert request.user.endswith(prepared[0].bare) and prepared[0].bare.startswith("<ACTION>") and "<THINK>" not in prepared[0].bare
    assert "first person" in request.system


def test_the_cache_answers_the_same_samples_traced_again(tmp_path):
    folder = dataset(tmp_path / "d")
    shutil.copytree(folder, tmp_path / "e")
    cache = CacheSettings(mode="on", directory=str(tmp_path / "responses"))

    async def twice():
        async with fake_server(latency=0.0) as server:  # one server: its address is part of what a call is known by
            first = await trace(folder, MODEL, settings_for(server, cache=cache), environ=KEYS)
            asked = server.stats.requests
            second = await trace(tmp_path / "e", MODEL, settings_for(server, cache=cache), environ=KEYS)
            return first, second, server.stats.requests - asked

    first, second, asked_again = anyio.run(twice)
    assert first["cache_hits"] == 0 and second["cache_hits"] == second["calls"] > 0
    assert asked_again == 0
    assert read_dataset(folder, TRACED)[1] == read_dataset(tmp_path / "e", TRACED)[1]


def test_batch_mode_sends_the_calls_as_batches(tmp_path):
    folder = dataset(tmp_path / "d")
    batch = BatchSettings(enabled=True, wait=0.05, poll=0.05, poll_max=0.1)
    done, server = anyio.run(lambda: _traced(folder, batch=batch))
    assert done["calls"] > 0 and server.batches.stats()["batches"] >= 1


def test_the_cost_is_said_before_any_call(tmp_path):
    folder = dataset(tmp_path / "d")
    _, samples, _ = read_dataset(folder)
    prepared = prepare(get_game("einstein"), samples)
    from engine.backends import BackendSettings

    priced = forecast("openai:gpt-4o", samples, prepared, BackendSettings())
    assert priced.calls == len(samples) and priced.prompt_tokens > len(samples) * 100
    assert priced.cost is not None and priced.cost > 0
    half = forecast("openai:gpt-4o", samples, prepared, BackendSettings(batch=BatchSettings(enabled=True)))
    assert half.cost is not None and half.cost < priced.cost
    assert forecast("openai:no-such-model-priced", samples, prepared, BackendSettings()).cost is None


def test_a_server_that_fails_leaves_the_dataset_as_it_was(tmp_path):
    folder = dataset(tmp_path / "d")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}

    async def failing():
        async with fake_server(latency=0.0, faults={"400": 1.0}) as server:
            await trace(folder, MODEL, settings_for(server), environ=KEYS)

    with pytest.raises(DatasetError, match="tracing stopped"):
        anyio.run(failing)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    assert not (folder / TRACED).exists()


def test_a_dataset_is_traced_once(tmp_path):
    folder = dataset(tmp_path / "d")
    anyio.run(_traced, folder)
    with pytest.raises(DatasetError, match="traces already"):
        anyio.run(_traced, folder)
