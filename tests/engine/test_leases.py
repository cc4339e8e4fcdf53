"""The ledger of a cluster's rate limits: slices granted from one bucket refilled at the per-minute
rate, limits learned from any worker (unless the user set them), and a pause asked of one worker
holding for all."""

from __future__ import annotations

from engine.backends import BackendSettings
from engine.executors.leases import LeasedBucket, LimitLedger, limits_set


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_slices_come_from_one_bucket_refilled_at_the_rate():
    clock = Clock()
    ledger = LimitLedger(BackendSettings(rpm={"openai:m": 600}), clock=clock)  # 10 a second, holds 10
    grant = lambda want, need: ledger.lease("openai:m", (want, need, 0, 0), {})[0]  # noqa: E731
    assert grant(4, 1) == 4
    assert grant(10, 1) == 6  # what is left
    assert grant(5, 1) == 0  # empty: not even the call's one
    clock.now = 0.35
    assert grant(5, 1) == 3.5  # 0.35 s of 10 a second
    clock.now = 10.0
    assert grant(50, 1) == 10  # never more than a second's worth at once
    assert ledger.totals()["openai:m"][0] == 23.5


def test_a_limit_learned_by_one_worker_is_every_workers_unless_set():
    ledger = LimitLedger(BackendSettings(rpm={"anthropic": 120}, shared_limits=["anthropic"]))
    *_, rpm, tpm, _ = ledger.lease("openai:m", (0, 0, 0, 0), {"rpm": 3000, "tpm": 90000})
    assert (rpm, tpm) == (3000, 90000)
    *_, rpm, tpm, _ = ledger.lease("openai:m", (0, 0, 0, 0), {})
    assert (rpm, tpm) == (3000, 90000)
    *_, rpm, _, _ = ledger.lease("anthropic", (0, 0, 0, 0), {"rpm": 4000})
    assert rpm == 120  # the user's limit stands
    assert limits_set(BackendSettings(rpm={"openai": 60, "openai:x": 30}), "openai:x") == (30, None)
    assert limits_set(BackendSettings(rpm={"openai": 60}), "openai:y") == (60, None)


def test_a_pause_and_what_remains_hold_for_every_worker():
    ledger = LimitLedger(BackendSettings(rpm={"openai:m": 600}), clock=Clock())
    *_, paused = ledger.lease("openai:m", (0, 0, 0, 0), {"paused_until": 1234.5})
    assert paused == 1234.5
    assert ledger.lease("openai:m", (0, 0, 0, 0), {})[-1] == 1234.5  # another worker hears of it
    assert ledger.lease("openai:m", (5, 1, 0, 0), {"requests_left": 2})[0] == 2


def test_a_leased_bucket_holds_only_what_was_granted_and_says_what_it_lacks():
    bucket = LeasedBucket(600)
    assert bucket.wait_time(1) > 0 and bucket.short.is_set()
    assert bucket.wants() == (1 + bucket.slice(), 1)
    bucket.granted(3, 600)
    assert bucket.wait_time(1) == 0 and not bucket.short.is_set()
    bucket.take(3)
    assert bucket.level == 0  # no refill of its own
    unknown = LeasedBucket(None)
    assert unknown.wait_time(10**9) == 0  # no limit known: nothing waits
    unknown.set_rate(3000)  # learned from a reply: limited from the next call
    assert unknown.wait_time(1) > 0 and unknown.learned == 3000
