"""Many games at once: failures stay in their game, the concurrency cap holds, cancelling stops
cleanly; seeds and statistics."""

import dataclasses
import math
import statistics

import anyio
import pytest

from engine import GameRecord, PolicyFactory, RunProgress, play_game, run_games
from engine.analysis.stats import mean_interval, t95, wilson_interval
from puzzles import GAMES
from tests.helpers import FailingFactory, grid, play_async, score_summaries, spec


async def test_an_actor_that_raises_ends_only_its_own_game():
    config = grid(40)
    specs = list(config.specs_for(range(40)))
    broken = {specs[7].seed, specs[23].seed}
    records = []
    progress = RunProgress(total=40)
    await run_games(specs, factory=FailingFactory(broken), concurrency=8, on_record=records.append, progress=progress)
    assert sorted(r.game_id for r in records) == list(range(40))
    errors = {r.game_id: r for r in records if r.outcome == "error"}
    assert set(errors) == {7, 23}
    for record in errors.values():
        assert record.error.kind == "actor_error"
        assert record.error.actor == "bob"
        assert record.error.type == "RuntimeError" and record.error.message == "policy exploded"
    assert all(r.outcome == "success" for r in records if r.game_id not in errors)
    assert (progress.done, progress.errors, progress.successes, progress.running) == (40, 2, 38, 0)


async def test_concurrency_cap_is_respected():
    config = grid(30)
    in_flight, peak = 0, 0

    class Slow(PolicyFactory):
        def make(self, name, role, seed, game):
            inner = super().make(name, role, seed, game)

            class Policy:
                async def reply(self, context):
                    nonlocal in_flight, peak
                    in_flight += 1
                    peak = max(peak, in_flight)
                    await anyio.sleep(0.001)
                    in_flight -= 1
                    return await inner.reply(context)
            return Policy()

    records = []
    await run_games((config.spec(i) for i in range(30)), factory=Slow(), concurrency=5, on_record=records.append)
    assert len(records) == 30
    assert peak == 5  # five games at once, one agent of each acting at a time


async def test_a_cap_above_the_number_of_games_starts_no_more_workers_than_games():
    """``--concurrency 1000000`` over 20 games: the cap is an upper bound, not a count of tasks made up front."""
    import asyncio

    config = grid(20)
    tasks = []

    class Counting:
        def game_started(self, spec):
            tasks.append(len(asyncio.all_tasks()))

        def game_finished(self, spec, record):
            return None

    records = []
    await run_games(config.specs_for(range(20)), factory=PolicyFactory(), concurrency=100_000, on_record=records.append,
                    observers=[Counting()])
    assert sorted(r.game_id for r in records) == list(range(20)) and {r.outcome for r in records} == {"success"}
    assert len(tasks) == 20 and max(tasks) < 500  # a worker and a few actors per game, not 100,000 workers


async def test_cancelling_the_run_stops_it_cleanly():
    config = grid(10_000)
    records = []
    with anyio.move_on_after(0.2):
        await run_games(config.specs_for(range(10_000)), factory=PolicyFactory(), concurrency=16, on_record=records.append)
    assert 0 < len(records) < 10_000
    assert len({r.game_id for r in records}) == len(records)


async def test_a_failing_record_handler_stops_every_worker_and_is_raised_in_a_group():
    """A failure outside any game (here the records' handler) ends the run: the other workers'
    games are cancelled, no game starts after it, and it is raised in an exception group."""
    config = grid(200)
    records, started = [], []

    class Watch:
        def game_started(self, spec):
            started.append(spec.game_id)

        def game_finished(self, spec, record):
            pass

    def keep(record: GameRecord) -> None:
        if len(records) == 5:
            raise OSError("no space left on device")
        records.append(record)

    with pytest.raises(ExceptionGroup) as raised:
        await run_games(config.specs_for(range(200)), factory=PolicyFactory(), concurrency=8, on_record=keep, observers=[Watch()])
    assert [type(e) for e in raised.value.exceptions] == [OSError]
    assert len(records) == 5
    assert len(started) < 200  # the run stopped: the other workers took no game after the failure


async def test_cancelling_the_run_from_an_anyio_scope_inside_a_task_group_is_clean():
    """The run's own task group is asyncio's: a cancel scope around it (the run loop's) still
    stops it, and the scope absorbs its own cancellation."""
    config = grid(10_000)
    records = []
    async with anyio.create_task_group() as group:
        async def run() -> None:
            await run_games(config.specs_for(range(10_000)), factory=PolicyFactory(), concurrency=16, on_record=records.append)

        group.start_soon(run)
        while len(records) < 20:
            await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    assert 20 <= len(records) < 10_000


@pytest.mark.parametrize(
    "k, n, low, high",
    [(30, 30, 88.6, 100.0), (16, 30, 36.1, 69.8), (13, 30, 27.4, 60.8), (0, 10, 0.0, 27.8)],
)
def test_wilson_interval_matches_published_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert round(100 * lo, 1) == low and round(100 * hi, 1) == high


def test_game_seeds_depend_on_run_seed_and_index_only():
    a = spec(5, 1, feedback="joint")
    b = spec(5, 1, size=9)
    assert a.seed == b.seed
    assert spec(5, 2).seed != a.seed
    assert spec(6, 1).seed != a.seed


@pytest.mark.parametrize("n", [2, 3, 5, 10, 30, 31, 60, 200])
def test_the_mean_interval_is_the_t_interval_cut_to_the_values_range_from_eight_values(n):
    """Against an independent computation: the t quantile from the exact t distribution (numerical
    integration of its density), the standard error from the statistics module; then, from 8 values
    on, cut to the smallest and largest value (at n = 2, 3 and 5 these values' t interval leaves
    their range, and is kept: cut, it would cover too rarely)."""
    values = [math.sin(i) * 3 + i % 4 for i in range(n)]
    mean, low, high = mean_interval(values)
    df = n - 1

    def density(x):
        return math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2)) * (1 + x * x / df) ** (-(df + 1) / 2)

    def cdf(t, steps=20000):  # Simpson's rule from 0 to t, plus one half
        h = t / steps
        total = density(0) + density(t) + sum((4 if i % 2 else 2) * density(i * h) for i in range(1, steps))
        return 0.5 + total * h / 3

    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < 0.975 else (lo, mid)
    assert t95(df) == pytest.approx(lo, rel=2e-4)
    half = lo * statistics.stdev(values) / math.sqrt(n)
    assert mean == pytest.approx(statistics.fmean(values))
    cut = (max(min(values), mean - half), min(max(values), mean + half)) if n >= 8 else (mean - half, mean + half)
    assert (low, high) == (pytest.approx(cut[0], rel=1e-3), pytest.approx(cut[1], rel=1e-3))


def test_scores_are_summarised_as_rates_and_means_over_games_without_error():
    records = [anyio.run(play_game, s, PolicyFactory()) for s in grid(12, 3, alice="noisy", bob="noisy", feedback="own").specs_for(range(12))]
    summary = score_summaries(records)
    values = [r.scores["actions_per_position.bob"] for r in records]
    assert summary["actions_per_position.bob"].kind == "mean"
    assert summary["actions_per_position.bob"].value == pytest.approx(statistics.fmean(values))
    for record, solved in zip(records, [True] * 9 + [False] * 3):
        record.scores = {"solved": solved}
    rate = score_summaries(records)["solved"]
    assert (rate.kind, rate.n, rate.value) == ("rate", 12, 0.75)
    assert (rate.low, rate.high) == wilson_interval(9, 12)


@pytest.mark.parametrize(
    "fields, fragment",
    [({"games": 0}, "seeds"), ({"size": 1}, "size"), ({"feedback": "lots"}, "feedback"),
     ({"max_turns": 0}, "max_turns"), ({"distractors": 11}, "distractors"), ({"history": -1}, "history")],
)
def test_plan_validation_names_the_field(fields, fragment):
    games = fields.pop("games", 1)
    with pytest.raises(ValueError, match=fragment):
        grid(games, **fields).validate()


async def test_an_environment_that_raises_is_recorded_against_the_environment():
    game = GAMES["asympuzl"]

    def new(params, seed, roles, max_turns):
        state = game.rules.new(params, seed, roles, max_turns)

        def broken_step(role, actions):
            raise ValueError("bad state")

        state.step = broken_step
        return state

    broken = {"asympuzl": dataclasses.replace(game, rules=dataclasses.replace(game.rules, new=new))}
    record = await play_async(spec(0), games=broken)
    assert record.outcome == "error"
    assert (record.error.actor, record.error.type, record.error.message) == ("environment", "ValueError", "bad state")
    assert record.error.where.startswith("test_run.py:")
    assert record.turn_log == []  # nothing was played


async def test_a_game_the_registry_does_not_know_is_an_error_record_not_a_crash():
    record = await play_async(spec(0), games={})
    assert record.outcome == "error" and record.error.kind == "engine_error"
    assert "unknown game 'asympuzl'" in record.error.message


def test_the_unbiased_estimate_counts_only_the_games_finished_in_plan_order():
    progress = RunProgress(total=30)
    outcome = {i: "failure" if i % 3 == 0 else "success" for i in range(30)}
    successes_first = sorted(range(30), key=lambda i: (outcome[i] == "failure", i))
    specs = [spec(i) for i in range(30)]
    for step, game_id in enumerate(successes_first, start=1):
        progress.game_started(specs[game_id])
        progress.game_finished(specs[game_id], GameRecord(game_id=game_id, spec=specs[game_id], outcome=outcome[game_id]))
        games, successes, scored = progress.prefix
        assert games == next((i for i in range(30) if successes_first.index(i) >= step), 30)  # all before it finished
        assert (successes, scored) == (sum(outcome[i] == "success" for i in range(games)), games)
        if step == 20:  # every success is in, no failure: the naive rate says 100%, the prefix knows nothing yet
            assert progress.successes == 20 and progress.failures == 0 and games == 0
    assert progress.prefix == (30, 20, 30)


def test_the_eta_runs_from_the_first_finished_game_not_from_the_start():
    progress = RunProgress(total=10)
    specs = [spec(i) for i in range(3)]
    for game_id in range(2):
        progress.game_finished(specs[game_id], GameRecord(game_id=game_id, spec=specs[game_id], outcome="success"))
        if game_id == 0:
            assert progress.eta(1e9) is None  # one game says how long a game takes, not how fast they finish
            progress.first_finished_at = 100.0
    # One more game finished in the 2 s since the first: 8 left at one per 2 s, however long the first took.
    assert progress.eta(102.0) == 16.0
