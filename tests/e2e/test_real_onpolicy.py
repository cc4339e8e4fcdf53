"""New LoRA weights into a real llama.cpp server while a rollout plays (``engine.rollouts.weights``,
``engine.serving.swap.LlamaCppRouter``): the server, in router mode, loads a PEFT adapter of
SmolLM2-135M as a new version mid-run; the games started after play with it, and each trajectory
names the version that played it, which is the one the server answers with.

Marked ``real_model``: it needs the server and the model ``asymgames setup-llamacpp`` fetches (and its
llama.cpp source, whose converter it runs), the Hugging Face folder of SmolLM2-135M
(``$ASYMGAMES_HF_MODEL``, else ``~/.cache/asymgames/models/smollm2-hf``) and the train extra (torch,
PEFT); skipped, saying why, without them, unless ``ASYMGAMES_REQUIRE_REAL_MODEL=1`` (as CI sets), which
makes that a failure (the fixture of ``tests/engine/serving/test_lora_served.py``)."""

from __future__ import annotations

import json
import urllib.request

import anyio
import pytest

from engine.backends import BackendSettings, ModelOptions
from engine.plan import Grid
from engine.rollouts import Group, PolicyWeights
from engine.serving import find_executable
from engine.serving.install import bundled_model
from engine.serving.lora import gguf_lora
from engine.serving.swap import LlamaCppRouter, adapter_digest
from tests.engine.serving.test_lora_served import HF_MODEL, peft  # noqa: F401  (the fixture)
from tests.helpers import random_adapter, rollouts_with_a_swap

pytestmark = pytest.mark.real_model

TRAINED = "llamacpp:policy"
MAX_TOKENS = 8  # a 135M model on a loaded 2-core machine: a few seconds a call


def ask(url: str, model: str, messages: list[dict]) -> str:
    body = json.dumps({"model": model, "messages": messages, "max_tokens": MAX_TOKENS, "temperature": 0.0}).encode()
    request = urllib.request.Request(url + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def test_weights_loaded_mid_run_play_the_games_started_after_and_are_named_in_their_trajectories(peft, tmp_path):  # noqa: F811
    adapter = random_adapter(peft, HF_MODEL, tmp_path / "step-1", seed=1)
    gguf_lora(str(adapter), bundled_model("smollm2"))  # converted now (half a minute), so that the swap itself is quick
    grid = Grid(game="asympuzl", seeds=3, agents=[[TRAINED, "share_everything"]], params={"size": [3]}, max_turns=[1])

    async def go() -> tuple[list[Group], dict, dict[str, str]]:
        async with LlamaCppRouter(find_executable("llamacpp"), bundled_model("smollm2"), tmp_path / "server",  # type: ignore[arg-type]
                                  slots=1, context=2048) as router:
            weights = PolicyWeights(TRAINED, router)
            await weights.load(None)
            models = BackendSettings(urls={"llamacpp": router.url}, options=ModelOptions(max_tokens=MAX_TOKENS, temperature=0.0))
            got = await rollouts_with_a_swap(grid, models, weights, tmp_path / "run", adapter)
            listed = json.loads(urllib.request.urlopen(router.url.removesuffix("/v1") + "/models", timeout=30).read())
            # What each version answers now to the first prompt of one game of each version.
            answers = {}
            one_each = {t.weights.version: t for g in got for t in g.seat("alice") if t.weights}
            for trajectory in one_each.values():
                messages = [{"role": m.role, "content": m.content} for m in trajectory.steps[0].messages]
                for served in ("policy@0", "policy@1"):
                    answers[f"{trajectory.game_id}:{served}"] = await anyio.to_thread.run_sync(ask, router.url, served, messages)
            return got, listed, answers

    groups, listed, answers = anyio.run(go)
    status = {entry["id"]: entry["status"] for entry in listed["data"]}
    assert status["policy@0"]["value"] == status["policy@1"]["value"] == "loaded"
    assert any(arg.endswith("policy@1.gguf") for arg in status["policy@1"]["args"])  # the version's own adapter file
    seats = [t for g in groups for t in g.seat("alice")]
    versions = {t.weights.version for t in seats if t.weights}
    assert versions == {0, 1}, versions  # the first group on the base model, the games after the swap on the adapter
    assert all(t.weights.version == 0 for t in groups[0].seat("alice") if t.weights)
    assert all(t.weights is None for g in groups for t in g.seat("bob"))
    for trajectory in seats:
        assert trajectory.weights is not None
        assert trajectory.weights.sha256 == (None if trajectory.weights.version == 0 else adapter_digest(adapter))
        played = trajectory.steps[0]
        assert played.tokens is not None and played.tokens.completion_ids  # the router answered the token calls too
        if f"{trajectory.game_id}:policy@0" not in answers:
            continue
        # The server applied the weights the trajectory names: its reply is that version's, not the other's.
        mine, other = trajectory.weights.served, {"policy@0": "policy@1", "policy@1": "policy@0"}[trajectory.weights.served]
        assert answers[f"{trajectory.game_id}:{mine}"] == played.reply
        assert answers[f"{trajectory.game_id}:{other}"] != played.reply
