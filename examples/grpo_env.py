"""GRPO on one seat of a game with TRL's own GRPOTrainer, the game served by ``asymgames serve-env``.

Each training prompt is the seat's first prompt in the game of one seed, as the server gives it
(the chat messages a model in the seat is sent). TRL samples a group of replies to it; the reward
function plays each reply as the seat's turn in an episode of the same seed (WebSocket, OpenEnv's
protocol) and returns the turn's reward, the change of the seat's progress the game measures; TRL
computes the group's advantages and updates the model. The loss and the rewards are logged, one
JSON line per logging step.

Start the server (the openenv extra), then train (the train extra; a CPU is enough for a few steps
of SmolLM2-135M):

    asymgames serve-env --game asympuzl --seat alice --agent bob=share_everything --port 8010 &
    python examples/grpo_env.py --url http://127.0.0.1:8010 --model ~/.cache/asymgames/smollm2-hf --steps 2

The episodes the prompts were read from, and each one a reward played, are recorded in the server's
run directory (they end after their first turn, as a client that leaves: ``client_left``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp


async def _episode(client: aiohttp.ClientSession, url: str, seed: int, reply: str | None) -> dict[str, Any]:
    """Reset an episode on ``seed``; with ``reply``, play it as the seat's first turn. The last observation."""
    async with client.ws_connect(url.rstrip("/") + "/ws", max_msg_size=0) as ws:
        await ws.send_json({"type": "reset", "data": {"seed": seed}})
        shown = await ws.receive_json()
        if reply is not None and shown["type"] == "observation":
            await ws.send_json({"type": "step", "data": {"reply": reply}})
            shown = await ws.receive_json()
        if shown["type"] != "observation":
            raise RuntimeError(f"the environment server refused: {shown['data']}")
        return shown["data"]


async def first_prompts(url: str, seeds: list[int]) -> list[list[dict[str, str]]]:
    """The seat's first prompt in the game of each seed, as chat messages."""
    async with aiohttp.ClientSession() as client:
        shown = await asyncio.gather(*(_episode(client, url, seed, None) for seed in seeds))
    return [s["observation"]["messages"] for s in shown]


def game_reward(url: str):
    """A TRL reward function: each completion played as the seat's first turn on its row's seed."""

    async def game_reward(completions: list[Any], seed: list[int], **_: Any) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        async with aiohttp.ClientSession() as client:
            shown = await asyncio.gather(*(_episode(client, url, s, text) for s, text in zip(seed, texts)))
        return [float(s["reward"] or 0.0) for s in shown]

    return game_reward


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="GRPO on one seat of a game served by asymgames serve-env (TRL's GRPOTrainer).")
    p.add_argument("--url", required=True, help="the environment server, e.g. http://127.0.0.1:8010")
    p.add_argument("--model", type=Path, required=True, help="a Hugging Face model folder with a chat template")
    p.add_argument("--out", type=Path, default=Path("runs/grpo"), help="the trainer's output folder")
    p.add_argument("--seeds", type=int, default=4, help="games (seeds) whose first prompt is a training prompt")
    p.add_argument("--generations", type=int, default=4, help="replies sampled per prompt (the GRPO group)")
    p.add_argument("--steps", type=int, default=2, help="optimiser steps")
    p.add_argument("--max-completion-length", type=int, default=48, help="tokens per reply")
    args = p.parse_args(argv)

    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    seeds = list(range(args.seeds))
    prompts = asyncio.run(first_prompts(args.url, seeds))
    dataset = Dataset.from_dict({"prompt": prompts, "seed": seeds})

    class PrintLogs(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
            print(json.dumps({"step": state.global_step, **(logs or {})}), flush=True)

    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.steps, per_device_train_batch_size=args.generations,
        num_generations=args.generations, max_completion_length=args.max_completion_length, learning_rate=1e-4,
        logging_steps=1, save_strategy="no", report_to=[], use_cpu=True, bf16=False, temperature=1.0, seed=0,
    )
    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(args.model)
    trainer = GRPOTrainer(
        model=model, reward_funcs=game_reward(args.url), args=config, train_dataset=dataset, processing_class=tokenizer,
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"),
        callbacks=[PrintLogs()],
    )
    trainer.train()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
