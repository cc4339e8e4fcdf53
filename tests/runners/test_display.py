"""The live dashboard, transcripts, logs and replay, rendered through rich's recording console."""

import gzip
import io
import json

import anyio
from anyio import wait_all_tasks_blocked
import msgspec
from rich.console import Console

from engine import PolicyFactory, RunProgress, run_games, summarize
from engine.plan.grid import Grid
from engine.records.transcribe import TranscriptWriter
from engine.records.transcripts import read_transcript
from runners.dashboard import render_dashboard, status_line
from runners.concurrent import main as run_main
from runners.replay import main as replay_main
from tests.helpers import FailingFactory


def table_rows(text: str, title: str) -> list[str]:
    """The rows of a dashboard table: the lines after the rule under its header, up to a line that
    is not a row (a blank line, a caption, the next section's title)."""
    lines = text.split(title, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("─")) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.strip().startswith("+") or "   " not in line.strip():
            break
        rows.append(line)
    return rows


def rendered(renderable, width=200) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=True)
    console.print(renderable)
    return console.export_text()


def test_dashboard_numbers_equal_the_records_of_a_mixed_run():
    grid = Grid(seeds=20, agents=[["noisy", "noisy"]], feedback=["none", "own_detailed"])
    specs = list(grid.specs_for(range(grid.total)))
    broken = {specs[3].seed}  # seed index 3 fails in both conditions
    records = []
    progress = RunProgress(total=grid.total, track_live=True)
    anyio.run(lambda: run_games(specs, factory=FailingFactory(broken), concurrency=6, on_record=records.append, progress=progress))
    text = rendered(render_dashboard(progress, elapsed=4.0))
    assert f"{grid.total}/{grid.total} done" in text and "0 running" in text and "0 queued" in text
    assert "errors: actor_error 2" in text
    for summary in summarize(records):
        row = next(line for line in text.split("by condition")[1].splitlines() if line.split()[:1] == [summary.fields["feedback"]])
        assert f"{100 * summary.success_rate:.1f}" in row
        assert f"{100 * summary.ci_low:.1f}-{100 * summary.ci_high:.1f}" in row
    recent = table_rows(text, "recently finished")
    assert recent[0].split()[0] == str(records[-1].game_id)


def test_dashboard_shows_the_games_in_flight():
    release = anyio.Event()

    class Waiting(PolicyFactory):
        def make(self, name, role, seed, game):
            inner = super().make(name, role, seed, game)

            class Policy:
                async def reply(self, context):
                    if role == "bob":
                        await release.wait()
                    return await inner.reply(context)
            return Policy()

    from tests.helpers import spec

    specs = [spec(i, size=4) for i in range(5)]
    progress = RunProgress(total=5, track_live=True)
    snapshot = {}

    async def main():
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: run_games(specs, factory=Waiting(), concurrency=3, on_record=lambda r: None, progress=progress))
            await wait_all_tasks_blocked()  # three Bobs wait for the release, two games queue
            snapshot["text"] = rendered(render_dashboard(progress, elapsed=1.0))
            release.set()

    anyio.run(main)
    text = snapshot["text"]
    assert "running games (3 of 3)" in text and "0/5 done" in text and "2 queued" in text
    rows = table_rows(text, "running games")
    assert [row.split()[0] for row in rows] == ["0", "1", "2"]
    assert all("1/8" in row and "bob" in row and "alice: The puzzle has 4 positions" in row for row in rows)
    assert all("alice 0 bob" in row for row in rows)
    assert "done" in status_line(progress, 1.0)


def test_transcripts_logs_and_replay_of_a_real_run(tmp_path):
    out = tmp_path / "run"
    assert run_main(["--games", "6", "--alice", "noisy", "--bob", "one_piece", "--transcripts",
                     "--log-level", "debug", "--out", str(out), "--no-dashboard"]) == 0
    records = {json.loads(line)["game_id"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    transcript = read_transcript(out, 2)
    record = records[2]
    assert transcript is not None and transcript.outcome == record["outcome"]
    assert [(t.turn, t.role) for t in transcript.turns] == [(t["turn"], t["role"]) for t in record["turn_log"]]
    assert [t.progress for t in transcript.turns] == [t["progress"] for t in record["turn_log"]]
    first = transcript.turns[0]
    assert first.reply.endswith("}") and first.message.startswith("The puzzle has 5 positions")
    assert first.delivered[0].recipient == "bob" and first.delivered[0].text == first.message
    assert transcript.turns[1].conversation[0]["text"] == first.message  # Bob saw Alice's message

    lines = [json.loads(line) for line in (out / "run.log").read_text().splitlines()]
    turns = [line for line in lines if line["event"] == "turn"]
    assert len(turns) == sum(len(r["turn_log"]) for r in records.values())
    assert all("game_id" in line and "agent" in line for line in turns)
    assert {line["game_id"] for line in lines if line["event"] == "game_finished"} == set(range(6))

    console = Console(record=True, width=120, file=io.StringIO())
    assert replay_main([str(out), "2"], console=console) == 0
    text = console.export_text()
    assert "Game 2:" in text
    for turn in transcript.turns:
        assert f"turn {turn.turn} · {'Alice' if turn.role == 'alice' else 'Bob'}" in text
        assert f"{turn.progress}/5 right" in text
    assert transcript.turns[0].message[:40] in text
    if record["outcome"] == "success":
        assert f"solved at turn {record['solved_turn']}" in text


def test_replay_without_transcripts_shows_the_turn_log(tmp_path, capsys):
    out = tmp_path / "run"
    run_main(["--games", "3", "--no-messages", "--out", str(out), "--no-dashboard"])
    console = Console(record=True, width=150, file=io.StringIO())
    assert replay_main([str(out), "1"], console=console) == 0
    text = console.export_text()
    assert "kept no transcripts" in text and "solved at turn 2" in text and "5/5" in text
    capsys.readouterr()
    import pytest

    with pytest.raises(SystemExit) as exit_info:
        replay_main([str(out), "99"])
    assert exit_info.value.code == 2 and "no game 99" in capsys.readouterr().err


def test_resumed_run_counts_what_was_recorded_before(tmp_path):
    from engine import RunDir
    from engine.session.playing import counted_keys, new_progress
    from runners.sweep import main as sweep_main, prepare

    grid = tmp_path / "g.toml"
    grid.write_text("seeds = 10\nagents = [['noisy', 'noisy']]\nfeedback = ['none', 'own_detailed']\n")
    out = tmp_path / "run"
    assert sweep_main([str(grid), "--out", str(out), "--no-dashboard"]) == 0
    records = RunDir.open(out).records()
    kept = records[:7] + records[12:15]
    (out / "results.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in kept))
    prepared = prepare(["--resume", str(out)], PolicyFactory())
    try:
        progress = new_progress(prepared.plan, counted_keys(prepared.session.run), track_live=True)
    finally:
        prepared.session.close()
    assert progress.done == 10 and progress.queued == 10
    assert progress.successes == sum(r.outcome == "success" for r in kept)
    expected = {s.condition: [s.successes, s.failures, s.errors] for s in summarize(kept)}
    assert progress.by_condition == expected
    text = rendered(render_dashboard(progress, elapsed=1.0))
    labels = [row.split()[0] for row in table_rows(text, "by condition")]
    assert labels == ["none", "own_detailed"] and text.split("by condition")[1].split()[0] == "feedback"  # from the plan


def test_a_transcript_block_cut_short_is_dropped_and_a_damaged_line_skipped(tmp_path):
    out = tmp_path / "run"
    assert run_main(["--games", "4", "--transcripts", "--out", str(out), "--no-dashboard"]) == 0
    path = out / "transcripts.jsonl.gz"
    data = path.read_bytes()
    path.write_bytes(data + data[:50])  # a kill mid-write
    writer = TranscriptWriter(out)
    writer.close()
    assert path.read_bytes() == data
    lines = gzip.decompress(data)
    path.unlink()
    (out / "transcripts.jsonl").write_bytes(b'{"game_id":1,"spec":' + b"broken\n" + lines)  # as older runs kept them
    assert read_transcript(out, 1) is not None  # the damaged copy is skipped


def test_a_game_that_fails_keeps_the_turns_played_before(tmp_path):
    class LateFailure(PolicyFactory):
        def make(self, name, role, seed, game):
            inner = super().make(name, role, seed, game)

            class Policy:
                async def reply(self, context):
                    if role == "bob" and context.turn == 2:
                        raise RuntimeError("late")
                    return await inner.reply(context)
            return Policy()

    from tests.helpers import spec

    record = anyio.run(lambda: __import__("engine").play_game(spec(0, alice="noisy", bob="noisy", feedback="none"), LateFailure()))
    assert record.outcome == "error" and record.error.message == "late"
    assert [(t.turn, t.role) for t in record.turn_log] == [(1, "alice"), (1, "bob"), (2, "alice")]
    assert record.message_chars["alice"] and record.solved_turn is None


def test_the_dashboard_shows_the_unbiased_rate_while_games_finish_out_of_order():
    from engine import GameRecord
    from tests.helpers import spec

    specs = [spec(i) for i in range(4)]
    progress = RunProgress(total=4, track_live=True)
    for game_id, outcome in ((1, "success"), (0, "failure"), (3, "success")):  # game 2 still playing
        progress.game_started(specs[game_id])
        progress.game_finished(specs[game_id], GameRecord(game_id=game_id, spec=specs[game_id], outcome=outcome))
    text = rendered(render_dashboard(progress, elapsed=1.0))
    assert "success so far 66.7%" in text and "unbiased: 50.0% (" in text and "over the first 2 games started, all finished" in text
    progress.game_started(specs[2])
    progress.game_finished(specs[2], GameRecord(game_id=2, spec=specs[2], outcome="failure"))
    assert "unbiased" not in rendered(render_dashboard(progress, elapsed=1.0))  # all in order: one rate
