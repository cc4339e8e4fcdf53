"""The priority gate in front of every model call: lowest priority value first, ties in arrival order,
a cancelled waiter leaves no trace, and through a rate-limited limiter the games admitted first finish
first instead of all advancing a call at a time."""

from __future__ import annotations

import anyio
from anyio import wait_all_tasks_blocked
import pytest

from engine.backends.admission import CALL_PRIORITY, PriorityGate
from engine.backends.limiter import Limiter


async def _admitted_order(gate: PriorityGate, arrivals: list[int]) -> list[tuple[int, int]]:
    order: list[tuple[int, int]] = []
    await gate.acquire(0)  # hold the only place while everyone queues

    async def call(index: int, priority: int) -> None:
        await gate.acquire(priority)
        order.append((priority, index))
        gate.release()

    async with anyio.create_task_group() as tg:
        for index, priority in enumerate(arrivals):
            tg.start_soon(call, index, priority)
            await wait_all_tasks_blocked()  # arrive one after another: each queues before the next starts
        assert gate.waiting == len(arrivals)
        gate.release()
    return order


async def test_waiters_go_lowest_priority_first_and_ties_in_arrival_order():
    order = await _admitted_order(PriorityGate(1), [5, 3, 4, 1, 3, 2])
    assert order == [(1, 3), (2, 5), (3, 1), (3, 4), (4, 2), (5, 0)]


async def test_a_cancelled_waiter_leaves_the_queue_and_the_rest_go_on():
    gate = PriorityGate(1)
    await gate.acquire(0)
    order = []

    async def call(priority):
        await gate.acquire(priority)
        order.append(priority)
        gate.release()

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, 2)
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as inner:
                inner.start_soon(call, 1)  # the head, then cancelled
                await wait_all_tasks_blocked()
                scope.cancel()
        assert gate.waiting == 1
        gate.release()
    assert order == [2] and gate.held == 0 and gate.waiting == 0


async def test_the_head_waits_until_ready_and_an_earlier_call_overtakes_it():
    gate = PriorityGate(4)
    opens_at = anyio.current_time() + 0.05
    order = []

    async def call(priority):
        await gate.acquire(priority, lambda: opens_at - anyio.current_time())
        order.append(priority)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, 7)
        await wait_all_tasks_blocked()  # 7 is the head, waiting for the buckets
        tg.start_soon(call, 3)  # arrives while 7 waits for the buckets, and goes first
    assert order == [3, 7] and gate.held == 2


@pytest.mark.parametrize("prioritised", [True, False])
async def test_under_a_rate_limit_the_games_admitted_first_finish_first(prioritised):
    limiter = Limiter("m", rpm=3000, max_in_flight=64, learn_limits=False, adaptive=False, burst=0.001)
    finished: list[int] = []
    calls_before: dict[int, int] = {}
    made = [0, 0, 0, 0]

    async def game(index: int) -> None:
        CALL_PRIORITY.set(index if prioritised else 0)
        for _ in range(25):
            async with limiter.slot(0):
                made[index] += 1
            await anyio.sleep(0)
        calls_before[index] = sum(made)
        finished.append(index)

    async with anyio.create_task_group() as tg:
        for index in range(4):
            tg.start_soon(game, index)
    if prioritised:  # one game after another: the first is done after little more than its own calls
        assert finished == [0, 1, 2, 3] and calls_before[0] <= 25 + 3 * 2
    else:  # arrival order: all advance together, the first finishes only near the end
        assert calls_before[min(calls_before, key=calls_before.get)] >= 90
