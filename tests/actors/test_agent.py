"""The agent actor, alone on a bus: what it shows its policy, what it says to its partners and what it
sends the Environment; best of n; and the conversation window (``recent_lines``)."""

import anyio
import pytest

from actors.agent import AgentActor, recent_lines
from actors.base import GAME_TOPIC
from actors.environment import ENVIRONMENT
from bus import Act, Bus, Candidates, Chat, Chosen, GameOver, HumanTurn, Usage, YourTurn
from puzzles.turn import ChatLine, Reply, ReplyFormatError
from puzzles.policy import Answer
from tests.helpers import drain


def parse(text, context):
    """A reply reads "say <message>"; its one action is the message in capitals."""
    if not text.startswith("say "):
        raise ReplyFormatError("a reply starts with 'say '")
    message = text[4:]
    return Reply(message=message, actions=(message.upper(),) if message else ())


class Scripted:
    """Answers each turn with the next of ``texts`` and keeps the contexts it was shown."""

    def __init__(self, *texts):
        self.texts = list(texts)
        self.contexts = []

    async def reply(self, context):
        self.contexts.append(context)
        return Answer(self.texts.pop(0))


class Sampling(Scripted):
    """A ``SamplingPolicy``: samples a best-of-n turn in one call, each sample with its own usage,
    and is told which one was played."""

    def __init__(self, *texts):
        super().__init__(*texts)
        self.asked = []
        self.chosen = []

    async def replies(self, context, n):
        self.asked.append(n)
        prompt = {"system": "s", "user": "u"}
        return tuple(
            Answer(self.texts.pop(0), usage=Usage(model="m", prompt_tokens=10, completion_tokens=i + 1), prompt=prompt,
                   count_tokens=lambda text: len(text.split()))
            for i in range(n)
        )

    def chose(self, index):
        self.chosen.append(index)



async def agent_on_a_bus(policy, messages, **options):
    """Alice with ``policy``, talking with Bob; runs her through ``messages`` and then the game's end.
    Returns what Bob and the Environment received."""
    bus = Bus()
    inboxes = {address: bus.register(address) for address in (ENVIRONMENT, "bob")}
    alice = AgentActor(bus, "alice", policy, game_id=4, parse=parse, **options)
    bus.connect("alice", "bob")
    bus.connect("bob", "alice")
    for message in messages:
        await bus.send("alice", message)
    await bus.publish(GAME_TOPIC, GameOver(game_id=4, outcome="failure", turn=9))
    with anyio.fail_after(2):
        await alice.run()
    return drain(inboxes["bob"]), drain(inboxes[ENVIRONMENT])


def your_turn(turn, **fields):
    return YourTurn(game_id=4, turn=turn, max_turns=6, role="alice", view=f"view {turn}", feedback=f"feedback {turn}", **fields)


async def test_a_turn_shows_the_policy_what_it_heard_and_sends_the_message_and_the_act():
    policy = Scripted("say meet at noon")
    heard = Chat(game_id=4, turn=1, sender="bob", recipient="alice", text="when?")
    to_bob, to_environment = await agent_on_a_bus(policy, [heard, your_turn(2, notices=("late",))])
    (context,) = policy.contexts
    assert (context.game_id, context.role, context.turn, context.max_turns) == (4, "alice", 2, 6)
    assert (context.view, context.feedback, context.notices) == ("view 2", "feedback 2", ("late",))
    assert context.conversation == (ChatLine(1, "bob", "when?"),) and context.partners == ("bob",)
    assert to_bob == [Chat(game_id=4, turn=2, sender="alice", recipient="bob", text="meet at noon")]
    (act,) = to_environment
    assert isinstance(act, Act)
    assert (act.turn, act.role, act.message, act.actions, act.format_error) == (2, "alice", "meet at noon", ("MEET AT NOON",), None)
    assert (act.reply, act.reply_chars, act.context) == ("say meet at noon", 16, context)


async def test_a_reply_that_cannot_be_read_says_nothing_and_sends_the_format_error():
    policy = Scripted("hmm", "say ok")
    to_bob, to_environment = await agent_on_a_bus(policy, [your_turn(1), your_turn(2)])
    assert to_bob == [Chat(game_id=4, turn=2, sender="alice", recipient="bob", text="ok")]
    lost, played = to_environment
    assert (lost.message, lost.actions, lost.format_error, lost.reply) == ("", (), "a reply starts with 'say '", "hmm")
    assert played.format_error is None and played.actions == ("OK",)
    assert policy.contexts[1].conversation == ()  # nothing was said in the lost turn


async def test_best_of_n_sends_every_candidate_s_actions_and_plays_the_chosen_one():
    policy = Scripted("say a", "nonsense", "say c")
    to_bob, to_environment = await agent_on_a_bus(
        policy, [your_turn(3, candidates=3), Chosen(game_id=4, turn=3, index=2)]
    )
    candidates, act = to_environment
    assert candidates == Candidates(game_id=4, turn=3, role="alice", actions=(("A",), (), ("C",)))
    assert len(policy.contexts) == 3  # a policy that does not sample is asked n times
    assert (act.chosen, act.message, act.actions) == (2, "c", ("C",))
    assert [c.reply for c in act.candidates] == ["say a", "nonsense", "say c"]
    assert act.candidates[1].format_error == "a reply starts with 'say '"
    assert to_bob == [Chat(game_id=4, turn=3, sender="alice", recipient="bob", text="c")]
    assert act.usage is None and act.prompt is None


async def test_a_sampling_policy_samples_best_of_n_itself_and_is_told_the_one_played():
    policy = Sampling("say a b", "say c d e")
    _, to_environment = await agent_on_a_bus(policy, [your_turn(3, candidates=2), Chosen(game_id=4, turn=3, index=1)])
    _, act = to_environment
    assert policy.asked == [2] and policy.chosen == [1] and policy.contexts == []
    assert (act.chosen, act.message) == (1, "c d e")
    # the turn's usage is both samples'; the message counted is the one played
    assert act.usage == Usage(model="m", prompt_tokens=20, completion_tokens=3, message_tokens=3, attempts=2, calls=2)
    assert act.prompt == {"system": "s", "user": "u"}


async def test_what_an_answer_says_of_the_call_goes_with_the_act():
    class Measured:
        async def reply(self, context):
            return Answer(
                "say hello there", usage=Usage(model="m", prompt_tokens=7), prompt={"system": "s", "user": "u"},
                human=HumanTurn(2.5), seconds=1.25, count_tokens=lambda text: 40,
            )

    _, (act,) = await agent_on_a_bus(Measured(), [your_turn(1)])
    assert act.usage == Usage(model="m", prompt_tokens=7, message_tokens=40)
    assert (act.prompt, act.human, act.latency) == ({"system": "s", "user": "u"}, HumanTurn(2.5), 1.25)


async def test_a_policy_that_does_not_answer_with_an_answer_fails_its_agent_in_one_line():
    class Old:
        async def reply(self, context):
            return "say hi"

    bus = Bus()
    bus.register(ENVIRONMENT)
    alice = AgentActor(bus, "alice", Old(), game_id=4, parse=parse)
    await bus.send("alice", your_turn(1))
    with pytest.raises(Exception) as failed:
        with anyio.fail_after(2):
            await alice.run()
    assert "answered with str, not an Answer" in repr(failed.value)


def test_history_keeps_the_latest_of_each_sender_and_always_the_partners_newest():
    log = [ChatLine(t, s, f"{s}{t}") for t in (1, 2, 3) for s in ("alice", "bob")]
    texts = lambda h: [line.text for line in recent_lines(log, h, "bob")]  # noqa: E731
    assert texts(0) == ["alice3"]
    assert texts(1) == ["alice3", "bob3"]
    assert texts(2) == ["alice2", "bob2", "alice3", "bob3"]
    assert texts(None) == [line.text for line in log]
