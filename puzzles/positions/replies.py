"""Reading a reply that is free text ending with {"message": str, "actions": [...]}.

Hand-written rather than a JSON-schema library: the object has to be found at the end of free
text (prose, code fences, trailing commas) before it can be validated, and every problem must come
back as one sentence a model can act on. A reply whose JSON cannot be found or has the wrong shape
is a format error (the whole turn is lost). A well-formed reply can still carry individual actions
that are malformed; those are rejected one by one with a reason and the rest are kept. The game
reads each action (``read_action``) and checks it when it is applied. Nothing here raises anything
but ``ReplyFormatError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

from ..turn import Rejected, Reply, ReplyFormatError

_TOP_LEVEL_FIELDS = ("message", "actions")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_STRUCTURE = re.compile(rb'[{}\[\]"\\]')
_OPEN_BRACE, _CLOSE_BRACE, _OPEN_BRACKET, _QUOTE, _BACKSLASH = b"{", b"}", b"[", b'"', b"\\"
# A \u escape of half a surrogate pair with no other half: JSON allows it, no text can hold it.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_decode = msgspec.json.Decoder().decode
WORK_FACTOR = 4  # bytes decoded while looking for the object, at most, per byte of the reply
_FENCE = "```"


def _closing_object(text: str) -> object:
    """The fast path for a well-formed reply: the object that ends the text (a code fence after it
    allowed), when no ``{`` comes before the line it starts on, decoded in one call; None otherwise.

    Under those conditions the one-pass reading below finds the same object: no balanced region
    can start before it or enclose it, and once it decodes it hides every region inside it. Any
    doubt (a brace in the prose, a decoding error, half a surrogate pair) leaves it to that reading."""
    end = text.rstrip()
    if end[-1:] != "}":
        if not end.endswith(_FENCE):
            return None
        end = end[: -len(_FENCE)].rstrip()
    start = end.rfind("\n{") + 1
    if start and "{" in end[:start]:
        return None
    try:
        return _decode(end[start:] if start else end)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError):  # half a surrogate pair, escaped or raw
        return None


def _object_spans(data: bytes) -> list[tuple[int, int]]:
    """Every balanced ``{...}`` of ``data`` as (start, end), in order of start, in one pass. Outside
    braces everything is prose; inside, strings are read as JSON strings, so braces in them do not
    count. A ``]`` that closes a ``{`` (or the reverse) drops what is open."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, bytes]] = []
    in_string = False
    skip = -1
    for match in _STRUCTURE.finditer(data):
        i, c = match.start(), match.group()
        if in_string:
            if i == skip:
                continue
            if c == _BACKSLASH:
                skip = i + 1
            elif c == _QUOTE:
                in_string = False
            continue
        if not stack:
            if c == _OPEN_BRACE:
                stack.append((i, c))
            continue
        if c == _QUOTE:
            in_string = True
        elif c in (_OPEN_BRACE, _OPEN_BRACKET):
            stack.append((i, c))
        elif c != _BACKSLASH:
            start, opener = stack.pop()
            if (opener == _OPEN_BRACE) != (c == _CLOSE_BRACE):
                stack.clear()
            elif opener == _OPEN_BRACE:
                spans.append((start, i + 1))
    spans.sort()
    return spans


def _last_object(text: str) -> tuple[bool, object]:
    """The last top-level JSON object of ``text``: the balanced regions are decoded in order, and one
    that decodes hides the regions inside it. Linear: regions are found in one pass and decoded
    without copies, and decoding stops after ``WORK_FACTOR`` times the reply's length."""
    data = _LONE_SURROGATE.sub(r"\\ufffd", text).encode("utf-8", "surrogatepass")
    view = memoryview(data)
    found: object = None
    have = False
    budget = WORK_FACTOR * len(data) + 1024
    covered = -1
    for start, end in _object_spans(data):
        if start < covered:
            continue
        budget -= end - start
        if budget < 0:
            break
        try:
            found, have, covered = msgspec.json.decode(view[start:end]), True, end
        except (msgspec.DecodeError, RecursionError):
            continue
    return have, found


def last_json_object(text: str, keys: tuple[str, ...] = _TOP_LEVEL_FIELDS) -> object:
    """The last top-level JSON value that starts with '{' in ``text`` (prose and fences around it
    allowed). If it is not an object with one of ``keys``, the text is read again with trailing commas
    (``[1, 2,]``, ``{"a": 1,}``) forgiven, and that reading is taken if it finds such an object."""

    if text[:1] == "{" and text[-1:] == "}":  # a bare object, as asked for: what the one-pass reading finds if it decodes
        try:
            closing = _decode(text)
        except (msgspec.DecodeError, UnicodeEncodeError, RecursionError):
            closing = None
    else:
        closing = _closing_object(text)
    if type(closing) is dict and not closing.keys().isdisjoint(keys):
        return closing

    def wanted(value: object) -> bool:
        return isinstance(value, dict) and not value.keys().isdisjoint(keys)

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


def compact(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:200]
    except (TypeError, ValueError):
        return repr(value)[:200]


def position_action_reader(attributes: tuple[str, ...], build: Callable[[int, tuple[str, ...]], Any]) -> Callable[[object], Any]:
    """Reads ``{"replace": <position>, "by": {<attribute>: <value>, ...}}`` into ``build(position,
    values)`` (values trimmed and lower-cased, in ``attributes`` order), or the reason it is malformed."""
    example = ", ".join(f'"{a}": ...' for a in attributes)
    names = " and ".join(f'"{a}"' for a in attributes)
    action_fields, attribute_fields = frozenset(("replace", "by")), frozenset(attributes)

    def read(raw: object) -> Any:
        if not isinstance(raw, dict):
            return f"an action must be an object like {{\"replace\": 1, \"by\": {{{example}}}}}"
        if not action_fields.issuperset(raw):
            return f"unknown field {sorted(set(raw) - action_fields)[0]!r} in action"
        position = raw.get("replace")
        if type(position) is not int:
            return f"\"replace\" must be an integer position, got {compact(position)}"
        by = raw.get("by")
        if not isinstance(by, dict):
            return f"\"by\" must be an object with {names}, got {compact(by)}"
        if not attribute_fields.issuperset(by):
            return f"unknown field {sorted(set(by) - attribute_fields)[0]!r} in \"by\""
        values = []
        for name in attributes:
            value = by.get(name)
            if not isinstance(value, str):
                return f"\"{name}\" must be a string, got {compact(value)}"
            values.append(value.strip().lower())
        return build(position, tuple(values))

    return read


def read_reply(
    text: str,
    read_action: Callable[[object], Any],
    *,
    optional: tuple[str, ...] = (),
) -> Reply:
    """Read a reply; raise ReplyFormatError if it has no valid final JSON object.

    ``read_action(raw)`` turns one raw action into the game's action, or returns a ``str``: the
    reason it is malformed (it is then rejected alone and the others kept). ``optional`` are
    top-level string fields a game allows besides "message" and "actions" (such as "to" or
    "scratchpad").
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
        raise ReplyFormatError(f"\"message\" must be a string, got {compact(message)}")
    if not isinstance(raw_actions, list):
        raise ReplyFormatError(f"\"actions\" must be a list, got {compact(raw_actions)}")
    extras: dict[str, str] = {}
    for name in optional:
        if name in obj:
            if not isinstance(obj[name], str):
                raise ReplyFormatError(f"\"{name}\" must be a string, got {compact(obj[name])}")
            extras[name] = obj[name]
    actions: list[Any] = []
    rejected: list[Rejected] = []
    for raw in raw_actions:
        result = read_action(raw)
        if isinstance(result, str):
            rejected.append(Rejected(compact(raw), result))
        else:
            actions.append(result)
    return Reply(message, tuple(actions), tuple(rejected), extras.get("to"), extras.get("scratchpad"))


def optional_fields(context: Any) -> tuple[str, ...]:
    """The top-level fields a reply to ``context`` may carry besides "message" and "actions"."""
    return (("to",) if context.directed else ()) + (("scratchpad",) if context.keeps_notes else ())


def format_json_reply(prose: str, message: str, actions: list[Any], **extra: str | None) -> str:
    """A reply in the JSON format: prose, then the object on its own line. ``actions`` are already
    in their JSON shape; ``extra`` adds optional top-level fields (those that are not None)."""
    obj: dict[str, Any] = {"message": message, "actions": actions}
    obj.update({k: v for k, v in extra.items() if v is not None})
    body = msgspec.json.encode(obj).decode()
    return f"{prose}\n{body}" if prose else body
