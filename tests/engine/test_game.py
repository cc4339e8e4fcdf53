"""Whole games with scripted policies, through the real actors and bus."""

import dataclasses
import threading

import pytest

from engine import GameRecord, PolicyFactory, play_game
from engine.analysis.totals import summarize
from puzzles import GAMES, Answer
from puzzles.asympuzl.rules import generate
from tests.helpers import grid, play_async, spec


@pytest.mark.parametrize("size", [3, 5, 10, 20])
async def test_share_everything_solves_any_size_in_exactly_two_turns(size):
    for index in range(10):
        record = await play_async(spec(index, size=size))
        assert record.outcome == "success", record
        assert record.solved_turn == 2 and record.turns == 2
        assert record.scores["actions_per_position.alice"] == 1.0  # every color written once
        assert record.scores["actions_per_position.bob"] <= 1.0
        assert record.format_errors == {"alice": 0, "bob": 0}


@pytest.mark.parametrize("side", ["alice", "bob"])
@pytest.mark.parametrize("distractors", [3, 10])
async def test_share_everything_sees_through_distractors(side, distractors):
    for index in range(5):
        record = await play_async(spec(index, size=5, distractors=distractors, distractors_in=side))
        assert record.outcome == "success" and record.solved_turn == 2


@pytest.mark.parametrize("partner", ["share_everything", "one_piece", "ignore", "noisy"])
async def test_ignoring_alice_never_solves_and_never_acts(partner):
    for index in range(10):
        record = await play_async(spec(index, size=4, alice="ignore", bob=partner))
        assert record.outcome == "failure" and record.turns == 8
        assert record.metrics["position_actions"]["alice"] == [0, 0, 0, 0]


@pytest.mark.parametrize("size", [2, 3, 5])
async def test_ignoring_bob_never_solves_even_when_alice_shares_everything(size):
    for index in range(30):
        record = await play_async(spec(index, size=size, alice="share_everything", bob="ignore"))
        assert record.outcome == "failure" and record.metrics["position_actions"]["bob"] == [0] * size


async def test_one_piece_per_message_needs_n_plus_one_turns():
    for index in range(5):
        record = await play_async(spec(index, size=5, alice="one_piece", bob="one_piece"))
        assert record.outcome == "success" and record.solved_turn == 6
        # One piece per message: each of Bob's messages names a single pair.
        assert max(record.message_chars["bob"]) < 40


@pytest.mark.parametrize("distractors", [3, 5, 10])
async def test_one_piece_asks_about_each_shape_up_to_the_last_real_one(distractors):
    """Alice asks about her shapes in order, one per turn, and learns the last color a turn later."""
    for index in range(10):
        game_spec = spec(index, size=5, distractors=distractors, alice="one_piece", bob="one_piece")
        puzzle = generate(5, game_spec.seed, distractors, "alice")
        real = {p.shape for p in puzzle.truth}
        last_real = max(i for i, p in enumerate(puzzle.clues["alice"], 1) if p.shape in real)
        record = await play_async(game_spec)
        if last_real + 1 <= 10:
            assert record.outcome == "success" and record.solved_turn == last_real + 1
        else:
            assert record.outcome == "failure"


async def test_history_zero_still_delivers_the_partners_newest_message():
    record = await play_async(spec(0, size=5, history=0))
    assert record.outcome == "success" and record.solved_turn == 2


async def test_partners_learn_only_from_the_delivered_text():
    """Garble every character on the channel: share-everything can no longer solve anything."""
    from bus import ChannelSpec

    record = await play_async(spec(0, size=5, channel=ChannelSpec(noise=1.0)))
    assert record.outcome == "failure"
    assert record.channel_log and all(d.fate == "noised" for d in record.channel_log)
    assert record.metrics["correct_positions"]["bob"] < 5


async def test_feedback_modes_change_the_noisy_policy_outcomes():
    rates = {}
    for mode in ["none", "own", "own_detailed", "joint"]:
        records = [await play_async(spec(i, size=5, alice="noisy", bob="noisy", feedback=mode)) for i in range(60)]
        rates[mode] = summarize(records)[0].success_rate
    # Detailed feedback fixes the noise; a bare solved/unsolved signal makes it rewrite everything;
    # a joint signal makes both rewrite everything; no feedback leaves the first noisy write.
    assert rates["own_detailed"] == 1.0
    assert rates["none"] < rates["joint"] < rates["own"] < rates["own_detailed"]


async def test_a_reply_without_json_is_a_format_error_that_uses_up_the_turn():
    class Rambling:
        def __init__(self, role, rng):
            self.turns = 0

        async def reply(self, context):
            self.turns += 1
            if self.turns == 1:
                return Answer("I am not sure what to do.")
            assert any("could not be read" in n for n in context.notices)  # told next turn
            return Answer('{"message": "", "actions": [{"replace": 99, "by": {"shape": "star", "color": "red"}}]}')

    class Factory(PolicyFactory):
        def make(self, name, role, seed, game):
            if name == "rambling":
                return Rambling(role, None)
            return super().make(name, role, seed, game)

        def check(self, name, game):
            if name != "rambling":
                super().check(name, game)

    record: GameRecord = await play_async(spec(0, size=3, max_turns=2, alice="rambling"), Factory())
    assert record.error is None
    assert record.outcome == "failure"
    assert record.format_errors == {"alice": 1, "bob": 0}
    assert record.invalid_actions["alice"] == 1
    first, second = [t for t in record.turn_log if t.role == "alice"]
    assert first.format_error == "no JSON object found in the reply" and first.applied == 0
    assert second.rejected[0].reason == "position 99 is out of range 1..3"


async def test_a_reply_that_is_not_text_is_a_format_error_not_a_crash():
    class Silent:
        async def reply(self, context):
            return Answer(None)  # type: ignore[arg-type]

    class Factory(PolicyFactory):
        def make(self, name, role, seed, game):
            return Silent() if role == "bob" else super().make(name, role, seed, game)

    record = await play_async(spec(0, size=3, max_turns=1), Factory())
    assert record.outcome == "failure" and record.error is None
    assert record.format_errors["bob"] == 1
    assert record.turn_log[-1].format_error == "the reply is not text but NoneType"


async def test_a_game_s_slow_set_up_runs_in_a_worker_thread_and_its_failure_is_the_game_s_error():
    ran = []

    def prepare(params, seed):
        ran.append((threading.current_thread() is threading.main_thread(), params.size, seed))
        if seed % 2:
            raise RuntimeError("no plan for this one")

    game = GAMES["asympuzl"]
    games = {"asympuzl": dataclasses.replace(game, rules=dataclasses.replace(game.rules, prepare=prepare))}
    config = grid(4, size=3)
    records = [await play_game(config.spec(i), PolicyFactory(), games=games) for i in range(4)]
    assert [(on_main, size) for on_main, size, _ in ran] == [(False, 3)] * 4
    assert [seed for *_, seed in ran] == [r.spec.seed for r in records]
    for record in records:
        if record.spec.seed % 2:
            assert (record.outcome, record.error.type, record.error.message) == ("error", "RuntimeError", "no plan for this one")
        else:
            assert record.outcome == "success"
