"""A toy game for tests, registered by none: two players take turns adding 1 to 3 to a shared total
until it reaches the goal. Its replay says what every replay says but draws no board (``board`` is
optional in the contract: ``puzzles.common.replay.BoardReplay``). A test registers it as the
registry does (``puzzles.contract.check_contract``) into ``GAMES`` with ``monkeypatch.setitem``."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import msgspec

from puzzles.base import Faces, Game, InvalidParameter, Rules, Step
from puzzles.turn import Rejected, Reply, ReplyFormatError, TurnContext
from puzzles.common.replay import Line, line
from puzzles.policy import Answer

ROLES = ("left", "right")


class TallyParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game", tag="tally"):
    """``goal``: the total to reach."""

    goal: int = 6

    HELP: ClassVar[dict[str, str]] = {"goal": "the total to reach, 1 to 50"}

    def check(self) -> None:
        if not isinstance(self.goal, int) or not 1 <= self.goal <= 50:
            raise InvalidParameter("goal", f"goal must be an integer from 1 to 50, got {self.goal!r}")

    def labels(self) -> dict[str, str]:
        return {"goal": str(self.goal)}

    def normal(self) -> TallyParams:
        return self


class TallyState:
    def __init__(self, goal: int, roles: tuple[str, ...], max_turns: int) -> None:
        self.goal, self.roles, self.max_turns = goal, roles, max_turns
        self.total = 0
        self.added = dict.fromkeys(roles, 0)

    def view(self, role: str) -> dict[str, int]:
        return {"total": self.total, "goal": self.goal}

    def private(self, role: str) -> tuple:
        return ()

    def step(self, role: str, actions: tuple[Any, ...]) -> Step:
        good = [a for a in actions if isinstance(a, int) and 1 <= a <= 3]
        rejected = tuple(Rejected(f"add {a}", "add 1 to 3") for a in actions if a not in good)
        if rejected:
            return Step(rejected=rejected)  # nothing applied when anything is wrong
        self.total += sum(good)
        self.added[role] += sum(good)
        return Step(applied=len(good))

    def done(self) -> bool:
        return self.total >= self.goal

    def outcome(self) -> str:
        return "success" if self.done() else "failure"

    def progress(self, role: str) -> int:
        return self.total

    def scores(self) -> dict[str, float]:
        return {"total": float(self.total)}

    def metrics(self) -> dict[str, Any]:
        return {"added": dict(self.added)}


class TallyPrompter:
    chat_memory = False

    def render(self, context: TurnContext) -> tuple[str, str]:
        view = context.view
        return (
            "Take turns adding 1 to 3 to the total until it reaches the goal.",
            f"The total is {view['total']} of {view['goal']}. Reply in JSON: "
            '{"message": "...", "actions": [numbers to add]}',
        )

    def schema(self, context: TurnContext) -> None:
        return None

    def parse(self, text: str, context: TurnContext) -> Reply:
        try:
            data = msgspec.json.decode(text)
            return Reply(message=str(data.get("message", "")), actions=tuple(msgspec.convert(data.get("actions", []), list[int])))
        except (msgspec.DecodeError, msgspec.ValidationError, AttributeError) as exc:
            raise ReplyFormatError(f"not a JSON reply: {exc}") from None

    def format(self, reply: Reply, prose: str = "") -> str:
        return msgspec.json.encode({"message": reply.message, "actions": list(reply.actions)}).decode()

    def read(self, system: str, user: str) -> None:
        return None


class AddTwo:
    """Adds 2 each turn and says so."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.role = role

    async def reply(self, context: TurnContext) -> Answer:
        said = f"{context.view['total']} plus 2"
        return Answer(TallyPrompter().format(Reply(message=said, actions=(2,))))


class TallyReplay:
    """Every part of a replay but the board."""

    def header(self, state: TallyState) -> list[Line]:
        return [line(f"goal: {state.goal}")]

    def feedback(self, data: Any) -> str | None:
        return None

    def actions(self, actions: tuple[Any, ...]) -> str:
        return ", ".join(f"add {a}" for a in actions)

    def after(self, state: TallyState, role: str) -> list[Line]:
        return [line(f"total: {state.total}")]

    def progress(self, state: TallyState, value: int | float) -> str:
        return f"{value}/{state.goal}"


def _new(params: TallyParams, seed: int, roles: tuple[str, ...], max_turns: int) -> TallyState:
    return TallyState(params.goal, roles, max_turns)


TALLY = Game(
    name="tally",
    rules=Rules(
        Params=TallyParams, State=TallyState, rosters=(ROLES,), new=_new,
        default_max_turns=lambda params, roles: params.goal, Action=int, scripted={"add_two": AddTwo},
        invalid_examples=lambda state, role: [0, 4],
    ),
    faces=Faces(prompter=TallyPrompter(), replay=TallyReplay(), description="a toy: two players add to a total"),
)
