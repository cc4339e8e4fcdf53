"""Named endpoints: a base URL, the variable of its key, the kind of API and limits, given in a file
or on the command line and used as providers (``NAME:MODEL``); several endpoints of one kind in one run,
each its own server; saved with the run (never a key) so that a resume reaches the same servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import Grid
from engine.backends import BackendSettings, ModelHub
from engine.backends.endpoints import Endpoint, built_in, endpoint_entry, read_endpoints
from runners.args import key_value
from engine.backends.lean import LeanBackend
from engine.backends.sdk import AnthropicBackend, VLLMBackend
from runners.concurrent import main as run_main

from tests.e2e.test_model_runs import CANARY, server_process
from tests.engine.backends.helpers import FAST, fake_server, play

ONE_KEY, TWO_KEY = "sk-one-test-51a0c3", "sk-two-test-8e44f1"


def test_the_built_in_entries_name_the_common_services_and_no_key():
    table = built_in()
    assert {"openrouter", "together", "gemini", "litellm", "local_vllm", "llamacpp"} <= set(table)
    assert table["openrouter"] == Endpoint(kind="openai", url="https://openrouter.ai/api/v1", key_env="OPENROUTER_API_KEY")
    assert table["gemini"].key_env == "GEMINI_API_KEY" and table["local_vllm"].kind == "vllm"


@pytest.mark.parametrize("text, message", [
    ("openai=openai,http://x/v1", "engine's own endpoint"),
    ("mine=grpc,http://x/v1", "unknown kind 'grpc'"),
    ("mine=openai", "expected NAME=KIND,URL[,KEY_ENV]"),
    ("my.pkg=openai,http://x/v1", "lower-case word"),
    ("mine=openai,x.example/v1", "url must start with http"),
    ("mine=openai,http://x/v1,not a variable", "key_env must name an environment variable"),
])
def test_a_bad_endpoint_is_refused_with_its_reason(text, message):
    with pytest.raises(ValueError) as error:
        endpoint_entry(*key_value(text, "NAME=KIND,URL[,KEY_ENV]"))
    assert message in str(error.value)


def test_an_endpoint_file_holds_tables_and_never_a_key(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text('[mine]\nkind = "vllm"\nurl = "http://10.0.0.2:8000/v1"\nrpm = 600\nclient = "sdk"\n')
    assert read_endpoints(good) == {"mine": Endpoint(kind="vllm", url="http://10.0.0.2:8000/v1", rpm=600, client="sdk")}
    keyed = tmp_path / "keyed.toml"
    keyed.write_text('[mine]\nurl = "http://x/v1"\napi_key = "sk-123"\n')
    with pytest.raises(ValueError, match="keys are read from the environment only"):
        read_endpoints(keyed)
    odd = tmp_path / "odd.toml"
    odd.write_text('[mine]\nurl = "http://x/v1"\ncolour = 3\n')
    with pytest.raises(ValueError, match="odd.toml, endpoint 'mine'"):
        read_endpoints(odd)


def test_each_kind_gets_its_backend_under_the_endpoints_name():
    endpoints = {
        "proxy": Endpoint(kind="openai", url="http://127.0.0.1:9/v1", key_env="PROXY_KEY", rpm=90),
        "claude": Endpoint(kind="anthropic", url="http://127.0.0.1:9", key_env="CLAUDE_KEY"),
        "gpu": Endpoint(kind="vllm", url="http://127.0.0.1:9/v1"),
        "fast": Endpoint(kind="openai", url="http://127.0.0.1:9/v1", client="lean"),
    }
    hub = ModelHub(BackendSettings(endpoints=endpoints), environ={"PROXY_KEY": "k1", "CLAUDE_KEY": "k2"})
    for name in ("proxy:m", "claude:m", "gpu:m", "fast:m"):
        hub.check(name)
    proxy, claude, gpu, fast = (hub.provider(f"{n}:m") for n in ("proxy", "claude", "gpu", "fast"))
    assert type(proxy) is VLLMBackend and "max_tokens" in proxy.fixed  # what OpenAI-compatible servers take
    assert type(claude) is AnthropicBackend and type(gpu) is LeanBackend and type(fast) is LeanBackend
    assert [b.provider for b in (proxy, claude, gpu, fast)] == ["proxy", "claude", "gpu", "fast"]
    assert proxy.limiter.requests.per_minute == 90 and hub.settings.rpm == {"proxy": 90}
    with pytest.raises(ValueError, match="needs the environment variable PROXY_KEY"):
        ModelHub(BackendSettings(endpoints=endpoints), environ={}).check("proxy:m")
    with pytest.raises(ValueError, match="unknown model provider or endpoint 'nowhere'"):
        hub.check("nowhere:m")


async def test_two_endpoints_of_one_kind_each_get_their_own_calls_with_their_own_key():
    async with fake_server(api_key=ONE_KEY) as one, fake_server(api_key=TWO_KEY) as two:
        settings = BackendSettings(options=FAST, endpoints={
            "one": Endpoint(kind="openai", url=one.url + "/v1", key_env="ONE_KEY"),
            "two": Endpoint(kind="openai", url=two.url + "/v1", key_env="TWO_KEY", client="lean"),
        })
        plan = Grid(seeds=6, agents=[["one:share_everything", "two:one_piece"]])
        records, factory = await play(plan, settings, environ={"ONE_KEY": ONE_KEY, "TWO_KEY": TWO_KEY})
    assert [r.outcome for r in records] == ["success"] * 6
    calls = {role: sum(r.usage[role].calls for r in records) for role in ("alice", "bob")}
    assert one.stats.served == calls["alice"] > 0
    assert two.stats.served == calls["bob"] > 0
    assert one.stats.refused == {} and two.stats.refused == {}
    assert set(factory.hub.summary()["models"]) == {"one:share_everything", "two:one_piece"}


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_a_run_names_endpoints_on_the_command_line_and_its_resume_reaches_them_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ONE_KEY", CANARY)
    monkeypatch.setenv("TWO_KEY", TWO_KEY)
    run = tmp_path / "run"
    agents = ["--agent", "alice=one:share_everything", "--agent", "bob=two:one_piece", "--no-dashboard"]
    with server_process("--api-key", CANARY) as url1, server_process("--api-key", TWO_KEY) as url2:
        file = tmp_path / "endpoints.toml"
        file.write_text(f'[two]\nkind = "openai"\nurl = "{url2}/v1"\nkey_env = "TWO_KEY"\nrpm = 6000\n')
        assert run_main(["--games", "6", *agents, "--endpoint", f"one=openai,{url1}/v1,ONE_KEY",
                         "--endpoints", str(file), "--rpm", "one=6000", "--out", str(run)]) == 0
        saved = json.loads((run / "models.json").read_text())
        assert saved["endpoints"] == {
            "one": {"kind": "openai", "url": f"{url1}/v1", "key_env": "ONE_KEY"},
            "two": {"kind": "openai", "url": f"{url2}/v1", "key_env": "TWO_KEY", "rpm": 6000},
        }
        assert saved["rpm"] == {"one": 6000, "two": 6000}
        full = _records(run)
        assert [r["outcome"] for r in full] == ["success"] * 6
        assert full[0]["spec"]["agents"] == {"alice": "one:share_everything", "bob": "two:one_piece"}
        lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
        (run / "results.jsonl").write_text("".join(lines[:3]))
        assert run_main(["--resume", str(run), "--no-dashboard"]) == 0  # no endpoint flag: the saved ones
    assert [r["game_id"] for r in _records(run)] == list(range(6))
    for path in run.rglob("*"):
        if path.is_file():
            assert CANARY not in path.read_text(errors="replace") and TWO_KEY not in path.read_text(errors="replace")


def test_a_built_in_endpoint_a_run_names_is_saved_with_it(tmp_path, monkeypatch):
    run = tmp_path / "run"
    with server_process() as url:
        monkeypatch.setenv("LLAMACPP_BASE_URL", url + "/v1")
        assert run_main(["--games", "3", "--agent", "alice=llamacpp:share_everything", "--no-dashboard", "--out", str(run)]) == 0
    saved = json.loads((run / "models.json").read_text())["endpoints"]
    assert saved == {"llamacpp": {"kind": "openai", "url": "http://127.0.0.1:8080/v1", "url_env": "LLAMACPP_BASE_URL", "client": "lean", "tokens": "llamacpp"}}
    assert {r["outcome"] for r in _records(run)} == {"success"}


@pytest.mark.parametrize("flags, message", [
    (["--agent", "alice=gemni:flash"], "unknown model provider or endpoint 'gemni'"),
    (["--rpm", "nowhere=10"], "argument --rpm: unknown provider 'nowhere'"),
    (["--endpoint", "mine=openai"], "argument --endpoint: expected NAME=KIND,URL[,KEY_ENV]"),
    (["--agent", "alice=gemini:flash"], "needs the environment variable GEMINI_API_KEY"),
])
def test_an_unknown_or_bad_endpoint_is_one_line_and_status_2(tmp_path, capsys, monkeypatch, flags, message):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "1", "--out", str(tmp_path / "r"), *flags])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
