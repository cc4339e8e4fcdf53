"""The prompt (spec §2.2, §4): the reference's system prompts word for word, the user prompt as its
template writes it, replies read as the reference reads them, and prompts read back."""

import hashlib
import random

import pytest

from puzzles import GAMES
from puzzles.turn import ChatLine, Reply, ReplyFormatError, TurnContext
from puzzles.einstein.game import GAME
from puzzles.einstein.actions import Ask, Grounding, Move, Pass, Relation, Share, Unreadable
from puzzles.einstein.board import instance_from_id
from puzzles.einstein.params import EinsteinParams
from puzzles.einstein.prompt import echo, render_prompt
from puzzles.einstein.prompt_text import system_prompts
from puzzles.einstein.rules import EinsteinGame

from .test_rules import random_action

# sha256 of SYSTEM_PROMPT in the reference's src/prompt/selfplay_*.py (commit 637f1ee)
REFERENCE = {
    ("llama", "share_ask", True): "17bbd0ef64a93ba913711b3d5d3282a76e51f14a4fa2897bf685708595621dfa",
    ("llama", "share", True): "71b2d8ed325247659e277b08800c46964907993324838eda76a23635f5d8ffd5",
    ("llama", "ask", True): "3796c86f3d592c25a3cf46e3952744ae086584fb6f9fc494c4439f76a5253864",
    ("llama", "none", True): "4678ab41b27d1d890780024beb462360c61c2539669b556c3bbe62c4088eaf00",
    ("llama", "share_ask", False): "87ac0b090dc69ca93ace15e4da66f49baf2fea74edfc91e6fd3b63c622745b86",
    ("llama", "share", False): "c1feac2375d259f577785ffd1ce6e01c30cad9be550cfadd659036e76c133bd9",
    ("llama", "ask", False): "a3a11044c3c72de77d323d47a7a1f65bfc2af3100bda758cd4826d7558c66e1c",
    ("llama", "none", False): "1248d7756facf0c0dce50570838701aa4f1caa772c64e695c52f35b07e65a510",
    ("gpt", "share_ask", True): "3df90d42f0ab7bd6770c33f7c62c83b0ea26ddc9d61a59a9ba522d9ef0ce3a28",
}
ID = "4_0202_3120_0002_210"


def test_the_system_prompts_are_the_references_word_for_word():
    prompts = system_prompts()
    assert set(prompts) == set(REFERENCE)
    for key, text in prompts.items():
        assert hashlib.sha256(text.encode()).hexdigest() == REFERENCE[key], key


def context(state, role, **fields):
    view = state.view(role)
    expected = echo(view, role)
    base = dict(
        game_id=0, role=role, turn=len(view.history) // 2 + 1, max_turns=state.max_turns, view=view, feedback=None,
        conversation=(expected,) if expected else (), partners=(state.partner(role),),
    )
    base.update(fields)
    return TurnContext(**base)


def test_the_user_prompt_is_the_references_template_filled_in():
    state = EinsteinGame(instance_from_id(ID), EinsteinParams(), 15)
    system, user = render_prompt(context(state, "player1"))
    assert system == system_prompts()[("llama", "share_ask", True)]
    assert user == (
        "\nYou are Player1 on the bottom side of the game board. You have the following knowledge for your goal:\n"
        "(block0, in, bottom_right_bin)\n(block0, block2, same, column)\n(block2, block3, same, row)\n\n"
        "Currently, the blocks are located as follows:\n"
        "top_left_bin: []\nplayer2_bin: [block1, block3]\ntop_right_bin: []\ncommonbin: []\n"
        "bottom_left_bin: []\nplayer1_bin: [block0, block2]\nbottom_right_bin: []\n\n"
        "You can access these bins:\n['bottom_left_bin', 'player1_bin', 'bottom_right_bin', 'commonbin']\n\n"
        "The history of the game till now:\nThis is the first turn.\n\n"
        "What action would you like to take? Please provide your reasoning before your action.\n"
    )
    state.step("player1", (Move(0, "player1_bin", "bottom_right_bin"),))
    state.step("player2", (Share(Relation(0, 1, "row")),))
    state.step("player1", (Pass(),))
    _, user = render_prompt(context(state, "player2"))
    assert user.endswith(
        "(block0, in, bottom_right_bin)\n(block0, block1, same, row)\n(block0, block2, same, column)\n\n"
        "Currently, the blocks are located as follows:\n"
        "top_left_bin: []\nplayer2_bin: [block1, block3]\ntop_right_bin: []\ncommonbin: []\n"
        "bottom_left_bin: []\nplayer1_bin: [block2]\nbottom_right_bin: [block0]\n\n"
        "You can access these bins:\n['top_left_bin', 'player2_bin', 'top_right_bin', 'commonbin']\n\n"
        "The history of the game till now:\nPartner: move block0 from player1_bin to bottom_right_bin\n"
        "You: share (block0, block1, same, row)\nPartner: pass the turn, but failed.\n\n"
        "What action would you like to take? Please provide your reasoning before your action.\n"
    )
    _, user = render_prompt(context(state, "player1"))
    assert "(block2, block3, same, row)\n(block0, block1, same, row)\n\nCurrently" in user  # shared items come last


def test_the_gpt_and_no_cot_prompts_end_as_the_references():
    gpt = EinsteinGame(instance_from_id(ID), EinsteinParams(prompt="gpt"), 15)
    _, user = render_prompt(context(gpt, "player2"))
    assert user.startswith("You are Player2 on the top side") and user.endswith("concise enough within 3 sentences.\n")
    plain = EinsteinGame(instance_from_id(ID), EinsteinParams(cot=False, actions="none"), 15)
    system, user = render_prompt(context(plain, "player2"))
    assert system == system_prompts()[("llama", "none", False)] and user.endswith("\n\nWhat action would you like to take?\n")


def test_nothing_is_added_to_the_prompt_by_default():
    state = EinsteinGame(instance_from_id(ID), EinsteinParams(), 15)
    state.step("player1", (Ask(1),))
    ctx = context(state, "player2", notices=("Your action ask block1 was rejected: no.",))
    assert ctx.conversation == (ChatLine(1, "player1", "ask block1"),)  # the ask reached player2 as a message
    _, user = render_prompt(ctx)
    assert "Messages" not in user and "About your last step" not in user and "steps in all" not in user
    _, user = render_prompt(context(state, "player2", conversation=()))
    assert "Messages: none." in user  # the message did not arrive
    noticed = EinsteinGame(instance_from_id(ID), EinsteinParams(notices=True), 15)
    _, user = render_prompt(context(noticed, "player1", notices=("Your action pass was rejected: a pass.",)))
    assert 'About your last step:\n- "Your action pass was rejected: a pass."' in user
    _, user = render_prompt(context(noticed, "player1", max_turns=20))
    assert "The game ends after 40 steps in all." in user


@pytest.mark.parametrize("text, action", [
    ("<THINK>I move it.</THINK><ACTION>move block1 from player1_bin to commonbin</ACTION>", Move(1, "player1_bin", "commonbin")),
    ("<ACTION> ask block2 </ACTION> and <ACTION>pass</ACTION>", Ask(2)),
    ("<THINK>maybe <ACTION>pass</ACTION></THINK><ACTION>ask block1</ACTION>", Pass()),
    ("<ACTION>\nshare (block1, block0, same, bin)\n</ACTION>", Share(Relation(0, 1, "bin"))),
    ("I pass.", Unreadable("")),
    ("<action>pass</action>", Unreadable("")),
    ("<ACTION>pass", Unreadable("")),
    ("<ACTION>pass the turn</ACTION>", Unreadable("pass the turn")),
    ("<ACTION></ACTION>", Unreadable("")),
])
def test_replies_read_as_the_reference_reads_them(text, action):
    assert GAME.faces.prompter.parse(text, None) == Reply(message="", actions=(action,))


def test_only_a_reply_that_is_not_text_is_a_format_error():
    with pytest.raises(ReplyFormatError):
        GAME.faces.prompter.parse(None, None)


@pytest.mark.parametrize("action", [
    Move(3, "commonbin", "top_left_bin"), Share(Relation(1, 2, "diagonal")), Share(Grounding(0, "top_right_bin")),
    Ask(4), Pass(), Unreadable(""), Unreadable("jump block2"),
])
def test_a_reply_written_in_the_format_reads_back(action):
    reply = Reply(message="", actions=(action,))
    for prose in ("", "I think so."):
        assert GAME.faces.prompter.parse(GAME.faces.prompter.format(reply, prose), None) == reply


@pytest.mark.parametrize("actions", ["share_ask", "share", "ask", "none", "share_ask/none"])
def test_a_prompt_reads_back_as_the_context_it_shows(actions):
    rng = random.Random(actions)
    for seed in range(15):
        params = EinsteinParams(blocks=rng.choice([4, 5, 6]), actions=actions, notices=rng.random() < 0.5, cot=rng.random() < 0.7)
        state = GAME.rules.new(params, seed, ("player1", "player2"), rng.choice([15, 15, 10, 40]))
        for _ in range(rng.randrange(25)):
            if state.done():
                break
            role = state.roles[state.steps % 2]
            state.step(role, (random_action(rng, state, role),))
        role = rng.choice(state.roles)
        fields = {}
        if rng.random() < 0.4:
            fields["conversation"] = tuple(
                ChatLine(rng.randrange(1, 9), rng.choice(state.roles), rng.choice(["hello", "a\nb", '"quoted"', "ask block1"]))
                for _ in range(rng.randrange(4))
            )
        if params.notices:
            fields["notices"] = tuple(rng.choice(["x", "Your action pass was rejected: a pass.", "two\nlines"]) for _ in range(rng.randrange(3)))
        fields["directed"] = rng.random() < 0.2
        ctx = context(state, role, **fields)
        read, key = GAME.faces.prompter.read(*GAME.faces.prompter.render(ctx))
        assert (read.role, read.turn, read.max_turns, read.partners) == (ctx.role, ctx.turn, ctx.max_turns, ctx.partners)
        assert read.view == ctx.view
        assert read.conversation == ctx.conversation and read.notices == ctx.notices and read.directed == ctx.directed


def test_each_game_reads_only_its_own_prompts():
    state = EinsteinGame(instance_from_id(ID), EinsteinParams(), 15)
    mine = render_prompt(context(state, "player1"))
    for name, game in GAMES.items():
        if name != "einstein":
            assert game.faces.prompter.read(*mine) is None
            other = game.rules.new(game.rules.Params(), 0, game.rules.rosters[0], game.rules.default_max_turns(game.rules.Params(), game.rules.rosters[0]))
            role = game.rules.rosters[0][0]
            ctx = TurnContext(
                game_id=0, role=role, turn=1, max_turns=5, view=other.view(role), feedback=None, conversation=(),
                partners=tuple(r for r in game.rules.rosters[0] if r != role),
            )
            assert GAME.faces.prompter.read(*game.faces.prompter.render(ctx)) is None
    assert GAME.faces.prompter.read(mine[0], mine[1].replace("Player1", "Player3")) is None
