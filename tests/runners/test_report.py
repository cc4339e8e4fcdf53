"""The run report: numbers checked against hand-computed values, and the command's files."""

from __future__ import annotations

import csv
import math
import statistics
import struct
import sys
from pathlib import Path
from statistics import NormalDist

import pytest

from engine import GameSpec, Options
from engine.records.record import ErrorInfo, GameRecord, encode_record
from engine.analysis import (
    ReportError,
    condition_fields,
    error_counts,
    layout,
    observed_values,
    paired_comparison,
    paired_difference_interval,
    read_results,
    scores_per_condition,
    size_field,
    sizes_per_turn,
    success_by_turn,
    success_table,
)
from engine.analysis.stats import wilson_interval
from puzzles import TurnLog, get_game
from runners.report import main

ASYMPUZL = get_game("asympuzl")
SHARE = "share_everything"
MIXED = "one_piece / ignore"
ALICE_APP, BOB_APP = "actions_per_position.alice", "actions_per_position.bob"
V1_GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_records_v1.jsonl"


def game(
    gid: int,
    seed: int,
    outcome: str,
    *,
    feedback: str = "own",
    agents: tuple[str, str] = (SHARE, SHARE),
    solved: int | None = None,
    actions: tuple[float, float] = (1.0, 1.0),
    scores: dict[str, bool | float] | None = None,
    log: list[tuple[str, int, int]] = (),
    format_errors: dict[str, int] | None = None,
    invalid: dict[str, int] | None = None,
    error: str | None = None,
    size: int = 5,
    distractors: int = 0,
    distractors_in: str = "alice",
    history: int | None = 1,
) -> GameRecord:
    """One AsymPuzl game; ``log`` lists (role, message chars, reply chars) per turn. Its scores are
    the actions per position of each role unless ``scores`` are given."""
    spec = GameSpec(
        game_id=gid,
        seed=seed,
        params=ASYMPUZL.rules.Params(size=size, distractors=distractors, distractors_in=distractors_in),
        agents={"alice": agents[0], "bob": agents[1]},
        options=Options(feedback=feedback, max_turns=2 * size, history=history),
    )
    turn_log = [
        TurnLog(turn=i // 2 + 1, role=role, message_chars=m, reply_chars=r, applied=0)
        for i, (role, m, r) in enumerate(log)
    ]
    solved_positions = size if outcome == "success" else 0
    return GameRecord(
        game_id=gid, spec=spec, outcome=outcome, turns=solved or 2 * size, solved_turn=solved,
        scores={ALICE_APP: actions[0], BOB_APP: actions[1]} if scores is None else scores,
        metrics={"correct_positions": {"alice": solved_positions, "bob": solved_positions}},
        format_errors=format_errors or {"alice": 0, "bob": 0},
        invalid_actions=invalid or {"alice": 0, "bob": 0},
        turn_log=turn_log,
        error=ErrorInfo(kind=error, type="Boom", message="boom") if error else None,
    )


ONE_TURN = [("alice", 10, 40), ("bob", 20, 50)]
HUGE = [("alice", 9999, 9999), ("bob", 9999, 9999)]  # only in games that must be left out


def crafted_games() -> list[GameRecord]:
    """Three conditions at N=5: feedback own and joint with share_everything, and feedback own with
    one_piece / ignore. Seeds 101.. are shared across conditions."""
    own = [
        game(0, 101, "success", solved=2, actions=(1.0, 1.0), log=ONE_TURN),
        game(1, 102, "success", solved=3, actions=(1.0, 0.6), log=ONE_TURN),
        game(2, 103, "failure", actions=(2.0, 0.0), log=ONE_TURN + [("alice", 30, 60)],
             format_errors={"alice": 2, "bob": 1}),
        game(3, 104, "success", solved=2, actions=(1.0, 0.8), log=ONE_TURN, invalid={"alice": 0, "bob": 3}),
        game(4, 105, "error", error="infra_error", actions=(9.0, 9.0), log=HUGE, invalid={"alice": 5, "bob": 0}),
        game(5, 106, "error", error="actor_error", actions=(9.0, 9.0), log=HUGE, format_errors={"alice": 1, "bob": 0}),
    ]
    joint = [
        game(6, 101, "success", feedback="joint", solved=2),
        game(7, 102, "success", feedback="joint", solved=2),
        game(8, 103, "success", feedback="joint", solved=4),
        game(9, 104, "failure", feedback="joint"),  # replaced below by a later line
        game(10, 105, "success", feedback="joint", solved=3),
        game(11, 106, "failure", feedback="joint"),
    ]
    mixed = [
        game(12, 101, "failure", agents=("one_piece", "ignore")),
        game(13, 102, "failure", agents=("one_piece", "ignore")),
        game(14, 103, "success", agents=("one_piece", "ignore"), solved=7),
        game(15, 104, "error", agents=("one_piece", "ignore"), error="engine_error"),
    ]
    return own + joint + mixed


def write_crafted(run_dir: Path) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = [encode_record(r) + b"\n" for r in crafted_games()]
    lines.append(encode_record(game(9, 104, "success", feedback="joint", solved=5)) + b"\n")  # last one wins
    cut = encode_record(game(16, 107, "success", solved=2))
    lines.append(cut[: len(cut) // 2])  # a run killed while writing
    path = run_dir / "results.jsonl"
    path.write_bytes(b"".join(lines))
    return path


@pytest.fixture
def crafted(tmp_path: Path) -> list[GameRecord]:
    return read_results(write_crafted(tmp_path / "run")).records


def r1(x: float | None) -> float:
    return round(100 * x, 1)


# ---------------------------------------------------------------------------------------------
# Statistics


def test_wilson_matches_published_values():
    # The papers' appendix tables: 30/30, 16/30 and 13/30 successes.
    assert [r1(x) for x in wilson_interval(30, 30)] == [88.6, 100.0]
    assert [r1(x) for x in wilson_interval(16, 30)] == [36.1, 69.8]
    assert [r1(x) for x in wilson_interval(13, 30)] == [27.4, 60.8]


def test_paired_interval_matches_published_value():
    # Cavo et al. (2012) complete response before/after consolidation, 161 pairs: 59 both, 6 first
    # only, 16 second only, 80 neither. Fagerland, Lydersen & Laake, "Statistical Analysis of
    # Contingency Tables" (2017), ch. 8, give -0.0621 (95% CI -0.1186 to -0.0046) for the Newcombe
    # interval. Without the n/2 reduction of the cross-product the bounds would be -0.1174 and -0.0059.
    diff, low, high = paired_difference_interval(59, 6, 16, 80)
    assert (round(diff, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)
    # Swapping the two conditions mirrors the interval.
    diff, low, high = paired_difference_interval(59, 16, 6, 80)
    assert (round(diff, 4), round(low, 4), round(high, 4)) == (0.0621, 0.0046, 0.1186)


def _newcombe_reference(a: int, b: int, c: int, d: int, level: float = 0.95) -> tuple[float, float, float]:
    """An implementation written from the paper's formulas, with its own Wilson interval and z."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    n = a + b + c + d

    def wilson(x: int) -> tuple[float, float]:
        p = x / n
        centre, root = 2 * n * p + z * z, z * math.sqrt(z * z + 4 * n * p * (1 - p))
        return (centre - root) / (2 * (n + z * z)), (centre + root) / (2 * (n + z * z))

    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b), wilson(a + c)
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    ad_bc = a * d - b * c
    corrected = max(ad_bc - n / 2, 0) if ad_bc > 0 else ad_bc
    phi = corrected / math.sqrt(denominator) if denominator else 0.0
    dl = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    du = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return p1 - p2, p1 - p2 - dl, p1 - p2 + du


@pytest.mark.parametrize("table", [(59, 6, 16, 80), (1, 1, 7, 12), (14, 5, 0, 22), (3, 1, 0, 1), (12, 2, 1, 29), (0, 0, 0, 30), (5, 0, 0, 0)])
def test_paired_interval_agrees_with_a_separate_implementation(table):
    got = paired_difference_interval(*table)
    want = _newcombe_reference(*table)
    assert got == pytest.approx(want, abs=1e-9)
    assert -1.0 <= got[1] <= got[0] <= got[2] <= 1.0


def test_paired_interval_edge_cases():
    assert paired_difference_interval(0, 0, 0, 0) == (0.0, -1.0, 1.0)
    with pytest.raises(ValueError):
        paired_difference_interval(1, -1, 0, 0)


# ---------------------------------------------------------------------------------------------
# Reading and the tables' numbers


def test_read_results_keeps_last_record_and_skips_the_cut_line(tmp_path: Path):
    results = read_results(write_crafted(tmp_path / "run"))
    assert [r.game_id for r in results.records] == list(range(16))
    assert results.truncated is True
    assert results.duplicates == 1
    assert results.damaged == []
    assert results.records[9].outcome == "success" and results.records[9].solved_turn == 5


def test_read_results_skips_damaged_lines(tmp_path: Path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(encode_record(game(0, 1, "success", solved=2)) + b"\n{not json\n\n"
                     + encode_record(game(1, 2, "failure")) + b"\n")
    results = read_results(path)
    assert [r.game_id for r in results.records] == [0, 1]
    assert (results.lines, results.damaged, results.truncated, results.duplicates) == (3, [2], False, 0)


def test_success_table(crafted):
    table = success_table(crafted)
    assert table.layout.rows == ["agents"]
    assert table.layout.columns == ["feedback"]
    assert table.layout.fixed == {"game": "asympuzl", "N": "5", "D": "0", "T": "10", "h": "1"}
    assert table.row_keys == [(SHARE,), (MIXED,)]
    assert table.column_keys == [("own",), ("joint",)]

    own = table.cell((SHARE,), ("own",))
    assert (own.games, own.errors, own.infra_errors, own.n, own.successes) == (6, 2, 1, 4, 3)  # errors left out
    assert (r1(own.rate), r1(own.low), r1(own.high)) == (75.0, 30.1, 95.4)
    joint = table.cell((SHARE,), ("joint",))
    assert (joint.n, joint.successes) == (6, 5)
    assert (r1(joint.rate), r1(joint.low), r1(joint.high)) == (83.3, 43.6, 97.0)
    mixed = table.cell((MIXED,), ("own",))
    assert (mixed.n, mixed.successes) == (3, 1)  # the engine error is left out
    assert (r1(mixed.rate), r1(mixed.low), r1(mixed.high)) == (33.3, 6.1, 79.2)
    assert table.cell((MIXED,), ("joint",)) is None


def test_success_table_with_other_rows(crafted):
    table = success_table(crafted, rows=["feedback"])
    assert table.layout.columns == ["agents"]
    assert table.row_keys == [("own",), ("joint",)]
    assert table.cell(("own",), (MIXED,)).successes == 1
    with pytest.raises(ReportError, match="unknown field 'colour'"):
        layout(crafted, ["colour"])
    # A role asked for by name: the other role is a column of its own, not folded into agents.
    by_alice = success_table(crafted, rows=["alice"])
    assert by_alice.layout.columns == ["feedback", "bob"]
    assert by_alice.cell(("one_piece",), ("own", "ignore")).n == 3


def test_success_by_turn(crafted):
    fields = condition_fields(crafted)
    assert fields == ["feedback", "agents"]
    curves = {c.key: c for c in success_by_turn(crafted, fields)}
    assert list(curves) == [("own", SHARE), ("own", MIXED), ("joint", SHARE)]
    own = curves[("own", SHARE)]
    assert own.n == 4
    assert own.solved_by == [0, 2, 3, 3, 3, 3, 3, 3, 3, 3]
    assert [r1(r) for r in own.rates][:3] == [0.0, 50.0, 75.0]
    joint = curves[("joint", SHARE)]
    assert joint.solved_by[:6] == [0, 2, 3, 4, 5, 5]
    assert r1(joint.rates[-1]) == 83.3
    assert curves[("own", MIXED)].solved_by == [0] * 6 + [1] * 4


def test_scores_sizes_and_errors(crafted):
    fields = condition_fields(crafted)
    scores = {r.key: r for r in scores_per_condition(crafted, fields)}
    own = scores[("own", SHARE)]
    assert own.n == 4  # the two games that ended in error are left out
    assert list(own.scores) == [ALICE_APP, BOB_APP]
    assert own.scores[ALICE_APP].kind == "mean" and own.scores[ALICE_APP].n == 4
    assert own.scores[ALICE_APP].value == pytest.approx(1.25)
    assert own.scores[BOB_APP].value == pytest.approx(0.6)

    sizes = {r.key: r for r in sizes_per_turn(crafted, fields)}
    alice, bob = sizes[("own", SHARE)].roles["alice"], sizes[("own", SHARE)].roles["bob"]
    assert (alice.turns, alice.reply, alice.message) == (5, 44.0, 14.0)
    assert round(100 * alice.share, 1) == 31.8
    assert (bob.turns, bob.reply, bob.message, bob.share) == (4, 50.0, 20.0, 0.4)
    assert sizes[("joint", SHARE)].roles["alice"].turns == 0
    assert math.isnan(sizes[("joint", SHARE)].roles["alice"].reply)

    errors = {r.key: r for r in error_counts(crafted, fields)}
    own = errors[("own", SHARE)]
    assert own.games == 6
    assert own.format_errors == {"alice": 3, "bob": 1}
    assert own.invalid_actions == {"alice": 5, "bob": 3}
    assert (own.infra_errors, own.other_errors, own.other_kinds) == (1, 1, {"actor_error": 1})
    mixed = errors[("own", MIXED)]
    assert (mixed.infra_errors, mixed.other_errors, mixed.other_kinds) == (0, 1, {"engine_error": 1})
    assert (errors[("joint", SHARE)].infra_errors, errors[("joint", SHARE)].other_errors) == (0, 0)


def _t_quantile(df: int, p: float = 0.975) -> float:
    """Student's t quantile by integrating its density (Simpson's rule) and bisecting."""
    scale = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))

    def cdf(x: float, steps: int = 2000) -> float:
        h = x / steps
        f = [scale * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(steps + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    low, high = 0.0, 50.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) < p else (low, middle)
    return (low + high) / 2


def test_numeric_score_mean_and_interval():
    values = [0.5, 1.0, 2.5, 1.25, 0.0, 3.0, 1.5]
    records = [game(i, 100 + i, "success", solved=2, scores={"effort": v}) for i, v in enumerate(values)]
    records.append(game(7, 107, "error", error="actor_error", scores={"effort": 99.0}))  # left out
    (row,) = scores_per_condition(records, condition_fields(records))
    effort = row.scores["effort"]
    assert (row.n, effort.kind, effort.n) == (7, "mean", 7)
    assert round(_t_quantile(6), 3) == 2.447  # the published table's value
    half = _t_quantile(6) * statistics.stdev(values) / math.sqrt(len(values))
    mean = statistics.mean(values)
    assert (effort.value, effort.low, effort.high) == pytest.approx((mean, mean - half, mean + half), abs=1e-4)


def test_boolean_score_rate():
    agreed = [True, True, False, True, True, False, True, True, True, False]
    records = [game(i, 100 + i, "failure", scores={"agreed": a, "rounds": float(i)}) for i, a in enumerate(agreed)]
    records.append(game(10, 110, "error", error="infra_error", scores={"agreed": False}))  # left out
    (row,) = scores_per_condition(records, condition_fields(records))
    rate = row.scores["agreed"]
    assert (rate.kind, rate.n, rate.value) == ("rate", 10, 0.7)
    assert (rate.low, rate.high) == pytest.approx(wilson_interval(7, 10))
    assert (r1(rate.low), r1(rate.high)) == (39.7, 89.2)  # Wilson 7/10, as published tables give it
    assert row.scores["rounds"].kind == "mean"


def test_feedback_and_labels_sort_in_the_games_order():
    first_seen = ["both", "none", "partner", "joint", "own", "both_detailed", "own_detailed"]
    records = [game(i, 100 + i, "success", solved=2, feedback=f) for i, f in enumerate(first_seen)]
    assert observed_values(records, "feedback") == list(ASYMPUZL.rules.feedback)
    table = success_table(records)
    assert table.column_keys == [(f,) for f in ASYMPUZL.rules.feedback]

    sides = [(5, "alice"), (0, "alice"), (2, "bob"), (10, "alice"), (3, "alice")]
    records = [game(i, 100 + i, "success", distractors=d, distractors_in=side) for i, (d, side) in enumerate(sides)]
    assert observed_values(records, "D") == ["0", "3 in alice", "5 in alice", "10 in alice", "2 in bob"]
    records = [game(i, 100 + i, "success", size=n, history=h) for i, (n, h) in enumerate([(12, None), (5, 2), (3, 1)])]
    assert observed_values(records, "N") == ["3", "5", "12"]
    assert observed_values(records, "T") == ["6", "10", "24"]
    assert observed_values(records, "h") == ["1", "2", "full"]
    assert observed_values(records, "agents") == [SHARE]


def test_paired_comparison(crafted):
    comparison = paired_comparison(crafted, "feedback", "own", "joint")
    assert comparison.fields == ["agents"]
    rows = {r.key: r for r in comparison.rows}
    share = rows[(SHARE,)]
    # Seeds 101, 102, 104 solved under both; 103 under joint only; 105 (infrastructure error) and
    # 106 (actor error) ended in an error under own and are left out.
    assert (share.pairs, share.both, share.a_only, share.b_only, share.neither, share.unpaired) == (4, 3, 0, 1, 0, 4)
    assert (share.rate_a, share.rate_b) == (0.75, 1.0)
    assert (share.difference, share.low, share.high) == pytest.approx(paired_difference_interval(3, 1, 0, 0))
    assert (share.difference, share.low, share.high) == pytest.approx(_newcombe_reference(3, 1, 0, 0))
    mixed = rows[(MIXED,)]  # played under own only
    assert (mixed.pairs, mixed.unpaired) == (0, 4)

    with pytest.raises(ReportError, match="unknown field"):
        paired_comparison(crafted, "colour", "red", "blue")
    with pytest.raises(ReportError, match="feedback=both is not in the run"):
        paired_comparison(crafted, "feedback", "own", "both")


def test_turn_limit_that_follows_size_is_not_a_column():
    records = [game(i, 100 + i % 2, "success", solved=2, size=3 + 2 * (i // 2)) for i in range(4)]
    shape = layout(records)
    assert shape.columns == ["N"]
    assert shape.notes == ["T follows N: T=6 for N=3, T=10 for N=5"]
    assert size_field(records) == "N"
    # Only the distractors vary: no label that is a number varies, so there is no size to plot against.
    assert size_field([game(i, 100, "success", distractors=i) for i in range(3)]) is None


# ---------------------------------------------------------------------------------------------
# The command


ONE_PANEL = (1350, 825)  # pixels of a plot of one panel: 9 x 5.5 inches at 150 dpi


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_command_writes_every_output(tmp_path: Path, capsys):
    run = tmp_path / "run"
    write_crafted(run)
    assert main([str(run), "--compare", "feedback=own", "feedback=joint"]) == 0
    printed = capsys.readouterr().out
    out = run / "report"
    assert "16 games in 3 conditions" in printed
    assert "last line cut short" in printed
    assert "1 repeated game id" in printed
    assert "75.0 [30.1-95.4] (4)" in printed
    assert f"Report written to {out}" in printed

    md = (out / "tables.md").read_text()
    for cell in ("| share_everything | 75.0 [30.1-95.4] (4) | 83.3 [43.6-97.0] (6) |",
                 "| one_piece / ignore | 33.3 [6.1-79.2] (3) |  |",
                 "| own | share_everything | 4 | 0.0 | 50.0 | 75.0 |",
                 "| own | share_everything | 4 | 1.25 [0.45, 2.05] | 0.60 [-0.09, 1.29] |",  # four values: t intervals, not cut
                 "| own | share_everything | 4 | 44.0 | 14.0 | 31.8 | 50.0 | 20.0 | 40.0 |",
                 "| own | share_everything | 6 | 3 | 1 | 5 | 3 | 1 | 1 (actor_error 1) |",
                 "| share_everything | 4 | 75.0 | 100.0 | +25.0 | [-28.1, +69.9] | 0 / 1 | 1.000 | 4 |"):
        assert cell in md, cell

    tex = (out / "tables.tex").read_text()
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    stacked = "\\begin{tabular}[t]{@{}r@{}}%s\\\\{\\scriptsize %s}\\end{tabular}"
    cells = [stacked % ("75.0", "[30.1--95.4] (4)"), stacked % ("83.3", "[43.6--97.0] (6)")]
    assert "share\\_everything & " + " & ".join(cells) + " \\\\" in tex
    assert tex.count("\\begin{tabular}{") == 6

    success = read_csv(out / "success.csv")
    row = next(r for r in success if r["agents"] == SHARE and r["feedback"] == "own")
    assert (row["games"], row["errors"], row["n"], row["successes"]) == ("6", "2", "4", "3")
    assert (row["success_rate"], row["ci_low"], row["ci_high"]) == ("0.75", "0.3006", "0.9544")
    turns = read_csv(out / "success_by_turn.csv")
    k2 = next(r for r in turns if r["feedback"] == "joint" and r["K"] == "4")
    assert (k2["n"], k2["solved"], k2["success_rate"]) == ("6", "4", "0.6667")
    assert "| feedback | agents | n | actions/pos alice | actions/pos bob |" in md
    scores = read_csv(out / "scores.csv")
    alice = next(r for r in scores if r["feedback"] == "own" and r["alice"] == SHARE and r["score"] == ALICE_APP)
    assert (alice["label"], alice["kind"], alice["n"], alice["value"]) == ("actions/pos alice", "mean", "4", "1.25")
    assert (alice["low"], alice["high"]) == ("0.4544", "2.0456")  # four values: the t interval, not cut to [1, 2]
    assert len(scores) == 3 * 2  # one row per condition and score
    chars = read_csv(out / "chars_per_turn.csv")
    alice = next(r for r in chars if r["feedback"] == "own" and r["alice"] == SHARE and r["role"] == "alice")
    assert (alice["turns"], alice["mean_reply_chars"], alice["mean_message_chars"]) == ("5", "44.0", "14.0")
    errors = read_csv(out / "errors.csv")
    assert errors[0]["infra_errors"] == "1" and errors[0]["other_error_kinds"] == "actor_error:1"
    paired = read_csv(out / "paired.csv")
    assert paired[0]["pairs"] == "4" and paired[0]["difference"] == "0.25"

    assert png_size(out / "success_by_turn.png") == ONE_PANEL
    from runners.report.plots import FIGURE_DPI, PANEL_INCHES

    two_panels = (round(2 * PANEL_INCHES[0] * FIGURE_DPI), round((PANEL_INCHES[1] + 0.5) * FIGURE_DPI))
    assert png_size(out / "scores.png") == two_panels  # one score, of alice and of bob: a panel each
    for name in ("success_by_turn", "scores"):
        assert (out / f"{name}.pdf").read_bytes()[:5] == b"%PDF-" and b"<svg" in (out / f"{name}.svg").read_bytes()[:500]
    assert not (out / "success_vs_size.png").exists()  # one size only
    from matplotlib.image import imread

    assert imread(out / "success_by_turn.png").shape[:2] == ONE_PANEL[::-1]

    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 2
    assert "<td class=\"num\">75.0 [30.1-95.4] (4)</td>" in page
    assert "Paired comparison: feedback=joint against feedback=own" in page


def test_command_plots_success_by_size(tmp_path: Path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    records = [game(i, 100 + i % 3, "success" if i % 2 else "failure", solved=2 if i % 2 else None,
                    size=(3, 5, 10)[i // 3]) for i in range(9)]
    (run / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    out = tmp_path / "elsewhere"
    assert main([str(run), "--out", str(out), "--rows", "N"]) == 0
    assert png_size(out / "success_vs_size.png") == ONE_PANEL
    assert (out / "report.html").read_text().count("data:image/png;base64,") == 3
    md = (out / "tables.md").read_text()
    assert "T follows N: T=6 for N=3, T=10 for N=5, T=20 for N=10" in md
    assert "| 3 | 33.3 [6.1-79.2] (3) |" in md


def test_command_on_yes_no_scores(tmp_path: Path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    agreed = [True, True, False, True, True, False, True, True, True, False]
    records = [game(i, 100 + i, "failure", scores={"agreed": a}) for i, a in enumerate(agreed)]
    records.append(game(10, 110, "failure", scores={}))  # a game that gave no score
    (run / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    assert main([str(run)]) == 0
    out = run / "report"
    md = (out / "tables.md").read_text()
    assert "| condition | n | agreed % |" in md
    assert "| all | 11 | 70.0 [39.7-89.2] (10) |" in md  # 10 of the 11 games gave the score
    (row,) = read_csv(out / "scores.csv")
    assert (row["score"], row["kind"], row["n"], row["value"], row["low"], row["high"]) == (
        "agreed", "rate", "10", "0.7", "0.3968", "0.8922")
    assert not (out / "scores.png").exists()  # no numeric score to plot
    assert (out / "report.html").read_text().count("data:image/png;base64,") == 1


def test_command_on_format_1_results(tmp_path: Path, capsys):
    import json

    lines = V1_GOLDEN.read_bytes().splitlines(keepends=True)[:4]
    old = [json.loads(line) for line in lines]
    assert all("puzzle" in r["spec"] and "actions_per_position" in r for r in old)  # format 1 indeed
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_bytes(b"".join(lines))
    results = read_results(run / "results.jsonl")
    assert [r.game_id for r in results.records] == [r["game_id"] for r in old]
    assert results.damaged == []
    first = results.records[0]
    # Format 1 counted every write as an action: its figure reads as writes; modifications it never had.
    writes = "writes_per_position.alice"
    assert first.spec.game == "asympuzl" and first.scores[writes] == old[0]["actions_per_position"]["alice"]
    assert ALICE_APP not in first.scores

    assert main([str(run), "--no-plots"]) == 0
    assert f"{len(old)} games in" in capsys.readouterr().out
    success = read_csv(run / "report" / "success.csv")
    assert sum(int(r["games"]) for r in success) == len(old)
    assert sum(int(r["successes"]) for r in success) == sum(r["outcome"] == "success" for r in old)
    scores = [r for r in read_csv(run / "report" / "scores.csv") if r["score"] == writes]
    values = [r["actions_per_position"]["alice"] for r in old if r["outcome"] != "error"]
    assert sum(int(r["n"]) for r in scores) == len(values)
    assert sum(float(r["value"]) * int(r["n"]) for r in scores) == pytest.approx(sum(values), abs=1e-3)


def test_no_plots_and_missing_matplotlib(tmp_path: Path, capsys, monkeypatch):
    run = tmp_path / "run"
    write_crafted(run)
    assert main([str(run), "--no-plots"]) == 0
    assert not list((run / "report").glob("*.png"))
    assert "Plots skipped" not in capsys.readouterr().out

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails as if not installed
    assert main([str(run)]) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if "Plots skipped" in line]
    assert len(lines) == 1 and "pip install -e '.[plots]'" in lines[0]
    assert "data:image/png" not in (run / "report" / "report.html").read_text()


def test_command_on_games_lost_to_the_infrastructure(tmp_path: Path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    records = [game(i, i, "error", error="infra_error") for i in range(3)]
    (run / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    assert main([str(run / "results.jsonl")]) == 0  # the results file itself is accepted too
    printed = capsys.readouterr().out
    assert "3 games lost to infrastructure errors" in printed
    md = (run / "report" / "tables.md").read_text()
    assert "| share_everything | - (0) |" in md
    assert "| all | 3 | 0 | 0 | 0 | 0 | 3 | 0 |" in md
    assert png_size(run / "report" / "success_by_turn.png") == ONE_PANEL


@pytest.mark.parametrize(
    "args, message",
    [
        (["{tmp}/missing"], "does not exist"),
        (["{tmp}"], "is not a run directory (no results.jsonl)"),
        (["{tmp}/empty"], "holds no complete game record"),
        (["{tmp}/run", "--compare", "colour=red", "colour=blue"], "argument --compare: unknown field 'colour'"),
        (["{tmp}/run", "--compare", "feedback=own", "feedback=both"], "feedback=both is not in the run"),
        (["{tmp}/run", "--compare", "feedback=own", "N=5"], "argument --compare: expected FIELD=A FIELD=B"),
        (["{tmp}/run", "--rows", "agents,colour"], "argument --rows: unknown field 'colour'"),
    ],
)
def test_bad_input_gives_one_line_and_status_2(tmp_path: Path, capsys, args, message):
    write_crafted(tmp_path / "run")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_bytes(b'{"game_id": 1, "spe')
    with pytest.raises(SystemExit) as exit_info:
        main([a.format(tmp=tmp_path) for a in args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_report_on_a_real_run(tmp_path: Path, capsys):
    from runners.concurrent import main as run_main

    run = tmp_path / "run"
    assert run_main(["--games", "20", "--out", str(run), "--no-dashboard"]) == 0
    capsys.readouterr()
    assert main([str(run)]) == 0
    printed = capsys.readouterr().out
    assert "20 games in 1 condition" in printed
    success = read_csv(run / "report" / "success.csv")
    assert len(success) == 1 and success[0]["n"] == "20" and success[0]["games"] == "20"
    rate = float(success[0]["success_rate"])
    low, high = wilson_interval(int(success[0]["successes"]), 20)
    assert (float(success[0]["ci_low"]), float(success[0]["ci_high"])) == (round(low, 4), round(high, 4))
    assert 0.0 <= rate <= 1.0
    turns = read_csv(run / "report" / "success_by_turn.csv")
    assert len(turns) == 10 and turns[-1]["success_rate"] == success[0]["success_rate"]
    assert png_size(run / "report" / "success_by_turn.png") == ONE_PANEL


def test_compare_sizes_when_the_turn_limit_follows_the_size(tmp_path):
    from runners.sweep import main as sweep_main

    grid = tmp_path / "g.toml"
    grid.write_text("seeds = 4\nagents = [['one_piece', 'one_piece']]\nsize = [3, 5]\n")
    out = tmp_path / "run"
    assert sweep_main([str(grid), "--out", str(out), "--no-dashboard"]) == 0
    records = read_results(out / "results.jsonl").records
    comparison = paired_comparison(records, "N", "3", "5")
    assert [(r.pairs, r.unpaired) for r in comparison.rows] == [(4, 0)]


def test_the_report_refuses_a_record_that_contradicts_the_plan(tmp_path, capsys):
    import json as _json

    from runners.concurrent import main as run_main

    run = tmp_path / "run"
    assert run_main(["--games", "4", "--no-dashboard", "--out", str(run)]) == 0
    lines = (run / "results.jsonl").read_text().splitlines()
    record = _json.loads(lines[1])
    record["spec"]["agents"]["alice"] = "one_piece"  # as if another run's game were pasted in
    lines[1] = _json.dumps(record, separators=(",", ":"))
    (run / "results.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(run), "--no-plots"])
    assert exit_info.value.code == 2
    assert "results.jsonl line 2 holds game 1 with other agents than the run's plan gives it" in capsys.readouterr().err
