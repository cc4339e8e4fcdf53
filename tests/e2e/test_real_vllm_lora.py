"""A LoRA adapter served by the real vLLM server the engine starts (``vllm:smollm2+ADAPTER``): an adapter
of SmolLM2-135M made by PEFT is given to ``vllm serve`` (``--enable-lora --lora-modules``), loaded as
the server starts, and plays a game, its requests naming it (a name the server did not know would
fail every call).

Marked ``real_vllm`` and ``slow``: it needs the vLLM environment and model folder ``asymgames
setup-vllm`` makes, and the train extra (PEFT) to make the adapter; skipped, saying why, without them
(unless ``ASYMGAMES_REQUIRE_REAL_VLLM=1``, which makes a missing vLLM a failure). The server's start
takes minutes on a loaded CPU. The adapter is untrained: the test checks the path, not the play."""

from __future__ import annotations

import json

import pytest

from engine.serving import vllm_model_folder
from runners.concurrent import main as run_main
from tests.helpers import make_adapter, skip_without_real_vllm

pytestmark = [pytest.mark.real_vllm, pytest.mark.slow]

FOLDER = vllm_model_folder("smollm2")


skip_without_real_vllm(FOLDER)


def test_a_tuned_model_plays_a_game_on_the_vllm_server_the_engine_starts(tmp_path):
    peft = pytest.importorskip("peft", reason="the train extra is not installed (pip install -e '.[train]')")
    assert FOLDER is not None
    adapter = make_adapter(peft, FOLDER, tmp_path / "adapter", rank=4)
    out = tmp_path / "run"
    code = run_main(["--game", "asympuzl", "--games", "1", "--size", "3", "--max-turns", "1", "--max-tokens", "16",
                     "--agent", f"alice=vllm:smollm2+{adapter}", "--agent", "bob=share_everything", "--serve-slots", "1",
                     "--serve-context", "4096", "--no-dashboard", "--out", str(out)])
    assert code == 0
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert record["outcome"] in ("success", "failure")
    assert record["usage"]["alice"]["calls"] > 0 and "bob" not in record["usage"]  # the tuned model played alice
    log = (out / "server-1.log").read_text(errors="replace")
    assert f"Loaded new LoRA adapter: name '{adapter}', path '{adapter}'" in log  # rank 4, served under rank 8
