"""The branch benchmark's breakdown of prompt tokens (``benchmarks/prefix_misses.py``): each call's
prompt split into what the server read from its cache, what no earlier call could have computed
(intrinsic), and what an earlier call had computed but the server computed again (avoidable: a call
that had ended, one still in flight, or only the first run's)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from prefix_misses import breakdown  # noqa: E402


def call(ids: list[int], came: float, ended: float, cached: int) -> dict:
    return {"ids": ids, "came": came, "ended": ended, "timings": {"cache_n": cached}}


def test_each_prompt_token_is_cached_intrinsic_or_an_avoidable_miss_by_where_its_prefix_was():
    shared = list(range(10))
    origin = [call(shared + [50, 51], 0, 1, 0)]  # the first run's prompt: the branch point's
    branch = [
        call(shared + [50, 51], 10, 12, 0),  # the point again, on a cold server: all but one token was the first run's
        call(shared + [50, 51], 12, 13, 11),  # and again, read from the cache but the one token always evaluated
        call(shared + [60, 61, 62], 12.5, 14, 4),  # after the point: 10 tokens shared, read 4, 6 computed again
        call(shared + [60, 61, 70], 13.5, 15, 0),  # beside the one before (in flight): 12 shared, none read
    ]
    result = breakdown(origin, branch, one_server=False)
    splits = [c["split"] for c in branch]
    assert splits[0] == {"prompt": 12, "cached": 0, "intrinsic": 1, "avoidable_done": 0, "avoidable_concurrent": 0,
                         "avoidable_origin": 11, "over": 0}
    assert splits[1]["cached"] == 11 and splits[1]["intrinsic"] == 1 and sum(splits[1][k] for k in splits[1] if k.startswith("avoidable")) == 0
    assert splits[2] == {"prompt": 13, "cached": 4, "intrinsic": 3, "avoidable_done": 6, "avoidable_concurrent": 0,
                         "avoidable_origin": 0, "over": 0}
    assert splits[3]["intrinsic"] == 1 and splits[3]["avoidable_concurrent"] == 12 - 10 and splits[3]["avoidable_done"] == 10
    for split in splits:  # every token is counted once
        assert split["cached"] + split["intrinsic"] + sum(v for k, v in split.items() if k.startswith("avoidable")) == split["prompt"]
    assert result["point, first"]["calls"] == 1 and result["point, again"]["calls"] == 1 and result["after point"]["calls"] == 2
    assert result["all"]["prompt"] == 12 + 12 + 13 + 13


def test_with_one_server_the_first_runs_prompts_count_as_computed_before():
    origin = [call([1, 2, 3, 4], 0, 1, 0)]
    branch = [call([1, 2, 3, 4], 5, 6, 0)]
    split = breakdown(origin, branch, one_server=True)["all"]
    assert split["avoidable_done"] == 3 and split["avoidable_origin"] == 0 and split["intrinsic"] == 1
