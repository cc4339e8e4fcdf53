"""The position games' strategy classes against policies whose class is known by construction, with
2, 3 and 4 agents, both turn orders and both topologies that reach every role; and what the
transcripts say reached whom under simultaneous turns, which the classes read.

By construction: ``share_everything`` puts every fact it holds in its first message (all at once),
``one_piece`` one new fact per message (piece by piece), ``ignore`` never reads a message or changes
its hypothesis (ignores, once it has heard what fixes a position). ``ShuffledShapes`` is Alice naming
her shapes out of order with no position (she states no fact: other); the partner who hears only
that cannot fix anything, so it does not ignore. share_everything in the chain passes on every link it heard (a relay), so ``ignore`` at the end of
a chain of neighbours hears what fixes its positions through the middle seats."""

from __future__ import annotations

import json

import pytest

from engine import RunDir
from engine.analysis.played import run_analyses
from puzzles import Answer, TurnContext
from puzzles.asympuzl.scripted import ShareEverything as AsymShare
from puzzles.chain.scripted import ShareEverything as ChainShare
from runners.concurrent import main as run_main

HERE = "tests.puzzles.test_position_classes"
ROLES = ("alice", "bob", "carol", "dave")
CLASSES = ["all at once", "piece by piece", "ignores", "other"]


def with_message(reply: str, message: str) -> str:
    """The reply (prose, then its JSON object on the last line) with another message, same actions."""
    prose, body = reply.rsplit("\n", 1)
    fields = json.loads(body)
    fields["message"] = message
    return prose + "\n" + json.dumps(fields)


class ShuffledShapes(AsymShare):
    """AsymPuzl's Alice writing what she learns as share_everything does, but telling only her
    shapes' names, backwards (never in the order of their positions) and without positions."""

    async def reply(self, context: TurnContext) -> Answer:
        played = await super().reply(context)
        shapes = [piece.shape for piece in context.view.clues]
        return Answer(with_message(played.text, "My shapes are " + ", ".join(reversed(shapes)) + "."))


class ChainShuffled(ChainShare):
    """The chain's Alice naming her shapes backwards with no positions (acting as share_everything)."""

    async def reply(self, context: TurnContext) -> Answer:
        played = await super().reply(context)
        shapes = [item[0] for item in context.view.clues]
        return Answer(with_message(played.text, "My shapes are " + ", ".join(reversed(shapes)) + "."))


def analysed(tmp_path, *flags: str, games: int = 3) -> dict[str, str]:
    """Each role's class over the games of one condition (the class every game gave it)."""
    run = tmp_path / "run"
    assert run_main([*flags, "--games", str(games), "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    (found,) = run_analyses(RunDir.open(run).records(), run).games
    assert found.without_transcript == 0
    (table,) = [t for t in found.tables if t.name == "strategies"]
    classes = {}
    for row in table.rows:
        if row[2] == "all":
            shares = dict(zip(CLASSES, row[4:]))
            classes[row[1]] = next((c for c, share in shares.items() if share == 100.0), f"mixed {shares}")
    return classes


def seats(policies: list[str]) -> list[str]:
    return [f"--agent={role}={policy}" for role, policy in zip(ROLES, policies)]


ORDERS = ["round_robin", "simultaneous"]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("agents", [2, 3, 4])
@pytest.mark.parametrize("topology", ["all", "chain"])
@pytest.mark.parametrize("policy, expected", [("share_everything", "all at once"), ("one_piece", "piece by piece")])
def test_sharing_reads_as_its_class_with_any_number_of_agents(tmp_path, policy, expected, agents, topology, order):
    got = analysed(tmp_path, "--game", "chain", *seats([policy] * agents), "--topology", topology, "--turn-order", order)
    assert got == dict.fromkeys(ROLES[:agents], expected)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("agents", [2, 3, 4])
@pytest.mark.parametrize("topology", ["all", "chain"])
def test_the_last_seat_that_ignores_reads_as_ignoring(tmp_path, agents, topology, order):
    """The seats before it share everything (and so relay along a chain of neighbours)."""
    got = analysed(tmp_path, "--game", "chain", *seats(["share_everything"] * (agents - 1) + ["ignore"]),
                   "--topology", topology, "--turn-order", order)
    assert got == dict.fromkeys(ROLES[: agents - 1], "all at once") | {ROLES[agents - 1]: "ignores"}


@pytest.mark.parametrize("order", ORDERS)
def test_share_everything_against_ignore_reads_the_same_in_either_turn_order(tmp_path, order):
    got = analysed(tmp_path, "--alice", "share_everything", "--bob", "ignore", "--turn-order", order)
    assert got == {"alice": "all at once", "bob": "ignores"}


@pytest.mark.parametrize("order", ORDERS)
def test_naming_shapes_out_of_order_states_no_position(tmp_path, order):
    """Alice's shapes, named backwards, are no fact: she reads other, and Bob, who cannot place
    anything he heard, does not read as ignoring."""
    got = analysed(tmp_path, "--alice", f"{HERE}:ShuffledShapes", "--bob", "share_everything", "--turn-order", order)
    assert got == {"alice": "other", "bob": "all at once"}


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("agents", [2, 3, 4])
def test_naming_shapes_out_of_order_in_the_chain_states_no_position(tmp_path, agents, order):
    got = analysed(tmp_path, "--game", "chain", *seats([f"{HERE}:ChainShuffled"] + ["share_everything"] * (agents - 1)),
                   "--turn-order", order)
    assert got == {"alice": "other"} | dict.fromkeys(ROLES[1:agents], "all at once")
