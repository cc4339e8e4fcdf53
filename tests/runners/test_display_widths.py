"""The dashboard and the end-of-run table at the widths people use: 80x24 up to 160 columns, a run
of 24 conditions with two models whose names share a prefix."""

import io
import re
import subprocess
import sys
import time
from types import SimpleNamespace

import anyio
import msgspec
import pytest
from rich.console import Console

from engine import PolicyFactory, RunProgress, run_games, summarize
from engine.play.run import LiveGame
from engine.plan.grid import Grid
from runners.dashboard import Section, SummaryTable, counters_section, render_dashboard
from runners.dashboard.widths import Column, fitted_table, short_names

MODELS = {"share_everything": "openai:gpt-4o", "one_piece": "openai:gpt-4o-mini"}
NUMBER = re.compile(r"^-?[\d.,/\[\]-]+%?$")


def test_short_names_are_the_shortest_unique_forms():
    names = ["openai:gpt-4o", "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku", "vllm:Qwen/Qwen3-8B", "noisy"]
    assert short_names(names) == {
        "openai:gpt-4o": "gpt-4o", "openai:gpt-4o-mini": "gpt-4o-mini", "anthropic:claude-3-5-haiku": "claude-3-5-haiku",
        "vllm:Qwen/Qwen3-8B": "Qwen3-8B", "noisy": "noisy",
    }
    # The same model at two providers, and a scripted policy named like a model's tail: kept apart.
    clash = short_names(["openai:m", "vllm:m", "vllm:x/m", "share_everything", "openai:share_everything"])
    assert len(set(clash.values())) == 5 and clash["share_everything"] == "share_everything"


@pytest.fixture(scope="module")
def run24():
    """24 conditions (4 agent pairs x 6 feedback modes), 2 games each, agents renamed as models."""
    grid = Grid(
        seeds=2, agents=[["share_everything", "share_everything"], ["one_piece", "one_piece"],
                         ["share_everything", "one_piece"], ["one_piece", "share_everything"]],
        feedback=["none", "own", "own_detailed", "joint", "both", "both_detailed"],
    )
    records, progress = [], RunProgress(total=grid.total, track_live=True)
    progress.know_conditions(grid.condition_specs())
    anyio.run(lambda: run_games(grid.specs_for(range(grid.total)), factory=PolicyFactory(), concurrency=8,
                                on_record=records.append, progress=progress))
    # The models' names where the scripted policies' were: as a run with two models shows them.
    rename = lambda fields: {k: MODELS.get(v, v) for k, v in fields.items()}  # noqa: E731
    summaries = [msgspec.structs.replace(s, fields=rename(s.fields), calls=40, tokens=123456, cost_usd=1.5) for s in summarize(records)]
    progress.condition_fields = {label: rename(f) for label, f in progress.condition_fields.items()}
    for spec in list(grid.specs_for(range(12))):
        game = LiveGame(spec)
        game.turn, game.role, game.progress = 3, "bob", {"alice": 2, "bob": 1}
        game.last_sender, game.last_message = "alice", "a long message that has to be cut somewhere on a narrow terminal"
        progress.live[spec.game_id] = game
    return summaries, progress


def hub_of(*names, note=""):
    """A stand-in for the model clients: what the models table reads of each backend (``note``: why
    every model's cap is lowered)."""
    stats = SimpleNamespace(rate=lambda now: 2903.0, calls=12345, rate_limited=0, server_errors=0, timeouts=0, failed=0,
                            latency_sum=4200.0, prompt_tokens=1234567, completion_tokens=23456, cost_usd=12.25, cache_hits=0,
                            cached_tokens=617283, cut=0, arriving=0)
    limiter = lambda name: SimpleNamespace(name=name, running=17, cap=32, cap_note=note, requests=SimpleNamespace(per_minute=None), stats=stats)  # noqa: E731
    backends = [SimpleNamespace(limiter=limiter(n)) for n in names]
    return SimpleNamespace(backends=lambda: backends, loads={}, batches=None, starting=lambda now: [])


def text_of(renderable, width: int) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=True)
    console.print(renderable)
    return console.export_text()


def body_rows(text: str, after: str) -> list[list[str]]:
    """The rows of a table (boxed or compact) after the line that closes its header."""
    lines = text.split(after, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if set(line.strip()) <= set("─━┡╇┩ ") and line.strip()) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.lstrip()[0] in "└+" or "left out" in line:
            break
        boxed = line.strip()
        cells = [c.strip() for c in (boxed.strip("│").split("│") if "│" in line else re.split(r"\s{3,}", boxed))]
        if len(cells) == 1:  # the title of the next section
            break
        rows.append(cells)
    return rows


def numbers_whole(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            if cell and cell[0].isdigit() or cell.startswith("["):
                assert "…" not in cell and NUMBER.match(cell.replace(" ", "")), cell


@pytest.mark.parametrize("width", [80, 100, 120, 160])
def test_the_end_of_run_table_keeps_every_row_and_cuts_no_number(run24, width):
    summaries, _ = run24
    text = text_of(SummaryTable(summaries), width)
    assert max(len(line) for line in text.splitlines()) <= width
    rows = [r for r in body_rows(text, "\n") if r[0]]  # rows that wrap continue with an empty label
    assert len(rows) == 24
    numbers_whole(body_rows(text, "\n"))
    assert "…" not in text.split("success %")[1].split("└")[0]
    pairs = {(r[1], r[2]) for r in rows}
    assert len(pairs) == 4 and {a for a, _ in pairs} in ({"gpt-4o", "gpt-4o-mini"}, set(MODELS.values()))
    if width == 80:
        assert "No room at this width for:" in text and "tokens" in text.split("No room")[1]


def test_the_dashboard_fits_80x24_and_says_what_it_leaves_out(run24):
    _, progress = run24
    text = text_of(render_dashboard(progress, 12.0, hub_of(*MODELS.values()), height=24), 80)
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= 23 and max(len(line) for line in lines) <= 80
    rows = body_rows(text, "by condition")
    more = re.search(r"\+(\d+) more conditions", text)
    assert more and len(rows) + int(more.group(1)) == 24
    numbers_whole(rows)
    assert all(row[1] in ("gpt-4o", "gpt-4o-mini") for row in rows)
    model_rows = body_rows(text, "models")
    assert [r[0] for r in model_rows] in (["gpt-4o", "gpt-4o-mini"], list(MODELS.values()))
    numbers_whole(model_rows)
    assert "12345" in model_rows[0]


def test_a_lowered_cap_is_explained_under_the_models_table_and_the_running_games_stay(run24):
    _, progress = run24
    note = "lowered: 12 of 40 calls refused as overloaded in 2 s"
    plain = text_of(render_dashboard(progress, 12.0, hub_of(*MODELS.values()), height=24), 80)
    text = text_of(render_dashboard(progress, 12.0, hub_of(*MODELS.values(), note=note), height=24), 80)
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= 23 and max(len(line) for line in lines) <= 80
    model_rows = body_rows(text, "models")
    assert len(model_rows) == 2 and all(row[1] == "17/32*" for row in model_rows)  # one line per model
    assert [line.strip() for line in lines if note in line] == [f"* gpt-4o: {note}", f"* gpt-4o-mini: {note}"]
    # The two lines of reasons cost the tables below two rows, and hide no section the plain frame shows.
    assert len(body_rows(text, "by condition")) == len(body_rows(plain, "by condition")) - 2
    assert lines[-1] == plain.rstrip("\n").splitlines()[-1]


def test_the_dashboard_at_160_columns_shows_every_condition_and_full_model_names(run24):
    _, progress = run24
    text = text_of(render_dashboard(progress, 12.0, hub_of(*MODELS.values()), height=60), 160)
    assert len(text.splitlines()) <= 59 and "more conditions" not in text
    rows = body_rows(text, "by condition")
    assert len(rows) == 24 and {r[1] for r in rows} == set(MODELS.values())
    numbers_whole(rows)
    running = body_rows(text, "running games")
    assert [r[0] for r in running] == [str(i) for i in range(8)]
    assert all(r[2] == "3/12" or r[2].endswith("/10") for r in running)  # the turn column is whole
    models = body_rows(text, "prefix cached %")
    assert models and all(row[-1] == "50" for row in models)  # half of each model's prompt tokens read from its prefix cache


@pytest.mark.parametrize("height", [12, 24, 40, 80])
def test_a_short_terminal_hides_whole_sections_by_priority_and_names_them(run24, height):
    _, progress = run24
    text = text_of(render_dashboard(progress, 12.0, height=height), 100)
    assert len(text.rstrip("\n").splitlines()) <= height - 1
    assert "done" in text.splitlines()[0] and "success so far" in text  # always there
    by_priority = ["by condition", "running games", "scores", "recently finished"]
    hidden = text.split("too short: ")[1].strip().split(", ") if "too short: " in text else []
    titles = {"by condition": "by condition", "running games": "running games", "scores": "scores so far", "recently finished": "recently finished"}
    body = text.split("hidden, the terminal")[0]
    shown = [name for name in by_priority if titles[name] in body]
    assert shown + hidden == by_priority  # what is hidden is what comes last by priority
    if height == 80:
        assert hidden == [] and "more conditions" not in text
    if height == 12:
        assert "running games" in hidden


def test_an_extra_section_of_counters_is_shown_without_relayout(run24):
    _, progress = run24
    workers = counters_section("worker", "workers", [(f"worker-{i}", {"games": 10 * i, "in flight": i}) for i in range(5)])
    text = text_of(render_dashboard(progress, 12.0, extra=[workers]), 100)
    rows = body_rows(text, "workers")
    assert [r[0] for r in rows] == [f"worker-{i}" for i in range(5)] and rows[4][1:] == ["40", "4"]
    short = text_of(render_dashboard(progress, 12.0, extra=[workers], height=20), 100)
    assert "workers" not in short or "+" in short.split("workers")[1]
    assert isinstance(workers, Section)


def test_columns_drop_by_priority_and_numbers_keep_their_width():
    columns = [
        Column("name", ["a rather long name", "b"], justify="left", squeeze=6),
        Column("n", ["123456", "7"]),
        Column("rate", ["99.9 [95.1-100.0]", "1.0"], priority=1, wrap=True),
        Column("extra", ["12345678901234567890"], priority=2),
    ]
    for width in (20, 30, 40, 80):
        table, dropped = fitted_table(columns, width)
        text = text_of(table, width)
        assert "123456" in text and max(len(line) for line in text.splitlines()) <= width
        if width == 20:
            assert dropped == ["extra", "rate"] and "a rather l…" in text
        if width == 80:
            assert dropped == [] and "a rather long name" in text and "99.9 [95.1-100.0]" in text


@pytest.mark.terminal
def test_a_sweep_in_an_80x24_tmux_pane_ends_with_a_readable_table(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text(
        "seeds = 2\nagents = [['share_everything', 'share_everything'], ['one_piece', 'one_piece'],"
        " ['noisy', 'noisy'], ['ignore', 'share_everything']]\n"
        "feedback = ['none', 'own', 'own_detailed', 'joint', 'both', 'both_detailed']\n"
    )
    session = f"asym-widths-{time.monotonic_ns()}"
    done = tmp_path / "done"
    command = f"{sys.executable} -m runners.sweep {grid} --out {tmp_path / 'run'}; touch {done}; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command], check=True, cwd=".")
    try:
        for _ in range(600):  # the run takes a few seconds; wait for its end, not for a time
            if done.exists():
                break
            time.sleep(0.1)
        assert done.exists()
        text = subprocess.run(["tmux", "capture-pane", "-p", "-S", "-200", "-t", session], capture_output=True, text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    final = text.split("┏")[-1]
    rows = [r for r in body_rows("┏" + final, "┏") if r[0]]
    assert len(rows) == 24, text
    numbers_whole(rows)
    assert "48 games in" in text and max(len(line) for line in text.splitlines()) <= 80


def test_the_dashboard_shows_a_vllm_server_s_load_its_kv_cache_and_another_client_s_requests(run24):
    from engine.backends import ServerLoad

    _, progress = run24
    hub = hub_of("vllm:m", "vllm:n")
    shared, alone = ServerLoad(), ServerLoad()
    shared.running, shared.waiting, shared.deferred, shared.kv_cache, shared.others = 8.0, 3.0, 1.0, 0.22, 2.0
    alone.running, alone.waiting = 4.0, 0.0  # a server whose /metrics give no KV-cache usage, no one else on it
    hub.loads = {"vllm:m": shared, "vllm:n": alone}
    text = text_of(render_dashboard(progress, 12.0, hub, height=60), 160)
    assert "8/3 (1 deferred) kv 22% (2 others)" in text
    assert "4/0" in text and "4/0 kv" not in text and "4/0 (" not in text
