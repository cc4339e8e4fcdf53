"""A LoRA adapter named with its model (``llamacpp:MODEL+ADAPTER``, ``vllm:MODEL+ADAPTER``): the name, the
server's command line, the name requests give, the one-line refusals of an adapter folder that is
missing or damaged or of a rank vLLM cannot serve, which need no model, and a forecast's check, which
converts nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.serving import ServeError, ServedModel, served_model
from engine.serving.lora import ADAPTER_GGUF, gguf_lora, llama_cpp_source, split_adapter
from engine.serving.vllm_lora import lora_arguments, max_lora_rank


def test_a_model_name_with_an_adapter_is_served_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LLAMA_SERVER", str(tmp_path / "llama-server"))
    (tmp_path / "llama-server").write_text("")
    assert split_adapter("smollm2+adapters/x") == ("smollm2", "adapters/x")
    assert split_adapter("smollm2") == ("smollm2", "")
    bundled = served_model("llamacpp", "smollm2+adapters/x", explicit_url=False)
    assert bundled == ServedModel("llamacpp", str(tmp_path / "home" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"), adapter="adapters/x")
    command = bundled.command(port=9000, slots=2, context=1024)
    assert command[command.index("--lora") + 1] == str(Path("adapters/x") / ADAPTER_GGUF)
    given = served_model("llamacpp", "/m/model.gguf+/a/lora.gguf", explicit_url=True)
    assert given is not None and given.adapter == "/a/lora.gguf"
    assert given.command(9000, 2, 1024)[given.command(9000, 2, 1024).index("--lora") + 1] == "/a/lora.gguf"
    assert "--lora" not in ServedModel("llamacpp", "/m/model.gguf").command(9000, 2, 1024)
    assert "with the adapter adapters/x" in bundled.label


def _adapter(folder: Path, config: object = None) -> Path:
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps(config or {"peft_type": "LORA", "base_model_name_or_path": str(folder)}))
    (folder / "adapter_model.safetensors").write_bytes(b"\0" * 8)
    return folder


def test_a_missing_or_damaged_adapter_is_refused_in_one_line(tmp_path):
    model = tmp_path / "model.gguf"
    with pytest.raises(ServeError, match=r"^no adapter folder .*nowhere \(a folder asymgames train wrote"):
        gguf_lora(str(tmp_path / "nowhere"), model)
    with pytest.raises(ServeError, match=r"^no adapter file "):
        gguf_lora(str(tmp_path / "nowhere.gguf"), model)
    unfinished = _adapter(tmp_path / "unfinished")
    (unfinished / "adapter_model.safetensors").unlink()
    with pytest.raises(ServeError, match=r"is not a whole LoRA adapter: it has no adapter_model.safetensors$"):
        gguf_lora(str(unfinished), model)
    damaged = _adapter(tmp_path / "damaged")
    (damaged / "adapter_config.json").write_text('{"peft_type": "LO')
    with pytest.raises(ServeError, match=r"adapter_config.json is damaged: "):
        gguf_lora(str(damaged), model)
    other = _adapter(tmp_path / "other", {"peft_type": "PREFIX_TUNING"})
    with pytest.raises(ServeError, match=r"does not describe a LoRA adapter"):
        gguf_lora(str(other), model)
    away = _adapter(tmp_path / "away", {"peft_type": "LORA", "base_model_name_or_path": "HuggingFaceTB/SmolLM2-135M-Instruct"})
    with pytest.raises(ServeError, match=r"its base model 'HuggingFaceTB/SmolLM2-135M-Instruct' .* is not a Hugging Face model folder on this machine"):
        gguf_lora(str(away), model)


def test_a_file_that_is_no_gguf_lora_is_refused_in_one_line(tmp_path):
    if not (llama_cpp_source() / "gguf-py").is_dir():
        pytest.skip(f"no llama.cpp source at {llama_cpp_source()} (asymgames setup-llamacpp)")
    fake = tmp_path / "lora.gguf"
    fake.write_bytes(b"GGUF" + b"\x03\0\0\0" + b"\xff" * 40)  # a header cut short
    with pytest.raises(ServeError, match=r"^the adapter .*lora.gguf does not fit model.gguf: cannot read lora.gguf as GGUF") as caught:
        gguf_lora(str(fake), tmp_path / "model.gguf")
    assert "\n" not in str(caught.value)


def test_an_adapter_on_a_vllm_model_is_served_beside_it_and_named_by_each_request(tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_EXECUTABLE", str(tmp_path / "vllm"))
    (tmp_path / "vllm").write_text("")
    adapter = _adapter(tmp_path / "x", {"peft_type": "LORA", "r": 4, "rank_pattern": {"q_proj": 12}})
    served = served_model("vllm", f"some/model+{adapter}", explicit_url=False)
    assert served == ServedModel("vllm", "some/model", adapter=str(adapter))
    served.check()
    assert served.requested == str(adapter) and ServedModel("vllm", "some/model").requested is None
    assert ServedModel("llamacpp", "/m/model.gguf", adapter=str(adapter)).requested is None  # llama.cpp: any name
    command = served.command(port=9000, slots=2, context=1024)
    assert command[command.index("--enable-lora"):] == ["--enable-lora", "--lora-modules", f"{adapter}={adapter}", "--max-lora-rank", "16"]
    monkeypatch.chdir(tmp_path)
    assert lora_arguments("x")[2] == f"x={adapter}"  # the path made absolute, the name as written
    odd = _adapter(tmp_path / "a=b", {"peft_type": "LORA", "r": 64})
    assert json.loads(lora_arguments(str(odd))[2]) == {"name": str(odd), "path": str(odd)}  # NAME=PATH cannot hold it
    assert [max_lora_rank(r) for r in (1, 2, 8, 9, 320, 512)] == [1, 8, 8, 16, 320, 512]


@pytest.mark.parametrize(("config", "says"), [
    ({"peft_type": "LORA"}, r"adapter_config.json gives no rank vLLM can read \(r: None\)$"),
    ({"peft_type": "LORA", "r": "eight"}, r"gives no rank vLLM can read \(r: 'eight'\)$"),
    ({"peft_type": "LORA", "r": 8, "rank_pattern": {"q_proj": 0}}, r"gives no rank vLLM can read \(r: 8\)$"),
    ({"peft_type": "LORA", "r": 1024}, r"^the adapter's rank 1024 is more than vLLM serves \(512\)$"),
    ({"peft_type": "PREFIX_TUNING"}, r"does not describe a LoRA adapter"),
])
def test_a_vllm_adapter_vllm_cannot_serve_is_refused_in_one_line(config, says, tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_EXECUTABLE", str(tmp_path / "vllm"))
    (tmp_path / "vllm").write_text("")
    served = served_model("vllm", f"some/model+{_adapter(tmp_path / 'x', config)}", explicit_url=False)
    assert served is not None
    with pytest.raises(ServeError, match=says):
        served.check()
    missing = served_model("vllm", f"some/model+{tmp_path / 'nowhere'}", explicit_url=False)
    assert missing is not None
    with pytest.raises(ServeError, match=r"^no adapter folder .*nowhere \(a folder asymgames train or PEFT wrote; vLLM takes no GGUF LoRA\)$"):
        missing.check()


def test_a_forecast_looks_at_the_adapter_and_converts_nothing(tmp_path, monkeypatch):
    """``check(prepare=False)``, a forecast's: a whole adapter folder passes though its base model is
    nowhere (the conversion would need it), a missing one is refused, and nothing is written."""
    monkeypatch.setenv("LLAMA_SERVER", str(tmp_path / "llama-server"))
    (tmp_path / "llama-server").write_text("")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    away = _adapter(tmp_path / "away", {"peft_type": "LORA", "base_model_name_or_path": "HuggingFaceTB/SmolLM2-135M-Instruct"})
    served = ServedModel("llamacpp", str(model), adapter=str(away))
    served.check(prepare=False)
    assert sorted(p.name for p in away.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    with pytest.raises(ServeError, match=r"is not a Hugging Face model folder on this machine"):
        served.check()  # a run's check converts, and needs the base model
    with pytest.raises(ServeError, match=r"^no adapter folder "):
        ServedModel("llamacpp", str(model), adapter=str(tmp_path / "nowhere")).check(prepare=False)
    with pytest.raises(ServeError, match=r"^no adapter file "):
        ServedModel("llamacpp", str(model), adapter=str(tmp_path / "nowhere.gguf")).check(prepare=False)


def _safetensors(path: Path, shapes: dict[str, list[int]]) -> None:
    """A safetensors file of zeros: its header (eight bytes of length, then JSON), then the data."""
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = 2 * math.prod(shape)  # bfloat16
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + bytes(offset))


def test_a_vllm_adapter_of_another_base_model_is_refused_before_the_server_starts(tmp_path, monkeypatch):
    """The adapter's tensors against the model folder's (the headers of their safetensors files): one
    of another size, or of a module the model does not have, is refused in one line; a model vLLM
    would fetch by name is left to vLLM."""
    monkeypatch.setenv("VLLM_EXECUTABLE", str(tmp_path / "vllm"))
    (tmp_path / "vllm").write_text("")
    model = tmp_path / "model"
    model.mkdir()
    _safetensors(model / "model.safetensors", {"model.layers.0.mlp.down_proj.weight": [8, 16], "model.norm.weight": [8]})
    fits = _adapter(tmp_path / "fits", {"peft_type": "LORA", "r": 2})
    _safetensors(fits / "adapter_model.safetensors", {"base_model.model.model.layers.0.mlp.down_proj.lora_A.weight": [2, 16],
                                                      "base_model.model.model.layers.0.mlp.down_proj.lora_B.weight": [8, 2]})
    ServedModel("vllm", str(model), served_as="m", adapter=str(fits)).check()
    wide = _adapter(tmp_path / "wide", {"peft_type": "LORA", "r": 2})
    _safetensors(wide / "adapter_model.safetensors", {"base_model.model.model.layers.0.mlp.down_proj.lora_A.weight": [2, 32]})
    with pytest.raises(ServeError, match=r"^the adapter .*wide does not fit model: the adapter's model.layers.0.mlp.down_proj "
                                         r"has 32 input features, the model's 16 \(another base model\)$"):
        ServedModel("vllm", str(model), served_as="m", adapter=str(wide)).check()
    deep = _adapter(tmp_path / "deep", {"peft_type": "LORA", "r": 2})
    _safetensors(deep / "adapter_model.safetensors", {"base_model.model.model.layers.9.mlp.down_proj.lora_B.weight": [8, 2]})
    with pytest.raises(ServeError, match=r"the adapter changes model.layers.9.mlp.down_proj, which the model does not have"):
        ServedModel("vllm", str(model), served_as="m", adapter=str(deep)).check()
    ServedModel("vllm", "org/some-model", adapter=str(wide)).check()  # fetched by vLLM: its tensors unknown here
