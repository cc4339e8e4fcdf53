"""GRPO on one seat of a game with TRL's own GRPOTrainer, the game served by ``asymgames serve-env``.

Each training prompt is the seat's first prompt in the game of one seed, as the server gives it
(the chat messages a model in the seat is sent). TRL samples a group of replies to it; the reward
functions play each reply once as the seat's turn in an episode of the same seed (WebSocket, OpenEnv's
protocol) and return the turn's reward, the change of the seat's progress the game measures, and
whether the game could read the reply; TRL sums them, computes the group's advantages and updates
the model. The loss and the rewards are logged, one
JSON line per logging step.

Start the server (the openenv extra), then train (the train extra; a CPU is enough for a few steps
of SmolLM2-135M):

    asymgames serve-env --game asympuzl --seat alice --agent bob=share_everything --port 8010 &
    python examples/grpo_env.py --url http://127.0.0.1:8010 --model ~/.cache/asymgames/models/smollm2-hf --steps 2

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


class Played:
    """Each completion played once as the seat's first turn on its row's seed; two TRL reward
    functions read the step: ``game_reward`` (the turn's reward, the game's) and ``readable`` (1 when
    the game could read the reply, a format reward)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: dict[tuple[int, str], dict[str, Any]] = {}

    async def steps(self, completions: list[Any], seed: list[int]) -> list[dict[str, Any]]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        keys = list(zip(seed, texts))
        new = [key for key in dict.fromkeys(keys) if key not in self.seen]
        async with aiohttp.ClientSession() as client:
            shown = await asyncio.gather(*(_episode(client, self.url, s, text) for s, text in new))
        self.seen.update(zip(new, shown))
        return [self.seen[key] for key in keys]

    def functions(self) -> list[Any]:
        async def game_reward(completions: list[Any], seed: list[int], **_: Any) -> list[float]:
            return [float(s["reward"] or 0.0) for s in await self.steps(completions, seed)]

        async def readable(completions: list[Any], seed: list[int], **_: Any) -> list[float]:
            return [0.0 if s["observation"]["format_error"] else 1.0 for s in await self.steps(completions, seed)]

        return [game_reward, readable]


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
        model=model, reward_funcs=Played(args.url).functions(), args=config, train_dataset=dataset, processing_class=tokenizer,
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"),
        callbacks=[PrintLogs()],
    )
    trainer.train()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
