"""The ring workload (``ring.py``) on autogen-core, against bare asyncio in the same interpreter.

Needs only autogen-core and the standard library, so that it runs in an environment of its own:

    python benchmarks/ring_autogen.py --repeats 5     # prints the paired ratio autogen-core / bare

Each ring member is a ``RoutedAgent``; agent type ``a<i>`` with the game as its key, so each game
has its own four agents, and a member passes a new message on by publishing to the next member's
topic (``TypeSubscription``), the runtime's fire-and-forget path. The anchor is the bare asyncio
ring with the same message class (a dataclass). Rates are messages per second of CPU time. (No
postponed annotations here: autogen-core reads the handler's annotations when the class is made.)
"""

import argparse
import asyncio
import gc
import statistics
import time
from dataclasses import dataclass

GAMES, ACTORS, HOPS = 1000, 4, 40
TOTAL = GAMES * ACTORS * HOPS


@dataclass(frozen=True)
class Token:
    game: int
    turn: int
    text: str


async def bare() -> None:
    async def actor(index: int, inbox: asyncio.Queue, outbox: asyncio.Queue, game: int) -> None:
        if index == 0:
            inbox.put_nowait(Token(game, 0, "token"))
        for hop in range(HOPS):
            message = await inbox.get()
            if not (index == ACTORS - 1 and hop == HOPS - 1):
                outbox.put_nowait(Token(message.game, message.turn + 1, message.text))

    async def game(number: int) -> None:
        queues = [asyncio.Queue(64) for _ in range(ACTORS)]
        async with asyncio.TaskGroup() as tg:
            for i in range(ACTORS):
                tg.create_task(actor(i, queues[i], queues[(i + 1) % ACTORS], number))

    async with asyncio.TaskGroup() as tg:
        for number in range(GAMES):
            tg.create_task(game(number))


async def autogen() -> None:
    from autogen_core import (
        MessageContext, RoutedAgent, SingleThreadedAgentRuntime, TopicId, TypeSubscription, message_handler,
    )

    class Member(RoutedAgent):
        def __init__(self, index: int) -> None:
            super().__init__("ring member")
            self.index = index
            self.left = HOPS

        @message_handler
        async def on_token(self, message: Token, ctx: MessageContext) -> None:
            self.left -= 1
            if self.left == 0 and self.index == ACTORS - 1:
                return
            following = TopicId(f"a{(self.index + 1) % ACTORS}", str(message.game))
            await self.publish_message(Token(message.game, message.turn + 1, message.text), following)

    runtime = SingleThreadedAgentRuntime()
    for i in range(ACTORS):
        await Member.register(runtime, f"a{i}", lambda i=i: Member(i))
        await runtime.add_subscription(TypeSubscription(topic_type=f"a{i}", agent_type=f"a{i}"))
    runtime.start()
    for number in range(GAMES):
        await runtime.publish_message(Token(number, 0, "token"), TopicId("a0", str(number)))
    await runtime.stop_when_idle()


def rate(run) -> float:
    gc.collect()
    started = time.process_time()
    asyncio.run(run())
    return TOTAL / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    bare_rates, autogen_rates = [], []
    for _ in range(args.repeats):
        bare_rates.append(rate(bare))
        autogen_rates.append(rate(autogen))
    ratio = statistics.median(a / b for a, b in zip(autogen_rates, bare_rates))
    print(f"bare {statistics.median(bare_rates):.0f} autogen {statistics.median(autogen_rates):.0f} ratio {ratio:.4f}")


if __name__ == "__main__":
    main()
