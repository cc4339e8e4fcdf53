import anyio
from anyio import wait_all_tasks_blocked
import pytest

from bus.mailbox import Mailbox


async def test_a_waiting_reader_gets_messages_in_the_order_sent():
    box = Mailbox(4)
    got = []

    async def read(n):
        for _ in range(n):
            got.append(await box.receive())

    async with anyio.create_task_group() as tg:
        tg.start_soon(read, 3)
        await wait_all_tasks_blocked()  # the reader is waiting on an empty mailbox
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
        await wait_all_tasks_blocked()
        with anyio.CancelScope() as scope:
            scope.cancel()
            await box.send("never")  # cancelled while waiting for room
        tg.start_soon(send, "third")
        await wait_all_tasks_blocked()
        assert sent == []
        assert box.receive_nowait() == "first"
        await wait_all_tasks_blocked()
        assert sent == ["second"]
        assert box.receive_nowait() == "second"
        await wait_all_tasks_blocked()
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
        await wait_all_tasks_blocked()
        box.close()
    assert failed == [True]
    with pytest.raises(anyio.BrokenResourceError):
        box.send_nowait("z")
