"""Reading an agent's reply: free text that must end with {"message": str, "actions": [...]}.

A reply whose JSON cannot be found or has the wrong shape is a format error (the whole turn is lost).
A well-formed reply can still carry individual actions that are malformed; those are rejected one by
one with a reason and the rest are kept. Vocabulary and range checks happen when actions are applied.
Nothing here raises anything but ``ReplyFormatError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

from .asympuzl import Rejected, Replace

_decoder = json.JSONDecoder()
_TOP_LEVEL_FIELDS = ("message", "actions")


class ReplyFormatError(ValueError):
    """The reply has no usable JSON object at its end; the message says why."""


class Reply(msgspec.Struct, frozen=True, gc=False):
    message: str
    actions: tuple[Any, ...]
    rejected: tuple[Rejected, ...] = ()
    to: str | None = None  # the one recipient, where messages are directed
    scratchpad: str | None = None  # what the agent carries to its next turn, where allowed


_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _last_object(text: str) -> tuple[bool, object]:
    found: object = None
    have = False
    i = text.find("{")
    while i != -1:
        try:
            value, end = _decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            i = text.find("{", i + 1)
            continue
        found, have = value, True
        i = text.find("{", end)
    return have, found


def last_json_object(text: str, keys: tuple[str, ...] = _TOP_LEVEL_FIELDS) -> object:
    """The last top-level JSON value that starts with '{' in ``text`` (prose and fences around it
    allowed). If it is not an object with one of ``keys``, the text is read again with trailing commas
    (``[1, 2,]``, ``{"a": 1,}``) forgiven, and that reading is taken if it finds such an object."""

    def wanted(value: object) -> bool:
        return isinstance(value, dict) and any(k in value for k in keys)

    have, found = _last_object(text)
    if not wanted(found):
        repaired = _TRAILING_COMMA.sub(r"\1", text)
        if repaired != text:
            have_repaired, value = _last_object(repaired)
            if have_repaired and wanted(value):
                return value
    if not have:
        raise ReplyFormatError("no JSON object found in the reply")
    return found


def _compact(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:200]
    except (TypeError, ValueError):
        return repr(value)[:200]


def _read_action(raw: object, attributes: tuple[str, ...]) -> tuple[int, tuple[str, ...]] | str:
    """(position, attribute values), or the reason the raw action is malformed."""
    if not isinstance(raw, dict):
        example = ", ".join(f'"{a}": ...' for a in attributes)
        return f"an action must be an object like {{\"replace\": 1, \"by\": {{{example}}}}}"
    extra = sorted(set(raw) - {"replace", "by"})
    if extra:
        return f"unknown field {extra[0]!r} in action"
    position = raw.get("replace")
    if type(position) is not int:
        return f"\"replace\" must be an integer position, got {_compact(position)}"
    by = raw.get("by")
    if not isinstance(by, dict):
        names = " and ".join(f'\"{a}\"' for a in attributes)
        return f"\"by\" must be an object with {names}, got {_compact(by)}"
    extra = sorted(set(by) - set(attributes))
    if extra:
        return f"unknown field {extra[0]!r} in \"by\""
    values = []
    for name in attributes:
        value = by.get(name)
        if not isinstance(value, str):
            return f"\"{name}\" must be a string, got {_compact(value)}"
        values.append(value.strip().lower())
    return position, tuple(values)


def parse_reply(
    text: str,
    *,
    attributes: tuple[str, ...] = ("shape", "color"),
    optional: tuple[str, ...] = (),
    make_action: Callable[[int, tuple[str, ...]], Any] | None = None,
) -> Reply:
    """Parse a reply; raise ReplyFormatError if it has no valid final JSON object.

    ``attributes`` are the fields of an action's "by"; ``optional`` are top-level string fields a
    game allows besides "message" and "actions" (such as "to" or "scratchpad"); ``make_action``
    builds an action from (position, values), by default an AsymPuzl ``Replace``.
    """
    if not isinstance(text, str):
        raise ReplyFormatError(f"the reply is not text but {type(text).__name__}")
    obj = last_json_object(text)
    if not isinstance(obj, dict):
        raise ReplyFormatError("the JSON at the end of the reply is not an object")
    if not any(k in obj for k in _TOP_LEVEL_FIELDS):
        raise ReplyFormatError(
            "no JSON object with \"message\" and \"actions\" at the end of the reply (is it cut short?)"
        )
    extra = sorted(set(obj) - set(_TOP_LEVEL_FIELDS) - set(optional))
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
    extras: dict[str, str] = {}
    for name in optional:
        if name in obj:
            if not isinstance(obj[name], str):
                raise ReplyFormatError(f"\"{name}\" must be a string, got {_compact(obj[name])}")
            extras[name] = obj[name]
    build = make_action or (lambda position, values: Replace(position, *values))
    actions: list[Any] = []
    rejected: list[Rejected] = []
    for raw in raw_actions:
        result = _read_action(raw, attributes)
        if isinstance(result, str):
            rejected.append(Rejected(_compact(raw), result))
        else:
            actions.append(build(*result))
    return Reply(message, tuple(actions), tuple(rejected), extras.get("to"), extras.get("scratchpad"))


def format_reply(prose: str, message: str, actions, **extra: str | None) -> str:
    """A reply in the required format: prose, then the JSON object on its own line. Actions are
    AsymPuzl ``Replace``s or anything with ``position`` and an ``as_by()`` dict; ``extra`` adds
    optional top-level fields (those that are not None)."""
    obj: dict[str, Any] = {
        "message": message,
        "actions": [
            {"replace": a.position, "by": a.as_by() if hasattr(a, "as_by") else {"shape": a.shape, "color": a.color}}
            for a in actions
        ],
    }
    obj.update({k: v for k, v in extra.items() if v is not None})
    body = msgspec.json.encode(obj).decode()
    return f"{prose}\n{body}" if prose else body
