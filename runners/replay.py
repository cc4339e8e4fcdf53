"""Replay one game turn by turn: the messages as a conversation, what each turn did to the game,
feedback and errors.

    python -m runners.replay RUN_DIR GAME_ID

Games of a run made with --transcripts show everything: the game is rebuilt from its spec and each
turn's actions are applied again, so the game (``Game.replay``) can show the state after every turn;
where the transcript says what the game was (``instance``), a rebuilt game that differs from it is
pointed out. Otherwise the record's turn log is shown.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from engine import GameRecord, RunDir, RunDirError
from engine.transcripts import Transcript, TranscriptTurn, read_transcript
from puzzles import Game, InvalidParameter, Rejected, get_game

from ._runloop import OneLineParser, integer

STYLES = {"right": "green", "wrong": "red", "strong": "bold", "": ""}


def styled(line: Any) -> Text:
    """A replay line (spans of text, each with a mark) with its marks as rich styles."""
    text = Text()
    for span in line:
        text.append(span.text, style=STYLES.get(span.mark, ""))
    return text


def role_name(role: str) -> str:
    return role.capitalize()


class BasicReplay:
    """The replay of a game that has none of its own (``Game.replay`` is None): actions as JSON,
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


def _replay(game: Game) -> Any:
    return game.replay if game.replay is not None else BasicReplay()


def _new_state(game: Game, record: GameRecord) -> Any:
    spec = record.spec
    return game.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)


def _header(record: GameRecord, game: Game, state: Any) -> Group:
    spec = record.spec
    if record.outcome == "success":
        outcome = f"[green]solved at turn {record.solved_turn}[/green]"
    elif record.outcome == "failure":
        outcome = f"[red]not solved in {spec.max_turns} turns[/red]"
    else:
        outcome = "[red]error[/red]"
    lines: list = [
        Text.from_markup(f"[bold]Game {record.game_id}[/bold]: {outcome}"),
        Text(f"{spec.condition()}  seed={spec.seed}"),
    ]
    lines += [styled(line) for line in _replay(game).header(state)]
    if record.error is not None:
        error = record.error
        lines.append(Text(f"error ({error.kind}) in {error.actor}: {error.type}: {error.message}", style="bold red"))
    return Group(*lines)


def _rejected(items: list[Any]) -> tuple[Rejected, ...]:
    try:
        return msgspec.convert(items, tuple[Rejected, ...])
    except msgspec.ValidationError:
        return tuple(Rejected(str(item), "") for item in items)


def _actions(game: Game, turn: TranscriptTurn) -> tuple[Any, ...] | None:
    """The turn's actions as the game's actions; None if the transcript's cannot be read as such."""
    try:
        return msgspec.convert(turn.actions, tuple[game.Action, ...])
    except msgspec.ValidationError:
        return None


def _show_candidates(body: list, game: Game, turn: TranscriptTurn, state: Any) -> None:
    """A best-of-n turn: every sampled reply, the one played marked; the game chooses again, as it did."""
    if not turn.candidates or turn.chosen is None:
        return
    replay = _replay(game)
    read: list[tuple[Any, ...]] = []
    for i, candidate in enumerate(turn.candidates):
        try:
            actions = msgspec.convert(candidate.get("actions", []), tuple[game.Action, ...])
        except msgspec.ValidationError:
            actions = ()
        read.append(actions)
        shown = replay.actions(actions) if actions else f"unreadable ({candidate.get('format_error') or 'no action'})"
        mark = "▶" if i == turn.chosen else " "
        body.append(Text(f"{mark} candidate {i + 1}: {shown}", style="bold" if i == turn.chosen else "dim"))
    choose = getattr(state, "choose", None)
    if choose is not None and choose(turn.role, tuple(read)) != turn.chosen:
        body.append(Text("the replayed game chooses another candidate here", style="bold red"))


def _turn_panel(turn: TranscriptTurn, game: Game, state: Any, max_actions: int | None) -> Panel:
    """One turn; applies the turn's actions to ``state`` as the referee did."""
    replay = _replay(game)
    body: list = []
    feedback = replay.feedback(turn.feedback)
    if feedback:
        body.append(Text(f"feedback: {feedback}", style="cyan"))
    for notice in turn.notices:
        body.append(Text(notice, style="yellow"))
    if turn.format_error is not None:
        body.append(Text(f"format error: {turn.format_error}; nothing applied", style="bold red"))
        body.append(Text(f"reply: {turn.reply[:300]}", style="dim"))
    if turn.message:
        body.append(Text(f"\u201c{turn.message}\u201d", style="bold"))
    for delivered in turn.delivered:
        if delivered.text != turn.message:
            body.append(Text(f"{role_name(delivered.recipient)} received: \u201c{delivered.text}\u201d", style="magenta"))
    _show_candidates(body, game, turn, state)
    actions = _actions(game, turn)
    if actions is None:
        body.append(Text(f"actions (not readable as {game.name} actions): {msgspec.json.encode(turn.actions).decode()}", style="red"))
    elif actions:
        body.append(Text("actions: " + replay.actions(actions)))
    for rejected in _rejected(turn.rejected):
        body.append(Text(f"rejected {rejected.action}: {rejected.reason}", style="red"))
    if turn.format_error is not None:
        state.step(turn.role, ())
    elif actions is not None:
        state.step(turn.role, actions if max_actions is None else actions[:max_actions])
    body += [styled(line) for line in replay.after(state, turn.role)]
    subtitle = ""
    if turn.progress is not None:
        subtitle = replay.progress(state, turn.progress)
        replayed = state.progress(turn.role)
        if replayed != turn.progress:
            body.append(Text(f"the replayed game differs from the recorded one here: progress {replayed}, recorded {turn.progress}", style="bold red"))
    return Panel(
        Group(*body), title=f"turn {turn.turn} \u00b7 {role_name(turn.role)}", title_align="left",
        subtitle=subtitle, subtitle_align="right",
    )


def _log_table(record: GameRecord, game: Game, state: Any) -> Table:
    replay = _replay(game)
    table = Table(title="turn log (run with --transcripts to see messages and each turn's state)", title_justify="left")
    for column in ("turn", "agent", "message chars", "actions applied", "rejected", "format error", "progress"):
        table.add_column(column)
    for log in record.turn_log:
        rejected = "; ".join(r.reason for r in _rejected(list(log.rejected)))
        table.add_row(
            str(log.turn), role_name(log.role), str(log.message_chars), str(log.applied), rejected,
            log.format_error or "", replay.progress(state, log.progress),
        )
    return table


def render_replay(record: GameRecord, transcript: Transcript | None, game: Game | None = None) -> Group:
    """The whole replay of a game: the header, then each turn (with a transcript) or the turn log."""
    game = game or get_game(record.spec.game)
    state = _new_state(game, record)
    parts: list = [_header(record, game, state)]
    if transcript is not None and transcript.instance is not None and game.instance is not None:
        if msgspec.json.decode(msgspec.json.encode(game.instance(state))) != transcript.instance:
            parts.append(Text("the game rebuilt from its seed is not the one the transcript recorded", style="bold red"))
    if transcript is not None:
        max_actions = record.spec.option("max_actions")
        parts.extend(_turn_panel(turn, game, state, max_actions) for turn in transcript.turns)
    else:
        parts.append(_log_table(record, game, state))
    return Group(*parts)


def find_record(run: RunDir, game_id: int) -> GameRecord | None:
    found = None
    for record in run.records():
        if record.game_id == game_id:
            found = record
    return found


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    parser = OneLineParser(prog="python -m runners.replay", description="Show one game of a run, turn by turn.")
    parser.add_argument("run_dir", type=Path, help="the run directory")
    parser.add_argument("game_id", type=integer(0), help="the game's id (its line in results.jsonl)")
    args = parser.parse_args(argv)
    try:
        run = RunDir.open(args.run_dir)
        record = find_record(run, args.game_id)
    except (RunDirError, OSError, msgspec.DecodeError) as exc:
        parser.error(f"argument run_dir: {exc}")
    if record is None:
        parser.error(f"argument game_id: no game {args.game_id} in {run.results_path}")
    try:
        game = get_game(record.spec.game)
    except InvalidParameter as exc:
        parser.error(f"argument run_dir: {exc}")
    try:
        transcript = read_transcript(run.path, args.game_id)
    except OSError as exc:
        parser.error(f"argument run_dir: cannot read transcripts: {exc}")
    (console or Console()).print(render_replay(record, transcript, game))
    return 0


if __name__ == "__main__":
    sys.exit(main())
