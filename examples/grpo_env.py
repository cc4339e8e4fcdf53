"""GRPO on one seat of a game with TRL's own GRPOTrainer, whole episodes played against ``asymgames serve-env``.

Each training prompt is the seat's first prompt in the game of one seed. TRL's ``rollout_func`` plays a
whole episode for each of the group's samples: the model writes the seat's reply, the server (OpenEnv's
protocol, over its WebSocket) plays it and the other seats, and shows the seat's next prompt, whose user
message follows the reply in the chat, until the game ends. The episode is one sequence: the first
prompt, then each reply (trained) and the server's message after it (masked out of the loss,
``env_mask``). Its rewards: ``game_reward``, the game's, the sum of the turns' rewards (the share of
the way the seat came); ``readable``, the share of its replies the game could read (a format reward);
``brief``, the share of the token limit its replies left unused (a reply the limit cuts cannot be
read: the game's reply ends with its JSON object). TRL computes the group's advantages and updates the model; the loss, the gradient norm and
the rewards are printed, one JSON line per step.

Start the server (the openenv extra), then train (the train extra; a CPU is enough for a few steps
of SmolLM2-135M):

    asymgames serve-env --game asympuzl --size 3 --max-turns 3 --seat alice --agent bob=share_everything --port 8010 &
    python examples/grpo_env.py --url http://127.0.0.1:8010 --model ~/.cache/asymgames/models/smollm2-hf --steps 2

Every episode is recorded in the server's run directory, as a run's games are.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp

Chat = list[dict[str, str]]


async def first_prompts(url: str, seeds: list[int]) -> list[Chat]:
    """The seat's first prompt in the game of each seed (the episodes end where they stand)."""
    async def one(client: aiohttp.ClientSession, seed: int) -> Chat:
        async with client.ws_connect(url.rstrip("/") + "/ws", max_msg_size=0) as ws:
            await ws.send_json({"type": "reset", "data": {"seed": seed}})
            return (await ws.receive_json())["data"]["observation"]["messages"]

    async with aiohttp.ClientSession() as client:
        return list(await asyncio.gather(*(one(client, seed) for seed in seeds)))


class Episodes:
    """TRL's ``rollout_func``: one whole episode per prompt, the trainer's model writing every turn."""

    def __init__(self, url: str, seeds: dict[str, int]) -> None:
        self.url, self.seeds = url.rstrip("/"), seeds  # a first prompt (as JSON) -> its seed

    def __call__(self, prompts: list[Chat], trainer: Any) -> dict[str, list[Any]]:
        return asyncio.run(self.play([self.seeds[json.dumps(p)] for p in prompts], trainer))

    async def play(self, seeds: list[int], trainer: Any) -> dict[str, list[Any]]:
        tok = trainer.processing_class
        async with aiohttp.ClientSession() as client:
            sockets = [await client.ws_connect(self.url + "/ws", max_msg_size=0) for _ in seeds]
            shown = [await ask(ws, "reset", {"seed": seed}) for ws, seed in zip(sockets, seeds)]
            prompt_ids = [tok.apply_chat_template(s["observation"]["messages"], add_generation_prompt=True, return_dict=False) for s in shown]
            out = {"prompt_ids": prompt_ids, "completion_ids": [[] for _ in seeds], "logprobs": [[] for _ in seeds],
                   "env_mask": [[] for _ in seeds], "game_reward": [0.0] * len(seeds), "readable": [0.0] * len(seeds),
                   "brief": [0.0] * len(seeds)}
            turns = [0] * len(seeds)
            while playing := [i for i, s in enumerate(shown) if not s["done"]]:
                replies = generate(trainer, [prompt_ids[i] + out["completion_ids"][i] for i in playing])
                steps = await asyncio.gather(*(ask(sockets[i], "step", {"reply": tok.decode(ids, skip_special_tokens=True)})
                                               for i, (ids, _) in zip(playing, replies)))
                for i, (ids, logprobs), step in zip(playing, replies, steps):
                    after = [] if step["done"] else between(tok, step["observation"]["messages"][-1], ended=ids[-1:] == [tok.eos_token_id])
                    out["completion_ids"][i] += ids + after
                    out["logprobs"][i] += logprobs + [0.0] * len(after)
                    out["env_mask"][i] += [1] * len(ids) + [0] * len(after)
                    out["game_reward"][i] += step["reward"] or 0.0
                    out["readable"][i] += step["observation"]["format_error"] is None
                    out["brief"][i] += 1 - len(ids) / trainer.generation_config.max_new_tokens
                    turns[i] += 1
                    shown[i] = step
            for ws in sockets:
                await ws.close()
        for key in ("readable", "brief"):
            out[key] = [r / max(t, 1) for r, t in zip(out[key], turns)]
        return out


async def ask(ws: aiohttp.ClientWebSocketResponse, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    await ws.send_json({"type": kind, "data": data})
    got = await ws.receive_json()
    if got["type"] != "observation":
        raise RuntimeError(f"the environment server refused: {got['data']}")
    return got["data"]


def generate(trainer: Any, contexts: list[list[int]]) -> list[tuple[list[int], list[float]]]:
    """A reply to each context (token ids) from the trainer's model, with its tokens' log-probabilities."""
    import torch

    tok, width = trainer.processing_class, max(map(len, contexts))
    ids = torch.tensor([[tok.pad_token_id] * (width - len(c)) + c for c in contexts])
    mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
    with torch.no_grad():
        out = trainer.model.generate(input_ids=ids, attention_mask=mask, generation_config=trainer.generation_config,
                                     return_dict_in_generate=True, output_scores=True)
    logprobs = trainer.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
    replies = []
    for row, lp in zip(out.sequences[:, width:].tolist(), logprobs.tolist()):
        n = row.index(tok.eos_token_id) + 1 if tok.eos_token_id in row else len(row)  # up to its end of turn
        replies.append((row[:n], lp[:n]))
    return replies


def between(tok: Any, user: dict[str, str], *, ended: bool) -> list[int]:
    """The tokens that follow a reply in the chat up to the next reply: the end of the reply's turn
    where the model did not write it, the server's user message, the next assistant turn's start."""
    shown = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    before = tok.apply_chat_template(shown, return_dict=False)
    after = tok.apply_chat_template([*shown, user], add_generation_prompt=True, return_dict=False)
    end = len(before) - before[::-1].index(tok.eos_token_id)  # just past the reply's end of turn
    assert after[:end] == before[:end]
    return ([] if ended else [tok.eos_token_id]) + after[end:]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="GRPO on one seat of a game served by asymgames serve-env (TRL's GRPOTrainer).")
    p.add_argument("--url", required=True, help="the environment server, e.g. http://127.0.0.1:8010")
    p.add_argument("--model", type=Path, required=True, help="a Hugging Face model folder with a chat template")
    p.add_argument("--out", type=Path, default=Path("runs/grpo"), help="the trainer's output folder")
    p.add_argument("--seeds", type=int, default=2, help="games (seeds) whose first prompt is a training prompt")
    p.add_argument("--generations", type=int, default=4, help="episodes played per prompt (the GRPO group)")
    p.add_argument("--steps", type=int, default=2, help="optimiser steps")
    p.add_argument("--max-completion-length", type=int, default=48, help="tokens per reply")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (above 0: a group's episodes differ)")
    args = p.parse_args(argv)

    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    seeds = list(range(args.seeds))
    prompts = asyncio.run(first_prompts(args.url, seeds))
    dataset = Dataset.from_dict({"prompt": prompts})

    class PrintLogs(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
            print(json.dumps({"step": state.global_step, **(logs or {})}), flush=True)

    def game_reward(completions: list[Any], game_reward: list[float], **_: Any) -> list[float]:
        return game_reward

    def readable(completions: list[Any], readable: list[float], **_: Any) -> list[float]:
        return readable

    def brief(completions: list[Any], brief: list[float], **_: Any) -> list[float]:
        return brief

    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.steps, per_device_train_batch_size=args.seeds * args.generations,
        num_generations=args.generations, max_completion_length=args.max_completion_length, learning_rate=1e-4,
        temperature=args.temperature, logging_steps=1, save_strategy="no", report_to=[], use_cpu=True, bf16=False, seed=0,
    )
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(args.model), reward_funcs=[game_reward, readable, brief], args=config,
        train_dataset=dataset, processing_class=AutoTokenizer.from_pretrained(args.model, padding_side="left"),
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"),
        rollout_func=Episodes(args.url, {json.dumps(p): s for p, s in zip(prompts, seeds)}), callbacks=[PrintLogs()],
    )
    trainer.train()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
