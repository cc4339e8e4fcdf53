"""Replay one game in the terminal, turn by turn: the messages as a conversation, what each turn did
to the game, feedback, errors, tokens, latency and cost.

    python -m runners.replay RUN_DIR GAME_ID [--full]

The game is rebuilt from its spec and each turn's actions are applied again
(``runners.view.detail``, which the HTML viewer draws from too), so the game (``Faces.replay``)
shows the state after every turn and its board at the start and the end. Transcripts are kept by
default (messages only); ``--full`` also shows each agent's view and, where the run was made with
``--transcripts``, the prompt and the raw reply. Runs without transcripts show the record's turn log.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from engine import GameRecord, RunDir, RunDirError
from engine.records import read_transcript
from puzzles import InvalidParameter, get_game

from runners.args import OneLineParser, integer
from runners.printable import printable_all
from runners.view.detail import game_detail
from runners.words import counted

STYLES = {"right": "green", "wrong": "red", "strong": "bold", "": ""}


def styled(line: list[list[str]]) -> Text:
    """A line of ``[text, mark]`` spans with its marks as rich styles."""
    text = Text()
    for part, mark in line:
        text.append(part, style=STYLES.get(mark, ""))
    return text


def board_table(board: dict, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in board["columns"]:
        table.add_column(column)
    for row in board["rows"]:
        table.add_row(*(styled([cell]) for cell in row))
    return table


def usage_line(usage: dict | None, latency: float | None) -> str:
    """A turn's model call in one line: tokens, latency, cost (what is known)."""
    parts = []
    if usage:
        parts.append(f"{usage.get('model', '')}: {usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} reply tokens")
        if usage.get("cached_tokens"):
            parts.append(f"{usage['cached_tokens']} cached")
        if usage.get("calls", 1) > 1:
            parts.append(counted(usage["calls"], "call"))
        latency = usage.get("latency", latency)
        if usage.get("cost_usd") is not None:
            parts.append(f"${usage['cost_usd']:.6f}")
    if latency is not None:
        parts.append(f"{latency:.3f} s")
    return ", ".join(parts)


def _header(detail: dict) -> Group:
    outcome = detail["outcome_text"]
    style = "green" if detail["outcome"] == "success" else "red"
    agents = ", ".join(f"{name}: {policy}" for name, policy in detail["agents"].items())
    lines: list = [
        Text.from_markup(f"[bold]Game {detail['id']}[/bold]: [{style}]{outcome}[/{style}]"),
        Text(f"{detail['condition']}  seed={detail['seed']}"),
        Text(agents, style="dim"),
    ]
    lines += [styled(line) for line in detail["header"]]
    if detail["error"] is not None:
        error = detail["error"]
        lines.append(Text(f"error ({error['kind']}) in {error.get('actor')}: {error['type']}: {error['message']}", style="bold red"))
    for name, usage in (detail["usage"] or {}).items():
        cost = usage.get("cost_usd")
        lines.append(Text(
            f"{name.capitalize()}: {counted(usage.get('calls', 0), 'call')}, {usage.get('prompt_tokens', 0)} prompt + "
            f"{usage.get('completion_tokens', 0)} reply tokens, {usage.get('latency', 0.0):.2f} s"
            + (f", ${cost:.6f}" if cost is not None else ", cost unknown"), style="dim",
        ))
    lines += [Text(note, style="bold red") for note in detail["notes"]]
    return Group(*lines)


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, dict):
        return "\n".join(f"[{key}]\n{value}" for key, value in prompt.items())
    return json.dumps(prompt, ensure_ascii=False)


def _turn_panel(step: dict, full: bool, others: int) -> Panel:
    body: list = []
    if full and step["view"] is not None:
        body.append(Text(f"view: {json.dumps(step['view'], ensure_ascii=False)}", style="dim"))
    if step["feedback"]:
        body.append(Text(f"feedback: {step['feedback']}", style="cyan"))
    body += [Text(notice, style="yellow") for notice in step["notices"]]
    if step["format_error"] is not None:
        body.append(Text(f"format error: {step['format_error']}; nothing applied", style="bold red"))
        if step["reply"] and not full:
            body.append(Text(f"reply: {step['reply'][:300]}", style="dim"))
    if step["message"]:
        heard = step["heard"]
        to = f" (to {', '.join(heard)})" if heard and len(heard) < others else ""
        body.append(Text(f"\u201c{step['message']}\u201d{to}", style="bold"))
    body += [Text(f"{recipient} received: \u201c{text}\u201d", style="magenta") for recipient, text in step["delivered"]]
    for i, candidate in enumerate(step["candidates"]):
        mark = "▶" if candidate["chosen"] else " "
        body.append(Text(f"{mark} candidate {i + 1}: {candidate['text']}", style="bold" if candidate["chosen"] else "dim"))
    if step["actions"]:
        body.append(Text("actions: " + step["actions"]))
    body += [Text(f"rejected {action}: {reason}", style="red") for action, reason in step["rejected"]]
    body += [styled(line) for line in step["after"]]
    body += [Text(note, style="bold red") for note in step["notes"]]
    usage = usage_line(step["usage"], step["latency"] if step["usage"] else None)
    if usage:
        body.append(Text(usage, style="dim"))
    if full and step["prompt"] is not None:
        body.append(Text("prompt:\n" + _prompt_text(step["prompt"]), style="dim"))
    if full and step["reply"]:
        body.append(Text("raw reply:\n" + step["reply"], style="dim"))
    return Panel(
        Group(*body), title=f"turn {step['turn']} \u00b7 {step['name']}", title_align="left",
        subtitle=step["progress"] or "", subtitle_align="right",
    )


def _log_table(detail: dict) -> Table:
    table = Table(title="turn log (the run kept no transcripts: run without --no-messages to see messages)", title_justify="left")
    for column in ("turn", "agent", "message chars", "actions applied", "rejected", "format error", "progress", "model call"):
        table.add_column(column)
    for log in detail["log"]:
        table.add_row(
            str(log["turn"]), log["name"], str(log["message_chars"]), str(log["applied"]),
            "; ".join(reason for _, reason in log["rejected"]), log["format_error"] or "", log["progress"],
            usage_line(log["usage"], None),
        )
    return table


def render_detail(detail: dict, full: bool = False) -> Group:
    parts: list = [_header(detail)]
    if detail["board"] is not None:
        parts.append(board_table(detail["board"], "the game at the start"))
    if "steps" in detail:
        parts.extend(_turn_panel(step, full, len(detail["agents"]) - 1) for step in detail["steps"])
        if detail["final_board"] is not None:
            parts.append(board_table(detail["final_board"], "the game at the end"))
        if full and detail["detail"] != "full":
            parts.append(Text("views are rebuilt from the seed; prompts and raw replies are kept only with --transcripts", style="dim"))
    else:
        parts.append(_log_table(detail))
    return Group(*parts)


def find_record(run: RunDir, game_id: int) -> GameRecord | None:
    found = None
    for record in run.records():
        if record.game_id == game_id:
            found = record
    return found


def game_of_run(parser: OneLineParser, run_dir: Path, game_id: int) -> dict[str, Any]:
    """One game of a run rebuilt for showing (``runners.view.detail.game_detail``); a run, a game or
    transcripts that cannot be read are the parser's one-line error."""
    try:
        run = RunDir.open(run_dir)
        record = find_record(run, game_id)
    except (RunDirError, OSError, msgspec.DecodeError) as exc:
        parser.error(f"argument run_dir: {exc}")
    if record is None:
        parser.error(f"argument game_id: no game {game_id} in {run.results_path}")
    try:
        game = get_game(record.spec.game)
    except InvalidParameter as exc:
        parser.error(f"argument run_dir: {exc}")
    try:
        transcript = read_transcript(run.path, game_id)
    except OSError as exc:
        parser.error(f"argument run_dir: cannot read transcripts: {exc}")
    return game_detail(record, transcript, game)


def main(argv: list[str] | None = None, console: Console | None = None, prog: str = "python -m runners.replay") -> int:
    parser = OneLineParser(prog=prog, description="Show one game of a run, turn by turn.")
    parser.add_argument("run_dir", type=Path, help="the run directory")
    parser.add_argument("game_id", type=integer(0), help="the game's id (its line in results.jsonl)")
    parser.add_argument("--full", action="store_true", help="also each agent's view, and the prompt and raw reply where kept (--transcripts)")
    args = parser.parse_args(argv)
    detail = game_of_run(parser, args.run_dir, args.game_id)
    (console or Console()).print(render_detail(printable_all(detail), args.full))
    return 0


if __name__ == "__main__":
    sys.exit(main())
