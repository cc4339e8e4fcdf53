"""Which client speaks to which provider: the lean client for vLLM unless asked otherwise, the SDKs for
OpenAI and Anthropic; ``--client PROVIDER=lean|sdk`` changes it, is saved with the run and is kept or
replaced on a resume like the other connection flags."""

from __future__ import annotations

import argparse
import json

import pytest

from engine.backends import BackendSettings, ModelHub
from engine.backends.lean import LeanBackend
from engine.backends.sdk import OpenAIBackend, VLLMBackend
from runners.flags.models import add_model_arguments, settings_from_args
from runners.concurrent import main as run_main

from tests.e2e.test_model_runs import server_process, server_process_on
from tests.engine.backends.helpers import KEYS


def _parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_model_arguments(parser)
    return parser.parse_args(list(flags))


async def test_vllm_is_lean_and_openai_goes_through_its_sdk_unless_asked():
    urls = {"openai": "http://127.0.0.1:9/v1", "vllm": "http://127.0.0.1:9/v1"}
    hub = ModelHub(BackendSettings(urls=urls), environ=KEYS)
    assert type(hub.provider("vllm:m")) is LeanBackend and type(hub.provider("openai:m")) is OpenAIBackend
    swapped = ModelHub(BackendSettings(urls=urls, clients={"vllm": "sdk", "openai": "lean"}), environ=KEYS)
    assert type(swapped.provider("vllm:m")) is VLLMBackend
    lean = swapped.provider("openai:m")
    assert type(lean) is LeanBackend and lean.provider == "openai" and "max_completion_tokens" in lean.fixed
    with pytest.raises(ValueError, match="OpenAI-compatible API only"):
        ModelHub(BackendSettings(clients={"anthropic": "lean"}), environ=KEYS).check("anthropic:m")


def test_the_flag_sets_clients_and_a_resume_keeps_them_or_refuses_another():
    settings = settings_from_args(_parse("--client", "openai=lean", "--client", "VLLM=sdk"))
    assert settings.clients == {"openai": "lean", "vllm": "sdk"}
    assert settings_from_args(_parse(), settings).clients == settings.clients
    assert settings_from_args(_parse("--client", "openai=lean"), settings).clients == settings.clients  # as saved
    with pytest.raises(ValueError, match="argument --client: the run being resumed was saved with other"):
        settings_from_args(_parse("--client", "openai=sdk"), settings)
    for bad in ("anthropic=lean", "openai=fast"):
        with pytest.raises(argparse.ArgumentError):
            _parse("--client", bad)
    with pytest.raises(ValueError, match="argument --client: unknown provider 'cohere'"):  # known once endpoints are read
        settings_from_args(_parse("--client", "cohere=sdk"))


def test_a_run_with_the_lean_client_saves_the_choice_and_a_resume_uses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["OPENAI_API_KEY"])
    run = tmp_path / "run"
    flags = ["--alice", "openai:share_everything", "--bob", "openai:one_piece", "--no-dashboard"]
    with server_process("--fault", "500=0.5", "--seed", "1") as url:
        code = run_main(["--games", "6", *flags, "--openai-url", url + "/v1", "--client", "openai=lean",
                         "--max-attempts", "1", "--out", str(run)])
    assert code == 3  # games lost to the injected 500s, through the lean client
    assert json.loads((run / "models.json").read_text())["clients"] == {"openai": "lean"}
    with server_process_on(url.rsplit(":", 1)[1]):  # mended, where it was: a run keeps its URL
        assert run_main([*flags, "--resume", str(run)]) == 0
    assert json.loads((run / "models.json").read_text())["clients"] == {"openai": "lean"}
    processes = json.loads((run / "usage.json").read_text())["processes"]
    assert [p["models"]["openai:share_everything"]["client"] for p in processes] == ["lean", "lean"]
