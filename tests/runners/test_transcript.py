"""``asymgames transcript``: one game for an appendix, in Markdown, HTML and LaTeX, for every game;
what a model wrote stays text in each format."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from engine import RunDir
from engine.records.transcripts import read_transcript
from puzzles import GAMES
from runners.concurrent import main as run_main
from runners.transcript import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    made = {}
    for name in GAMES:
        run = tmp_path_factory.mktemp("transcript") / name
        assert run_main(["--game", name, "--games", "2", "--out", str(run), "--no-dashboard"]) == 0
        made[name] = run
    return made


def messages(run, game_id: int) -> list[str]:
    return [t.message for t in read_transcript(run, game_id).turns if t.message]


@pytest.mark.parametrize("name", list(GAMES))
@pytest.mark.parametrize("form", ["md", "html", "tex"])
def test_every_game_is_transcribed_turn_by_turn_in_every_format(runs, name, form, tmp_path, capsys):
    run = runs[name]
    record = RunDir.open(run).records()[1]
    out = tmp_path / f"t.{form}"
    assert main([str(run), "1", "--format", form, "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count("Turn ") >= len(record.turn_log)
    assert f"{record.turns} turns" in text
    if form == "html":
        parser = HTMLParser()
        parser.feed(text)  # well-formed enough to parse; every message is there, escaped
        for message in messages(run, 1):
            assert __import__("html").escape(message) in text
    elif form == "md" and messages(run, 1):
        assert messages(run, 1)[0].split()[0] in text


def test_a_hostile_message_stays_text_in_every_format(tmp_path, capsys):
    run = tmp_path / "run"
    assert run_main(["--games", "1", "--size", "2", "--agent", "alice=tests.helpers:HostileTalker", "--out", str(run),
                     "--no-dashboard"]) == 0
    for form in ("md", "html", "tex"):
        assert main([str(run), "0", "--format", form]) == 0
        text = capsys.readouterr().out
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        if form != "tex":  # markup only matters where it is read as markup
            assert "<img" not in text and "<!--<script" not in text
        else:
            assert "\\& \\textbackslash{}x1b[2J" in text


def test_a_game_not_in_the_run_is_one_line_and_status_2(runs, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(runs["asympuzl"]), "99"])
    assert exit_info.value.code == 2 and "no game 99" in capsys.readouterr().err


def test_a_game_of_a_run_without_transcripts_is_one_line_and_status_2(tmp_path, capsys):
    run = tmp_path / "run"
    assert run_main(["--games", "2", "--no-messages", "--out", str(run), "--no-dashboard"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(run), "1"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1
    assert "kept no transcript of game 1" in err and "--no-messages" in err and "replay" in err


LINKS = ("[x](javascript:alert(1)) ![i](javascript:alert(2)) \\[y](javascript:alert(3)) [r][1] "
         "<javascript:alert(4)> [z]( javascript:alert(5) \"t\")\n\n[1]: javascript:alert(6)")


class LinkWriter:
    """A policy (``tests.runners.test_transcript:LinkWriter``) whose every message is ``LINKS``."""

    def __init__(self, role, rng) -> None:
        self.role = role

    async def reply(self, context):
        import msgspec

        from puzzles import Answer

        return Answer(msgspec.json.encode({"message": LINKS, "actions": []}).decode())


def test_a_link_a_model_writes_is_text_in_the_markdown_transcript(tmp_path, capsys):
    from markdown_it import MarkdownIt

    run = tmp_path / "run"
    assert run_main(["--games", "1", "--size", "2", "--max-turns", "2", "--agent", "alice=tests.runners.test_transcript:LinkWriter",
                     "--out", str(run), "--no-dashboard"]) == 0
    capsys.readouterr()
    assert main([str(run), "0", "--format", "md"]) == 0
    renderer = MarkdownIt("commonmark")
    renderer.validateLink = lambda url: True  # a viewer that follows any scheme: the transcript must not rely on it
    page = renderer.render(capsys.readouterr().out)
    assert "<a " not in page and "<img" not in page
    assert "[x](javascript:alert(1))" in page and "\\[y](javascript:alert(3))" in page  # shown as written
