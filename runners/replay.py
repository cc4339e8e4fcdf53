"""Replay one game turn by turn: the messages as a conversation, each agent's hypothesis against the
truth, feedback and errors.

    python -m runners.replay RUN_DIR GAME_ID

Games of a run made with --transcripts show everything; otherwise the record's turn log is shown.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from engine import GameRecord, RunDir, RunDirError
from engine.transcripts import Transcript, TranscriptTurn, read_transcript
from puzzles.asympuzl import ROLE_NAMES, Feedback, Piece, Puzzle, Replace, apply_actions, generate, render_feedback

from ._runloop import OneLineParser, integer


def _name(role: str) -> str:
    return ROLE_NAMES.get(role, role)


def _pieces(value) -> tuple[Piece, ...]:
    return msgspec.convert(value, tuple[Piece, ...]) if value is not None else ()


def hypothesis_line(hypothesis: tuple[Piece, ...], truth: tuple[Piece, ...]) -> Text:
    """Each position of a hypothesis, green where it matches the truth and red where it does not."""
    text = Text()
    for position, (piece, right) in enumerate(zip(hypothesis, truth), start=1):
        color = piece.color or "?"
        ok = piece == right
        text.append(f"{position}:{color} {piece.shape}", style="green" if ok else "red")
        text.append(" \u2713  " if ok else " \u2717  ", style="green" if ok else "red")
    return text


def _header(record: GameRecord, puzzle: Puzzle) -> Group:
    spec = record.spec
    if record.outcome == "success":
        outcome = f"[green]solved at turn {record.solved_turn}[/green]"
    elif record.outcome == "failure":
        outcome = f"[red]not solved in {spec.max_turns} turns[/red]"
    else:
        outcome = f"[red]error[/red]"
    truth = Text("truth: " + "  ".join(f"{i}:{p.color} {p.shape}" for i, p in enumerate(puzzle.truth, 1)), style="bold")
    lines: list = [
        Text.from_markup(f"[bold]Game {record.game_id}[/bold]: {outcome}"),
        Text(f"{spec.condition()}  seed={spec.seed}"),
        truth,
    ]
    for role in spec.agents:
        clues = puzzle.role_clues(role)
        shown = ", ".join(f"{p.color} {p.shape}" if p.color else p.shape for p in clues)
        lines.append(Text(f"{_name(role)}'s clues ({spec.agents[role]}): {shown}"))
    if record.error is not None:
        lines.append(Text(f"error ({record.error.kind}) in {record.error.actor}: {record.error.type}: {record.error.message}", style="bold red"))
    return Group(*lines)


def _turn_panel(turn: TranscriptTurn, truth: tuple[Piece, ...]) -> Panel:
    body: list = []
    feedback = msgspec.convert(turn.feedback, Feedback) if turn.feedback is not None else None
    if feedback is not None and render_feedback(feedback):
        body.append(Text("feedback: " + render_feedback(feedback).replace("\n", " "), style="cyan"))
    for notice in turn.notices:
        body.append(Text(notice, style="yellow"))
    if turn.format_error is not None:
        body.append(Text(f"format error: {turn.format_error}; nothing applied", style="bold red"))
        body.append(Text(f"reply: {turn.reply[:300]}", style="dim"))
    if turn.message:
        body.append(Text(f"\u201c{turn.message}\u201d", style="bold"))
    for delivered in turn.delivered:
        if delivered.text != turn.message:
            body.append(Text(f"{_name(delivered.recipient)} received: \u201c{delivered.text}\u201d", style="magenta"))
    actions = msgspec.convert(turn.actions, tuple[Replace, ...]) if turn.actions else ()
    if actions:
        body.append(Text("actions: " + "; ".join(f"{a.position} \u2190 {a.color} {a.shape}" for a in actions)))
    for rejected in turn.rejected:
        body.append(Text(f"rejected {rejected.get('action')}: {rejected.get('reason')}", style="red"))
    before = _pieces(turn.hypothesis)
    if before:
        after, _, _ = apply_actions(before, actions) if turn.format_error is None else (before, (), ())
        body.append(Text("hypothesis: ") + hypothesis_line(after, truth))
    right = f"{turn.progress}/{len(truth)} right" if turn.progress is not None else ""
    return Panel(Group(*body), title=f"turn {turn.turn} \u00b7 {_name(turn.role)}", title_align="left", subtitle=right, subtitle_align="right")


def _log_table(record: GameRecord) -> Table:
    table = Table(title="turn log (run with --transcripts to see messages and hypotheses)", title_justify="left")
    for column in ("turn", "agent", "message chars", "actions applied", "rejected", "format error", "positions right"):
        table.add_column(column)
    size = record.spec.size
    for log in record.turn_log:
        rejected = "; ".join(f"{r.reason}" if hasattr(r, "reason") else str(r.get("reason")) for r in log.rejected)
        table.add_row(str(log.turn), _name(log.role), str(log.message_chars), str(log.applied), rejected,
                      log.format_error or "", f"{log.progress}/{size}")
    return table


def render_replay(record: GameRecord, transcript: Transcript | None) -> Group:
    spec = record.spec
    puzzle = generate(spec.size, spec.seed, spec.distractors, spec.distractors_in)
    parts: list = [_header(record, puzzle)]
    if transcript is not None:
        parts.extend(_turn_panel(turn, puzzle.truth) for turn in transcript.turns)
    else:
        parts.append(_log_table(record))
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
        transcript = read_transcript(run.path, args.game_id)
    except OSError as exc:
        parser.error(f"argument run_dir: cannot read transcripts: {exc}")
    (console or Console()).print(render_replay(record, transcript))
    return 0


if __name__ == "__main__":
    sys.exit(main())
