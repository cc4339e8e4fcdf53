"""The actor base: the mailbox loop stops on GameOver, a failure names the actor, and run_actors runs
a game's actors together."""

import anyio
import pytest

from actors.base import Actor, ActorFailed, run_actors
from bus import Bus, Chat, GameOver


def chat(text="hi", sender="a", recipient="b", turn=1):
    return Chat(game_id=7, turn=turn, sender=sender, recipient=recipient, text=text)


async def test_actor_handles_messages_in_order_and_stops_on_game_over():
    bus = Bus()

    class Recorder(Actor):
        def __init__(self):
            super().__init__(bus, "r")
            self.got = []

        async def handle(self, message):
            self.got.append(message.text)

    actor = Recorder()
    for text in ("one", "two"):
        await bus.send("r", chat(text))
    await bus.publish("game", GameOver(game_id=7, outcome="failure", turn=1))
    await bus.send("r", chat("after the end"))
    with anyio.fail_after(2):
        await actor.run()
    assert actor.got == ["one", "two"]


async def test_an_actor_that_raises_fails_with_its_address_and_closes_its_mailbox():
    bus = Bus()

    class Picky(Actor):
        async def handle(self, message):
            raise ValueError(f"cannot take {message.text!r}")

    actor = Picky(bus, "picky")
    await bus.send("picky", chat("this"))
    with anyio.fail_after(2), pytest.raises(ActorFailed) as failed:
        await actor.run()
    assert failed.value.address == "picky"
    assert isinstance(failed.value.cause, ValueError) and str(failed.value) == "picky: ValueError: cannot take 'this'"
    with pytest.raises(anyio.BrokenResourceError):
        await bus.send("picky", chat("more"))  # nobody reads it any more


async def test_run_actors_runs_the_first_in_the_calling_task_and_waits_for_all():
    bus = Bus()
    seen = []
    tasks = {}

    class Echo(Actor):
        async def on_start(self):
            tasks[self.address] = anyio.get_current_task().id
            if self.address == "a":
                await self.bus.send("b", Chat(game_id=0, turn=0, sender="a", recipient="b", text="hi"))

        async def handle(self, message):
            seen.append((self.address, message.text))
            self.stop()
            if self.address == "b":
                await self.bus.send("a", Chat(game_id=0, turn=1, sender="b", recipient="a", text="back"))

    caller = anyio.get_current_task().id
    with anyio.fail_after(2):
        await run_actors([Echo(bus, "a"), Echo(bus, "b")])
    assert tasks["a"] == caller and tasks["b"] != caller
    assert seen == [("b", "hi"), ("a", "back")]
