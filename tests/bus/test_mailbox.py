import anyio
import pytest

from actors.base import Actor, run_actors
from bus import Bus, Chat
from bus.mailbox import Mailbox


async def test_a_waiting_reader_gets_messages_in_the_order_sent():
    box = Mailbox(4)
    got = []

    async def read(n):
        for _ in range(n):
            got.append(await box.receive())

    async with anyio.create_task_group() as tg:
        tg.start_soon(read, 3)
        await anyio.sleep(0.01)  # the reader is waiting on an empty mailbox
        box.send_nowait(1)
        box.send_nowait(2)
        await box.send(3)
    assert got == [1, 2, 3]
    with pytest.raises(anyio.WouldBlock):
        box.receive_nowait()


async def test_a_cancelled_reader_leaves_the_mailbox_usable():
    box = Mailbox(2)
    with anyio.move_on_after(0.01):
        await box.receive()
    box.send_nowait("after")
    assert await box.receive() == "after"


async def test_senders_blocked_on_a_full_mailbox_go_in_turn_and_a_cancelled_one_gives_up_its_turn():
    box = Mailbox(1)
    box.send_nowait("first")
    sent = []

    async def send(item):
        await box.send(item)
        sent.append(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(send, "second")
        await anyio.sleep(0.01)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await box.send("never")  # cancelled while waiting for room
        tg.start_soon(send, "third")
        await anyio.sleep(0.01)
        assert sent == []
        assert box.receive_nowait() == "first"
        await anyio.sleep(0.01)
        assert sent == ["second"]
        assert box.receive_nowait() == "second"
        await anyio.sleep(0.01)
    assert sent == ["second", "third"] and box.receive_nowait() == "third"


async def test_end_lets_the_reader_take_what_is_left_then_stops_it():
    box = Mailbox(4)
    box.send_nowait("left")
    box.end()
    with pytest.raises(anyio.ClosedResourceError):
        box.send_nowait("late")
    assert await box.receive() == "left"
    with pytest.raises(anyio.EndOfStream):
        await box.receive()


async def test_closing_fails_the_senders_even_those_waiting_for_room():
    box = Mailbox(1)
    box.send_nowait("x")
    failed = []

    async def send():
        try:
            await box.send("y")
        except anyio.BrokenResourceError:
            failed.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(send)
        await anyio.sleep(0.01)
        box.close()
    assert failed == [True]
    with pytest.raises(anyio.BrokenResourceError):
        box.send_nowait("z")


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
