"""Traveling Adventurers' prompts and the model agents' modules: the fields each variant shows, the
reference's slips on request, prompts read back, grounding replies read tolerantly, and the IBP
against an independent brute force."""

from __future__ import annotations

import itertools
import json

import anyio
import msgspec
import pytest

from puzzles.turn import ChatLine, TurnContext
from puzzles.tsp.game import GAME
from puzzles.tsp.params import TspParams
from puzzles.tsp.modules import TspNotes, merge, prepare, read_new_state
from puzzles.tsp.prompter import read_prompt

ROLES = ("light", "ghost")


def context(role="light", turn=1, conversation=(), **params):
    state = GAME.rules.new(TspParams(**params), 0, ROLES, 15)
    return TurnContext(game_id=0, role=role, turn=turn, max_turns=15, view=state.view(role), feedback=None,
                       conversation=tuple(conversation), partners=tuple(r for r in ROLES if r != role))


@pytest.mark.parametrize("variant, shown, hidden", [
    ("baseline", ["[History]"], ["[World-state-user]", "[Visited]", "[IBP]"]),
    ("grounding", ["[History]", "[World-state-user]"], ["[Visited]", "[IBP]"]),
    ("state_tracking", ["[Visited]", "[Remaining]", "[World-state-user]"], ["[History]", "[IBP]"]),
    ("problem_solving", ["[Visited]", "[Remaining]", "[IBP]"], ["[History]"]),
])
def test_each_variant_shows_its_fields(variant, shown, hidden):
    system, user = GAME.faces.prompter.render(context(variant=variant))
    for name in shown:
        assert name in user and name in system
    for name in hidden:
        assert name not in user
    assert user.splitlines()[-1] == "[Observation]: <START>"
    assert user.startswith("[World-state-own]: [[")
    own = json.loads(user.splitlines()[0].split(": ", 1)[1])
    assert [tuple(e) for e in own] == [tuple(e) for e in context(variant=variant).view.weights]


def test_the_house_names_the_actual_rooms_unless_the_reference_slips_are_asked_for():
    fixed, _ = GAME.faces.prompter.render(context(rooms=5))
    assert "The house has 5 rooms" in fixed and "each of the 5 rooms" in fixed and "(of length 1)" not in fixed
    slipped, _ = GAME.faces.prompter.render(context(rooms=5, prompt_fidelity=True))
    assert "The house has 4 rooms" in slipped and "each of the 4 rooms" in slipped and "(of length 1)" in slipped
    assert "your partner is in the light world" in slipped  # the baseline light prompt's slip
    assert "The house has 6 rooms" in GAME.faces.prompter.render(context(variant="state_tracking", prompt_fidelity=True))[0]


def test_only_the_baseline_light_prompt_has_the_200_token_line():
    assert "200 tokens" in GAME.faces.prompter.render(context())[0]
    assert "200 tokens" not in GAME.faces.prompter.render(context(role="ghost"))[0]
    assert "200 tokens" not in GAME.faces.prompter.render(context(variant="grounding"))[0]


def test_rejected_actions_are_told_only_with_notices():
    quiet = msgspec.structs.replace(context(), notices=("Your action x was rejected: no.",))
    assert "[Rejected]" not in GAME.faces.prompter.render(quiet)[1]
    told = msgspec.structs.replace(context(notices=True), notices=("Your action x was rejected: no.",))
    assert "[Rejected]: Your action x was rejected: no." in GAME.faces.prompter.render(told)[1]


def test_a_prompt_reads_back_to_its_view_and_the_partners_message():
    for variant in ("baseline", "grounding", "state_tracking", "problem_solving"):
        shown = context("ghost", 1, [ChatLine(1, "light", "coins from L: L-E: 5; suggest: L E")], variant=variant)
        read = read_prompt(*GAME.faces.prompter.render(shown))
        assert read.view == shown.view and read.role == "ghost"
        assert [(line.sender, line.text) for line in read.conversation] == [("light", "coins from L: L-E: 5; suggest: L E")]
    assert read_prompt("You are a helpful assistant.", "[Observation]: hi") is None


@pytest.mark.parametrize("reply, expected", [
    ('[Thought]: new\n[NWS]: [["L", "E", 5], ["E", "K", 2]]', [("L", "E", 5), ("E", "K", 2)]),
    ("[Thought]: none\n[NWS]: []", []),
    ("[NWS] [['L','E',5]] and more text", [("L", "E", 5)]),
    ('[NWS]: [["L", "Z", 5], ["L", "L", 1], ["L", "E", "5"], ["L", "E", true]]', []),
    ("[NWS]: [[L, E, 5]]", []),  # names, not strings: the literal cannot be read
    ("no new world state at all", []),
    ("[NWS]: " + "[" * 10_000, []),
])
def test_grounding_replies_are_read_tolerantly(reply, expected):
    assert read_new_state(reply, ("L", "E", "K", "B")) == expected


def test_reports_merge_undirected_by_default_and_pile_up_as_the_reference_does():
    known = [("L", "E", 5)]
    assert merge(known, [("E", "L", 7)], reference=False) == [("E", "L", 7)]
    assert merge(known, [("E", "L", 7)], reference=True) == [("L", "E", 5), ("E", "L", 7)]


def brute_ibp(view, known, prefix):
    partner = {frozenset(e[:2]): e[2] for e in known}
    own = {frozenset(e[:2]): e[2] for e in view.weights}
    rest = [r for r in view.rooms if r not in prefix]
    best = None
    for order in itertools.permutations(rest):
        tour = (*prefix, *order, "L")
        score = sum(own[frozenset(p)] + partner.get(frozenset(p), 0) for p in zip(tour, tour[1:]))
        if best is None or (score, [-ord(c) for c in "".join(tour)]) > (best[0], [-ord(c) for c in "".join(best[1])]):
            best = (score, tour)
    return best[1]


def test_prepare_grounds_the_partners_message_then_finds_the_ibp():
    calls = []

    async def ask(system, user, purpose):
        calls.append((purpose, user))
        return '[Thought]: two hallways\n[NWS]: [["L", "E", 9], ["K", "E", 8]]'

    shown = context("ghost", 1, [ChatLine(1, "light", "I get 9 to E")], variant="problem_solving")
    notes: dict = {}
    prepared = anyio.run(prepare, shown, notes, ask)
    assert [purpose for purpose, _ in calls] == ["grounding"]
    assert "[Message]: I get 9 to E" in calls[0][1] and '[Loc]: "L"' in calls[0][1] and '[World]: "LIGHT"' in calls[0][1]
    assert prepared.derived.partner == (("L", "E", 9), ("K", "E", 8))
    assert prepared.derived.ibp == brute_ibp(shown.view, prepared.derived.partner, ("L",))
    user = GAME.faces.prompter.render(prepared)[1]
    assert '[World-state-user]: [["L", "E", 9], ["K", "E", 8]]' in user and "[IBP]: " + json.dumps(list(prepared.derived.ibp)) in user
    again = anyio.run(prepare, context("ghost", 1, variant="problem_solving"), notes, ask)
    assert len(calls) == 1 and again.derived.partner == prepared.derived.partner  # no message: no call, notes kept


def test_the_baseline_agent_has_no_modules():
    async def ask(system, user, purpose):
        raise AssertionError("no call expected")

    shown = context("ghost", 1, [ChatLine(1, "light", "hi")])
    assert anyio.run(prepare, shown, {}, ask) is shown
    assert TspNotes().ibp == ()
