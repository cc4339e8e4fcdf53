"""Each seat's trajectory through one game, from what the run keeps of it: the game's record (its
outcome, scores, turn log) and its full transcript (every turn's prompt, raw reply and what the game
read; where the run asked the server for them, each model turn's ``tokens``).

The prompt becomes chat messages as the model policy sent them (``engine.policies.llm``): the
system prompt, then, for a game whose agents keep their chat (``Prompter.chat_memory``), the seat's
earlier turns (each its user prompt and the reply played, cleaned as the chat keeps it), then the
turn's user prompt. A trajectory asked with tokens must have them for every model turn: a server
that returned none (an API provider) is named in a ``MissingTokens`` error.
"""

from __future__ import annotations

from collections.abc import Collection

import msgspec

from bus import Tokens
from puzzles import Game
from puzzles.turn import clean_text

from engine.policies import is_model
from engine.records import GameRecord
from engine.records.transcripts import DETAIL_FULL, TranscriptTurn, decode_transcript
from engine.rollouts.rewards import seat_rewards, turn_rewards
from engine.rollouts.trajectory import ChatMessage, Trajectory, TurnStep


class MissingTokens(ValueError):
    """Token ids or log-probabilities were asked for and a model turn has none."""


def chat(turn: TranscriptTurn, earlier: list[TranscriptTurn], chat_memory: bool) -> list[ChatMessage]:
    """The prompt of a model turn as the messages sent; empty for a turn no model played."""
    prompt = turn.prompt
    if not isinstance(prompt, dict) or "user" not in prompt:
        return []
    messages = [ChatMessage("system", str(prompt.get("system", "")))]
    if chat_memory:
        shown = int(prompt.get("earlier_turns", 0))
        for before in earlier[len(earlier) - shown:] if shown else []:
            messages += [ChatMessage("user", str(before.prompt["user"])), ChatMessage("assistant", clean_text(before.reply))]
    messages.append(ChatMessage("user", str(prompt["user"])))
    return messages


def trajectories(
    record: GameRecord, line: bytes | None, game: Game, *, trained: Collection[str] | None = None,
    reward: str = "reward", tokens: bool = False,
) -> list[Trajectory]:
    """Every seat's trajectory through the game of ``record``, its full transcript ``line`` read
    for the turns. ``trained``: the seats a trainer trains (None: every seat a model plays);
    ``reward``: which of the game's rewards is a trajectory's ``reward``; ``tokens``: every model
    turn must carry its tokens (else ``MissingTokens``); without it none is kept."""
    spec = record.spec
    transcript = decode_transcript(line)  # a messages-only one has no prompts to read
    turns = transcript.turns if transcript is not None and transcript.detail == DETAIL_FULL else []
    ends = seat_rewards(record, game)
    per_turn = turn_rewards(record, game) if record.turn_log else {}
    out = []
    for role, policy in spec.agents.items():
        model = is_model(policy)
        named = ends.get(role, {})
        if named and reward not in named:
            raise ValueError(f"{game.name} has no reward {reward!r}; it names {', '.join(named)}")
        steps: list[TurnStep] = []
        played: list[TranscriptTurn] = []
        for turn in (t for t in turns if t.role == role):
            earned, progress = per_turn.get((turn.turn, role), (0.0, 0.0))
            messages = chat(turn, played, game.faces.prompter.chat_memory)
            given = turn.tokens if isinstance(turn.tokens, Tokens) and None not in msgspec.structs.astuple(turn.tokens) else None
            if tokens and messages and given is None:
                raise MissingTokens(f"game {record.game_id}, seat {role}, turn {turn.turn}: the server ({policy}) returned no "
                                    "token ids or log-probabilities; ask for text-only trajectories (no tokens)")
            steps.append(TurnStep(
                turn=turn.turn, messages=messages, reply=turn.reply, message=turn.message, actions=turn.actions,
                rejected=turn.rejected, format_error=turn.format_error, reward=earned, progress=progress,
                delivered={d.recipient: d.text for d in turn.delivered}, tokens=given if tokens else None,
            ))
            if messages:
                played.append(turn)
        cut = {log.turn for log in record.turn_log if log.role == role and log.cut is True}
        for step in steps:
            step.cut = step.turn in cut
        out.append(Trajectory(
            game_id=record.game_id, seed=spec.seed, member=spec.member, game=spec.game, role=role, policy=policy,
            model=policy if model else None, trainable=model and (trained is None or role in trained),
            sampling=dict(record.sampling) if model and isinstance(record.sampling, dict) else {},
            outcome=record.outcome, reward=named.get(reward), rewards=named, steps=steps,
            error=None if record.error is None else f"{record.error.kind}: {record.error.message}",
        ))
    return out
