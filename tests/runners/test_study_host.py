"""The study's host without a browser: pages played by code on the host's own loop. A person alone in
the waiting room plays the fallback condition once the wait is over; a person who leaves ends their
game on their own account and their partner goes on; a restart ends a game from its record when the
record was written and marks it interrupted otherwise."""

from __future__ import annotations

import time
from collections import Counter

import anyio
from anyio import wait_all_tasks_blocked
import pytest

from engine.policies.factory import PolicyFactory
from engine.policies.seat import SeatAnswer
from engine.study.ledger import Ended, Interrupted, Started
from engine.study.spec import study_from_dict
from engine.study.screens import waiting_screen
from engine.study.host import StudyHost, Wait
from runners.study.front import StudyFront


STUDY = {
    "name": "host", "allow_scripted": True, "time": {"turn": 60, "pair_wait": 0.3, "gone_after": 60},
    "blocks": [{"game": "tsp", "rounds": 2, "max_turns": 1, "conditions": [
        {"name": "scripted", "partner": "full_share", "games": 10},
        {"name": "pair", "partner": "person", "games": 10, "fallback": "scripted"},
    ]}],
}


def _study():
    return study_from_dict(STUDY)


async def _page(front) -> None:
    """A participant's page, played by code: starts what there is to start, answers every turn."""
    while not front.final:
        if front.pending is not None:
            front.shown(None, None)
            front.answer(SeatAnswer(message="hello"))
        elif front.screen is not None and front.screen.get("step") == "start":
            front.host.go(front)
        await anyio.sleep(0.01)


async def _with_host(study, out, body) -> StudyHost:
    host = StudyHost(study, out, PolicyFactory(), StudyFront)
    async with anyio.create_task_group() as group:
        host.group = group
        host.open()
        group.start_soon(host.watch)
        with anyio.fail_after(60):  # a safety limit: fails a hang only
            await body(host)
        group.cancel_scope.cancel()
    host.close()
    return host


def _join(host: StudyHost):
    front = host.front(host.join())
    front.host = host
    return front


def test_alone_in_the_waiting_room_a_person_plays_the_fallback(tmp_path):
    async def body(host):
        front = _join(host)
        await _page(front)

    host = anyio.run(_with_host, _study(), tmp_path, body)
    [person] = host.ledger.people.values()
    assert person.done is not None
    assert [g.started.condition for g in person.games] == ["scripted", "scripted"]  # the pair it waited for fell back
    assert sorted(seat for g in person.games for seat in g.started.people) == ["ghost", "light"]  # seats balanced


def test_people_waiting_are_paired_and_one_who_leaves_ends_the_game_on_their_account(tmp_path):
    async def body(host):
        first, second = _join(host), _join(host)  # both read the instructions
        host.waiting.append(Wait(first.participant, 0, "pair", time.monotonic()))  # the first waits for a person
        first.show(waiting_screen(host.study.texts))
        host.go(second)  # the second is paired with them at once
        [game] = host.ledger.open_games()
        assert set(game.started.people.values()) == {first.participant, second.participant} and game.started.seat is None
        host.leave(second)
        while first.last is None:  # the game ends at once, and the first is told why in words
            await anyio.sleep(0.01)
        assert first.last["error"] == "The game ended early: your partner left or stopped answering."
        assert second.screen["kind"] == "left" and second.final
        await _page(first)  # the first goes on to their games

    study = study_from_dict({**STUDY, "blocks": [{**STUDY["blocks"][0], "instructions": "Play well."}]})
    host = anyio.run(_with_host, study, tmp_path, body)
    people = list(host.ledger.people.values())
    left = next(p for p in people if p.left is not None)
    stayed = next(p for p in people if p.left is None)
    assert left.left.reason == "left" and stayed.done is not None
    [shared] = left.games
    assert isinstance(shared.ended, Ended) and shared.ended.error == "human_absent" and shared.ended.absent == left.id
    assert stayed.rounds(0) == 2 and stayed.games[0] is shared and stayed.unfinished() == 1 and stayed.walked_away() == 0
    assert host.fronts[stayed.id].last is not None
    [record] = host.blocks[0].records({shared.started.game_id}).values()
    mine = next(role for role, p in shared.started.people.items() if p == stayed.id)
    assert record.error.actor != mine and record.humans[mine].timeouts == 0  # the game ended on the leaver's account


@pytest.mark.parametrize("recorded", [False, True])
def test_a_restart_ends_a_game_from_its_record_or_marks_it_interrupted(tmp_path, recorded):
    async def stuck(host):  # the first game played, the second left waiting for an answer
        front = _join(host)
        while front.number < 2 or front.pending is None:
            if front.screen is not None and front.screen.get("step") == "start":
                host.go(front)
            if front.pending is not None and front.number < 2:
                front.shown(None, None)
                front.answer(SeatAnswer(message="hello"))
            await anyio.sleep(0.01)

    study = _study()
    host = anyio.run(_with_host, study, tmp_path, stuck)
    games = [g for g in host.ledger.games.values()]
    assert [g.ended is None for g in games] == [False, True]
    open_game = games[1].started
    if recorded:  # the record was written just before the kill, the line that ends it was not
        block = host.blocks[0]
        block.open()
        record = next(r for r in block.run.iter_records() if r.game_id == games[0].started.game_id)
        block.writer.write(type(record)(**{**{f: getattr(record, f) for f in record.__struct_fields__}, "game_id": open_game.game_id}))
        block.close()
    again = StudyHost(study, tmp_path, PolicyFactory(), StudyFront)

    async def reopen():
        async with anyio.create_task_group() as group:
            again.group = group
            again.open()
            group.cancel_scope.cancel()

    anyio.run(reopen)
    again.close()
    end = again.ledger.games[(0, open_game.game_id)].ended
    assert isinstance(end, Ended if recorded else Interrupted)
    person = next(iter(again.ledger.people.values()))
    front = again.fronts[person.id]
    if recorded:  # the game counts: that was their last round
        assert front.screen["kind"] == "done" and person.done is not None
    else:  # it does not: they go on to another game, told why
        assert front.screen["kind"] == "between" and "restarted" in front.screen["text"]
    assert isinstance(games[1].started, Started)


def test_one_who_joined_as_the_study_filled_up_is_told_so_without_a_code(tmp_path):
    async def body(host):
        first, second = _join(host), _join(host)  # both joined while a game was left; both read the instructions
        host.go(first)  # the first takes the last game
        host.go(second)
        assert second.final and second.screen["kind"] == "full" and "code" not in second.screen
        assert host.join() is None  # and nobody else joins
        await _page(first)

    blocks = [{**STUDY["blocks"][0], "rounds": 1, "seats": ["light"], "instructions": "Play.",
               "conditions": [{"name": "scripted", "partner": "full_share", "games": 1}]}]
    host = anyio.run(_with_host, study_from_dict({**STUDY, "blocks": blocks}), tmp_path, body)
    reasons = sorted((p.left.reason if p.left else "done") for p in host.ledger.people.values())
    assert reasons == ["done", "full"]


def test_the_host_sleeps_until_it_changes_not_on_a_tick(tmp_path):
    """With nobody in the study nothing can fall due, so the host sleeps however long it is left
    (a host that looked every so often would have looked again); a join wakes it at once."""
    host = StudyHost(_study(), tmp_path, PolicyFactory(), StudyFront)
    looks = []
    due = host.due
    host.due = lambda: looks.append(due()) or looks[-1]

    async def main():
        async with anyio.create_task_group() as group:
            host.group = group
            host.open()
            group.start_soon(host.watch)
            await wait_all_tasks_blocked()
            await anyio.sleep(1)  # a host that looked every 0.25 s would look four more times
            assert looks == [None]
            _join(host)  # into a game: their page may now be away too long
            await wait_all_tasks_blocked()
            assert len(looks) == 2 and looks[1] is not None
            group.cancel_scope.cancel()

    anyio.run(main)
    host.close()


def test_the_host_sleeps_until_the_first_thing_that_can_fall_due(tmp_path):
    """A page away while its person plays, the wait for a partner: the host's next look is at the
    first of them, and what is due then is done."""
    study = study_from_dict({**STUDY, "time": {"turn": 60, "pair_wait": 30, "gone_after": 50, "session_limit": 1000}})

    async def body(host):
        player = _join(host)  # into a game with a model partner
        assert player.number == 1 and not host.waiting
        player.seen_at -= 45  # the page away 45 s of the 50 it may be
        assert 0 <= host.due() <= 5
        player.seen_at = time.monotonic()
        waiter = _join(host)  # the condition given second at this place: a person partner, so the waiting room
        [wait] = host.waiting
        host.waiting[0] = wait._replace(since=time.monotonic() - 25)
        assert 0 <= host.due() <= 5
        host.waiting[0] = wait._replace(since=time.monotonic() - 31)
        host.due()  # the wait is over: the fallback is played
        assert not host.waiting and waiter.number == 1
        player.seen_at -= 51
        host.due()  # away too long: the person has left
        assert host.ledger.people[player.participant].left.reason == "gone"

    anyio.run(_with_host, study, tmp_path, body)


@pytest.mark.parametrize("blocks", [2, 3, 4])
def test_a_balanced_study_gives_twenty_people_every_block_order_alike(tmp_path, blocks):
    """``block_order = "balanced"``: each order of the square goes to as many people as any other (to
    one), the study file's own order counted as any other."""
    from engine.study.design import block_orders

    block = {"game": "tsp", "rounds": 1, "max_turns": 1, "conditions": [{"name": "scripted", "partner": "full_share", "games": 40}]}
    study = study_from_dict({**STUDY, "block_order": "balanced", "blocks": [block] * blocks})

    async def body(host):
        for _ in range(20):
            _join(host)

    host = anyio.run(_with_host, study, tmp_path, body)
    given = Counter(person.order(blocks) for person in host.ledger.people.values())
    orders = block_orders(blocks)
    assert sum(given.values()) == 20 and set(given) == set(orders)
    assert max(given.values()) - min(given.values()) <= 1
    assert sorted(given.values()) == sorted(20 // len(orders) + (i < 20 % len(orders)) for i in range(len(orders)))
