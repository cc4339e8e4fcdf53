"""Reading replies that end in the JSON object: the shared reader with AsymPuzl's actions."""

import pytest

from puzzles.asympuzl.prompt import format_reply, parse_reply
from puzzles.asympuzl.rules import Replace
from puzzles.turn import ReplyFormatError

GOOD = '{"message": "hi", "actions": [{"replace": 2, "by": {"shape": "Square", "color": " red"}}]}'


def test_reply_with_prose_before_the_json_is_read():
    reply = parse_reply("Let me think {about it}.\nSo:\n" + GOOD)
    assert reply.message == "hi"
    assert reply.actions == (Replace(2, "square", "red"),)
    assert reply.rejected == ()


def test_fenced_json_is_read():
    reply = parse_reply("Here it is:\n```json\n" + GOOD + "\n```\n")
    assert reply.actions == (Replace(2, "square", "red"),)


def test_last_object_wins():
    first = '{"message": "old", "actions": []}'
    assert parse_reply(first + "\nActually:\n" + GOOD).message == "hi"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("I have no idea.", "no JSON object"),
        ('{"message": "hi", "actions": [', "no JSON object"),
        ('{"message": "hi"}', "no 'actions' field"),
        ('{"actions": []}', "no 'message' field"),
        ('{"message": 3, "actions": []}', '"message" must be a string'),
        ('{"message": "x", "actions": {}}', '"actions" must be a list'),
        ('{"message": "x", "actions": [], "mood": "happy"}', "unknown field 'mood'"),
        ('{"message": "hi", "actions": [{"replace": 1, "by": {"shape": "x", "color": "y"}}, {"replace": 2',
         "cut short"),
    ],
)
def test_malformed_replies_are_format_errors_with_a_reason(text, reason):
    with pytest.raises(ReplyFormatError, match=reason):
        parse_reply(text)


@pytest.mark.parametrize(
    "action, reason",
    [
        ('"replace 1"', "an action must be an object"),
        ('{"replace": "1", "by": {"shape": "a", "color": "b"}}', '"replace" must be an integer'),
        ('{"replace": true, "by": {"shape": "a", "color": "b"}}', '"replace" must be an integer'),
        ('{"replace": 1, "by": "red square"}', '"by" must be an object'),
        ('{"replace": 1, "by": {"shape": "a"}}', '"color" must be a string'),
        ('{"replace": 1, "by": {"shape": 2, "color": "b"}}', '"shape" must be a string'),
        ('{"replace": 1, "with": {}}', "unknown field 'with'"),
        ('{"replace": 1, "by": {"shape": "a", "color": "b", "size": 3}}', "unknown field 'size'"),
    ],
)
def test_malformed_actions_are_rejected_one_by_one(action, reason):
    text = '{"message": "m", "actions": [' + action + ', {"replace": 1, "by": {"shape": "star", "color": "red"}}]}'
    reply = parse_reply(text)
    assert reply.actions == (Replace(1, "star", "red"),)
    assert len(reply.rejected) == 1 and reason in reply.rejected[0].reason


def test_format_reply_round_trips():
    actions = [Replace(1, "star", "red"), Replace(3, "moon", "blue")]
    reply = parse_reply(format_reply("Some prose.", 'say "hi"', actions))
    assert reply.message == 'say "hi"' and reply.actions == tuple(actions)


def test_non_text_reply_is_a_format_error():
    with pytest.raises(ReplyFormatError, match="not text"):
        parse_reply(None)  # type: ignore[arg-type]


from hypothesis import given, settings, strategies as st  # noqa: E402
import msgspec  # noqa: E402

_PIECES = st.sampled_from(['{', '}', '[', ']', '"', '\\', ':', ',', ' ', '\n', '\\ud800', '\\udc00', '\ud800', '\x00',
                           '\x1b', 'message', 'actions', '{"message": "', '"actions": [', '{"replace": 1, "by": {"shape": "star", "color": "red"}}'])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES | st.text(max_size=5), max_size=40))
def test_any_text_is_read_or_refused_and_what_is_read_can_be_stored(pieces):
    from puzzles.turn import clean_text

    text = clean_text("".join(pieces))
    try:
        reply = parse_reply(text)
    except ReplyFormatError:
        return
    msgspec.json.encode(reply)  # never raises: every string in it can be stored


def test_half_a_surrogate_pair_escaped_in_the_json_reads_as_a_replacement_character():
    reply = parse_reply('{"message": "a\\ud800b\\udc00\\ud83d\\ude00", "actions": []}')
    assert reply.message == "a\ufffdb\ufffd\U0001F600"


def test_a_flood_of_braces_before_the_reply_does_not_hide_it():
    reply = parse_reply("{" * 50_000 + "[{" * 10_000 + "\n" + GOOD)
    assert reply.message == "hi" and reply.actions == (Replace(2, "square", "red"),)


def _one_pass_reading(text):
    """``last_json_object`` without its fast path: what the one-pass reading alone finds."""
    from puzzles.positions import replies

    have, found = replies._last_object(text)
    wanted = isinstance(found, dict) and any(k in found for k in ("message", "actions"))
    if not wanted:
        repaired = replies._TRAILING_COMMA.sub(r"\1", text)
        if repaired != text:
            have_repaired, value = replies._last_object(repaired)
            if have_repaired and isinstance(value, dict) and any(k in value for k in ("message", "actions")):
                return value
    if not have:
        raise ReplyFormatError("no JSON object found in the reply")
    return found


def _reads_as_the_one_pass_reading(text):
    """``last_json_object`` finds what the one-pass reading alone finds, or refuses as it does."""
    from puzzles.positions.replies import last_json_object

    try:
        expected = _one_pass_reading(text)
    except ReplyFormatError:
        with pytest.raises(ReplyFormatError):
            last_json_object(text)
        return
    assert last_json_object(text) == expected


_AROUND = st.sampled_from(["", "Sure.\n", "```json\n", "\n```", "\n```\n", "{", "}", '{"outer":\n', "\n}", " ", "\n"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_AROUND | _PIECES, max_size=4), st.sampled_from([GOOD, '{"message": "a\\ud800", "actions": []}',
                                                                   '{\n  "message": "x",\n  "actions": []\n}']),
       st.lists(_AROUND | _PIECES, max_size=4))
def test_the_fast_path_finds_what_the_one_pass_reading_finds(before, reply, after):
    _reads_as_the_one_pass_reading("".join(before) + reply + "".join(after))


def test_a_reply_enclosed_in_another_object_is_read_as_the_enclosing_object():
    from puzzles.positions.replies import last_json_object

    assert last_json_object('{"outer":\n' + GOOD + "}") == {"outer": msgspec.json.decode(GOOD)}


@settings(max_examples=500, deadline=None)
@given(st.lists(_AROUND | _PIECES | st.text(max_size=4), max_size=12))
def test_a_text_from_brace_to_brace_reads_as_the_one_pass_reading_does(pieces):
    """The bare-object fast path (a text that starts with ``{`` and ends with ``}``)."""
    _reads_as_the_one_pass_reading("{" + "".join(pieces) + "}")
