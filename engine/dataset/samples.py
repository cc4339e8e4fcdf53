"""One training sample: the chat a model in a seat was sent (system prompt, the earlier turns the seat
keeps, the turn's prompt) and the reply that was played, in the conversational ``messages`` form
Hugging Face ``datasets`` and TRL's ``SFTTrainer`` read; beside it, where it comes from and the
actions it played. Every sample is checked: the game's reply reader reads the reply back to the
actions the game applied."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from engine.backends import Request, chat_turns
from puzzles import Game, ReplyFormatError

if TYPE_CHECKING:
    from bus import Act
    from puzzles import TurnContext


class DatasetError(ValueError):
    """A dataset cannot be made, read or written; the message says why in one line."""


class Sample(msgspec.Struct, frozen=True, gc=False):
    """What ``train.jsonl`` holds, one per line: ``{"messages": [...]}``."""

    messages: list[dict[str, str]]


class SampleInfo(msgspec.Struct, frozen=True, gc=False):
    """What ``meta.jsonl`` holds, line by line beside ``train.jsonl``: the trajectory (its place in
    the dataset), the part of the dataset and the seed of its game, its label (the policy, or the
    kind of demonstration), the seat and turn, the sample's place in its trajectory, and the actions
    the game applied (as JSON)."""

    trajectory: int
    part: int
    seed: int
    label: str
    role: str
    turn: int
    step: int
    actions: list[Any]


def messages(request: Request, reply: str) -> list[dict[str, str]]:
    """The chat of one call as the engine sends it to a chat-completions server, and the reply."""
    return [
        {"role": "system", "content": request.system}, *chat_turns(request.history),
        {"role": "user", "content": request.user}, {"role": "assistant", "content": reply},
    ]


def read_back(game: Game, text: str, context: TurnContext) -> list[Any]:
    """The actions the game's reader reads in ``text`` (JSON); DatasetError if it cannot read it."""
    try:
        reply = game.faces.prompter.parse(text, context)
    except ReplyFormatError as exc:
        raise DatasetError(f"a reply does not read back: {exc}") from None
    if reply.rejected:
        raise DatasetError(f"a reply has actions that do not read: {reply.rejected[0].action}")
    return msgspec.to_builtins(list(reply.actions))


def checked(game: Game, text: str, context: TurnContext, act: Act, where: str) -> list[Any]:
    """The actions ``act`` played, after checking that ``text`` reads back to them and nothing else."""
    if act.format_error is not None:
        raise DatasetError(f"{where}: the reply could not be read ({act.format_error})")
    if act.rejected:
        raise DatasetError(f"{where}: the reply has actions that do not read")
    played = msgspec.to_builtins(list(act.actions))
    if act.reply != text or read_back(game, text, context) != played:
        raise DatasetError(f"{where}: the reply does not read back to the actions played")
    return played


__all__ = ["DatasetError", "Sample", "SampleInfo", "checked", "messages", "read_back"]
