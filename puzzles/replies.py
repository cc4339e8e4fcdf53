"""Reading an agent's reply: free text that must end with {"message": str, "actions": [...]}.

A reply whose JSON cannot be found or has the wrong shape is a format error (the whole turn is lost).
A well-formed reply can still carry individual actions that are malformed; those are rejected one by
one with a reason and the rest are kept. Vocabulary and range checks happen when actions are applied.
Nothing here raises anything but ``ReplyFormatError``.
"""

from __future__ import annotations

import json

import msgspec

from .asympuzl import Rejected, Replace

_decoder = json.JSONDecoder()
_TOP_LEVEL_FIELDS = ("message", "actions")


class ReplyFormatError(ValueError):
    """The reply has no usable JSON object at its end; the message says why."""


class Reply(msgspec.Struct, frozen=True, gc=False):
    message: str
    actions: tuple[Replace, ...]
    rejected: tuple[Rejected, ...] = ()


def last_json_object(text: str) -> object:
    """The last top-level JSON value that starts with '{' in ``text`` (prose and fences around it allowed)."""
    found: object = None
    have = False
    i = text.find("{")
    while i != -1:
        try:
            value, end = _decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        found, have = value, True
        i = text.find("{", end)
    if not have:
        raise ReplyFormatError("no JSON object found in the reply")
    return found


def _compact(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:200]
    except (TypeError, ValueError):
        return repr(value)[:200]


def _read_action(raw: object) -> Replace | str:
    """A Replace, or the reason the raw action is malformed."""
    if not isinstance(raw, dict):
        return "an action must be an object like {\"replace\": 1, \"by\": {\"shape\": ..., \"color\": ...}}"
    extra = sorted(set(raw) - {"replace", "by"})
    if extra:
        return f"unknown field {extra[0]!r} in action"
    position = raw.get("replace")
    if type(position) is not int:
        return f"\"replace\" must be an integer position, got {_compact(position)}"
    by = raw.get("by")
    if not isinstance(by, dict):
        return f"\"by\" must be an object with \"shape\" and \"color\", got {_compact(by)}"
    extra = sorted(set(by) - {"shape", "color"})
    if extra:
        return f"unknown field {extra[0]!r} in \"by\""
    shape, color = by.get("shape"), by.get("color")
    if not isinstance(shape, str):
        return f"\"shape\" must be a string, got {_compact(shape)}"
    if not isinstance(color, str):
        return f"\"color\" must be a string, got {_compact(color)}"
    return Replace(position, shape.strip().lower(), color.strip().lower())


def parse_reply(text: str) -> Reply:
    """Parse a reply; raise ReplyFormatError if it has no valid final JSON object."""
    if not isinstance(text, str):
        raise ReplyFormatError(f"the reply is not text but {type(text).__name__}")
    obj = last_json_object(text)
    if not isinstance(obj, dict):
        raise ReplyFormatError("the JSON at the end of the reply is not an object")
    if not any(k in obj for k in _TOP_LEVEL_FIELDS):
        raise ReplyFormatError(
            "no JSON object with \"message\" and \"actions\" at the end of the reply (is it cut short?)"
        )
    extra = sorted(set(obj) - set(_TOP_LEVEL_FIELDS))
    if extra:
        raise ReplyFormatError(f"unknown field {extra[0]!r} in the reply object")
    missing = [k for k in _TOP_LEVEL_FIELDS if k not in obj]
    if missing:
        raise ReplyFormatError(f"the reply object has no {missing[0]!r} field")
    message, raw_actions = obj["message"], obj["actions"]
    if not isinstance(message, str):
        raise ReplyFormatError(f"\"message\" must be a string, got {_compact(message)}")
    if not isinstance(raw_actions, list):
        raise ReplyFormatError(f"\"actions\" must be a list, got {_compact(raw_actions)}")
    actions: list[Replace] = []
    rejected: list[Rejected] = []
    for raw in raw_actions:
        result = _read_action(raw)
        if isinstance(result, Replace):
            actions.append(result)
        else:
            rejected.append(Rejected(_compact(raw), result))
    return Reply(message, tuple(actions), tuple(rejected))


def format_reply(prose: str, message: str, actions: tuple[Replace, ...] | list[Replace]) -> str:
    """A reply in the required format: prose, then the JSON object on its own line."""
    obj = {
        "message": message,
        "actions": [
            {"replace": a.position, "by": {"shape": a.shape, "color": a.color}} for a in actions
        ],
    }
    body = msgspec.json.encode(obj).decode()
    return f"{prose}\n{body}" if prose else body
