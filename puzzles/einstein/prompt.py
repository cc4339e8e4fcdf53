"""The Einstein game's side of the model policy: the reference's prompt (every step a fresh system
and user pair, no chat memory), its ``<THINK>…</THINK><ACTION>…</ACTION>`` replies, and reading a
prompt back (the local model server answers it as a scripted strategy would).

The prompt is the reference's, word for word, in its default use. It shows no step count; the step
is the number of history lines, the round ``steps // 2 + 1``. What the engine adds is shown only
when it is not the default, each as a paragraph before the closing question:
- a turn limit other than 15 rounds: "The game ends after 2T steps in all.";
- with ``notices``: why the last step failed ("About your last step: ...");
- the messages the channels delivered, unless they are exactly the echo of the partner's latest
  share or ask, which the history already shows (the default: every share and ask reaches the
  partner as such a message, and an agent is shown each partner's latest message);
- with directed messages, one line saying so.

Replies are read as the reference reads them: the first ``<ACTION>…</ACTION>`` block (non-greedy),
stripped; the THINK part is not needed. An action that does not read is ``Unreadable``: the step is
spent and shows as "pass the turn, but failed.". Only a reply that is not text is a format error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from typing import Any

import msgspec

from ..turn import ChatLine, Reply, ReplyFormatError, TurnContext
from .actions import Action, Unreadable, _Bad, _item, item_text, read_action, reply_text
from .board import BIN_NAMES, BIN_OF, BOARD_ORDER, DELTA, REACH, ROLES, SIDE
from .prompt_text import system_prompts, user_template
from .view import EinsteinView, HistoryEntry, history_line

DEFAULT_ROUNDS = 15
SYSTEMS = system_prompts()
_SYSTEM_KEY = {text: key for key, text in SYSTEMS.items()}
_ACTION = re.compile(r"<ACTION>([\s\S]*?)</ACTION>")
_QUESTION = "\n\nWhat action would you like to take?"
_LIMIT = re.compile(r"^The game ends after (\d+) steps in all\.$")
NOTICES_HEAD, NO_NOTICES = "About your last step:", "About your last step: nothing to report."
MESSAGES_HEAD, NO_MESSAGES = "Messages:", "Messages: none."
DIRECTED = "Messages you send go to one named partner."
_MESSAGE = re.compile(r"^(You|Partner) \(turn (\d+)\): (.*)$")


def partner_of(role: str) -> str:
    return ROLES[1 - ROLES.index(role)]


def echo(view: EinsteinView, role: str) -> ChatLine | None:
    """The message the partner's latest share or ask sent (what an agent is shown by default)."""
    for step in range(len(view.history) - 1, -1, -1):
        entry = view.history[step]
        if not entry.mine and not entry.failed and entry.text.startswith(("share ", "ask ")):
            return ChatLine(step // 2 + 1, partner_of(role), entry.text)
    return None


def _extras(context: TurnContext) -> list[str]:
    view: EinsteinView = context.view
    out = []
    if context.max_turns != DEFAULT_ROUNDS:
        out.append(f"The game ends after {2 * context.max_turns} steps in all.")
    if view.notices:
        lines = [f"- {json.dumps(n)}" for n in context.notices]
        out.append("\n".join([NOTICES_HEAD, *lines]) if lines else NO_NOTICES)
    expected = echo(view, context.role)
    conversation = tuple(context.conversation)
    if conversation != ((expected,) if expected else ()):
        if not conversation:
            out.append(NO_MESSAGES)
        else:
            lines = [
                f"{'You' if line.sender == context.role else 'Partner'} (turn {line.turn}): {json.dumps(line.text)}"
                for line in conversation
            ]
            out.append("\n".join([MESSAGES_HEAD, *lines]))
    if context.directed:
        out.append(DIRECTED)
    return out


def render_prompt(context: TurnContext) -> tuple[str, str]:
    view: EinsteinView = context.view
    system = SYSTEMS[(view.prompt, view.mode, view.cot)]
    blocks = "".join(f"{BIN_NAMES[b]}: [{', '.join(f'block{x}' for x in view.bins[b])}]\n" for b in BOARD_ORDER)
    history = "\n".join(history_line(e) for e in view.history) if view.history else "This is the first turn."
    user = user_template(view.prompt, view.cot).format(
        player_id=ROLES.index(context.role) + 1, side=SIDE[context.role],
        knowledge="".join(item_text(i) + "\n" for i in view.knowledge), blocks=blocks, bins=repr(list(view.reach)),
        move_history=history, extra="".join("\n\n" + part for part in _extras(context)),
    )
    return system, user


def parse_reply(text: Any) -> Reply:
    if not isinstance(text, str):
        raise ReplyFormatError(f"the reply is not text but {type(text).__name__}")
    found = _ACTION.search(text)
    return Reply(message="", actions=(read_action(found.group(1).strip() if found else ""),))


THINK_CHARS = 600  # characters of reasoning under a grammar (a looping model still ends its reply)
_BLOCK = '"block" ([0-9] | [12] [0-9] | "30")'
_BIN = "(" + " | ".join(f'"{name}"' for name in BIN_NAMES) + ")"
REPLY_GRAMMAR = "\n".join([
    'root ::= ("<THINK>" think "</THINK>")? "<ACTION>" action "</ACTION>"',
    f"think ::= [^<]{{0,{THINK_CHARS}}}",
    'action ::= "pass" | "ask " block | "share " item | "move " block " from " bin " to " bin',
    'item ::= "(" block ", in, " bin ")" | "(" block ", " block ", same, " relation ")"',
    f"block ::= {_BLOCK}",
    f"bin ::= {_BIN}",
    "relation ::= (" + " | ".join(f'"{kind}"' for kind in DELTA) + ")",
]) + "\n"
"""The reply as a GBNF grammar (``puzzles.base.ReplyGrammar``): reasoning if any, bounded and without
``<``, then one action as the reference reads it."""


def format_reply(reply: Reply, prose: str = "") -> str:
    action = reply.actions[0] if reply.actions else Unreadable("")
    think = f"<THINK>{prose}</THINK>" if prose else ""
    return f"{think}<ACTION>{reply_text(action)}</ACTION>"


# ---- Reading a prompt back ----

_HEAD = re.compile(
    r"^\n?You are Player([12]) on the (bottom|top) side of the game board\. You have the following knowledge for "
    r"your goal:\n((?:.*\n)*?)\nCurrently, the blocks are located as follows:\n((?:.*\n){7})\nYou can access these "
    r"bins:\n(.*)\n\nThe history of the game till now:\n"
)
_BIN_LINE = re.compile(r"^([a-z0-9_]+): \[(.*)\]$")
_HISTORY = re.compile(r"^(You|Partner): (.*?)(, but failed\.)?$")


class _Unreadable(Exception):
    pass


def _items(text: str):
    items = []
    for line in text.splitlines():
        try:
            items.append(_item(line))
        except _Bad:
            raise _Unreadable from None
    return tuple(items)


def _bins(text: str) -> tuple[tuple[int, ...], ...]:
    bins: list[tuple[int, ...]] = [()] * len(BIN_NAMES)
    for line in text.splitlines():
        m = _BIN_LINE.match(line)
        if m is None or m.group(1) not in BIN_OF:
            raise _Unreadable
        names = [x for x in m.group(2).split(", ") if x]
        if not all(re.fullmatch(r"block\d+", x) for x in names):
            raise _Unreadable
        bins[BIN_OF[m.group(1)]] = tuple(int(x[5:]) for x in names)
    return tuple(bins)


def _history(lines: list[str]) -> tuple[HistoryEntry, ...]:
    if lines == ["This is the first turn."]:
        return ()
    entries = []
    for line in lines:
        m = _HISTORY.match(line)
        if m is None:
            raise _Unreadable
        entries.append(HistoryEntry(m.group(1) == "You", m.group(2), m.group(3) is not None))
    return tuple(entries)


def read_prompt(system: str, user: str) -> TurnContext | None:
    """The context an Einstein prompt shows, or None if it is not one."""
    key = _SYSTEM_KEY.get(system)
    head = _HEAD.match(user)
    if key is None or head is None or _QUESTION not in user:
        return None
    prompt, mode, cot = key
    role = ROLES[int(head.group(1)) - 1]
    body = user[head.end(): user.rindex(_QUESTION)]
    try:
        parts = body.split("\n\n")
        history = _history(parts[0].split("\n"))
        view = EinsteinView(
            mode=mode, prompt=prompt, cot=cot, notices=False, knowledge=_items(head.group(3)),
            bins=_bins(head.group(4)), reach=tuple(re.findall(r"'([a-z0-9_]+)'", head.group(5))), history=history,
        )
        max_turns, notices, directed = DEFAULT_ROUNDS, (), False
        conversation: tuple[ChatLine, ...] | None = None
        for part in parts[1:]:
            if (m := _LIMIT.match(part)) is not None:
                max_turns = int(m.group(1)) // 2
            elif part == NO_NOTICES or part.startswith(NOTICES_HEAD + "\n"):
                view = _with(view, notices=True)
                notices = tuple(json.loads(line[2:]) for line in part.split("\n")[1:])
            elif part == NO_MESSAGES:
                conversation = ()
            elif part.startswith(MESSAGES_HEAD + "\n"):
                lines = []
                for line in part.split("\n")[1:]:
                    m = _MESSAGE.match(line)
                    if m is None:
                        raise _Unreadable
                    sender = role if m.group(1) == "You" else partner_of(role)
                    lines.append(ChatLine(int(m.group(2)), sender, json.loads(m.group(3))))
                conversation = tuple(lines)
            elif part == DIRECTED:
                directed = True
            else:
                raise _Unreadable
    except (_Unreadable, ValueError):
        return None
    if view.reach != tuple(BIN_NAMES[b] for b in REACH[role]) or sorted(b for bin_ in view.bins for b in bin_) != list(range(view.blocks)):
        return None
    if conversation is None:
        expected = echo(view, role)
        conversation = (expected,) if expected else ()
    return TurnContext(
        game_id=0, role=role, turn=len(history) // 2 + 1, max_turns=max_turns, view=view, feedback=None,
        conversation=conversation, notices=notices, partners=(partner_of(role),), directed=directed,
    )


def _with(view: EinsteinView, **changes) -> EinsteinView:
    return msgspec.structs.replace(view, **changes)


class EinsteinPrompter:
    """The Einstein game's side of the model policy (``puzzles.base.Prompter``)."""

    chat_memory = False  # each turn is a fresh (system, user) pair

    def render(self, context: TurnContext[EinsteinView]) -> tuple[str, str]:
        return render_prompt(context)

    def schema(self, context: TurnContext[EinsteinView]) -> dict[str, Any] | None:
        return None  # the reply is tagged text: constrained by its grammar

    def grammar(self, context: TurnContext[EinsteinView]) -> str:
        return REPLY_GRAMMAR

    def parse(self, text: str, context: TurnContext[EinsteinView]) -> Reply[Action]:
        return parse_reply(text)

    def format(self, reply: Reply[Action], prose: str = "") -> str:
        return format_reply(reply, prose)

    def read(self, system: str, user: str) -> tuple[TurnContext[EinsteinView], Hashable] | None:
        context = read_prompt(system, user)
        if context is None:
            return None
        return context, (context.role, system, user)


__all__ = ["EinsteinPrompter", "format_reply", "parse_reply", "read_prompt", "render_prompt"]
