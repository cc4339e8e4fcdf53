import anyio
from anyio import wait_all_tasks_blocked
import pytest

from bus import Bus, Channel, Chat, GameOver, NotConnected, UnknownAddress, YourTurn
from bus.messages import AnyMessage
import msgspec


def chat(text="hi", sender="a", recipient="b", turn=1):
    return Chat(game_id=7, turn=turn, sender=sender, recipient=recipient, text=text)


async def test_send_delivers_to_the_address_and_taps_see_it():
    bus = Bus()
    inbox = bus.register("b")
    seen = []
    bus.add_tap(lambda address, message: seen.append((address, message)))
    await bus.send("b", chat())
    assert inbox.receive_nowait() == chat()
    assert seen == [("b", chat())]
    with pytest.raises(UnknownAddress):
        await bus.send("nobody", chat())


async def test_taps_by_kind_see_only_their_kinds_in_the_order_added():
    from bus import CHANNEL, ChannelSpec, Delivery, PolicyChannel, TapOn
    import random

    bus = Bus()
    bus.register("a"), bus.register("b")
    seen = []
    bus.add_tap(TapOn(lambda address, message: seen.append(("chats", address, message.text)), frozenset((Chat,))))
    bus.add_tap(lambda address, message: seen.append(("every", address, type(message).__name__)))
    bus.add_tap(TapOn(lambda address, message: seen.append(("chats again", address, message.text)), frozenset((Chat,))))
    bus.add_tap(TapOn(lambda address, delivery: seen.append(("deliveries", address, delivery.fate)), frozenset((Delivery,))))
    over = GameOver(game_id=7, outcome="success", turn=1)
    bus.connect("a", "b", PolicyChannel(ChannelSpec(), random.Random(1)))
    await bus.send("a", over)
    await bus.say(chat("hello"))
    assert seen == [
        ("every", "a", "GameOver"),  # no tap of its kind: only the taps of every kind
        ("every", CHANNEL, "Delivery"), ("deliveries", CHANNEL, "delivered"),
        ("chats", "b", "hello"), ("every", "b", "Chat"), ("chats again", "b", "hello"),
    ]


async def test_publish_reaches_every_subscriber():
    bus = Bus()
    inboxes = {name: bus.register(name) for name in "abc"}
    bus.subscribe("a", "game")
    bus.subscribe("c", "game")
    over = GameOver(game_id=1, outcome="success", turn=2)
    await bus.publish("game", over)
    assert inboxes["a"].receive_nowait() == over and inboxes["c"].receive_nowait() == over
    with pytest.raises(anyio.WouldBlock):
        inboxes["b"].receive_nowait()


async def test_say_goes_through_the_channel_and_only_between_connected_agents():
    class Shouting(Channel):
        def transmit(self, message):
            return (msgspec.structs.replace(message, text=message.text.upper()),), None, None

    bus = Bus()
    inbox = bus.register("b")
    bus.register("a")
    bus.connect("a", "b", Shouting())
    await bus.say(chat("hello"))
    assert inbox.receive_nowait().text == "HELLO"
    assert bus.talks_to("a") == ["b"] and bus.talks_to("b") == []
    with pytest.raises(NotConnected):
        await bus.say(chat(sender="b", recipient="a"))


async def test_full_mailbox_applies_back_pressure():
    bus = Bus(mailbox_size=2)
    inbox = bus.register("b")
    await bus.send("b", chat("1"))
    await bus.send("b", chat("2"))
    done = anyio.Event()

    async def third():
        await bus.send("b", chat("3"))
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(third)
        await wait_all_tasks_blocked()
        assert not done.is_set()  # blocked on the full mailbox
        assert inbox.receive_nowait().text == "1"
        await done.wait()
    assert [inbox.receive_nowait().text for _ in range(2)] == ["2", "3"]


def test_messages_are_one_tagged_union_that_round_trips():
    message = YourTurn(game_id=1, turn=2, max_turns=10, role="bob", view=[1, 2], feedback=None)
    data = msgspec.json.encode(message)
    assert b'"kind":"your_turn"' in data
    assert msgspec.json.decode(data, type=AnyMessage) == msgspec.structs.replace(message, view=[1, 2])
    with pytest.raises(AttributeError):
        message.turn = 3  # frozen
