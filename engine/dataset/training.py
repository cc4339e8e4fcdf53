"""A LoRA adapter trained on a dataset, with TRL's ``SFTTrainer`` over PEFT and transformers (the
``train`` extra: ``pip install -e '.[train]'``; torch's CPU build where there is no GPU). The
defaults are the Einstein paper's (App. D.1): rank 32, a global batch of 128, learning rate 2e-4 on
a cosine schedule, one epoch. Any Hugging Face model folder with a chat template trains; the
samples are the dataset's ``train.jsonl`` (or ``traced.jsonl``), each the chat before the
assistant's reply as the prompt and the reply as the completion: the loss is on the reply only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from engine.dataset.files import TRAIN, read_dataset
from engine.dataset.samples import DatasetError


class LoraSettings(NamedTuple):
    """The training's settings; the defaults are the paper's. ``batch``: the global batch, reached as
    ``per_device`` samples a step times gradient accumulation; ``steps`` caps the optimiser steps
    (None: one epoch); ``max_length``: tokens a sample is cut to."""

    rank: int = 32
    alpha: int = 32
    batch: int = 128
    per_device: int = 8
    learning_rate: float = 2e-4
    schedule: str = "cosine"
    epochs: float = 1.0
    steps: int | None = None
    max_length: int = 4096
    seed: int = 0
    limit: int | None = None  # the first samples only


def _libraries() -> Any:
    try:
        import datasets
        import peft
        import transformers
        import trl
    except ImportError as exc:
        raise DatasetError(f"training needs the train extra (pip install -e '.[train]'): {exc}") from None
    return datasets, peft, transformers, trl


def load_model(model_dir: Path) -> tuple[Any, Any]:
    """(model, tokenizer) of a Hugging Face model folder; DatasetError if it has no chat template."""
    _, _, transformers, _ = _libraries()
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise DatasetError(f"{model_dir} is not a Hugging Face model folder (no config.json)")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model_dir))
    if not tokenizer.chat_template:
        raise DatasetError(f"{model_dir} has no chat template: the samples are chats (give a model folder whose tokenizer has one)")
    # On a CPU in float32: bfloat16 weights run many times slower there without the CPU's support.
    model = transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype="auto" if _has_gpu() else "float32")
    return model, tokenizer


def samples_of(folder: Path, name: str = TRAIN, limit: int | None = None) -> Any:
    """The dataset's samples (checked as ``read_dataset`` checks) as a Hugging Face ``Dataset`` in TRL's
    conversational prompt-completion form: ``prompt`` the messages before the assistant's reply,
    ``completion`` the reply, so that the loss is on the reply's tokens only."""
    datasets, _, _, _ = _libraries()
    _, samples, _ = read_dataset(folder, name)
    rows = [{"prompt": s.messages[:-1], "completion": s.messages[-1:]} for s in samples[:limit]]
    return datasets.Dataset.from_list(rows)


def trainer_for(model_dir: Path, folder: Path, out: Path, settings: LoraSettings = LoraSettings(),
                name: str = TRAIN, eval_samples: bool = False) -> Any:
    """TRL's ``SFTTrainer``, ready to ``train()``: a LoRA adapter on the model in ``model_dir``, on the
    samples of the dataset in ``folder``, written to ``out``. ``eval_samples``: evaluate on the same
    samples (a loss before and after)."""
    _, peft, _, trl = _libraries()
    model, tokenizer = load_model(model_dir)
    train = samples_of(folder, name, settings.limit)
    accumulation = max(1, settings.batch // settings.per_device)
    config = trl.SFTConfig(
        output_dir=str(out), per_device_train_batch_size=settings.per_device, per_device_eval_batch_size=settings.per_device,
        gradient_accumulation_steps=accumulation, learning_rate=settings.learning_rate,
        lr_scheduler_type=settings.schedule, num_train_epochs=settings.epochs, max_steps=settings.steps or -1,
        max_length=settings.max_length, completion_only_loss=True, seed=settings.seed, logging_steps=1,
        save_strategy="no", report_to=[],
        use_cpu=not _has_gpu(),
    )
    lora = peft.LoraConfig(r=settings.rank, lora_alpha=settings.alpha, target_modules="all-linear", task_type="CAUSAL_LM")
    return trl.SFTTrainer(
        model=model, args=config, train_dataset=train, eval_dataset=train if eval_samples else None,
        processing_class=tokenizer, peft_config=lora,
    )


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def train_lora(model_dir: Path, folder: Path, out: Path, settings: LoraSettings = LoraSettings(), name: str = TRAIN) -> dict[str, Any]:
    """Train and save the adapter to ``out`` (with its tokenizer); the training's figures."""
    out = Path(out)
    if out.exists():
        raise DatasetError(f"{out} exists; give a new folder")
    trainer = trainer_for(model_dir, folder, out, settings, name)
    result = trainer.train()
    trainer.save_model(str(out))
    return {"steps": result.global_step, "loss": result.training_loss, **result.metrics}


__all__ = ["LoraSettings", "load_model", "samples_of", "train_lora", "trainer_for"]
