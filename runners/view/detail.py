"""One game as plain data, for the terminal replay (``runners.replay``) and the HTML viewer alike,
so that both show the same detail.

The game is rebuilt from its spec (``Rules.new``) and each turn's actions are applied again through
``GameState.step``, so the game (``Faces.replay``) can show its state after every turn, and the view
each agent had where the transcript does not keep it (messages-only transcripts). Where the
rebuilt game differs from what was recorded (the instance, a turn's progress, a best-of-n choice),
a note says so. Without a transcript, the record's turn log is all there is.

Everything returned is JSON data: lines are lists of ``[text, mark]`` spans (``puzzles.common.replay``),
a board is ``{"columns": [...], "rows": [[[text, mark], ...], ...]}``, drawn at the start and the end
(each turn's ``after`` lines say what the turn changed). The seats a person played are in ``humans``
(role name -> front end, participant id, turns, timeouts, seconds), and each of their turns has its
``human``: ``{"seconds", "timed_out"}`` (None for an agent's turn).
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine import GameRecord
from engine.policies import is_human
from engine.records import DETAIL_FULL, Transcript, TranscriptTurn
from puzzles import BestOfN, Game, Rejected, get_game, implements
from puzzles.common.replay import BoardReplay


def role_name(role: str) -> str:
    return role.capitalize()


class BasicReplay:
    """The replay of a game that has none of its own (``Faces.replay`` is None): actions as JSON,
    progress as a number."""

    def header(self, state: Any) -> list:
        return []

    def feedback(self, feedback: Any) -> str | None:
        return None if feedback is None else msgspec.json.encode(feedback).decode()

    def actions(self, actions: tuple[Any, ...]) -> str:
        return "; ".join(msgspec.json.encode(a).decode() for a in actions)

    def after(self, state: Any, role: str) -> list:
        return []

    def progress(self, state: Any, value: int | float) -> str:
        return f"progress {value}"


def spans(line: Any) -> list[list[str]]:
    return [[span.text, span.mark] for span in line]


def board_of(replay: Any, state: Any) -> dict | None:
    board = replay.board(state) if implements(replay, BoardReplay) else None
    if board is None:
        return None
    return {"columns": list(board.columns), "rows": [[[c.text, c.mark] for c in row] for row in board.rows]}


plain = msgspec.to_builtins  # a value as JSON data (structs become objects)


def rejected_of(items: Any) -> list[list[str]]:
    try:
        read = msgspec.convert(list(items), tuple[Rejected, ...])
    except msgspec.ValidationError:
        read = tuple(Rejected(str(item), "") for item in items)
    return [[r.action, r.reason] for r in read]


def usage_of(usage: Any) -> dict | None:
    if usage is None or usage is msgspec.UNSET:
        return None
    return plain(usage)


def humans_of(record: GameRecord) -> dict[str, dict]:
    """The seats a person played, by role name: the front end, the participant id (never a name),
    turns, timeouts and response seconds; a seat whose policy is ``human`` with no summary gets an empty one."""
    seats = {role_name(role): plain(seat) for role, seat in (record.humans or {}).items()}
    for role, policy in record.spec.agents.items():
        if is_human(str(policy)):
            seats.setdefault(role_name(role), {})
    return seats


def human_of(value: Any) -> dict | None:
    """A person's turn: ``{"seconds": ..., "timed_out": ...}``; None for a turn no person played."""
    if value is None or value is msgspec.UNSET:
        return None
    data = plain(value)
    return {"seconds": data.get("seconds"), "timed_out": bool(data.get("timed_out", False))}


def outcome_text(record: GameRecord) -> str:
    if record.outcome == "success":
        return f"solved at turn {record.solved_turn}"
    if record.outcome == "failure":
        return f"not solved in {record.spec.max_turns} turns"
    return "error"


def _candidates(game: Game, replay: Any, turn: TranscriptTurn, state: Any, notes: list[str]) -> list[dict]:
    """A best-of-n turn: every sampled reply, the one played marked; the game chooses again, as it did."""
    if not turn.candidates or turn.chosen is None:
        return []
    shown, read = [], []
    for i, candidate in enumerate(turn.candidates):
        try:
            actions = msgspec.convert(candidate.get("actions", []), tuple[game.rules.Action, ...])  # type: ignore[name-defined]  # a type made at run time
        except msgspec.ValidationError:
            actions = ()
        read.append(actions)
        text = replay.actions(actions) if actions else f"unreadable ({candidate.get('format_error') or 'no action'})"
        shown.append({"text": text, "chosen": i == turn.chosen, "message": candidate.get("message", "")})
    if implements(state, BestOfN) and state.choose(turn.role, tuple(read)) != turn.chosen:
        notes.append("the replayed game chooses another candidate here")
    return shown


def _turn(game: Game, replay: Any, turn: TranscriptTurn, state: Any, view: Any, max_actions: int | None) -> dict:
    """One turn as data; applies the turn's actions to ``state`` as the referee did."""
    notes: list[str] = []
    step: dict[str, Any] = {
        "turn": turn.turn, "role": turn.role, "name": role_name(turn.role),
        "view": plain(view), "feedback": replay.feedback(turn.feedback), "notices": list(turn.notices),
        "format_error": turn.format_error, "message": turn.message,
        "delivered": [[role_name(d.recipient), d.text] for d in turn.recipients() if d.text != turn.message],
        "heard": [role_name(d.recipient) for d in turn.recipients() if d.text == turn.message],
        "prompt": plain(turn.prompt), "reply": turn.reply or None, "usage": usage_of(turn.usage), "latency": turn.latency,
        "human": human_of(turn.human),
    }
    step["candidates"] = _candidates(game, replay, turn, state, notes)
    try:
        actions = msgspec.convert(turn.actions, tuple[game.rules.Action, ...])  # type: ignore[name-defined]  # a type made at run time
    except msgspec.ValidationError:
        actions = None
        notes.append(f"actions not readable as {game.name} actions: {msgspec.json.encode(turn.actions).decode()}")
    step["actions"] = replay.actions(actions) if actions else ""
    step["rejected"] = rejected_of(turn.rejected)
    if turn.format_error is not None:
        state.step(turn.role, ())
    elif actions is not None:
        state.step(turn.role, actions if max_actions is None else actions[:max_actions])
    step["after"] = [spans(line) for line in replay.after(state, turn.role)]
    step["progress"] = None
    if turn.progress is not None:
        step["progress"] = replay.progress(state, turn.progress)
        replayed = state.progress(turn.role)
        if replayed != turn.progress:
            notes.append(f"the replayed game differs from the recorded one here: progress {replayed}, recorded {turn.progress}")
    step["notes"] = notes
    return step


def _turns(game: Game, replay: Any, record: GameRecord, transcript: Transcript, state: Any) -> list[dict]:
    """Every turn of the transcript. Views come from the transcript, or else from the rebuilt game
    before the turn (at the start of the round when agents act at once)."""
    spec = record.spec
    max_actions = spec.option("max_actions")
    at_once = spec.option("turn_order") == "simultaneous"
    kept = transcript.detail == DETAIL_FULL
    steps, round_views, round_turn = [], {}, None
    # A person's response time, from the turn log where the transcript does not carry it.
    logged = {(log.turn, log.role): log.human for log in record.turn_log if log.human is not msgspec.UNSET}
    for turn in transcript.turns:
        if turn.human is None and (turn.turn, turn.role) in logged:
            turn = msgspec.structs.replace(turn, human=logged[turn.turn, turn.role])
        if kept:
            view = turn.view
        else:
            if at_once and turn.turn != round_turn:
                round_turn = turn.turn
                round_views = {role: _view(state, role) for role in state.roles}
            view = round_views.get(turn.role) if at_once else _view(state, turn.role)
        steps.append(_turn(game, replay, turn, state, view, max_actions))
    return steps


def _view(state: Any, role: str) -> Any:
    try:
        return plain(state.view(role))
    except Exception:  # noqa: BLE001 - a view that cannot be rebuilt is left out, the replay goes on
        return None


def _log(record: GameRecord, replay: Any, state: Any) -> list[dict]:
    return [
        {
            "turn": log.turn, "role": log.role, "name": role_name(log.role), "message_chars": log.message_chars,
            "applied": log.applied, "rejected": rejected_of(log.rejected), "format_error": log.format_error,
            "progress": replay.progress(state, log.progress), "usage": usage_of(log.usage), "human": human_of(log.human),
        }
        for log in record.turn_log
    ]


def game_detail(record: GameRecord, transcript: Transcript | None, game: Game | None = None) -> dict:
    """The whole game as data: what it is, then each turn (with a transcript) or the turn log."""
    game = game or get_game(record.spec.game)
    replay = game.faces.replay if game.faces.replay is not None else BasicReplay()
    spec = record.spec
    state = game.rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)
    notes: list[str] = []
    if transcript is not None and transcript.instance is not None and game.records.instance is not None:
        if msgspec.json.decode(msgspec.json.encode(game.records.instance(state))) != transcript.instance:
            notes.append("the game rebuilt from its seed is not the one the transcript recorded")
    detail: dict[str, Any] = {
        # The seed as text: a 64-bit seed is past what a JavaScript number holds exactly.
        "id": record.game_id, "game": spec.game, "condition": spec.condition(), "seed": str(spec.seed),
        "agents": {role_name(role): str(policy) for role, policy in spec.agents.items()}, "humans": humans_of(record),
        "outcome": record.outcome, "outcome_text": outcome_text(record), "turns": record.turns,
        "error": plain(record.error), "usage": usage_of(record.usage),
        "header": [spans(line) for line in replay.header(state)], "board": board_of(replay, state), "notes": notes,
        "detail": transcript.detail if transcript is not None else "log",
    }
    if transcript is not None:
        detail["steps"] = _turns(game, replay, record, transcript, state)
        detail["final_board"] = board_of(replay, state) if detail["steps"] else None
    else:
        detail["log"] = _log(record, replay, state)
    return detail
