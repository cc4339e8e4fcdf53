"""The report's plots, read back from the matplotlib figures: panels when there are many curves,
a Wilson band under every curve, distinct styles, identical series drawn once and named together,
and every file format."""

from pathlib import Path

import anyio
import pytest

from engine import PolicyFactory, run_games
from engine.analysis.stats import wilson_interval
from engine.plan.grid import Grid
from runners.report.cli import main
from runners.report.plots import figures, style

pytest.importorskip("matplotlib")

PAIRS = [["share_everything", "share_everything"], ["one_piece", "one_piece"], ["noisy", "noisy"], ["ignore", "share_everything"]]
FEEDBACK = ["none", "own", "own_detailed", "joint", "both", "both_detailed"]


def play(grid: Grid) -> list:
    records = []
    anyio.run(lambda: run_games(grid.specs_for(range(grid.total)), factory=PolicyFactory(), concurrency=16, on_record=records.append))
    return sorted(records, key=lambda r: r.game_id)


@pytest.fixture(scope="module")
def records24():
    return play(Grid(seeds=6, agents=PAIRS, feedback=FEEDBACK))


def visible(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


def curves(ax) -> list:
    """The step lines of a panel (the markers are drawn apart, without a label)."""
    return [line for line in ax.get_lines() if not line.get_label().startswith("_")]


def test_24_curves_are_drawn_in_one_panel_per_agent_pair_with_bands(records24):
    fig = dict(figures(records24))["success_by_turn"]
    axes = visible(fig)
    assert len(axes) == 4
    assert [ax.get_title() for ax in axes] == ["share_everything", "one_piece", "noisy", "ignore / share_everything"]
    for ax in axes:
        lines = curves(ax)
        assert 1 <= len(lines) <= 6
        assert len(ax.collections) == len(lines)  # one band per curve
        named = [name for line in lines for name in line.get_label().rsplit(" (n=", 1)[0].split(" = ")]
        assert sorted(named) == sorted(FEEDBACK)  # every condition named once, identical ones together
        colors = [line.get_color() for line in lines]
        assert len(set(colors)) == len(colors)
    # The same feedback keeps its colour in every panel where it is drawn alone.
    colour = {}
    for ax in axes:
        for line in curves(ax):
            name = line.get_label().rsplit(" (n=", 1)[0]
            if " = " not in name:
                colour.setdefault(name, set()).add(line.get_color())
    assert len(colour) >= 2 and all(len(c) == 1 for c in colour.values())


def test_a_band_is_the_wilson_interval(records24):
    one = [r for r in records24 if r.spec.agents["alice"] == "noisy" and r.spec.condition_fields()["feedback"] == "own"]
    fig = dict(figures(one))["success_by_turn"]
    (ax,) = visible(fig)
    (line,) = curves(ax)
    ys = line.get_ydata()
    n = len(one)
    solved = round(ys[-1] * n / 100)
    low, high = wilson_interval(solved, n)
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert min(band) <= 100 * low + 1e-9 and max(band) >= 100 * high - 1e-9
    assert any(abs(v - 100 * low) < 1e-9 for v in band) and any(abs(v - 100 * high) < 1e-9 for v in band)


def test_identical_series_are_merged_and_others_set_apart():
    records = play(Grid(seeds=8, agents=[["share_everything", "share_everything"], ["one_piece", "one_piece"], ["noisy", "noisy"]],
                        feedback=["joint"], params={"size": [3, 5, 10]}))
    fig = dict(figures(records))["success_vs_size"]
    (ax,) = visible(fig)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "share_everything = one_piece" in labels and "noisy" in labels and len(labels) == 2
    xs = [tuple(line.get_xdata()) for line in ax.get_lines() if line.get_marker() not in (None, "None", "_", "")]
    assert len(set(xs)) == len(xs)  # not on top of each other


def test_styles_differ_for_many_series():
    styles = [tuple(sorted(style(i).items())) for i in range(140)]
    assert len(set(styles)) == 140


def test_each_plot_is_written_in_each_format(tmp_path: Path, records24):
    from engine.records.rundir import encode_record

    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records24))
    assert main([str(run)]) == 0
    for stem in ("success_by_turn", "scores"):
        for fmt in ("png", "pdf", "svg"):
            assert (run / "report" / f"{stem}.{fmt}").stat().st_size > 1000
    assert main([str(run), "--out", str(tmp_path / "png"), "--plot-format", "png"]) == 0
    assert sorted(p.suffix for p in (tmp_path / "png").glob("success_by_turn.*") if p.suffix != ".csv") == [".png"]
    with pytest.raises(SystemExit):
        main([str(run), "--plot-format", "gif"])


def test_the_einstein_report_has_the_papers_layout_and_each_score_its_own_axis(tmp_path):
    from runners.report.plots import scores_figure
    from runners.sweep import main as sweep_main

    run = tmp_path / "run"
    examples = Path(__file__).resolve().parents[2] / "examples"
    assert sweep_main([str(examples / "einstein_table1.toml"), "--seeds", "1", "--out", str(run), "--no-dashboard"]) == 0
    assert main([str(run), "--no-plots"]) == 0
    tables = (run / "report" / "tables.md").read_text()
    assert "## Success rate by actions x verifier x N\n" in tables
    assert "| actions | verifier | N=4 | N=5 | N=6 |" in tables  # a row per action space and verifier, N across
    from engine import RunDir

    records = RunDir.open(run).records()
    fig = scores_figure(records)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == ["Sub.R", "steps", "StepR", "StepR (all)", "Corr.R"]  # steps and ratios never share an axis
    steps, ratio = fig.axes[1], fig.axes[2]
    assert steps.get_shared_y_axes().joined(steps, ratio) is False


@pytest.fixture(scope="module")
def einstein_run(tmp_path_factory):
    """The Einstein Table 1 sweep at 2 seeds: 24 conditions over N, action modes and verifiers."""
    from runners.sweep import main as sweep_main

    run = tmp_path_factory.mktemp("einstein") / "run"
    examples = Path(__file__).resolve().parents[2] / "examples"
    assert sweep_main([str(examples / "einstein_table1.toml"), "--seeds", "2", "--out", str(run), "--no-dashboard"]) == 0
    return run


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_the_einstein_plots_are_made_without_a_warning_and_within_2400_pixels(einstein_run, tmp_path):
    import warnings

    from engine import RunDir
    from runners.report.plots import make_plots

    records = RunDir.open(einstein_run).records()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = make_plots(records, tmp_path, formats=("png",))
    assert [str(w.message) for w in caught] == []
    assert {p.stem for p in written} == {"success_by_turn", "scores", "success_vs_size"}
    for path in written:
        width, height = png_size(path)
        assert 600 <= width <= 2400 and 400 <= height <= 2400, (path.name, width, height)


def test_every_legend_and_panel_lies_inside_its_figure_and_no_panel_is_left_empty(einstein_run):
    from engine import RunDir

    for name, fig in figures(RunDir.open(einstein_run).records()):
        renderer = fig.canvas.get_renderer()
        fig.draw_without_rendering()
        box = fig.bbox
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
        assert legends or name == "scores", name
        extents = [legend.get_window_extent(renderer) for legend in legends] + [ax.get_tightbbox(renderer) for ax in visible(fig)]
        for extent in extents:  # the panels with their titles and tick labels
            assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1 and box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1, name
        assert all(ax.get_visible() for ax in fig.axes), f"{name}: a panel left empty"


def test_each_einstein_success_curve_of_a_panel_has_its_own_colour(einstein_run):
    from engine import RunDir

    fig = dict(figures(RunDir.open(einstein_run).records()))["success_by_turn"]
    for ax in visible(fig):
        colours = [line.get_color() for line in curves(ax)]
        labels = [line.get_label() for line in curves(ax)]
        assert len(colours) >= 2 and len(set(colours)) == len(colours), (ax.get_title(), labels)
