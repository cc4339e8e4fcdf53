"""The registry checks every game once against the contract (``puzzles.contract``): a toy game that
keeps it passes; toy games each broken in one way fail, naming the game and the member."""

import dataclasses
from typing import ClassVar

import msgspec
import pytest

from puzzles import GAMES, Reply, Step
from puzzles.base import AgentModules, BestOfN, Faces, Game, Records, ResultsFormat, Rules, Secrets
from puzzles.common.replay import BoardReplay
from puzzles.contract import ContractError, check_contract, registered
from puzzles.seat import IdleActions


class ToyParams(msgspec.Struct, frozen=True, tag_field="game", tag="toy"):
    HELP: ClassVar[dict[str, str]] = {"size": "how big"}
    size: int = 1

    def check(self) -> None:
        pass

    def labels(self) -> dict[str, str]:
        return {"size": str(self.size)}

    def normal(self) -> "ToyParams":
        return self


class ToyState:
    def __init__(self, roles=("a", "b"), max_turns=2) -> None:
        self.roles, self.max_turns = roles, max_turns

    def view(self, role):
        return role

    def private(self, role):
        return role

    def step(self, role, actions):
        return Step()

    def done(self):
        return False

    def outcome(self):
        return "failure"

    def progress(self, role):
        return 0

    def scores(self):
        return {}

    def metrics(self):
        return {}


class ToyPrompter:
    chat_memory = False

    def render(self, context):
        return "system", "user"

    def schema(self, context):
        return None

    def parse(self, text, context):
        return Reply(text, ())

    def format(self, reply, prose=""):
        return reply.message

    def read(self, system, user):
        return None


class ToyReplay:
    def header(self, state):
        return []

    def feedback(self, feedback):
        return None

    def actions(self, actions):
        return ""

    def after(self, state, role):
        return []

    def progress(self, state, value):
        return str(value)


class ToySeat:
    max_actions = None
    messages = True

    def rules(self, context):
        return "rules"

    def show(self, context):
        return ()

    def forms(self, context):
        return ()

    def action(self, context, kind, values):
        return None

    def describe(self, action):
        return ""


class Quiet:
    async def reply(self, context):
        return "{}"


def toy(rules=None, faces=None, records=None, results_format=None, name="toy") -> Game:
    """The toy game, with parts of its rules, faces, records and results format replaced."""
    return Game(
        name=name,
        rules=dataclasses.replace(
            Rules(Params=ToyParams, State=ToyState, rosters=(("a", "b"),), new=lambda p, s, r, t: ToyState(r, t),
                  default_max_turns=lambda p, r: 2, Action=str, scripted={"quiet": lambda role, rng: Quiet()}),
            **(rules or {}),
        ),
        faces=dataclasses.replace(Faces(prompter=ToyPrompter(), seat=ToySeat(), replay=ToyReplay()), **(faces or {})),
        records=dataclasses.replace(Records(), **(records or {})),
        results_format=dataclasses.replace(ResultsFormat(), **(results_format or {})),
    )


@pytest.mark.parametrize("name", list(GAMES))
def test_every_registered_game_keeps_the_contract(name):
    assert check_contract(GAMES[name]) is GAMES[name]


def test_a_toy_game_with_every_optional_part_keeps_the_contract():
    class Everything(ToyState):
        def secrets(self, role):
            return (role,)

        def candidates_wanted(self, role):
            return 2

        def choose(self, role, candidates):
            return 0

    class Modules(ToyPrompter):
        async def prepare(self, context, notes, ask):
            return context

    class Idle(ToySeat):
        def idle(self, context):
            return ()

    class Drawn(ToyReplay):
        def board(self, state):
            return None

    game = toy(rules={"State": Everything}, faces={"prompter": Modules(), "seat": Idle(), "replay": Drawn()})
    assert registered(game) == {"toy": game}
    assert isinstance(Everything(), Secrets) and isinstance(Everything(), BestOfN)
    assert isinstance(game.faces.prompter, AgentModules) and isinstance(game.faces.seat, IdleActions)
    assert isinstance(game.faces.replay, BoardReplay)


def test_a_toy_game_with_no_optional_part_keeps_the_contract():
    game = toy(faces={"seat": None, "replay": None})
    assert registered(game) == {"toy": game}
    assert not isinstance(ToyState(), (Secrets, BestOfN)) and not isinstance(ToyPrompter(), AgentModules)
    assert not isinstance(ToySeat(), IdleActions) and not isinstance(ToyReplay(), BoardReplay)


class HalfBestOfN(ToyState):
    def candidates_wanted(self, role):
        return 2


class NoScores(ToyState):
    scores = None


class NoRead(ToyPrompter):
    read = None


class NoChatMemory:
    render, schema, parse, format, read = (ToyPrompter.render, ToyPrompter.schema, ToyPrompter.parse,
                                           ToyPrompter.format, ToyPrompter.read)


class SyncModules(ToyPrompter):
    def prepare(self, context, notes, ask):
        return context


class BoardNumber(ToyReplay):
    board = 3


class NoProgress(ToyReplay):
    progress = None


class Silent:
    max_actions = None
    rules, show, forms, action, describe = (ToySeat.rules, ToySeat.show, ToySeat.forms, ToySeat.action,
                                            ToySeat.describe)


class ZeroActions(ToySeat):
    max_actions = 0


class IdleNumber(ToySeat):
    idle = 1


class OldFormat:
    def params(self, fields):
        return {}


OtherTag = msgspec.defstruct("OtherTag", [("size", int, 1)], tag_field="game", tag="other", bases=(ToyParams,))


@pytest.mark.parametrize(
    "game, words",
    [
        (toy(rules={"State": HalfBestOfN}), ["HalfBestOfN", "candidates_wanted", "choose", "BestOfN", "all or none"]),
        (toy(rules={"State": NoScores}), ["NoScores", "scores"]),
        (toy(rules={"Params": OtherTag}), ["rules.Params", "tagged", "'toy'"]),
        (toy(rules={"rosters": ()}), ["rules.rosters"]),
        (toy(rules={"scripted": {}}), ["rules.scripted"]),
        (toy(rules={"default_feedback": "loud"}), ["rules.default_feedback", "'loud'"]),
        (toy(rules={"prepare": "later"}), ["rules.prepare"]),
        (toy(faces={"prompter": NoRead()}), ["prompter", "read", "Prompter"]),
        (toy(faces={"prompter": NoChatMemory()}), ["prompter", "chat_memory"]),
        (toy(faces={"prompter": SyncModules()}), ["prepare", "async"]),
        (toy(faces={"replay": BoardNumber()}), ["replay", "board", "BoardReplay"]),
        (toy(faces={"replay": NoProgress()}), ["replay", "progress", "Replay"]),
        (toy(faces={"seat": Silent()}), ["seat", "messages"]),
        (toy(faces={"seat": ZeroActions()}), ["seat", "max_actions"]),
        (toy(faces={"seat": IdleNumber()}), ["seat", "idle", "IdleActions"]),
        (toy(results_format={"format_1": OldFormat()}), ["results_format.format_1", "figures"]),
        (toy(results_format={"version": 2, "saved_before": {"colour": "red"}}), ["results_format.saved_before", "'colour'"]),
        (toy(results_format={"default_was": {"size": 2}}), ["results_format.default_was", "version", "above 1"]),
        (toy(results_format={"version": 0}), ["results_format.version"]),
        (toy(records={"table_rows": ("colour",)}), ["records.table_rows", "'colour'"]),
        (toy(records={"score_labels": {"x": 1}}), ["records.score_labels"]),
    ],
    ids=lambda value: " ".join(value[:2]) if isinstance(value, list) else "toy",
)
def test_a_broken_toy_game_fails_registration_naming_the_game_and_the_member(game, words):
    with pytest.raises(ContractError) as caught:
        registered(game)
    message = str(caught.value)
    assert message.startswith("game 'toy': ") and caught.value.game == "toy"
    for word in words:
        assert word in message, (word, message)


def test_two_games_of_one_name_fail_registration():
    with pytest.raises(ContractError, match="two games have this name"):
        registered(toy(), toy())
