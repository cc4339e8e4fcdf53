"""Writes tests/data/real_model/: what a real language model wrote to every game's prompts, for the
ordinary test suite (which needs no server) to read again.

    .venv/bin/asymgames setup-llamacpp && .venv/bin/python tests/e2e/make_real_corpus.py

SmolLM2-135M-Instruct plays every game through llama.cpp's server (started by the engine), with and
without structured output, a few small games each, keeping full transcripts. From them:

- ``corpus.jsonl``: one line per model call: the game, whether the reply was structured, the prompt
  (system and user) and the raw reply, and how the engine read it then (the format error, if any);
  the first line names the model, the server's version and the date;
- ``run/``: one of the runs as it was written (config, results, transcripts), for the viewer and
  the replay.

Run it again only to record a new corpus (another model or server), and say so in the commit.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.serving import find_executable  # noqa: E402
from engine.serving.install import LLAMA_CPP_SDIST, MODEL_FILE, MODEL_WHEEL, bundled_model  # noqa: E402
from puzzles import GAMES  # noqa: E402
from runners.concurrent import main as run_main  # noqa: E402
from tests.helpers import transcript_lines  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "real_model"
SMALL = {"asympuzl": ["--size", "3"], "chain": ["--size", "3"], "tsp": [], "einstein": ["--blocks", "4"]}
GAMES_EACH = 6
KEPT_RUN = ("asympuzl", True)


def server_version() -> str:
    done = subprocess.run([str(find_executable("llamacpp")), "--version"], capture_output=True, text=True)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return next((line for line in lines if line.startswith("version")), lines[-1] if lines else "unknown")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="real-corpus-"))
    lines = [json.dumps({
        "model": MODEL_FILE, "weights": f"{MODEL_WHEEL[0]}=={MODEL_WHEEL[1]}", "server": "llama.cpp llama-server",
        "server_version": server_version(), "server_source": f"{LLAMA_CPP_SDIST[0]}=={LLAMA_CPP_SDIST[1]} (vendored llama.cpp)",
        "recorded": date.today().isoformat(), "temperature": 0.0,
    })]
    for name in GAMES:
        for structured in (True, False):
            run = work / f"{name}-{'structured' if structured else 'plain'}"
            code = run_main(["--game", name, "--games", str(2 if name == "tsp" else GAMES_EACH), *SMALL[name], "--max-turns", "3", "--max-tokens", "256", "--model", "llamacpp:smollm2",
                             "--serve-slots", "4", "--concurrency", "4", "--transcripts", "--no-dashboard", "--out", str(run),
                             *(["--structured"] if structured else [])])
            if code != 0:
                sys.exit(f"the run {run} ended with status {code}")
            for transcript in transcript_lines(run):
                for turn in transcript["turns"]:
                    if turn.get("prompt") is None or turn.get("reply") is None:
                        continue
                    lines.append(json.dumps({
                        "game": name, "structured": structured, "game_id": transcript["game_id"], "turn": turn["turn"],
                        "role": turn["role"], "system": turn["prompt"]["system"], "user": turn["prompt"]["user"],
                        "reply": turn["reply"], "format_error": turn.get("format_error"),
                    }, ensure_ascii=False))
            if (name, structured) == KEPT_RUN:
                kept = OUT / "run"
                shutil.rmtree(kept, ignore_errors=True)
                kept.mkdir()
                for file in ("config.json", "models.json", "results.jsonl", "transcripts.jsonl.gz", "summary.json"):
                    shutil.copy2(run / file, kept / file)
    (OUT / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines) - 1} replies in {OUT / 'corpus.jsonl'}; a run in {OUT / 'run'}")
    assert bundled_model("smollm2") is not None


if __name__ == "__main__":
    main()
