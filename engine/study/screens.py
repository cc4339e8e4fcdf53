"""What a participant's page shows between games (the block's instructions, the waiting room, the last
game's outcome, the end with the completion code), in the study file's words (``Texts``)."""

from __future__ import annotations

from engine.study.spec import Texts


class Screen(dict):
    """What the page shows instead of a game: ``kind``, ``title``, ``text``, and optionally the
    button that goes on (``button``: its words, ``step``: what it asks for), the completion
    ``code``, and ``last`` (the last game's outcome is shown above it)."""


def end_screen(texts: Texts, code: str) -> Screen:
    return Screen(kind="done", title="Thank you", text=texts.end.replace("{code}", code), code=code, last=True)


def time_up_screen(texts: Texts, code: str) -> Screen:
    """The end of a session that reached the study's time limit: why, then the end with the code."""
    return Screen(kind="done", title="Time is up", text=texts.time_up + "\n\n" + texts.end.replace("{code}", code), code=code, last=True)


def left_screen(texts: Texts) -> Screen:
    return Screen(kind="left", title="You have left the study", text=texts.left)


def full_screen(texts: Texts) -> Screen:
    return Screen(kind="full", title="The study is full", text=texts.full)


def instructions_screen(title: str, text: str) -> Screen:
    return Screen(kind="instructions", title=title, text=text, button="Start", step="start")


def ready_screen(note: str = "") -> Screen:
    text = (note + "\n\n" if note else "") + "Your first game starts when you are ready."
    return Screen(kind="ready", title="Ready to start?", text=text, button="Start", step="start")


def between_screen(note: str = "") -> Screen:
    text = (note + "\n\n" if note else "") + "Take a moment if you like; the next game starts when you are ready."
    return Screen(kind="between", title="Ready for the next game?", text=text, button="Next game", step="start", last=True)


def waiting_screen(texts: Texts) -> Screen:
    return Screen(kind="waiting", title="The waiting room", text=texts.waiting)
