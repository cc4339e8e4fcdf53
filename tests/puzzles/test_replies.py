"""Reading replies that end in the JSON object: the shared reader with AsymPuzl's actions."""

import pytest

from puzzles.asympuzl.prompt import format_reply, parse_reply
from puzzles.asympuzl.rules import Replace
from puzzles.base import ReplyFormatError

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
