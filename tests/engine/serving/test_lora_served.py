"""A LoRA adapter served by the llama.cpp server the engine starts (``llamacpp:smollm2+ADAPTER``): a PEFT
adapter of SmolLM2-135M is converted to GGUF, loaded by the server (``--lora``) and plays a game; an
adapter of another base model is refused in one line before any server starts.

Marked ``real_model`` and ``slow`` (a conversion, a server's start, a game): it needs the server and
the model ``asymgames setup-llamacpp`` fetches (and its llama.cpp source, whose converter it runs), the
Hugging Face folder of SmolLM2-135M (``$ASYMGAMES_HF_MODEL``, else ``~/.cache/asymgames/models/smollm2-hf``,
which ``asymgames setup-vllm --model-only`` makes) and the train extra (torch, PEFT); skipped, saying
why, without them, unless ``ASYMGAMES_REQUIRE_REAL_MODEL=1`` (as CI sets), which makes that a failure."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import anyio
import pytest

from engine.serving import ServeError, Servers, find_executable, served_model, vllm_model_folder
from engine.serving.install import bundled_model
from engine.serving.lora import ADAPTER_GGUF, llama_cpp_source
from runners.concurrent import main as run_main
from tests.helpers import make_adapter, skip_without, skip_without_modules

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

HF_MODEL = Path(os.environ.get("ASYMGAMES_HF_MODEL") or str(vllm_model_folder("smollm2")))


@pytest.fixture(scope="module")
def peft():
    skip_without_modules("torch", "transformers", "safetensors", "peft")
    try:
        find_executable("llamacpp")
    except ServeError as exc:
        skip_without(str(exc))
    model = bundled_model("smollm2")
    skip_without(None if model is not None and model.is_file() else f"no model at {model}: asymgames setup-llamacpp --model-only")
    skip_without(None if (llama_cpp_source() / "convert_lora_to_gguf.py").is_file() else
                 f"no llama.cpp source at {llama_cpp_source()} (asymgames setup-llamacpp)")
    skip_without(None if (HF_MODEL / "config.json").is_file() else
                 f"no Hugging Face model folder at {HF_MODEL}: asymgames setup-vllm --model-only (or set ASYMGAMES_HF_MODEL)")
    import peft

    return peft


@pytest.fixture(scope="module")
def adapter(peft, tmp_path_factory):
    return make_adapter(peft, HF_MODEL, tmp_path_factory.mktemp("lora") / "adapter")


def test_the_server_loads_the_converted_adapter(adapter, tmp_path):
    served = served_model("llamacpp", f"smollm2+{adapter}", explicit_url=False)
    assert served is not None
    served.check()  # converts
    made = adapter / ADAPTER_GGUF
    assert made.read_bytes()[:4] == b"GGUF"
    before = made.stat().st_mtime_ns
    served.check()  # the converted file is reused
    assert made.stat().st_mtime_ns == before

    async def listed() -> list[dict]:
        async with Servers({"tuned": served}, tmp_path, slots=1, context=1024) as urls:
            root = urls["tuned"].removesuffix("/v1")
            with urllib.request.urlopen(root + "/lora-adapters", timeout=30) as response:
                return json.loads(response.read())

    loaded = anyio.run(listed)
    assert [(Path(a["path"]), a["scale"]) for a in loaded] == [(made, 1.0)]


def test_a_tuned_model_plays_a_game(adapter, tmp_path):
    name = f"llamacpp:smollm2+{adapter}"
    code = run_main(["--game", "asympuzl", "--games", "1", "--size", "3", "--max-turns", "1", "--max-tokens", "16",
                     "--agent", f"alice={name}", "--agent", "bob=share_everything", "--serve-slots", "1", "--no-dashboard",
                     "--out", str(tmp_path / "run")])
    assert code == 0
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    assert record["outcome"] in ("success", "failure")
    assert record["usage"]["alice"]["calls"] > 0 and "bob" not in record["usage"]  # the tuned model played alice


def test_an_adapter_of_another_base_model_is_refused(peft, tmp_path):
    import transformers

    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=49152)
    small = transformers.LlamaForCausalLM(config)
    small.save_pretrained(str(tmp_path / "small"))
    small.name_or_path = str(tmp_path / "small")
    other = make_adapter(peft, small, tmp_path / "other")
    assert json.loads((other / "adapter_config.json").read_text())["base_model_name_or_path"] == str(tmp_path / "small")
    served = served_model("llamacpp", f"smollm2+{other}", explicit_url=False)
    assert served is not None
    with pytest.raises(ServeError, match=r"^the adapter .*other does not fit SmolLM2-135M-Instruct.Q4_1.gguf: "
                                         r"the adapter's blk\.0\.\w+\.weight has (64|128) (input|output) features, "
                                         r"the model's (576|1536) \(another base model\)$") as caught:
        served.check()
    assert "\n" not in str(caught.value)
