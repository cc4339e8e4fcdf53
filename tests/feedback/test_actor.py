"""The Feedback actor, alone on a bus: each ``TurnStart`` from the Environment becomes the prompted
role's ``YourTurn`` with the feedback evaluated at that moment; anything else is a protocol error."""

import functools

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from actors.base import GAME_TOPIC, ActorFailed
from actors.environment import FEEDBACK
from bus import Bus, Chat, GameOver, TurnStart, YourTurn
from feedback.actor import FeedbackActor
from puzzles import GAMES
from tests.helpers import drain, spec



async def run_feedback(messages, evaluate, roles=("alice", "bob")):
    """A feedback actor for game 3 run through ``messages`` and the game's end; what each role got."""
    bus = Bus()
    inboxes = {role: bus.register(role) for role in roles}
    actor = FeedbackActor(bus, game_id=3, max_turns=8, evaluate=evaluate)
    assert actor.address == FEEDBACK  # where the Environment sends its TurnStarts
    for message in messages:
        await bus.send(FEEDBACK, message)
    await bus.publish(GAME_TOPIC, GameOver(game_id=3, outcome="failure", turn=2))
    with anyio.fail_after(2):
        await actor.run()
    return {role: drain(inbox) for role, inbox in inboxes.items()}


async def test_a_turn_start_becomes_the_role_s_your_turn_with_its_feedback():
    asked = []

    def evaluate(role):
        asked.append(role)
        return f"feedback #{len(asked)} for {role}"

    starts = [
        TurnStart(game_id=3, turn=1, role="alice", view={"v": 1}, notices=("n",), progress={"alice": 2}, candidates=2),
        TurnStart(game_id=3, turn=1, role="bob", view=[2]),
    ]
    got = await run_feedback(starts, evaluate)
    assert asked == ["alice", "bob"]
    assert got["alice"] == [
        YourTurn(game_id=3, turn=1, max_turns=8, role="alice", view={"v": 1}, feedback="feedback #1 for alice",
                 notices=("n",), candidates=2),
    ]  # the view, notices and candidates pass through; the progress stays with the engine
    assert got["bob"] == [YourTurn(game_id=3, turn=1, max_turns=8, role="bob", view=[2], feedback="feedback #2 for bob")]


async def test_the_game_s_feedback_is_read_from_the_state_as_it_is_when_the_role_is_prompted():
    """Wired as ``engine`` wires it: ``evaluate`` is the game's feedback mode bound to the live state."""
    game = GAMES["asympuzl"]
    game_spec = spec(0, size=3)
    state = game.rules.new(game_spec.params, game_spec.seed, tuple(game_spec.agents), game_spec.max_turns)
    mode = game.rules.feedback["own_detailed"]
    bus = Bus()
    alice = bus.register("alice")
    actor = FeedbackActor(bus, game_id=3, max_turns=6, evaluate=functools.partial(mode, state))
    before = mode(state, "alice")
    async with anyio.create_task_group() as tg:
        tg.start_soon(actor.run)
        await bus.send(FEEDBACK, TurnStart(game_id=3, turn=1, role="alice", view=state.view("alice")))
        await wait_all_tasks_blocked()  # the actor has handled it and waits for the next
        first = state.truth[0]
        state.step("alice", (game.rules.Action(1, first.shape, first.color),))  # what the Environment applies in between
        await bus.send(FEEDBACK, TurnStart(game_id=3, turn=2, role="alice", view=state.view("alice")))
        await bus.publish(GAME_TOPIC, GameOver(game_id=3, outcome="failure", turn=2))
    after = mode(state, "alice")
    assert 1 in before.own.wrong and 1 not in after.own.wrong  # the step changed what alice is told
    first_turn, second_turn = drain(alice)
    assert (first_turn.turn, first_turn.feedback) == (1, before)
    assert (second_turn.turn, second_turn.feedback) == (2, after)
    assert second_turn.view == state.view("alice")


async def test_anything_but_a_turn_start_fails_the_feedback_actor():
    with pytest.raises(ActorFailed) as failed:
        await run_feedback([Chat(game_id=3, turn=1, sender="alice", recipient="bob", text="hi")], lambda role: None)
    assert failed.value.address == FEEDBACK and isinstance(failed.value.cause, TypeError)
    assert "unexpected Chat" in str(failed.value.cause)
