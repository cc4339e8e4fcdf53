"""The usage counters have one definition each: a model's call counters (``CallCounters``: what
``usage.json`` gives each model, sums over processes and what a failed attempt counts), and what a
call adds up (``bus.Usage``: ``Usage.total`` and the records' ``UsageTotals``)."""

import msgspec

from bus import Usage
from bus.messages import USAGE_COUNTS, USAGE_TIMES
from engine.backends.provider import network_failure, status_failure
from engine.backends.limiter import COUNTERS, CallCounters, LimiterStats
from engine.records.record import UsageTotals
from engine.session.playing import merge_usage


def test_the_call_counters_are_the_usage_json_counters_in_order():
    assert COUNTERS == (
        "calls", "attempts", "rate_limited", "server_errors", "timeouts", "connection_errors", "malformed", "failed",
        "prompt_tokens", "completion_tokens", "cached_tokens", "cache_hits", "batched", "cut",
    )
    stats = LimiterStats()
    assert isinstance(stats, CallCounters) and all(getattr(stats, name) == 0 for name in COUNTERS)
    assert stats.cost_usd == 0.0 and stats.latency_sum == 0.0 and len(stats.sent_times) == 0
    assert LimiterStats().sent_times is not stats.sent_times


def test_every_failure_counts_one_of_the_call_counters():
    failures = [
        status_failure(status, "no", {}) for status in (400, 401, 408, 429, 500, 503, 529)
    ] + [network_failure(None, timed_out=True), network_failure(ConnectionResetError("reset"))]
    assert {f.counter for f in failures} <= set(COUNTERS)


def test_merge_usage_sums_the_counters_in_the_written_order():
    one = {name: i + 1 for i, name in enumerate(COUNTERS)} | {"cost_usd": 0.5, "mean_latency": 0.25, "in_flight_cap": 8, "rpm_limit": None, "tpm_limit": None}
    merged = merge_usage({"models": {"m": one}, "options": {}}, {"models": {"m": one}, "options": {}, "tokenizer": "t"})
    total = merged["models"]["m"]
    assert list(total) == [*COUNTERS, "cost_usd", "in_flight_cap", "rpm_limit", "tpm_limit", "mean_latency"]
    assert [total[name] for name in COUNTERS] == [2 * (i + 1) for i in range(len(COUNTERS))]
    assert total["cost_usd"] == 1.0 and total["mean_latency"] == 0.25


def test_the_records_usage_totals_are_the_calls_fields_summed():
    assert set(UsageTotals.__struct_fields__) == set(Usage.__struct_fields__) - {"model"}
    assert set(USAGE_COUNTS) | set(USAGE_TIMES) | {"model", "cost_usd"} == set(Usage.__struct_fields__)
    calls = [
        Usage(model="p:m", prompt_tokens=10, completion_tokens=3, cached_tokens=2, message_tokens=4, attempts=2,
              latency=0.12345, waited=0.5, cost_usd=0.000001234),
        Usage(model="p:m", prompt_tokens=7, completion_tokens=1, latency=0.00004, waited=0.1, cost_usd=0.00000002, calls=2),
    ]
    whole = Usage.total(calls)
    assert msgspec.json.encode(whole) == (  # the bytes the hand-written sums gave
        b'{"model":"p:m","prompt_tokens":17,"completion_tokens":4,"cached_tokens":2,"message_tokens":4,'
        b'"attempts":3,"latency":0.1235,"waited":0.6,"cost_usd":1.25e-6,"calls":3}'
    )
    totals = UsageTotals()
    for usage in calls:
        totals.add(usage)
    assert msgspec.json.encode(totals) == (
        b'{"calls":3,"attempts":3,"prompt_tokens":17,"completion_tokens":4,"cached_tokens":2,"message_tokens":4,'
        b'"latency":0.1235,"waited":0.6,"cost_usd":1.25e-6}'
    )
    totals.add(Usage(model="p:m", cost_usd=None))
    assert totals.cost_usd is None and Usage.total([*calls, Usage(model="p:m")]).cost_usd is None
