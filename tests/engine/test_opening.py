"""Opening a run session (``engine.session.opening``): a new directory or a resumed one, the saved
model settings, the check before anything is written, the lock, repair, and one error type."""

import anyio
import pytest

from engine.backends import BackendSettings
from engine.plan.grid import grid_from_dict
from engine.policies.factory import PolicyFactory
from engine.records.rundir import RunDir
from engine.session.opening import Before, SessionError, open_session
from engine.session.playing import play_plan


def plan(games: int = 4):
    return grid_from_dict({"name": "t", "seeds": games})


def play(session, factory) -> None:
    anyio.run(lambda: play_plan(session.run, session.plan, factory, recorded=session.recorded, concurrency=4))


def test_a_new_session_creates_locks_and_saves_the_model_settings(tmp_path):
    factory = PolicyFactory()
    settings = BackendSettings(max_in_flight=7)
    with open_session(factory, plan=plan, out=tmp_path / "run", settings=lambda saved: settings) as session:
        assert session.run.config().total == 4 and len(session.recorded) == 0
        assert factory.hub.settings.max_in_flight == 7
        assert RunDir.open(tmp_path / "run").model_settings().max_in_flight == 7
        with pytest.raises(SessionError, match="in use by another process"):
            open_session(PolicyFactory(), resume=tmp_path / "run")
    open_session(PolicyFactory(), resume=tmp_path / "run").close()  # the lock went with the session


def test_a_resumed_session_reads_what_is_recorded_and_gives_saved_settings_to_change(tmp_path):
    factory = PolicyFactory()
    with open_session(factory, plan=lambda: plan(3), out=tmp_path / "run", settings=lambda saved: BackendSettings(max_in_flight=9)) as session:
        play(session, factory)
    seen = []
    factory = PolicyFactory()
    with open_session(factory, resume=tmp_path / "run", settings=lambda saved: seen.append(saved) or saved) as session:
        assert sorted(session.recorded) == [0, 1, 2]
    assert seen[0].max_in_flight == 9 and factory.hub.settings.max_in_flight == 9


def test_the_check_sees_the_plan_before_anything_is_written(tmp_path):
    seen: list[Before] = []

    def refuse(before: Before) -> None:
        seen.append(before)
        raise ValueError("not this plan")

    with pytest.raises(SessionError, match="not this plan") as error:
        open_session(PolicyFactory(), plan=plan, out=tmp_path / "run", check=refuse)
    assert error.value.about is None and not (tmp_path / "run").exists()
    assert not seen[0].resumed and seen[0].plan.total == 4 and len(seen[0].recorded()) == 0


def test_a_missing_run_is_about_resume_and_a_run_that_exists_is_about_out(tmp_path):
    with pytest.raises(SessionError) as missing:
        open_session(PolicyFactory(), resume=tmp_path / "nowhere")
    assert "nowhere" in str(missing.value)
    open_session(PolicyFactory(), plan=plan, out=tmp_path / "run").close()
    with pytest.raises(SessionError) as exists:
        open_session(PolicyFactory(), plan=plan, out=tmp_path / "run")
    assert "run" in str(exists.value)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(SessionError) as unusable:
        open_session(PolicyFactory(), plan=plan, out=blocked / "run")
    assert unusable.value.about == "out" and str(unusable.value).startswith(f"cannot use {blocked / 'run'}")


def test_repair_moves_damaged_lines_aside_and_needs_a_resumed_run(tmp_path):
    factory = PolicyFactory()
    with open_session(factory, plan=plan, out=tmp_path / "run") as session:
        play(session, factory)
    results = tmp_path / "run" / "results.jsonl"
    results.write_bytes(results.read_bytes() + b"{not a record}\n")
    with pytest.raises(SessionError, match="damaged"):
        open_session(PolicyFactory(), resume=tmp_path / "run")
    with open_session(PolicyFactory(), resume=tmp_path / "run", repair=True) as session:
        moved, aside = session.repaired
        assert moved == 1 and aside.exists() and sorted(session.recorded) == [0, 1, 2, 3]
    with pytest.raises(SessionError) as error:
        open_session(PolicyFactory(), plan=plan, out=tmp_path / "other", repair=True)
    assert error.value.about == "repair" and not (tmp_path / "other").exists()
