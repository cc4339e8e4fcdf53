import anyio
import pytest

from engine import PolicyFactory, RunConfig, RunProgress, run_games
from engine.stats import wilson_interval


class FailingFactory(PolicyFactory):
    """share_everything everywhere, except Bob in the given games, whose policy raises on turn 1."""

    def __init__(self, failing_seeds):
        self.failing_seeds = failing_seeds

    def make(self, name, role, seed):
        if role == "bob" and seed in self.failing_seeds:
            class Broken:
                async def reply(self, context):
                    raise RuntimeError("policy exploded")
            return Broken()
        return super().make(name, role, seed)


async def test_an_actor_that_raises_ends_only_its_own_game():
    config = RunConfig(games=40)
    specs = [config.spec(i) for i in range(config.games)]
    broken = {specs[7].seed, specs[23].seed}
    records = []
    progress = RunProgress(total=config.games)
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
    config = RunConfig(games=30)
    in_flight, peak = 0, 0

    class Slow(PolicyFactory):
        def make(self, name, role, seed):
            inner = super().make(name, role, seed)

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


async def test_cancelling_the_run_stops_it_cleanly():
    config = RunConfig(games=10_000)
    records = []
    with anyio.move_on_after(0.2):
        await run_games((config.spec(i) for i in range(config.games)), factory=PolicyFactory(), concurrency=16, on_record=records.append)
    assert 0 < len(records) < 10_000
    assert len({r.game_id for r in records}) == len(records)


@pytest.mark.parametrize(
    "k, n, low, high",
    [(30, 30, 88.6, 100.0), (16, 30, 36.1, 69.8), (13, 30, 27.4, 60.8), (0, 10, 0.0, 27.8)],
)
def test_wilson_interval_matches_published_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert round(100 * lo, 1) == low and round(100 * hi, 1) == high


def test_game_seeds_depend_on_run_seed_and_index_only():
    a = RunConfig(seed=1, feedback="joint").spec(5)
    b = RunConfig(seed=1, size=9).spec(5)
    assert a.seed == b.seed
    assert RunConfig(seed=2).spec(5).seed != a.seed
    assert RunConfig(seed=1).spec(6).seed != a.seed


@pytest.mark.parametrize(
    "fields, fragment",
    [({"games": 0}, "games"), ({"size": 1}, "size"), ({"feedback": "lots"}, "feedback"),
     ({"max_turns": 0}, "max_turns"), ({"distractors": 11}, "distractors"), ({"history": -1}, "history")],
)
def test_run_config_validation_names_the_field(fields, fragment):
    with pytest.raises(ValueError, match=fragment):
        RunConfig(**fields).validate()


async def test_an_environment_that_raises_is_recorded_against_the_environment():
    from engine.game import BUILDERS, play_game
    import msgspec

    def build(game_spec, bus, factory):
        environment, actors = BUILDERS["asympuzl"](game_spec, bus, factory)

        def broken_apply(role, actions):
            raise ValueError("bad state")

        environment.game.apply = broken_apply
        return environment, actors

    BUILDERS["broken"] = build
    try:
        game_spec = msgspec.structs.replace(RunConfig().spec(0), puzzle="broken")
        record = await play_game(game_spec, PolicyFactory())
    finally:
        del BUILDERS["broken"]
    assert record.outcome == "error"
    assert (record.error.actor, record.error.type, record.error.message) == ("environment", "ValueError", "bad state")
    assert record.error.where.startswith("test_engine.py:")
