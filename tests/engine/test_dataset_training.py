"""A LoRA adapter trained on a dataset with TRL's SFTTrainer (the train extra): a few steps on a tiny
slice lower the loss on it, and the adapter is written; a model folder without a chat template is
refused in one line. The model is SmolLM2-135M as a Hugging Face folder: ``$ASYMGAMES_HF_MODEL``, else
the one ``asymgames setup-vllm`` makes (``~/.cache/asymgames/models/smollm2-hf``; ``--model-only`` makes it with
the train extra alone); skipped, saying why, without it or without the train extra, unless
``ASYMGAMES_REQUIRE_REAL_MODEL=1`` (as CI sets), which makes either a failure. Marked ``real_model`` and
``slow``: a real model, trained a few steps on the CPU."""

import json
import os
import shutil
from pathlib import Path

import anyio
import pytest

from engine.dataset import DatasetError, DatasetPlan, LoraSettings, Part, build, load_model, samples_of, trainer_for, write_dataset
from engine.serving import vllm_model_folder
from puzzles import get_game
from tests.helpers import skip_without, skip_without_modules

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

MODEL = Path(os.environ.get("ASYMGAMES_HF_MODEL") or str(vllm_model_folder("smollm2")))


@pytest.fixture
def model_dir():
    skip_without_modules("torch", "transformers", "peft", "trl", "datasets")
    skip_without(None if (MODEL / "config.json").is_file() else
                 f"no Hugging Face model folder at {MODEL}: asymgames setup-vllm --model-only (or set ASYMGAMES_HF_MODEL)")
    return MODEL


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_CACHE", str(tmp_path / "cache"))
    plan = DatasetPlan(game="asympuzl", parts=[Part(get_game("asympuzl").rules.Params(), 2)], holdout=2)  # short chats
    write_dataset(tmp_path / "d", plan, anyio.run(build, plan))
    return tmp_path / "d"


def test_a_few_lora_steps_on_a_tiny_slice_lower_its_loss(model_dir, dataset, tmp_path):
    settings = LoraSettings(batch=4, per_device=4, learning_rate=2e-3, steps=3, limit=4, max_length=1024)
    trainer = trainer_for(model_dir, dataset, tmp_path / "adapter", settings, eval_samples=True)
    before = trainer.evaluate()["eval_loss"]
    trainer.train()
    after = trainer.evaluate()["eval_loss"]
    assert after < before
    trainer.save_model(str(tmp_path / "adapter"))
    config = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    assert config["r"] == settings.rank and (tmp_path / "adapter" / "adapter_model.safetensors").is_file()


def test_the_loss_is_on_the_assistants_reply_only(model_dir, dataset, tmp_path):
    settings = LoraSettings(batch=1, per_device=1, steps=1, limit=2, max_length=4096)
    trainer = trainer_for(model_dir, dataset, tmp_path / "adapter", settings)
    sample = samples_of(dataset, limit=2)[1]
    batch = trainer.data_collator([trainer.train_dataset[1]])
    ids, labels = batch["input_ids"][0].tolist(), batch["labels"][0].tolist()
    learned = [i for i, label in zip(ids, labels) if label != -100]
    assert labels == [label if label == -100 else i for i, label in zip(ids, labels)]  # a label is its token or -100
    tokenizer = trainer.processing_class
    reply = sample["completion"][0]["content"]
    text = tokenizer.decode(learned)
    assert text.startswith(reply) and len(text) < len(reply) + 20  # the reply and the turn's end, nothing of the prompt
    assert labels[: len(ids) - len(learned)] == [-100] * (len(ids) - len(learned))  # every prompt token, system to last user turn


def test_a_model_folder_without_a_chat_template_is_refused(model_dir, tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    (copy / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((copy / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (copy / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(DatasetError, match="has no chat template"):
        load_model(copy)
