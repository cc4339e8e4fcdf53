"""On-policy rollouts against the local model server: a trainer hands the running rollout new
adapter weights (vLLM's runtime adapter endpoints, which the local server speaks), the games started
after play with them, and every trajectory of the trained model names its weights."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Literal

import anyio
import pytest

from engine.backends import BackendSettings
from engine.plan import Grid
from engine.rollouts import WEIGHTS_FILE, Group, PolicyWeights, Settings, rollouts, run_groups
from engine.serving import ServeError
from engine.serving.swap import VllmAdapters, adapter_digest
from tests.e2e.test_model_runs import server_process

TRAINED = "vllm:share_everything"  # the base model plays share_everything on the local server
GRID = Grid(game="chain", seeds=3, agents=[[TRAINED, "vllm:noisy", "noisy"]], params={"size": [3]})


def adapter(root: Path, strategy: str, content: bytes) -> Path:
    """A PEFT folder as the local server loads it: named after the strategy it plays."""
    folder = root / strategy
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 4}))
    (folder / "adapter_model.safetensors").write_bytes(content)
    return folder


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/fake/stats", timeout=10) as response:
        return json.loads(response.read())


def play(url: str, out: Path, swaps: list[Path], client: Literal["lean", "sdk"] = "lean", before: Sequence[Path] = (),
         grid: Grid = GRID, **more: Any) -> tuple[list[Group], PolicyWeights]:
    """The rollout of ``grid`` (two games a seed, one game at a time unless ``more`` says otherwise,
    the model's calls through ``client``), with the base model and then each of ``before`` loaded
    first; after the first group and the second, the next of ``swaps`` is handed over."""
    models = BackendSettings(urls={"vllm": url + "/v1"}, clients={"vllm": client})
    weights = PolicyWeights(TRAINED, VllmAdapters(url, "share_everything"))

    async def go() -> list[Group]:
        for first in (None, *before):
            await weights.load(first)
        got = []
        async with rollouts(grid, k=2, out=out, models=models, weights=weights, settings=Settings(trained=("alice",)),
                            **{"concurrency": 1, **more}) as groups:
            async for group in groups:
                got.append(group)
                if swaps:
                    await groups.load_weights(swaps.pop(0))
        await weights.unload_stale()
        return got

    return anyio.run(go), weights


def served_as_pinned(groups: list[Group], served: dict) -> dict[int, int]:
    """Calls of the trained seat per version, after checking that the server was asked for each
    version exactly as often as the games pinned to it called it."""
    seats = [t for g in groups for t in g.trajectories if t.role == "alice"]
    assert all(t.weights is not None for t in seats)
    names = {t.weights.version: t.weights.served for t in seats if t.weights}
    calls = {v: sum(len(t.steps) for t in seats if t.weights and t.weights.version == v) for v in names}
    assert {names[v]: served["served_models"].get(names[v], 0) for v in names} == {names[v]: calls[v] for v in names}
    return calls


def test_weights_swapped_mid_run_play_the_games_started_after_and_are_named_in_each_trajectory(tmp_path):
    first = adapter(tmp_path / "a", "noisy", b"step 1")
    second = adapter(tmp_path / "b", "share_everything", b"step 2")
    with server_process() as url:
        groups, weights = play(url, tmp_path / "run", [first, second])
        served = stats(url)
        listed = json.loads(urllib.request.urlopen(url + "/v1/models", timeout=10).read())
    assert [w.version for w in weights.loaded] == [2]  # the earlier versions were unloaded once no game used them
    assert served["adapters"] == {"share_everything@2": "share_everything"}
    assert [(m["id"], m["parent"]) for m in listed["data"]] == [("fake", None), ("share_everything@2", "fake")]  # as vLLM lists them

    seats = [t for g in groups for t in g.trajectories if t.role == "alice"]
    assert all(t.weights is not None for t in seats)
    started = [json.loads(line) for line in (tmp_path / "run" / WEIGHTS_FILE).read_text().splitlines()]
    assert sorted(pin["game_id"] for pin in started) == sorted(t.game_id for t in seats)
    versions = [pin["weights"]["version"] for pin in started]  # in the order the games started, one at a time
    assert versions == sorted(versions) and versions[0] == 0 and versions[-1] == 2
    assert all(t.weights.version == 0 for t in groups[0].seat("alice") if t.weights)
    by_version = {t.weights.version: t.weights for t in seats if t.weights}
    assert by_version[0].served == "share_everything" and by_version[0].sha256 is None
    assert by_version[1].served == "share_everything@1" and by_version[1].sha256 == adapter_digest(first)
    assert by_version[2].sha256 == adapter_digest(second) != by_version[1].sha256
    # The server was asked for each version exactly as often as the games pinned to it called it.
    calls = {v: sum(len(t.steps) for t in seats if t.weights and t.weights.version == v) for v in by_version}
    for version, count in calls.items():
        assert served["served_models"].get(by_version[version].served, 0) == count
    # The frozen partner (another model) is never sent to the trained weights, nor given any.
    assert all(t.weights is None for g in groups for t in g.trajectories if t.role != "alice")
    assert served["served_models"]["noisy"] == sum(len(t.steps) for g in groups for t in g.seat("bob"))

    # A later reading of the run gives the same weights, from the run directory.
    again = {(t.game_id, t.role): t.weights for g in run_groups(tmp_path / "run") for t in g.trajectories}
    assert again == {(t.game_id, t.role): t.weights for g in groups for t in g.trajectories}


def test_calls_through_the_sdk_client_go_to_the_games_weights_too(tmp_path):
    first = adapter(tmp_path / "a", "noisy", b"step 1")
    with server_process() as url:
        groups, _ = play(url, tmp_path / "run", [first], client="sdk")
        served = stats(url)
    calls = served_as_pinned(groups, served)
    assert calls[0] > 0 and calls[1] > 0


def test_a_version_the_server_cannot_load_leaves_the_current_one(tmp_path):
    with server_process() as url:
        weights = PolicyWeights(TRAINED, VllmAdapters(url, "share_everything"))

        async def go() -> None:
            await weights.load(None)
            with pytest.raises(ServeError, match="cannot read the adapter"):
                await weights.load(tmp_path / "missing")
            folder = adapter(tmp_path, "noisy", b"x")
            await VllmAdapters(url, "share_everything").load("share_everything@1", folder)  # the name taken
            with pytest.raises(ServeError, match="has already been loaded"):
                await weights.load(folder)

        anyio.run(go)
    assert weights.current is not None and weights.current.version == 0


@pytest.mark.parametrize("config, missing", [
    ({"lora_endpoints": False}, "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"),
    ({"enable_lora": False}, "started without --enable-lora"),
])
def test_a_vllm_server_that_cannot_take_adapters_is_refused_in_one_line_when_the_base_model_is_loaded(config, missing):
    """As vLLM answers: no load route without the variable, a 500 saying so without --enable-lora."""
    from runners.fake_llm import FakeConfig, FakeServer

    async def go() -> str:
        server = FakeServer(FakeConfig(**config))
        url = await server.start()
        try:
            with pytest.raises(ServeError) as refused:
                await PolicyWeights(TRAINED, VllmAdapters(url, "share_everything")).load(None)
            return str(refused.value)
        finally:
            await server.stop()

    reason = anyio.run(go)
    assert missing in reason and "\n" not in reason, reason


def test_a_vllm_server_that_takes_adapters_loads_nothing_for_the_base_model(tmp_path):
    from runners.fake_llm import FakeServer

    async def go() -> tuple[str, dict]:
        server = FakeServer()
        url = await server.start()
        try:
            served = await VllmAdapters(url + "/v1", "share_everything").load("share_everything@0", None)
            return served, server.adapters.loaded
        finally:
            await server.stop()

    assert anyio.run(go) == ("share_everything", {})


def test_a_rollout_whose_weights_have_no_version_loaded_is_refused_before_any_game(tmp_path):
    weights = PolicyWeights(TRAINED, VllmAdapters("http://127.0.0.1:9", "share_everything"))

    async def go() -> None:
        async with rollouts(GRID, k=2, out=tmp_path / "run", weights=weights) as groups:
            async for _ in groups:
                pass

    with pytest.raises(ValueError, match="no weights of vllm:share_everything loaded"):
        anyio.run(go)
    assert not (tmp_path / "run" / "results.jsonl").exists() or not (tmp_path / "run" / "results.jsonl").read_text()


def test_a_rollout_without_weights_refuses_a_swap(tmp_path):
    async def go() -> None:
        grid = Grid(game="chain", seeds=1, agents=[["noisy", "noisy", "noisy"]], params={"size": [3]})
        async with rollouts(grid, k=2, out=tmp_path / "run") as groups:
            with pytest.raises(ValueError, match="without weights"):
                await groups.load_weights(tmp_path)

    anyio.run(go)


def test_the_response_cache_keeps_each_versions_replies_apart(tmp_path):
    """A call routed to other weights is another call for the cache; a call of no routed model keeps
    the key it had."""
    from engine.backends import Request
    from engine.backends.cache import CachedCalls, ResponseStore, model_key
    from engine.backends.hub import ModelHub
    from engine.backends.routes import ROUTES
    from engine.backends.wrappers import Wrapper

    backend = ModelHub(BackendSettings(urls={"vllm": "http://127.0.0.1:9/v1"}), environ={}).backend("vllm:base")
    while isinstance(backend, Wrapper):
        backend = backend.inner
    fixed = model_key("vllm", "127.0.0.1:9", "vllm", "base", backend.options, None)
    cached = CachedCalls(backend, ResponseStore(tmp_path / "r.sqlite"), fixed, None)
    call = Request("sys", "user")
    plain = cached.key(call)

    def key_with(routes: dict) -> bytes:
        token = ROUTES.set(routes)
        try:
            return cached.key(call)
        finally:
            ROUTES.reset(token)

    assert key_with({"other": {"model": "other@1"}}) == plain
    assert len({plain, key_with({"base": {"model": "base@1"}}), key_with({"base": {"model": "base@2"}})}) == 3


def test_a_weights_folder_offers_the_whole_adapters_not_hidden_in_the_order_of_their_numbers(tmp_path):
    from engine.rollouts.weights_dir import complete_adapters

    for name in ("step-10", "step-9", ".step-11"):
        adapter(tmp_path, name, name.encode())
    (tmp_path / "step-12").mkdir()
    (tmp_path / "step-12" / "adapter_config.json").write_text("{}")  # its weights not there yet
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    assert [path.name for path in complete_adapters(tmp_path)] == ["step-9", "step-10"]
