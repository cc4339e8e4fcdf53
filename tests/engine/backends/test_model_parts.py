"""The parts of the model path on their own: reply parsing on messy text, prompts (word for word as
before the game folders, and read back by the local server), the limiter, the local server's
endpoints (with the real SDKs, streaming included) and key scrubbing."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import anthropic
import openai
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.backends import Secrets, read_vllm_metrics
from engine.backends.limiter import Bucket, Limiter, retry_after
from engine.backends.prices import PriceTable, price_numbers, read_price_file
from engine.backends.tokens import Tokenizer, estimate_tokens
from puzzles import GAMES
from puzzles.asympuzl.prompt import parse_reply, read_prompt, render_prompt, reply_schema
from puzzles.asympuzl.rules import ALICE, BOB, SOLO, AsymView, Piece, Replace, generate
from puzzles.turn import ChatLine, ReplyFormatError, TurnContext
from puzzles.chain.game import GAME as CHAIN
from puzzles.chain.params import ChainParams
from puzzles.positions.rules import MODES, Feedback

from tests.engine.backends.helpers import fake_server

DATA = Path(__file__).resolve().parents[2] / "data"

# ---- parsing messy replies ----

MESSY = [
    ('Sure! Here is my move.\n{"message": "hi", "actions": []}', "hi", 0),
    ('```json\n{"message": "fenced", "actions": [{"replace": 1, "by": {"shape": "square", "color": "red"}}]}\n```', "fenced", 1),
    ('I think {"a": 1} is wrong.\n{"message": "last wins", "actions": []}', "last wins", 0),
    ('{"message": "trailing", "actions": [{"replace": 2, "by": {"shape": "circle", "color": "blue"},},],}', "trailing", 1),
    ('Reasoning with braces {like this}.\n\n{"message": "braces", "actions": []}\n', "braces", 0),
    ('{"message": "caps", "actions": [{"replace": 1, "by": {"shape": " Square ", "color": "RED"}}]}', "caps", 1),
]


@pytest.mark.parametrize("text, message, actions", MESSY)
def test_messy_replies_are_read(text, message, actions):
    reply = parse_reply(text)
    assert reply.message == message and len(reply.actions) == actions


def test_trailing_commas_do_not_change_valid_text():
    reply = parse_reply('{"message": "a,]b,}", "actions": []}')
    assert reply.message == "a,]b,}"


@pytest.mark.parametrize("text, reason", [
    ("no json at all", "no JSON object"),
    ('{"message": 5, "actions": []}', '"message" must be a string'),
    ('{"message": "x", "actions": {"replace": 1}}', '"actions" must be a list'),
    ('{"message": "x"}', "no 'actions' field"),
    ('{"message": "x", "actions": [], "mood": "happy"}', "unknown field 'mood'"),
    ('{"message": "cut short", "actions": [{"replace": 1, "by": {"sha', "no JSON object"),
    ("[" * 5000 + "]" * 5000, "no JSON object"),
    ("{" * 5000, "no JSON object"),
])
def test_unreadable_replies_are_format_errors_with_a_reason(text, reason):
    with pytest.raises(ReplyFormatError, match=reason.replace("(", r"\(")):
        parse_reply(text)


def test_wrong_types_inside_actions_reject_the_action_not_the_reply():
    reply = parse_reply('{"message": "m", "actions": [{"replace": "1", "by": {"shape": "a", "color": "b"}}, 7, '
                        '{"replace": 2, "by": {"shape": "star", "color": 3}}, {"replace": 3, "by": {"shape": "star", "color": "red"}}]}')
    assert reply.actions == (Replace(3, "star", "red"),)
    assert len(reply.rejected) == 3


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(["message", "actions", "replace", "by", "shape", "color", "to", "x"]), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), json_values, st.text(max_size=40))
def test_the_parser_never_raises_anything_but_a_format_error(prefix, value, suffix):
    import json

    for text in (prefix, prefix + json.dumps(value) + suffix, prefix + json.dumps(value)[:-1]):
        try:
            reply = parse_reply(text)
        except ReplyFormatError:
            continue
        assert isinstance(reply.message, str)
        assert all(isinstance(a, Replace) for a in reply.actions)


# ---- prompts ----


def _context(role: str, seed: int, turn: int, mode: str, conversation, notices=()) -> TurnContext:
    """A turn in the guided prompt (the paper's is tested in tests/puzzles/test_asympuzl_prompts.py)."""
    puzzle = generate(5, seed, distractors=seed % 3, distractors_in=ALICE if seed % 2 else BOB)
    hypotheses = {r: puzzle.initial_hypothesis(r) for r in (ALICE, BOB)}
    feedback = MODES[mode](puzzle.truth, hypotheses, role) if turn > 1 else None
    return TurnContext(
        game_id=0, role=role, turn=turn, max_turns=10,
        view=AsymView(5, puzzle.role_clues(role), puzzle.initial_hypothesis(role), "guided"), feedback=feedback,
        conversation=conversation, notices=notices, partners=(BOB if role == ALICE else ALICE,),
    )


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(lambda t: t.strip() == t)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([ALICE, BOB]), st.integers(0, 10_000), st.integers(1, 10), st.sampled_from(list(MODES)),
    st.lists(st.tuples(st.integers(1, 9), st.sampled_from([ALICE, BOB]), _TEXT), max_size=3),
)
def test_a_prompt_reads_back_as_the_context_it_shows(role, seed, turn, mode, lines):
    conversation = tuple(ChatLine(t, s, x) for t, s, x in lines)
    context = _context(role, seed, turn, mode, conversation, notices=("Your action x was rejected: why.",))
    system, user = render_prompt(context)
    read = read_prompt(system, user)
    assert (read.role, read.turn, read.max_turns) == (role, turn, 10)
    assert read.view == context.view  # size, clues and hypothesis
    assert read.partners == context.partners and read.notices == context.notices
    assert read.conversation == conversation
    if context.feedback is not None and context.feedback.own is not None:
        assert (read.feedback.own.solved, read.feedback.own.wrong) == (context.feedback.own.solved, context.feedback.own.wrong)


def test_the_prompt_says_what_the_partner_sees_and_the_output_format():
    context = _context(BOB, 3, 2, "both", (ChatLine(1, ALICE, "My shapes in order: a, b."),))
    system, user = render_prompt(context)
    assert system.startswith("You are Agent B.")
    assert "Agent A receives only your \"message\", never your actions" in system
    assert "Agent A knows the correct order of shapes but not the colors." in system
    assert "Initial clues:" in user and "Your current working hypothesis:" in user and "Feedback:" in user
    assert "Agent A (turn 1): My shapes in order: a, b." in user
    assert user.rstrip().endswith('"color": "blue"}}]}')
    assert "MUST END WITH a valid JSON object" in user
    assert reply_schema(context)["required"] == ["message", "actions"]


def _recorded_context(case: dict) -> TurnContext:
    pieces = lambda rows: tuple(Piece(shape, color) for shape, color in rows)  # noqa: E731
    return TurnContext(
        game_id=0, role=case["role"], turn=case["turn"], max_turns=case["max_turns"],
        view=AsymView(case["size"], pieces(case["clues"]), pieces(case["hypothesis"]), "guided"),
        feedback=None if case["feedback"] is None else msgspec.convert(case["feedback"], Feedback),
        conversation=tuple(ChatLine(*line) for line in case["conversation"]), notices=tuple(case["notices"]),
        partners=tuple(case["partners"]), directed=case["directed"], keeps_notes=case["keeps_notes"],
        scratchpad=case["scratchpad"], reinjected=case["reinjected"],
    )


RECORDED = json.loads((DATA / "asympuzl_prompts.json").read_text())["cases"]


@pytest.mark.parametrize("case", RECORDED, ids=[case["name"] for case in RECORDED])
def test_the_guided_asympuzl_prompt_is_word_for_word_the_prompt_of_before_the_game_folders(case):
    # The texts in the file were written once by puzzles/prompts.py of commit b50e3a2.
    system, user = render_prompt(_recorded_context(case))
    assert system == case["system"]
    assert user == case["user"]


def test_the_recorded_prompts_cover_every_kind_of_turn():
    roles = {case["role"] for case in RECORDED}
    assert roles == {ALICE, BOB, SOLO}
    assert {case["feedback"]["mode"] for case in RECORDED if case["feedback"]} == set(MODES) - {"partner"}  # added since
    for feature in ("directed", "keeps_notes", "notices", "conversation"):
        assert any(case[feature] for case in RECORDED), feature
    assert any(not case["reinjected"] and case["scratchpad"] for case in RECORDED)
    assert any(len(case["clues"]) > case["size"] for case in RECORDED)  # distractors


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4), st.integers(0, 10_000), st.integers(2, 6), st.integers(1, 12), st.sampled_from(list(MODES)),
    st.booleans(), st.lists(st.tuples(st.integers(1, 9), st.integers(0, 3), _TEXT), max_size=3), st.data(),
)
def test_a_chain_prompt_reads_back_as_the_context_it_shows(agents, seed, size, turn, mode, directed, lines, data):
    roles = CHAIN.roster(agents)
    role = data.draw(st.sampled_from(roles))
    state = CHAIN.rules.new(ChainParams(size=size), seed, roles, 2 * size)
    if turn > 1:  # some positions written, some of them wrong
        for position in data.draw(st.lists(st.integers(1, size), max_size=size)):
            state.step(role, (CHAIN.rules.Action(position, state.truth[(position + turn) % size]),))
    conversation = tuple(ChatLine(t, roles[k % agents], x) for t, k, x in lines)
    context = TurnContext(
        game_id=0, role=role, turn=turn, max_turns=2 * size, view=state.view(role),
        feedback=CHAIN.rules.feedback[mode](state, role) if turn > 1 else None, conversation=conversation,
        notices=("Your reply could not be read.",), partners=tuple(r for r in roles if r != role), directed=directed,
    )
    system, user = CHAIN.faces.prompter.render(context)
    read, _ = CHAIN.faces.prompter.read(system, user)
    assert (read.role, read.turn, read.max_turns) == (role, turn, 2 * size)
    assert read.view == context.view
    assert read.conversation == conversation and read.notices == context.notices
    assert read.partners == context.partners and read.directed == directed
    if context.feedback is not None:  # "solved" reads the same with or without an empty list of wrong positions
        said = lambda s: None if s is None else (s.role, s.solved, s.wrong or ())  # noqa: E731
        fed, shown = context.feedback, read.feedback
        assert said(shown.own) == said(fed.own) and shown.joint_solved == fed.joint_solved
        assert [said(s) for s in shown.others] == [said(s) for s in fed.others]
    assert GAMES["asympuzl"].faces.prompter.read(system, user) is None  # each game reads only its own prompts
    assert CHAIN.faces.prompter.read(*render_prompt(_context(ALICE, seed, turn, mode, ()))) is None


# ---- the limiter ----


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_refills_at_the_per_minute_rate():
    clock = FakeClock()
    bucket = Bucket(600, 1.0, clock)  # 10 per second, holds 1 second
    assert bucket.capacity == 10
    for _ in range(10):
        assert bucket.wait_time(1) == 0
        bucket.take(1)
    assert bucket.wait_time(1) == pytest.approx(0.1)
    clock.now += 0.5
    assert bucket.wait_time(5) == 0 and bucket.wait_time(6) == pytest.approx(0.1)
    bucket.drain_to(2)
    assert bucket.wait_time(3) == pytest.approx(0.1)


def test_a_huge_call_waits_for_a_full_bucket_not_forever():
    bucket = Bucket(60_000, 1.0, FakeClock())  # 1000 tokens per second
    assert bucket.wait_time(50_000) == 0  # a full bucket lets it go ...
    bucket.take(50_000)
    assert bucket.wait_time(1) == pytest.approx(49.001)  # ... and the debt is paid back after


def test_retry_after_prefers_milliseconds():
    assert retry_after({"retry-after-ms": "250", "retry-after": "1"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3
    assert retry_after({}) is None


async def test_the_limiter_learns_limits_from_headers_and_backs_off():
    now = [0.0]  # the limiter's clock, moved by hand: nothing here waits on real time
    limiter = Limiter("openai:m", max_in_flight=64, initial_in_flight=8, clock=lambda: now[0])
    assert limiter.requests.per_minute is None
    limiter.learn({"x-ratelimit-limit-requests": "600", "x-ratelimit-limit-tokens": "90000", "x-ratelimit-remaining-requests": "3"})
    assert limiter.requests.per_minute == 600 and limiter.tokens.per_minute == 90000
    assert limiter.requests.level <= 3
    limiter.learn({"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0"})
    assert limiter.requests.per_minute == 50
    limiter.learn({"anthropic-ratelimit-requests-limit": "60000"})  # so the slots below find the bucket full...
    assert limiter.requests.per_minute == 60000
    now[0] += 60  # ...once a minute has gone by on the limiter's clock (nothing waits on real time)
    slots = [limiter.slot(0) for _ in range(16)]
    for slot in slots[:8]:
        await slot.__aenter__()
    for _ in range(8):  # slow start: doubles per cap's worth of successes while the cap binds
        limiter.succeeded()
    assert limiter.cap == 16
    for slot in slots[8:]:
        await slot.__aenter__()
    now[0] += 3  # the successes are older than the 2 s the overload window looks back
    limiter.backed_off(2.0, overloaded=True)
    limiter.backed_off(2.0, overloaded=True)  # 2 refusals: not yet sustained overload
    assert limiter.cap == 16 and limiter.paused_until >= limiter.clock() + 1.9
    for _ in range(3):  # the third refusal in 2 s (the successes were longer ago): lowered, once per cooldown
        limiter.backed_off(2.0, overloaded=True)
    assert limiter.cap == 11 and "3 of 3 calls refused" in limiter.cap_note
    for slot in slots[11:]:  # back down to the cap: it binds again
        await slot.__aexit__(None, None, None)
    for _ in range(11):  # then it grows by a quarter per cap's worth of successes
        limiter.succeeded()
    assert limiter.cap == 13
    for slot in slots[:11]:
        await slot.__aexit__(None, None, None)


def test_scattered_overload_errors_leave_the_cap_alone_and_a_storm_lowers_it():
    now = [0.0]
    limiter = Limiter("openai:m", max_in_flight=256, clock=lambda: now[0])
    limiter._slow_start = False
    limiter.in_flight.held = 256  # the cap binds
    for call in range(3000):  # 90 calls a second, 3% refused as overloaded
        now[0] += 1 / 90
        if call % 33 == 0:
            limiter.backed_off(None, overloaded=True)
        else:
            limiter.succeeded()
    assert limiter.cap == 256 and limiter.cap_note == ""
    for call in range(300):  # then a third refused for a while
        now[0] += 1 / 90
        if call % 3 == 0:
            limiter.backed_off(None, overloaded=True)
        else:
            limiter.succeeded()
    assert limiter.cap < 256 * 0.7 and limiter.cap_note.startswith("lowered: ")


async def test_the_cap_grows_only_while_it_is_what_limits_the_calls():
    now = [0.0]
    limiter = Limiter("openai:m", max_in_flight=512, initial_in_flight=16, clock=lambda: now[0])
    async with limiter.slot(1):  # one call in flight, far below the cap
        for _ in range(1000):
            limiter.succeeded()
        now[0] += 10
    assert limiter.cap == 16
    for _ in range(3):  # an overload: lowered from what was in use, not from the cap
        limiter.backed_off(None, overloaded=True)
    assert limiter.cap == 1


def test_given_limits_are_not_overridden_by_headers():
    limiter = Limiter("openai:m", rpm=100)
    limiter.learn({"x-ratelimit-limit-requests": "10000"})
    assert limiter.requests.per_minute == 100


# ---- tokens, cost, secrets, metrics ----


def test_the_token_estimate_is_labelled_and_plausible():
    tokenizer = Tokenizer()
    assert tokenizer.name in ("estimate:pieces", "tiktoken:o200k_base")
    assert estimate_tokens("The square is red.") == 5
    assert estimate_tokens("") == 0 and tokenizer.count("") == 0
    assert 900 <= estimate_tokens("word " * 1000) <= 1100


def test_cost_counts_cache_reads_and_writes_at_their_own_prices():
    table = PriceTable({"m": (2.0, 1.0, 10.0), "w": (2.0, 1.0, 10.0, 4.0)}, built_in=False)
    # 1M prompt tokens: 0.5M read from the cache, 0.25M written to it, the rest plain input.
    assert table.cost("openai", "m", 1_000_000, 500_000, 250_000, 100_000) == pytest.approx(0.5 + 0.5 + 0.5 + 1.0)
    assert table.cost("anthropic", "w", 1_000_000, 500_000, 250_000, 100_000) == pytest.approx(0.5 + 0.5 + 1.0 + 1.0)


def test_a_model_without_a_price_costs_none_and_is_named():
    table = PriceTable({"m": (1.0, 1.0, 1.0)}, built_in=False)
    assert table.cost("openai", "other", 1, 0, 0, 1) is None
    assert table.cost("openai", "other", 1, 0, 0, 1) is None
    assert table.missing == {"openai:other"}


def test_dated_snapshots_take_the_longest_listed_name_they_start_with():
    table = PriceTable()
    assert table.price("openai", "gpt-4o-mini-2024-07-18") == table.price("openai", "gpt-4o-mini")
    assert table.price("openai", "gpt-4o-2024-08-06") == table.price("openai", "gpt-4o")
    assert table.price("openai", "gpt-4omni") is None
    assert table.price("anthropic", "claude-sonnet-4-5-20250929").cache_write == 3.75


def test_a_users_price_file_extends_and_overrides_the_built_in_table(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[models."gpt-4o"]\ninput = 1\ncached_input = 0.5\noutput = 2\n[models."vllm:llama"]\ninput = 0\ncached_input = 0\noutput = 0\n')
    table = PriceTable(price_numbers(read_price_file(path)[0]))
    assert table.price("openai", "gpt-4o").input == 1.0
    assert table.price("vllm", "llama").output == 0.0
    assert table.price("openai", "gpt-4.1") is not None  # the built-in rest is kept
    path.write_text('[models."x"]\ninput = -1\ncached_input = 0\noutput = 0\n')
    with pytest.raises(ValueError, match="model 'x'.*negative"):
        read_price_file(path)[0]
    path.write_text('[models."x"]\ninput = 1\noutput = 0\n')
    with pytest.raises(ValueError, match="cached_input"):
        read_price_file(path)[0]


def test_keys_and_masked_keys_are_scrubbed():
    secrets = Secrets(["sk-proj-abcdefghijklmnop1234"])
    text = "bad key sk-proj-abcdefghijklmnop1234 and sk-proj-****1234 and key-ab12cd34ef"
    scrubbed = secrets.scrub(text)
    assert "abcdefgh" not in scrubbed and "1234" not in scrubbed and "ab12cd" not in scrubbed


def test_vllm_metrics_are_summed_over_labels():
    text = (
        "# HELP x\nvllm:num_requests_running{model_name=\"a\"} 3.0\n"
        "vllm:num_requests_running{model_name=\"b\"} 2.0\nvllm:num_requests_waiting{model_name=\"a\"} 7\n"
        "vllm:num_requests_swapped 1\n"
    )
    assert read_vllm_metrics(text) == {"running": 5.0, "waiting": 7.0}


# ---- the local server, with the real SDKs ----

SYSTEM, USER = render_prompt(_context(ALICE, 7, 1, "own", ()))


async def test_the_server_streams_openai_chunks_with_usage():
    async with fake_server(latency=0.0) as server:
        client = openai.AsyncOpenAI(api_key="sk-x-000000", base_url=server.url + "/v1", max_retries=0)
        stream = await client.chat.completions.create(
            model="share_everything", messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
            stream=True, stream_options={"include_usage": True},
        )
        pieces, usage = [], None
        async for chunk in stream:
            if chunk.choices:
                pieces.append(chunk.choices[0].delta.content or "")
            if chunk.usage is not None:
                usage = chunk.usage
        await client.close()
    reply = parse_reply("".join(pieces))
    assert reply.message.startswith("The puzzle has 5 positions. My shapes in order:")
    assert len(pieces) > 2 and usage.completion_tokens > 0


async def test_the_server_streams_anthropic_events():
    async with fake_server(latency=0.0) as server:
        client = anthropic.AsyncAnthropic(api_key="sk-ant-x-000000", base_url=server.url, max_retries=0)
        async with client.messages.stream(
            model="one_piece", max_tokens=512, system=SYSTEM, messages=[{"role": "user", "content": USER}],
        ) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
        await client.close()
    assert parse_reply(text).message.endswith("?") and "What color is the" in text
    assert final.usage.output_tokens > 0 and final.stop_reason == "end_turn"


async def test_the_server_has_vllms_extras():
    async with fake_server(latency=0.0, max_num_seqs=8, models=["Qwen/Qwen3-8B"]) as server:
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + "/health") as r:
                assert r.status == 200
            async with session.get(server.url + "/v1/models") as r:
                assert (await r.json())["data"][0]["id"] == "Qwen/Qwen3-8B"
            async with session.get(server.url + "/metrics") as r:
                assert read_vllm_metrics(await r.text()) == {"running": 0.0, "waiting": 0.0, "deferred": 0.0, "kv_cache": 0.0}
            async with session.post(server.url + "/tokenize", json={"model": "m", "prompt": "The square is red."}) as r:
                body = await r.json()
                assert body["count"] == 5 == len(body["tokens"])


async def test_the_server_enforces_requests_per_minute_with_headers():
    async with fake_server(latency=0.0, rpm=120, burst=1.0) as server:  # 2 per second, bursts of 2
        client = openai.AsyncOpenAI(api_key="sk-x-000000", base_url=server.url + "/v1", max_retries=0)
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
        ok = await client.chat.completions.with_raw_response.create(model="fake", messages=messages)
        assert ok.headers["x-ratelimit-limit-requests"] == "120"
        await client.chat.completions.create(model="fake", messages=messages)
        with pytest.raises(openai.RateLimitError) as refused:
            await client.chat.completions.create(model="fake", messages=messages)
        await client.close()
    headers = refused.value.response.headers
    assert float(headers["retry-after-ms"]) > 0 and headers["x-ratelimit-remaining-requests"] == "0"
    assert refused.value.body["code"] == "rate_limit_exceeded"



async def test_the_dashboard_shows_each_models_calls_and_limits():
    from rich.console import Console

    from engine.play.run import RunProgress
    from runners.dashboard import model_line, render_dashboard

    from tests.engine.backends.helpers import play, settings_for
    from tests.helpers import grid

    async with fake_server(latency=0.0, rpm=6000) as server:
        records, factory = await play(grid(3, alice="openai:share_everything", bob="vllm:one_piece"), settings_for(server, rpm={"openai": 3000}))
    console = Console(width=200, record=True)
    console.print(render_dashboard(RunProgress(total=3, already_done=3), 1.0, factory.hub))
    text = console.export_text()
    assert "openai:share_everything" in text and "vllm:one_piece" in text and "(3000)" in text
    calls = sum(r.usage["alice"].calls for r in records)
    first = factory.hub.backend("openai:share_everything").limiter.stats.first_sent
    assert f"openai:share_everything: 0 in flight, {calls} rpm" in model_line(factory.hub, first + 60)
    # In the first minute the rate is over the time since the first call, not a minute.
    assert f"openai:share_everything: 0 in flight, {calls * 6} rpm" in model_line(factory.hub, first + 10)
