"""The response cache (``--cache``): a call made before is answered from disk at no cost, with the
reply it got; only calls the request fixes are kept unless sampled ones are asked for; the key holds
everything that decides the reply and no secret; a damaged entry or file is a miss, never a crash;
processes writing at once leave every entry whole."""

from __future__ import annotations

import argparse
import io
import multiprocessing
import sqlite3

import msgspec
import pytest
from rich.console import Console

from engine import RunProgress
from engine.backends.cache import CachedCalls, Entry, ResponseStore, model_key, server_identity
from engine.backends import ModelHub, Request
from engine.backends.wrappers import Wrapper
from engine.backends.settings import BackendSettings, CacheSettings, ModelOptions
from runners.args import OneLineParser
from runners.dashboard import render_dashboard
from runners.flags.models import add_model_arguments, settings_from_args

from tests.engine.backends.helpers import FAST, KEYS, fake_server, play, settings_for, without_models
from tests.helpers import grid


def _cached(tmp_path, mode="on", **fields) -> dict:
    return {"cache": CacheSettings(mode=mode, directory=str(tmp_path / "cache"), **fields)}


def _requests(server) -> int:
    return server.stats.requests


async def test_a_run_played_again_makes_no_call_and_keeps_its_games(tmp_path):
    config = grid(8, size=4, alice="openai:share_everything", bob="openai:one_piece")
    async with fake_server(latency=0.0) as server:
        settings = settings_for(server, **_cached(tmp_path), prices={"share_everything": (1.0, 0.5, 2.0), "one_piece": (1.0, 0.5, 2.0)})
        first, _ = await play(config, settings)
        made = _requests(server)
        again, factory = await play(config, settings)
        assert _requests(server) == made  # not one call reached the server
    assert [without_models(r) for r in again] == [without_models(r) for r in first]
    assert all(r.outcome == "success" for r in first)
    for was, now in zip(first, again):
        for role, usage in now.usage.items():
            assert usage.cache_hits == usage.calls == was.usage[role].calls and was.usage[role].cache_hits == 0
            assert usage.cost_usd == 0.0 and usage.prompt_tokens == usage.completion_tokens == usage.attempts == 0
            assert was.usage[role].cost_usd > 0
    summary = factory.hub.summary()
    model = summary["models"]["openai:share_everything"]
    assert model["calls"] == 0 and model["cache_hits"] == sum(r.usage["alice"].calls for r in again)
    assert summary["options"]["cache"]["mode"] == "on" and summary["options"]["cache"]["problem"] is None
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(render_dashboard(RunProgress(total=8), 1.0, factory.hub))
    shown = console.export_text()
    assert "cache hits" in shown and str(model["cache_hits"]) in shown.split("cache hits")[1]


async def test_sampled_calls_are_made_every_time_unless_the_run_caches_them(tmp_path):
    config = grid(3, size=4, alice="openai:share_everything", bob="anthropic:share_everything")
    sampled = ModelOptions(timeout=5.0, temperature=0.7, backoff_base=0.01, backoff_max=0.05)
    async with fake_server(latency=0.0) as server:
        for case, (options, cache, made_again) in enumerate([
            (FAST, {}, "anthropic"),  # temperature 0: OpenAI's calls are kept; Anthropic takes no temperature
            (sampled, {}, "both"),
            (msgspec.structs.replace(sampled, seed=5), {}, "anthropic"),  # a seed fixes the reply
            (sampled, {"sampled": True}, "none"),
        ]):
            settings = settings_for(server, options=options, **_cached(tmp_path / str(case), **cache))
            await play(config, settings)
            before = _requests(server)
            records, factory = await play(config, settings)
            hits = {role: sum(r.usage[role].cache_hits for r in records) for role in ("alice", "bob")}
            calls = sum(r.usage[role].calls for r in records for role in ("alice", "bob"))
            expected = {"anthropic": hits["bob"] == 0 < hits["alice"], "both": hits == {"alice": 0, "bob": 0},
                        "none": hits["alice"] > 0 and hits["bob"] > 0}[made_again]
            assert expected, (options, cache, hits)
            assert _requests(server) - before == calls - hits["alice"] - hits["bob"]
            uncached = factory.hub.summary()["options"]["cache"]["uncached_models"]
            assert ("anthropic:share_everything" in uncached) == (made_again != "none")


async def test_read_only_answers_from_the_cache_and_keeps_nothing(tmp_path):
    one, two = grid(2, size=4, alice="openai:share_everything"), grid(2, 1, size=4, alice="openai:share_everything")
    async with fake_server(latency=0.0) as server:
        await play(one, settings_for(server, **_cached(tmp_path)))
        before = _requests(server)
        read_only = settings_for(server, **_cached(tmp_path, "read-only"))
        await play(one, read_only)
        assert _requests(server) == before  # answered
        await play(two, read_only)
        middle = _requests(server)
        await play(two, read_only)
        assert _requests(server) - middle == middle - before > 0  # the new games were kept nowhere
    missing = ResponseStore(tmp_path / "none" / "responses.sqlite", writable=False)
    missing.put(b"k", Entry("x", 1, 0, 1))
    assert missing.get(b"k") is None and not (tmp_path / "none").exists() and missing.problem is None


def _backend(settings: BackendSettings, name: str = "openai:m", environ=KEYS):
    return ModelHub(settings, environ=environ).backend(name)


def _layers(backend):
    """The backends a call goes through, outermost first."""
    while isinstance(backend, Wrapper):
        yield backend
        backend = backend.inner
    yield backend


def test_the_key_holds_what_decides_the_reply_and_no_secret(tmp_path):
    store = ResponseStore(tmp_path / "r.sqlite")
    base = BackendSettings(urls={"openai": "http://127.0.0.1:9/v1"})

    def key(settings=base, name="openai:m", environ=KEYS, server="http://127.0.0.1:9/v1", kind="openai",
            call=("sys", "user", None, (), 0)) -> bytes:
        provider = list(_layers(_backend(settings, name, environ)))[-1]
        fixed = model_key(kind, server_identity(server), provider.provider, provider.model, provider.options, provider.bound_schema)
        return CachedCalls(provider, store, fixed, provider.options.seed).key(Request(*call))

    first = key()
    assert key(environ={**KEYS, "OPENAI_API_KEY": "sk-another-key-1234"}) == first  # the key is not in it
    assert key(server="HTTP://user:secret@127.0.0.1:9/v1/?token=x") == first  # no credentials in the server's part
    options = base.options
    others = [
        key(name="openai:n"), key(server="http://127.0.0.1:10/v1"), key(kind="vllm"),
        key(msgspec.structs.replace(base, options=msgspec.structs.replace(options, temperature=0.5))),
        key(msgspec.structs.replace(base, options=msgspec.structs.replace(options, top_p=0.9))),
        key(msgspec.structs.replace(base, options=msgspec.structs.replace(options, max_tokens=99))),
        key(msgspec.structs.replace(base, options=msgspec.structs.replace(options, seed=1))),
        key(msgspec.structs.replace(base, options=msgspec.structs.replace(options, structured=True))),
        key(call=("sys2", "user", None, (), 0)), key(call=("sys", "user2", None, (), 0)),
        key(call=("sys", "user", {"type": "object"}, (), 0)), key(call=("sys", "user", None, (("a", "b"),), 0)),
        key(call=("sys", "user", None, (), 1)),
        key(call=("sys", "user", {"a": 1, "b": 2}, (), 0)), key(call=("sys", "user", {"b": 2, "a": 1}, (), 0)),
    ]
    assert len({first, *others}) == len(others) + 1 and all(len(k) == 32 for k in others)
    seeded = msgspec.structs.replace(base, options=msgspec.structs.replace(options, seed=1))
    assert key(seeded, call=("s", "u", None, (), 1)) != key(seeded, call=("s", "u", None, (), 0))
    store.put(first, Entry("the reply", 10, 0, 2))
    store.close()
    data = (tmp_path / "r.sqlite").read_bytes()
    assert b"the reply" in data and b"sk-test" not in data and b"user" not in data.replace(b"the reply", b"")


def test_a_damaged_entry_is_a_miss_and_the_next_reply_replaces_it(tmp_path):
    path = tmp_path / "r.sqlite"
    store = ResponseStore(path)
    for i, key in enumerate((b"a", b"b", b"c", b"d")):
        store.put(key, Entry(f"reply {i}", 5, 0, 1))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE replies SET value = ? WHERE key = ?", (b"\xff not json", b"a"))  # undecodable
        db.execute("UPDATE replies SET value = ? WHERE key = ?", (msgspec.json.encode(Entry("forged", 5, 0, 1)), b"b"))  # checksum
        db.execute("UPDATE replies SET value = 'text', created = 'x' WHERE key = ?", (b"c",))  # wrong types
    assert [store.get(k) for k in (b"a", b"b", b"c")] == [None, None, None] and store.damaged == 3
    assert store.get(b"d") == Entry("reply 3", 5, 0, 1) and store.problem is None
    store.put(b"a", Entry("new", 1, 0, 1))
    assert store.get(b"a") == Entry("new", 1, 0, 1)


def test_an_expired_entry_is_a_miss(tmp_path):
    path = tmp_path / "r.sqlite"
    ResponseStore(path).put(b"k", Entry("old", 1, 0, 1))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE replies SET created = created - 8 * 86400")
    assert ResponseStore(path, expiry=7 * 86400).get(b"k") is None
    assert ResponseStore(path, expiry=9 * 86400).get(b"k") == Entry("old", 1, 0, 1)
    assert ResponseStore(path).get(b"k") is not None  # no expiry: for ever


def test_garbage_over_the_file_makes_every_call_a_miss_never_an_error(tmp_path):
    path = tmp_path / "r.sqlite"
    store = ResponseStore(path)
    store.put(b"k", Entry("x", 1, 0, 1))
    store.close()
    path.write_bytes(b"this is not a database, " * 400)
    for fresh in (store, ResponseStore(path), ResponseStore(path, writable=False)):
        assert fresh.get(b"k") is None
        fresh.put(b"k", Entry("y", 1, 0, 1))
        assert fresh.get(b"k") is None and fresh.broken and "not a database" in fresh.problem


async def test_a_run_on_a_damaged_cache_file_plays_every_game_through_the_server(tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "responses.sqlite").write_bytes(b"\x00garbage" * 1000)
    config = grid(3, size=4, alice="openai:share_everything")
    async with fake_server(latency=0.0) as server:
        records, factory = await play(config, settings_for(server, **_cached(tmp_path)))
        assert server.stats.served == sum(u.calls for r in records for u in r.usage.values())
    assert all(r.outcome == "success" for r in records)
    assert "not a database" in factory.hub.summary()["options"]["cache"]["problem"]


def _writer(args) -> int:
    path, worker = args
    store = ResponseStore(path)
    for i in range(300):
        key = f"{(i * 7 + worker * 50) % 400}".encode()  # the four overlap on most keys
        store.put(key, Entry(key.decode() * 50, int(key), 0, 1))  # the same value for a key, whoever writes it
        found = store.get(key)
        assert found is not None and found.prompt_tokens == int(key), (key, found, store.problem)
    assert store.problem is None, store.problem
    return store.stored


def test_processes_writing_at_once_leave_every_entry_whole(tmp_path):
    path = tmp_path / "r.sqlite"
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        stored = pool.map(_writer, [(path, w) for w in range(4)])
    assert stored == [300] * 4
    store = ResponseStore(path, writable=False)
    with sqlite3.connect(path) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM replies")]
    assert len(keys) == len({f"{(i * 7 + w * 50) % 400}" for i in range(300) for w in range(4)})
    for key in keys:
        assert store.get(key) == Entry(key.decode() * 50, int(key), 0, 1)
    assert store.damaged == 0


def _parse(*argv: str) -> argparse.Namespace:
    parser = OneLineParser()
    add_model_arguments(parser)
    return parser.parse_args(list(argv))


def test_the_cache_flags_and_a_resume():
    assert settings_from_args(_parse()).cache == CacheSettings()  # off by default
    given = settings_from_args(_parse("--cache", "on", "--cache-dir", "/c", "--cache-expiry", "7d", "--cache-sampled"))
    assert given.cache == CacheSettings(mode="on", directory="/c", expiry=7 * 86400.0, sampled=True)
    assert settings_from_args(_parse(), given).cache == given.cache  # saved with the run: a resume keeps it
    assert settings_from_args(_parse("--cache-expiry", "7d"), given).cache == given.cache  # given as saved
    for flags in (["--cache-expiry", "never"], ["--cache", "read-only"], ["--cache", "off"]):  # another: refused
        with pytest.raises(ValueError, match="argument --cache and its companions: the run being resumed"):
            settings_from_args(_parse(*flags), given)
    assert settings_from_args(_parse("--cache", "read-only")).cache == CacheSettings(mode="read-only")
    with pytest.raises(ValueError, match="argument --cache-dir: the response cache is off"):
        settings_from_args(_parse("--cache-dir", "/c"))
    for flags in (["--cache", "sometimes"], ["--cache-expiry", "7"], ["--cache-expiry", "-1d"], ["--cache-expiry", "0h"]):
        with pytest.raises(SystemExit):
            _parse(*flags)


def test_the_cache_off_leaves_the_call_as_it_is():
    backend = _backend(BackendSettings(urls={"openai": "http://127.0.0.1:9/v1"}))
    assert "complete" not in vars(backend)  # the class's own call, nothing in front of it
    cached = _backend(BackendSettings(urls={"openai": "http://127.0.0.1:9/v1"}, cache=CacheSettings(mode="on", directory="/nowhere")))
    assert [type(b).__name__ for b in _layers(cached)] == ["PacedCalls", "CachedCalls", "OpenAIBackend"]


def test_replicas_are_known_by_their_servers_in_any_order(tmp_path):
    settings = BackendSettings(urls={"vllm": "http://b:2/v1/,http://A:1/v1"}, cache=CacheSettings(mode="on", directory=str(tmp_path)))
    hub = ModelHub(settings, environ={})
    backend = hub.backend("vllm:m")
    other = ModelHub(msgspec.structs.replace(settings, urls={"vllm": "http://a:1/v1,http://b:2/v1"}), environ={}).backend("vllm:m")
    call = ("s", "u", None, (), 0)
    assert backend.inner.key(Request(*call)) == other.inner.key(Request(*call))
