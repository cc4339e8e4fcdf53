"""A seat played by a teacher (a scripted strategy, or a demonstration's replies) while the engine's
model policy writes down what it would have sent a model in that seat.

``Teacher`` asks its teacher for the turn's reply, then hands the turn to an ``LLMPolicy`` over the
game's prompter whose backend is a ``Recorder``: the policy renders the prompt exactly as it does for
a model (system prompt, the chat it keeps where the game keeps one, the turn's prompt) and sends it;
the recorder keeps the request and answers with the teacher's reply, which the chat then keeps as
the model's. One call per turn: a game whose agent modules call a model before the turn's prompt
cannot be taught so (``DatasetError``).
"""

from __future__ import annotations

from typing import NamedTuple, cast

from bus import Usage
from engine.backends import Backend, Completion, Request
from engine.policies import PolicyFactory
from engine.policies.llm import LLMPolicy
from puzzles import Answer, Game, Policy, TurnContext

from engine.dataset.samples import DatasetError


class Taught(NamedTuple):
    """One turn as a teacher played it: what the agent was shown, the request a model would have got,
    and the reply."""

    context: TurnContext
    request: Request
    text: str


class Recorder:
    """A backend that answers the one call of a turn with the text it was given and keeps the request."""

    name = "teacher"
    limiter = None
    tokenizer = None

    def __init__(self) -> None:
        self.text: str | None = None
        self.request: Request | None = None

    async def complete(self, request: Request) -> Completion:
        if self.text is None:
            raise DatasetError("the game's agent modules call a model before the turn's prompt; choose parameters without them")
        text, self.text, self.request = self.text, None, request
        return Completion(text, Usage(self.name))


class Teacher:
    """A seat played by ``teacher``; every turn goes to ``taught``."""

    def __init__(self, teacher: Policy, game: Game, taught: list[Taught]) -> None:
        self.teacher = teacher
        self.recorder = Recorder()
        self.model = LLMPolicy(cast(Backend, self.recorder), game.faces.prompter)
        self.taught = taught

    async def reply(self, context: TurnContext) -> Answer:
        text = (await self.teacher.reply(context)).text
        self.recorder.text = text
        await self.model.reply(context)
        assert self.recorder.request is not None
        self.taught.append(Taught(context, self.recorder.request, text))
        self.recorder.request = None
        return Answer(text)


class Replaying:
    """A demonstration's replies for one role, played in order."""

    def __init__(self, role: str, replies: tuple[str, ...]) -> None:
        self.role, self.replies, self.played = role, replies, 0

    async def reply(self, context: TurnContext) -> Answer:
        if self.played >= len(self.replies):
            raise DatasetError(f"the demonstration has no more replies for {self.role} at turn {context.turn}")
        self.played += 1
        return Answer(self.replies[self.played - 1])


class TeacherFactory(PolicyFactory):
    """The policies of one game: every seat a ``Teacher``, over a demonstration's replies (``replies``)
    or the scripted strategy the seat names."""

    def __init__(self, replies: dict[str, tuple[str, ...]] | None = None) -> None:
        super().__init__()
        self.replies = replies
        self.taught: dict[str, list[Taught]] = {}
        self.replaying: dict[str, Replaying] = {}

    def make(self, name: str, role: str, seed: int, game: Game) -> Policy:
        if self.replies is not None:
            teacher: Policy = self.replaying.setdefault(role, Replaying(role, self.replies.get(role, ())))
        else:
            teacher = super().make(name, role, seed, game)
        return Teacher(teacher, game, self.taught.setdefault(role, []))

    def unplayed(self) -> int:
        """Replies of the demonstration that the game ended before."""
        if self.replies is None:
            return 0
        return sum(len(r) for r in self.replies.values()) - sum(p.played for p in self.replaying.values())


__all__ = ["Recorder", "Replaying", "Taught", "Teacher", "TeacherFactory"]
