"""One game as a readable transcript, fit for a paper's appendix: what each player was given, then
turn by turn who said what, what they did, what they were told, and how the game ended.

    asymgames transcript RUN_DIR GAME_ID [--format md|html|tex] [--full] [--out FILE]

The game is rebuilt from its record and transcript as the viewer and the replay rebuild it
(``runners.view.detail``); this module only lays it out. The layout is one list of blocks (a heading,
lines, a table, a turn), written out by one small writer per format, so the three formats say the
same things. ``--full`` adds each player's view of every turn, and the prompt and raw reply where
the run kept them (``--transcripts``).
"""

from __future__ import annotations

import html
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.args import OneLineParser, choice, integer
from runners.printable import printable_all
from runners.replay import game_of_run
from runners.report.latex import latex_escape
from runners.words import counted

FORMATS = ("md", "html", "tex")


@dataclass
class Turn:
    number: int
    speaker: str
    said: list[tuple[str, str]] = field(default_factory=list)  # (what, text), in order


@dataclass
class Heading:
    text: str


@dataclass
class Lines:
    lines: list[str]


@dataclass
class Table:
    text: str
    table: dict[str, Any]  # a replay's board: columns, and rows of (text, mark) cells


Block = Heading | Lines | Table | Turn  # a turn is a block of its own


def _plain(line: list[list[str]]) -> str:
    return "".join(part for part, _ in line)


def blocks(detail: dict[str, Any], full: bool = False) -> list[Block]:
    """The transcript of one game (a ``game_detail``), as blocks; control and direction characters
    in what the players wrote shown as escapes (``runners.printable``), as in every format they
    would do harm or vanish."""
    detail = printable_all(detail)
    agents = ", ".join(f"{name}: {policy}" for name, policy in detail["agents"].items())
    out: list[Block] = [
        Heading(f"Game {detail['id']} of {detail['game']}: {detail['outcome_text']}"),
        Lines([f"Condition: {detail['condition']}", f"Seed: {detail['seed']}", f"Players: {agents}"]),
    ]
    if detail["header"]:
        out += [Heading("What each player was given"), Lines([_plain(line) for line in detail["header"]])]
    if detail["board"]:
        out.append(Table("At the start", detail["board"]))
    out.append(Heading("Turns"))
    for step in detail["steps"]:
        turn = Turn(step["turn"], step["name"])
        if full and step.get("view") is not None:
            turn.said.append(("view", json.dumps(step["view"], ensure_ascii=False)))
        if step.get("feedback"):
            turn.said.append(("told", str(step["feedback"])))
        turn.said += [("notice", notice) for notice in step.get("notices") or ()]
        if step.get("format_error"):
            turn.said.append(("unreadable reply", f"{step['format_error']}; nothing applied"))
        if step.get("message"):
            turn.said.append(("says", step["message"]))
        if step.get("actions"):
            turn.said.append(("does", step["actions"]))
        turn.said += [("refused", f"{action}: {reason}") for action, reason in step.get("rejected") or ()]
        if step.get("human"):
            turn.said.append(("a person", "timed out" if step["human"].get("timed_out") else f"{step['human'].get('seconds', 0):.1f} s"))
        if full and step.get("prompt"):
            turn.said.append(("prompt", json.dumps(step["prompt"], ensure_ascii=False)))
        if full and step.get("reply"):
            turn.said.append(("raw reply", step["reply"]))
        after = "; ".join(_plain(line) for line in step.get("after") or ())
        if after or step.get("progress"):
            turn.said.append(("after", " ".join(part for part in (after, f"({step['progress']})" if step.get("progress") else "") if part)))
        out.append(turn)
    if detail["error"]:
        error = detail["error"]
        out.append(Lines([f"Ended in an error ({error['kind']}): {error['type']}: {error['message']}"]))
    if detail["final_board"]:
        out.append(Table("At the end", detail["final_board"]))
    out.append(Lines([f"Outcome: {detail['outcome_text']} after {counted(detail['turns'], 'turn')}."]))
    return out


def _cells(table: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    return list(table["columns"]), [[cell[0] for cell in row] for row in table["rows"]]


_MD_ESCAPES = str.maketrans({c: "\\" + c for c in "\\|*_`[]"})  # one pass: a backslash in the text is escaped too


def to_markdown(parts: list[Block]) -> str:
    def md(text: str) -> str:
        """Text as text: no markup, no link (``[x](javascript:...)`` is shown, not followed)."""
        return html.escape(text.translate(_MD_ESCAPES), quote=False)

    out: list[str] = []
    for block in parts:
        if isinstance(block, Heading):
            out += [("# " if not out else "## ") + md(block.text), ""]
        elif isinstance(block, Lines):
            out += [f"{md(line)}  " for line in block.lines] + [""]
        elif isinstance(block, Table):
            header, rows = _cells(block.table)
            out += [f"**{md(block.text)}**", "", "| " + " | ".join(map(md, header)) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(map(md, row)) + " |" for row in rows] + [""]
        else:
            turn = block
            out += [f"**Turn {turn.number}, {md(turn.speaker)}**", ""]
            out += [f"- *{md(what)}:* {md(text)}" for what, text in turn.said] + [""]
    return "\n".join(out)


def to_html(parts: list[Block]) -> str:
    esc = html.escape
    title = esc(parts[0].text) if isinstance(parts[0], Heading) else ""  # the game's heading
    out = [f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title><style>"
           "body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
           "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.15em .5em}"
           "dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:.2em 0 1em}dt{opacity:.65}"
           "dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}</style></head><body>"]
    for block in parts:
        if isinstance(block, Heading):
            out.append(f"<h{1 if block is parts[0] else 2}>{esc(block.text)}</h{1 if block is parts[0] else 2}>")
        elif isinstance(block, Lines):
            out.append("<p>" + "<br>".join(esc(line) for line in block.lines) + "</p>")
        elif isinstance(block, Table):
            header, rows = _cells(block.table)
            out.append(f"<p><b>{esc(block.text)}</b></p><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows) + "</table>")
        else:
            turn = block
            out.append(f"<h3>Turn {turn.number}, {esc(turn.speaker)}</h3><dl>"
                       + "".join(f"<dt>{esc(what)}</dt><dd>{esc(text)}</dd>" for what, text in turn.said) + "</dl>")
    return "\n".join([*out, "</body></html>", ""])


_TEX_SYMBOLS = str.maketrans({"\u2713": r"\checkmark{}", "\u2717": r"$\times$", "\u2190": r"$\leftarrow$",
                              "\u2192": r"$\rightarrow$", "\u2194": r"$\leftrightarrow$", "\u2026": r"\ldots{}"})


def to_latex(parts: list[Block]) -> str:
    """A fragment to ``\\input``: a subsection per game, a description per turn. Needs ``booktabs``
    and ``amssymb``; the marks the games draw (ticks, crosses, arrows) are written as LaTeX symbols,
    other non-ASCII text as it is (pdflatex with ``inputenc``/``fontenc``, or xelatex)."""

    def tex(text: str) -> str:
        return latex_escape(text).translate(_TEX_SYMBOLS)

    out: list[str] = ["% A game transcript. Needs \\usepackage{booktabs} and \\usepackage{amssymb}.", ""]
    for block in parts:
        if isinstance(block, Heading):
            out += [("\\subsection*{" if block is parts[0] else "\\paragraph{") + tex(block.text) + "}", ""]
        elif isinstance(block, Lines):
            out += [" \\\\\n".join(tex(line) for line in block.lines), ""]
        elif isinstance(block, Table):
            header, rows = _cells(block.table)
            out += [f"\\noindent\\textbf{{{tex(block.text)}}}\\\\[2pt]", "\\begin{tabular}{" + "l" * len(header) + "}", "\\toprule",
                    " & ".join(tex(h) for h in header) + " \\\\", "\\midrule"]
            out += [" & ".join(tex(c) for c in row) + " \\\\" for row in rows] + ["\\bottomrule", "\\end{tabular}", ""]
        else:
            turn = block
            out += [f"\\noindent\\textbf{{Turn {turn.number}, {tex(turn.speaker)}}}", "\\begin{description}"]
            out += [f"  \\item[{tex(what)}] {tex(text)}" for what, text in turn.said] + ["\\end{description}", ""]
    return "\n".join(out)


WRITERS = {"md": to_markdown, "html": to_html, "tex": to_latex}


def main(argv: list[str] | None = None, prog: str = "python -m runners.transcript") -> int:
    parser = OneLineParser(prog=prog, description="One game of a run as a transcript for a paper's appendix.")
    parser.add_argument("run_dir", type=Path, help="the run directory")
    parser.add_argument("game_id", type=integer(0), help="the game's id (its line in results.jsonl)")
    parser.add_argument("--format", type=choice(list(FORMATS)), default="md", help="md (default), html or tex")
    parser.add_argument("--full", action="store_true", help="also each turn's view, and the prompt and raw reply where kept")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write here instead of printing")
    args = parser.parse_args(argv)
    detail = game_of_run(parser, args.run_dir, args.game_id)
    if "steps" not in detail:
        parser.error(f"argument game_id: the run kept no transcript of game {args.game_id} (a run with --no-messages keeps none); "
                     f"replay shows its turn log")
    text = WRITERS[args.format](blocks(detail, args.full))
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as exc:
            parser.error(f"argument --out: {exc.strerror or exc}")
        print(f"Wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
