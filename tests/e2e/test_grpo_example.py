"""The worked GRPO example (examples/grpo_env.py): TRL's own GRPOTrainer updates SmolLM2-135M on one
seat of a game that ``asymgames serve-env`` serves, and logs a loss and a reward at each step.

The server runs with this interpreter (the openenv extra); the trainer with ``$ASYMGAMES_TRAIN_PYTHON``
(an environment with the train extra), else this one. The model is SmolLM2-135M as a Hugging Face
folder: ``$ASYMGAMES_HF_MODEL``, else ``~/.cache/asymgames/models/smollm2-hf``. Skipped without any of them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.serving import vllm_model_folder

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MODEL = Path(os.environ.get("ASYMGAMES_HF_MODEL") or str(vllm_model_folder("smollm2")))
TRAIN_PYTHON = os.environ.get("ASYMGAMES_TRAIN_PYTHON") or sys.executable


def test_two_grpo_steps_log_a_loss_and_a_reward(tmp_path):
    pytest.importorskip("openenv.core.env_server", reason="the openenv extra is not installed (pip install -e '.[openenv]')")
    has = subprocess.run([TRAIN_PYTHON, "-c", "import torch, transformers, peft, trl, datasets, aiohttp"], capture_output=True)
    if has.returncode != 0:
        pytest.skip(f"{TRAIN_PYTHON} lacks the train extra (pip install -e '.[train]', or set ASYMGAMES_TRAIN_PYTHON)")
    if not (MODEL / "config.json").is_file():
        pytest.skip(f"no Hugging Face model folder at {MODEL} (set ASYMGAMES_HF_MODEL)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "asymgames", "serve-env", "--game", "asympuzl", "--seat", "alice", "--agent", "bob=share_everything",
         "--port", "0", "--out", str(tmp_path / "env")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("Serving asympuzl"), server.stderr.read()
        url = line.split(" on ")[1].split()[0]
        done = subprocess.run(
            [TRAIN_PYTHON, str(ROOT / "examples" / "grpo_env.py"), "--url", url, "--model", str(MODEL), "--steps", "2",
             "--seeds", "2", "--generations", "2", "--max-completion-length", "24", "--out", str(tmp_path / "grpo")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"step"')]  # the example's own lines
    steps = [log for log in logs if "loss" in log]
    assert [log["step"] for log in steps] == [1, 2]
    assert all(isinstance(log["loss"], float) and isinstance(log["reward"], float) for log in steps)
    assert all("rewards/game_reward/mean" in log and "rewards/readable/mean" in log for log in steps)
    records = [json.loads(r) for r in (tmp_path / "env" / "results.jsonl").read_text().splitlines()]
    assert len(records) >= 2 + 2  # the prompts' episodes, and one per distinct reply scored
    assert {r["spec"]["agents"]["alice"] for r in records} == {"env:client"}
