"""Reading Traveling Adventurers replies: each bad-output case of the reference (spec §2.5) is read
as the reference reads it, or rejected with a reason, and never crashes."""

from __future__ import annotations

import pytest

from puzzles.turn import ReplyFormatError
from puzzles.tsp.game import GAME
from puzzles.tsp.params import TspParams
from puzzles.tsp.prompt import WRONG_FORMAT, observation
from puzzles.tsp.replies import NO_MESSAGE, format_reply, parse_reply, read_actions, sections
from puzzles.tsp.rules import TspAction
from puzzles.turn import ChatLine, TurnContext


def test_a_well_formed_reply_reads_into_message_and_actions():
    reply = parse_reply(
        '[Thought]: E pays best.\n[Action]: suggest(["L", "E"]), agree-inner(["L", "E"]), ask("coins (L, E)?")\n'
        "[Message]: Shall we go to E?\nIt has 6 coins."
    )
    assert reply.message == "Shall we go to E?\nIt has 6 coins."
    assert reply.actions == (TspAction("suggest", '["L", "E"]'), TspAction("agree-inner", '["L", "E"]'), TspAction("ask", '"coins (L, E)?"'))
    assert reply.rejected == ()


def test_flags_without_a_colon_in_any_case_and_the_draft_thoughts_are_read():
    found = sections("[THOUGHT-DRAFT] try\n[thought-missing]: none\n[action] end(['L'])\n[Message] bye")
    assert found == {"thought-draft": "try", "thought-missing": "none", "action": "end(['L'])", "message": "bye"}


def test_the_first_section_of_a_kind_counts():
    assert parse_reply("[Message]: one\n[Message]: two").message == "one"


def test_a_missing_message_keeps_the_actions_and_the_partner_sees_the_wrong_format_marker():
    reply = parse_reply('[Thought]: hm\n[Action]: end(["L", "E", "L"])')
    assert reply.message == "" and reply.actions == (TspAction("end", '["L", "E", "L"]'),)
    assert [r.reason for r in reply.rejected] == [NO_MESSAGE]
    context = TurnContext(game_id=0, role="light", turn=2, max_turns=15, view=None, feedback=None, conversation=())
    assert observation(context) == WRONG_FORMAT


def test_a_missing_action_section_means_no_actions():
    reply = parse_reply("[Thought]: thinking\n[Message]: hello")
    assert reply.actions == () and reply.message == "hello"


@pytest.mark.parametrize("text", ["", "Sure, let's go to the kitchen!", "[Thought]: only thoughts", "{" * 5000])
def test_a_reply_with_neither_action_nor_message_cannot_be_read(text):
    with pytest.raises(ReplyFormatError):
        parse_reply(text)


def test_an_unclosed_action_is_rejected_and_the_ones_before_it_kept():
    actions, rejected = read_actions('agree-inner(["L", "E"]), end(["L", "E"')
    assert actions == (TspAction("agree-inner", '["L", "E"]'),)
    assert len(rejected) == 1 and "never closed" in rejected[0].reason


def test_a_bad_literal_is_rejected_by_the_game_and_the_rest_of_the_reply_still_applies():
    state = GAME.rules.new(TspParams(), 0, ("light", "ghost"), 15)
    reply = parse_reply('[Action]: end(["L", "E",), agree-inner(["L", "K"]), visit("K")\n[Message]: x')
    step = state.step("light", reply.actions)
    assert step.applied == 2 and len(step.rejected) == 1 and "Python list" in step.rejected[0].reason


def test_reading_is_linear_on_hostile_text():
    text = "[Action]: " + "suggest(" * 20_000 + "\n[Message]: " + "[" * 20_000
    reply = parse_reply(text)  # finishes at once; the unclosed action is reported
    assert reply.actions == () and reply.rejected


def test_format_writes_what_parse_reads():
    actions = (TspAction("suggest", '["L", "E"]'), TspAction("inform", '"I get 5 (five) coins"'))
    reply = parse_reply(format_reply("because", actions, "go to E", draft=True))
    assert reply.actions == actions and reply.message == "go to E"
    assert sections(format_reply("t", (), "m", draft=True))["thought-draft"] == "t"


def test_observation_is_the_partners_message_since_the_agents_last_turn():
    lines = (ChatLine(1, "light", "hi"), ChatLine(1, "ghost", "hello"), ChatLine(2, "light", "go E"))
    ghost = TurnContext(game_id=0, role="ghost", turn=2, max_turns=15, view=None, feedback=None, conversation=lines)
    light = TurnContext(game_id=0, role="light", turn=2, max_turns=15, view=None, feedback=None, conversation=lines)
    first = TurnContext(game_id=0, role="light", turn=1, max_turns=15, view=None, feedback=None, conversation=())
    assert observation(ghost) == "go E" and observation(light) == "hello" and observation(first) == "<START>"
