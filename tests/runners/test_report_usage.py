"""Model calls and cost in the report and the end-of-run summary, against sums done by hand."""

from __future__ import annotations

import msgspec
import pytest

from engine.records.record import UsageTotals
from engine.analysis import usage_per_condition
from engine.analysis.totals import summarize
from runners.report.tables import usage_table
from tests.runners.test_report import game


def _with_usage(record, alice: tuple[int, int, int, float | None], bob: tuple[int, int, int, float | None]):
    usage = {
        role: UsageTotals(calls=c, prompt_tokens=p, completion_tokens=o, cost_usd=cost)
        for role, (c, p, o, cost) in (("alice", alice), ("bob", bob))
    }
    return msgspec.structs.replace(record, usage=usage)


def test_calls_tokens_and_cost_per_condition_count_every_game_and_say_when_a_price_is_missing():
    records = [
        _with_usage(game(0, 0, "success", feedback="own"), (2, 1000, 100, 0.01), (1, 500, 50, 0.02)),
        _with_usage(game(1, 1, "failure", feedback="own"), (3, 1500, 150, 0.03), (3, 1500, 150, 0.04)),
        _with_usage(game(2, 2, "error", feedback="own", error="infra_error"), (1, 400, 0, 0.006), (0, 0, 0, 0.0)),
        _with_usage(game(3, 0, "success", feedback="joint"), (2, 1000, 100, 0.01), (2, 900, 90, None)),
    ]
    rows = {row.key: row for row in usage_per_condition(records, ["feedback"])}
    own, joint = rows[("own",)], rows[("joint",)]
    assert (own.games, own.successes, own.calls) == (3, 1, 10)
    assert (own.prompt_tokens, own.completion_tokens) == (4900, 450)
    assert own.cost == pytest.approx(0.106) and own.cost_per_success == pytest.approx(0.106)
    assert joint.cost is None and joint.calls == 4  # one model has no price: no total pretends otherwise
    table = usage_table(records, ["feedback"])
    assert table.rows[[r[0] for r in table.rows].index("own")][5:8] == ["0.11", "0.04", "0.11"]
    by_condition = {s.fields["feedback"]: s for s in summarize(records)}
    assert by_condition["own"].calls == 10 and by_condition["own"].tokens == 5350
    assert by_condition["own"].cost_usd == pytest.approx(0.106) and by_condition["joint"].cost_usd is None


def test_no_model_no_usage_table():
    assert usage_table([game(0, 0, "success")], ["feedback"]) is None
    assert summarize([game(0, 0, "success")])[0].cost_usd is None
