"""AsymPuzl's two prompts: the default is the long paper's appendix G word for word (pinned against
the paper's text in tests/data/asympuzl_appendix_g.txt); the guided one adds what the paper does
not say; both read back as the context they show."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Grid
from puzzles.asympuzl.game import GAME
from puzzles.asympuzl.params import AsymPuzlParams
from puzzles.asympuzl.prompt import parse_reply, read_prompt, render_prompt
from puzzles.asympuzl.rules import ALICE, BOB, SOLO, AsymView, Piece
from puzzles.turn import ChatLine, TurnContext
from puzzles.chain.game import GAME as CHAIN
from puzzles.positions.rules import MODES, Feedback, RoleStatus
from puzzles.positions.vocab import COLOR_SET, SHAPE_SET
from puzzles.testing import check_game

DATA = Path(__file__).resolve().parents[1] / "data"
APPENDIX_G = (DATA / "asympuzl_appendix_g.txt").read_text()
OUR_EXAMPLE = '{"message": "...", "actions": [{"replace": 1, "by": {"shape": "<shape>", "color": "<color>"}}]}'


def _normal(text: str) -> str:
    """Text as a PDF keeps it: no code fences or header marks, dashes as hyphens, one space between words."""
    text = re.sub(r"^# ", "", text.replace("```", " "), flags=re.M)
    return " ".join(text.replace("\u2014", "-").replace("\u2013", "-").split())


def _appendix_g_context() -> TurnContext:
    """The turn appendix G shows: Bob, 5 positions, his hypothesis still his clues, both feedback."""
    pieces = tuple(Piece(s, c) for s, c in [
        ("square", "blue"), ("triangle", "red"), ("rectangle", "cyan"), ("circle", "green"), ("pentagon", "yellow"),
    ])
    said = re.findall(r"^([AB]): (.*)$", APPENDIX_G, re.M)
    return TurnContext(
        game_id=0, role=BOB, turn=2, max_turns=10, view=AsymView(5, pieces, pieces),
        feedback=Feedback(mode="both", own=RoleStatus(BOB, False), others=(RoleStatus(ALICE, True),)),
        conversation=tuple(ChatLine(1 + (s == "A"), {"A": ALICE, "B": BOB}[s], text) for s, text in said),
        partners=(ALICE,),
    )


def test_the_default_prompt_is_appendix_g_word_for_word():
    assert AsymPuzlParams().prompt == "paper"
    assert GAME.rules.new(AsymPuzlParams(), 1, (ALICE, BOB), 10).view(BOB).prompt == "paper"
    system, user = GAME.faces.prompter.render(_appendix_g_context())
    paper_system, paper_user = APPENDIX_G.split("\nPuzzle State\n")
    assert _normal(system) == _normal(paper_system)
    # The paper's example reply is lost from its text: ours ends the prompt.
    assert _normal(user) == _normal("Puzzle State\n" + paper_user) + " " + OUR_EXAMPLE
    assert user == PAPER_USER  # and the layout, which the PDF does not keep, is ours


PAPER_USER = """# Puzzle State

Initial clues:
Position 1: the square is blue.
Position 2: the triangle is red.
Position 3: the rectangle is cyan.
Position 4: the circle is green.
Position 5: the pentagon is yellow.

Your current working hypothesis:
Position 1: the square is blue.
Position 2: the triangle is red.
Position 3: the rectangle is cyan.
Position 4: the circle is green.
Position 5: the pentagon is yellow.

Feedback:
Agent A's part of the puzzle is solved and Agent B's part of the puzzle is unsolved.

Recent conversation:
B: I have the correct shape\u2013color pairs but in random order. Please confirm the order of shapes again: square, triangle, rectangle, circle, pentagon.
A: Thank you for confirming the order of shapes. Based on your shape-color mappings, please provide the correct color for each shape: square, triangle, rectangle, circle, and pentagon.

Output format:
Each action must follow this format:
```
{"replace": <position>, "by": {"shape": <shape>, "color": <color>}}
```
Your answer MUST END WITH a **valid JSON object** and include the following fields:
- "message": What you want to tell and ask to the other agent (the only thing the other agent will receive).
- "actions": A list of actions to take (the other agent will not see your actions).

Example:
```
""" + OUR_EXAMPLE + "\n```"


def _turn(prompt: str, role: str, mode: str, seed: int = 4, turn: int = 2) -> tuple[TurnContext, object]:
    """A turn of a game with 2 distractors in Alice's clues, after a wrong write of each agent."""
    state = GAME.rules.new(AsymPuzlParams(size=5, distractors=2, prompt=prompt), seed, (ALICE, BOB), 10)
    for r in (ALICE, BOB):
        truth = state.truth[0]
        state.step(r, (GAME.rules.Action(2, truth.shape, truth.color),))
    lines = (ChatLine(turn - 1, ALICE, "Position 1 is the star."), ChatLine(turn - 1, BOB, "The star is red."))
    context = TurnContext(
        game_id=0, role=role, turn=turn, max_turns=10, view=state.view(role), feedback=GAME.rules.feedback[mode](state, role),
        conversation=lines if role == ALICE else lines[1:] + (ChatLine(turn, ALICE, "What color is the star?"),),
        partners=(BOB if role == ALICE else ALICE,),
    )
    return context, state


@pytest.mark.parametrize("role", [ALICE, BOB])
def test_the_paper_prompt_has_none_of_the_guided_additions_and_the_guided_one_has_each(role):
    paper = render_prompt(_turn("paper", role, "own_detailed")[0])
    guided = render_prompt(_turn("guided", role, "own_detailed")[0])
    additions = [
        lambda system, user: "Important:" in system and "write everything it needs to know" in system,
        lambda system, user: "# Puzzle State (turn 2 of 10)" in user,
        lambda system, user: "The puzzle has 5 positions" in user,  # what the clues mean
        lambda system, user: "Your part of the puzzle is unsolved; wrong positions:" in user,
        lambda system, user: "(you, turn 1):" in user or "Agent A (turn 2):" in user,
        lambda system, user: "the other agents" in user,
    ]
    for shows in additions:
        assert shows(*guided) and not shows(*paper)
    assert "Agent A's part of the puzzle is unsolved" in paper[1] or "Agent B's part of the puzzle is unsolved" in paper[1]
    if role == ALICE:  # the distractors are numbered as clues, past N
        assert "Position 7: the " in paper[1] and "Position 8: the " not in paper[1]
        assert "- You see the correct order of shapes but not the colors." in paper[0]
        assert "- Agent B knows the correct shape-color mappings, but in random order." in paper[0]


@pytest.mark.parametrize("prompt", ["paper", "guided"])
def test_a_reply_copying_the_example_moves_nothing_in_the_paper_prompt_only(prompt):
    context, state = _turn(prompt, ALICE, "none")
    example = render_prompt(context)[1].split("Example:\n")[1].strip("`\n")
    reply = parse_reply(example)
    legal = [a for a in reply.actions if a.shape in SHAPE_SET and a.color in COLOR_SET]
    assert (legal == []) == (prompt == "paper")
    step = state.step(ALICE, reply.actions)
    assert (step.applied, len(step.rejected)) == ((0, 1) if prompt == "paper" else (1, 0))


WORDS = {
    "none": None,
    "own": "Agent A's part of the puzzle is unsolved.",
    "own_detailed": "Agent A's part of the puzzle is unsolved (wrong positions: {a}).",
    "joint": "The puzzle is unsolved.",
    "both": "Agent A's part of the puzzle is unsolved and Agent B's part of the puzzle is unsolved.",
    "both_detailed": "Agent A's part of the puzzle is unsolved (wrong positions: {a}) and Agent B's part of the puzzle is unsolved (wrong positions: {b}).",
    "partner": "Agent B's part of the puzzle is unsolved.",
}


@pytest.mark.parametrize("mode", list(MODES))
def test_paper_feedback_names_the_agents_in_one_sentence_and_reads_back(mode):
    context, state = _turn("paper", ALICE, mode)
    system, user = render_prompt(context)
    wrong = {r: ", ".join(str(p) for p in GAME.rules.feedback["own_detailed"](state, r).own.wrong) for r in (ALICE, BOB)}
    shown = user.split("Feedback:\n")[1].split("\n\n")[0] if "Feedback:\n" in user else None
    expected = WORDS[mode] and WORDS[mode].format(a=wrong[ALICE], b=wrong[BOB])
    assert shown == expected
    read = read_prompt(system, user).feedback
    fed = context.feedback
    said = lambda s: None if s is None else (s.role, s.solved, s.wrong or ())  # noqa: E731
    if mode == "none":
        assert read is None
    else:
        assert said(read.own) == said(fed.own) and read.joint_solved == fed.joint_solved
        assert [said(s) for s in read.others] == [said(s) for s in fed.others]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda t: t.strip() == t and not re.search(r"^[A-Z]: |\n\n|\nAgent [A-Z] \(", t, re.M)
)


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["paper", "guided"]), st.sampled_from([ALICE, BOB]), st.integers(0, 10_000), st.integers(1, 9),
    st.sampled_from(list(MODES)), st.booleans(), st.lists(st.tuples(st.integers(1, 9), st.sampled_from([ALICE, BOB]), _TEXT), max_size=3),
)
def test_either_prompt_reads_back_as_the_context_it_shows(prompt, role, seed, turn, mode, directed, lines):
    params = AsymPuzlParams(size=2 + seed % 6, distractors=seed % 3, distractors_in=ALICE if seed % 2 else BOB, prompt=prompt)
    state = GAME.rules.new(params, seed, (ALICE, BOB), 10)
    context = TurnContext(
        game_id=0, role=role, turn=turn, max_turns=10, view=state.view(role), feedback=GAME.rules.feedback[mode](state, role),
        conversation=tuple(ChatLine(t, s, x) for t, s, x in lines), notices=("Your reply could not be read.",),
        partners=(BOB if role == ALICE else ALICE,), directed=directed,
    )
    rendered = GAME.faces.prompter.render(context)
    read, _ = GAME.faces.prompter.read(*rendered)
    assert CHAIN.faces.prompter.read(*rendered) is None  # each game reads only its own prompts
    shows_turns = prompt == "guided"
    assert (read.role, read.turn, read.max_turns) == ((role, turn, 10) if shows_turns else (role, 0, 0))
    assert read.view == context.view and read.partners == context.partners
    assert read.notices == context.notices and read.directed == directed
    expected = context.conversation if shows_turns else tuple(msgspec.structs.replace(c, turn=0) for c in context.conversation)
    assert read.conversation == expected


@pytest.mark.parametrize("prompt", ["paper", "guided"])
def test_the_single_agent_prompt_of_either_kind_reads_back(prompt):
    state = GAME.rules.new(AsymPuzlParams(size=4, distractors=1, prompt=prompt), 3, (SOLO,), 1)
    context = TurnContext(game_id=0, role=SOLO, turn=1, max_turns=1, view=state.view(SOLO), feedback=None, conversation=())
    system, user = render_prompt(context)
    assert system.startswith("You are the only agent.") and "Recent conversation:" not in user
    assert read_prompt(system, user).view == context.view


@pytest.mark.parametrize("prompt", ["paper", "guided"])
def test_the_game_passes_the_conformance_check_with_either_prompt(prompt):
    check_game(GAME, AsymPuzlParams(prompt=prompt, distractors=2), seeds=range(3))


def test_the_prompt_is_a_condition_field_so_variants_are_never_pooled():
    plan = Grid(game="asympuzl", seeds=2, params={"prompt": ["paper", "guided"]})
    conditions = {spec.condition() for spec in plan.specs_for(range(plan.total))}
    assert len(conditions) == 2 and sum("prompt=guided" in c for c in conditions) == 1
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"game": "asympuzl", "prompt": "chatty"}, AsymPuzlParams)
