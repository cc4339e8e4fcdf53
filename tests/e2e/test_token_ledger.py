"""The token-trajectory benchmark's ledger (``benchmarks/bench_token_trajectories.py --ledger``): a run
killed mid-write loses only the game it was writing, a resumed run adds the counts and skips the games
already checked, and a ledger of other settings is refused."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_token_trajectories import Ledger  # noqa: E402

SETTINGS = {"game": ["asympuzl", "tsp"], "seed": 0, "max_tokens": 16}


def test_a_resumed_ledger_sums_the_games_and_drops_a_cut_line(tmp_path):
    path = tmp_path / "ledger.jsonl"
    first = Ledger(path, SETTINGS)
    assert first.done == set() and first.counts == Counter()
    first.add(3, Counter(turns=6, games=1, chat_breaks=1), [])
    first.add(100_004, Counter(turns=4, games=1, mismatched_turns=1), [{"game": 100_004, "at": 7}])
    with path.open("a") as file:  # the run killed while it wrote a third game
        file.write('{"game_id": 5, "counts": {"tur')

    resumed = Ledger(path, SETTINGS)
    assert resumed.done == {3, 100_004}  # game 5 is played again
    assert resumed.counts == Counter(turns=10, games=2, chat_breaks=1, mismatched_turns=1)
    assert resumed.examples == [{"game": 100_004, "at": 7}]
    resumed.add(5, Counter(turns=6, games=1), [])
    assert Ledger(path, SETTINGS).done == {3, 5, 100_004}  # the game after the cut line reads whole


def test_a_ledger_of_other_settings_is_refused(tmp_path):
    path = tmp_path / "ledger.jsonl"
    Ledger(path, SETTINGS).add(1, Counter(turns=2), [])
    with pytest.raises(SystemExit, match="other settings"):
        Ledger(path, {**SETTINGS, "max_tokens": 48})
    path.write_text("not a ledger\n")
    with pytest.raises(SystemExit, match="not a ledger"):
        Ledger(path, SETTINGS)
