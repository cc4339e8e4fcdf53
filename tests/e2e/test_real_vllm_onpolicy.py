"""New LoRA weights into a real vLLM server while a rollout plays (``engine.rollouts.weights``,
``engine.serving.swap.VllmAdapters``): the server, started as the documentation says for swaps
(``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True vllm serve MODEL --enable-lora --max-loras 2
--max-lora-rank R``), loads a PEFT adapter of SmolLM2-135M as a new version mid-run by its runtime
endpoint; the games started after play with it, each trajectory names the version that played it,
which is the one the server answers with (its reply to the game's first prompt, asked again at
temperature 0), and a version no game uses any more is unloaded after the next swap. A server started without ``--enable-lora`` is refused by ``asymgames rollouts
--weights-dir`` in one line, before any game.

Marked ``real_vllm`` and ``slow``: it needs the vLLM environment and model folder ``asymgames
setup-vllm`` makes, and the train extra (PEFT) to make the adapter; skipped, saying why, without them
(unless ``ASYMGAMES_REQUIRE_REAL_VLLM=1``, which makes a missing vLLM a failure). Each test starts a
server of its own (minutes on a loaded CPU)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from engine.backends import BackendSettings, ModelOptions
from engine.plan import Grid
from engine.rollouts import Group, PolicyWeights
from engine.serving import ServedModel, ServerProcess, vllm_model_folder
from engine.serving.process import free_port
from engine.serving.swap import VllmAdapters, adapter_digest
from engine.serving.vllm_lora import adapter_rank, max_lora_rank
from runners.rollouts import main as rollouts_main
from tests.helpers import random_adapter, rollouts_with_a_swap, skip_without_real_vllm

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

FOLDER = vllm_model_folder("smollm2")
TRAINED = "vllm:smollm2"
SLOTS = 2
CONTEXT = 4096
MAX_TOKENS = 8  # a 135M model on a loaded 2-core machine: a second or two a call


skip_without_real_vllm(FOLDER)


@contextmanager
def vllm_server(log: Path, lora_rank: int | None) -> Iterator[str]:
    """``vllm serve`` of SmolLM2-135M as the engine starts it (``ServedModel``), with what taking
    adapters while it runs needs: ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`` and, where ``lora_rank``
    is given, ``--enable-lora`` for adapters of up to that rank. Its base URL (``.../v1``). The
    server is started, and stopped at the end however the block ends, by a thread that lives as long
    as it (the server dies with the thread that started it), so that the test's own thread may run
    a command that handles signals."""
    assert FOLDER is not None
    model = ServedModel("vllm", str(FOLDER), served_as="smollm2")
    port = free_port()
    command = model.command(port, SLOTS, CONTEXT)
    if lora_rank is not None:
        command += ["--enable-lora", "--max-loras", "2", "--max-lora-rank", str(max_lora_rank(lora_rank))]
    env = {**(model.environment(SLOTS, CONTEXT) or os.environ), "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}
    server = ServerProcess("vLLM server taking adapters", command, port, log, env=env)
    ready, done = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    async def serve() -> None:
        server.start()
        try:
            await server.wait_ready()
            ready.set()
            while not done.is_set():
                await anyio.sleep(0.2)
        except BaseException as exc:
            failed.append(exc)
        finally:
            ready.set()
            await server.stop()

    thread = threading.Thread(target=anyio.run, args=(serve,), daemon=True)
    thread.start()
    ready.wait()
    try:
        if failed:
            raise RuntimeError(f"vLLM did not start: {failed[0]}")
        yield server.url + "/v1"
    finally:
        done.set()
        thread.join(timeout=120)


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def ask(url: str, model: str, messages: list[dict]) -> str:
    """The server's reply at temperature 0, the model named ``model``."""
    body = json.dumps({"model": model, "messages": messages, "max_tokens": MAX_TOKENS, "temperature": 0.0}).encode()
    request = urllib.request.Request(url + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def test_weights_loaded_mid_run_play_the_games_started_after_and_are_named_in_their_trajectories(tmp_path):
    peft = pytest.importorskip("peft", reason="the train extra is not installed (pip install -e '.[train]')")
    assert FOLDER is not None
    adapter = random_adapter(peft, FOLDER, tmp_path / "step-1", seed=1)
    grid = Grid(game="asympuzl", seeds=3, agents=[[TRAINED, "share_everything"]], params={"size": [3]}, max_turns=[1])
    log = tmp_path / "server.log"

    async def go(url: str) -> tuple[list[Group], dict, dict[str, str], dict, str]:
        weights = PolicyWeights(TRAINED, VllmAdapters(url, "smollm2"))
        await weights.load(None)  # version 0, the base model: the server is asked whether it takes adapters
        models = BackendSettings(urls={"vllm": url}, options=ModelOptions(max_tokens=MAX_TOKENS, temperature=0.0))
        got: list[Group] = await rollouts_with_a_swap(grid, models, weights, tmp_path / "run", adapter)
        listed = await anyio.to_thread.run_sync(get, url + "/models")
        # What each version answers now to the first prompt of one game of each version.
        answers = {}
        one_each = {t.weights.version: t for g in got for t in g.seat("alice") if t.weights}
        for trajectory in one_each.values():
            messages = [{"role": m.role, "content": m.content} for m in trajectory.steps[0].messages]
            for served in ("smollm2", "smollm2@1"):
                answers[f"{trajectory.game_id}:{served}"] = await anyio.to_thread.run_sync(ask, url, served, messages)
        # Version 2, then what a swap does first: unload the versions no game uses any more, version 1 among them.
        await weights.load(adapter)
        await weights.unload_stale()
        after = await anyio.to_thread.run_sync(get, url + "/models")
        try:
            await anyio.to_thread.run_sync(ask, url, "smollm2@1", [{"role": "user", "content": "Hello"}])
            stale = "answered"
        except urllib.error.HTTPError as exc:
            stale = str(exc.code)
        return got, listed, answers, after, stale

    with vllm_server(log, adapter_rank(str(adapter))) as url:
        groups, listed, answers, after, stale = anyio.run(go, url)
    assert [(m["id"], m.get("parent")) for m in listed["data"]] == [("smollm2", None), ("smollm2@1", "smollm2")]
    assert listed["data"][1]["root"] == str(adapter.resolve())
    assert [m["id"] for m in after["data"]] == ["smollm2", "smollm2@2"] and stale == "404"
    text = log.read_text(errors="replace")
    assert f"Loaded new LoRA adapter: name 'smollm2@1', path '{adapter.resolve()}'" in text
    assert "Removed LoRA adapter: name 'smollm2@1'" in text

    seats = [t for g in groups for t in g.seat("alice")]
    versions = {t.weights.version for t in seats if t.weights}
    assert versions == {0, 1}, versions  # the first group on the base model, the games after the swap on the adapter
    assert all(t.weights.version == 0 for t in groups[0].seat("alice") if t.weights)
    assert all(t.weights is None for g in groups for t in g.seat("bob"))
    checked = 0
    for trajectory in seats:
        assert trajectory.weights is not None
        assert trajectory.weights.served == ("smollm2" if trajectory.weights.version == 0 else "smollm2@1")
        assert trajectory.weights.sha256 == (None if trajectory.weights.version == 0 else adapter_digest(adapter))
        played = trajectory.steps[0]
        assert played.tokens is not None and played.tokens.completion_ids  # the adapter's calls returned their tokens too
        if f"{trajectory.game_id}:smollm2" not in answers:
            continue
        # The server applied the weights the trajectory names: its reply is that version's, not the other's.
        mine = trajectory.weights.served
        other = {"smollm2": "smollm2@1", "smollm2@1": "smollm2"}[mine]
        assert answers[f"{trajectory.game_id}:{mine}"] == played.reply
        assert answers[f"{trajectory.game_id}:{other}"] != played.reply
        checked += 1
    assert checked == 2


def test_a_server_started_without_enable_lora_is_refused_before_any_game(tmp_path, capsys):
    """``--weights-dir`` against a vLLM server with the runtime endpoints but no ``--enable-lora``:
    the run stops at its start, saying what the server lacks, with no game played."""
    folder, out = tmp_path / "adapters", tmp_path / "run"
    folder.mkdir()

    with vllm_server(tmp_path / "server.log", None) as url:
        code = rollouts_main(["--game", "asympuzl", "--alice", TRAINED, "--bob", "share_everything", "--size", "3",
                              "--group", "2", "--games", "2", "--max-turns", "1", "--max-tokens", str(MAX_TOKENS),
                              "--train", "alice", "--vllm-url", url, "--weights-dir", str(folder), "--out", str(out),
                              "--no-dashboard"])
    said = capsys.readouterr().out
    assert code != 0
    assert "the first weights did not load" in said and "started without --enable-lora" in said, said
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text()
