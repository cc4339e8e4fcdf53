"""The worked GRPO example (examples/grpo_env.py): TRL's own GRPOTrainer updates SmolLM2-135M on one
seat of a game that ``asymgames serve-env`` serves, on whole episodes (TRL's ``rollout_func``), and
logs the loss, the gradient norm and the rewards at each step; some step's gradient is not zero.

The server runs with this interpreter (the openenv extra); the trainer with ``$ASYMGAMES_TRAIN_PYTHON``
(an environment with the train extra), else this one. The model is SmolLM2-135M as a Hugging Face
folder: ``$ASYMGAMES_HF_MODEL``, else the one ``asymgames setup-vllm`` makes. Skipped without any of them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.serving import vllm_model_folder

pytestmark = [pytest.mark.real_model, pytest.mark.slow, pytest.mark.grpo]

ROOT = Path(__file__).resolve().parents[2]
MODEL = Path(os.environ.get("ASYMGAMES_HF_MODEL") or str(vllm_model_folder("smollm2")))
TRAIN_PYTHON = os.environ.get("ASYMGAMES_TRAIN_PYTHON") or sys.executable
STEPS, SEEDS, GENERATIONS = 2, 1, 4


def test_grpo_on_whole_episodes_logs_a_loss_the_rewards_and_a_gradient(tmp_path):
    pytest.importorskip("openenv.core.env_server", reason="the openenv extra is not installed (pip install -e '.[openenv]')")
    has = subprocess.run([TRAIN_PYTHON, "-c", "import torch, transformers, peft, trl, datasets, aiohttp"], capture_output=True)
    if has.returncode != 0:
        pytest.skip(f"{TRAIN_PYTHON} lacks the train extra (pip install -e '.[train]', or set ASYMGAMES_TRAIN_PYTHON)")
    if not (MODEL / "config.json").is_file():
        pytest.skip(f"no Hugging Face model folder at {MODEL} (asymgames setup-vllm makes it, or set ASYMGAMES_HF_MODEL)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRL_EXPERIMENTAL_SILENCE": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "asymgames", "serve-env", "--game", "asympuzl", "--size", "3", "--max-turns", "2", "--seat", "alice",
         "--agent", "bob=share_everything", "--port", "0", "--out", str(tmp_path / "env")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("Serving asympuzl"), server.stderr.read()
        url = line.split(" on ")[1].split()[0]
        done = subprocess.run(
            [TRAIN_PYTHON, str(ROOT / "examples" / "grpo_env.py"), "--url", url, "--model", str(MODEL), "--steps", str(STEPS),
             "--seeds", str(SEEDS), "--generations", str(GENERATIONS), "--max-completion-length", "32", "--out", str(tmp_path / "grpo")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"step"')]  # the example's own lines
    steps = [log for log in logs if "loss" in log]
    assert [log["step"] for log in steps] == list(range(1, STEPS + 1))
    for log in steps:
        rewards = [f"rewards/{name}/mean" for name in ("game_reward", "readable", "brief")]
        assert all(isinstance(log[key], float) for key in ("loss", "grad_norm", "reward", *rewards))
    assert any(log["grad_norm"] > 0 for log in steps), steps  # the group's rewards differed: the update moved the adapter
    records = [json.loads(r) for r in (tmp_path / "env" / "results.jsonl").read_text().splitlines()]
    assert {r["spec"]["agents"]["alice"] for r in records} == {"env:client"}
    played = [r for r in records if r.get("error") is None]  # the first prompts' episodes end where they stand
    assert len(played) == STEPS * SEEDS * GENERATIONS and all(r["turn_log"] for r in played)  # every episode played to its end
