"""``--detect D[@BASE]``: the forecast (``--dry-run``) prints the seeds per condition that detect a
difference in success rate, unpaired and paired by seed; a bad value or a run without ``--dry-run``
is refused in one line."""

from __future__ import annotations

import pytest

from runners.concurrent import main as run_main
from runners.dashboard.spending import detection_lines
from runners.flags.spending import detection


def test_the_flags_value():
    assert detection("0.10") == (0.10, 0.5)
    assert detection("0.2@0.3") == (0.2, 0.3)
    for bad in ("ten", "0.1@", "0@0.5", "1.5", "0.6@0.5", "0.1@2"):
        with pytest.raises(ValueError):
            detection(bad)


def test_the_lines_give_both_numbers_and_the_assumption():
    lines = detection_lines(0.10, 0.5, 30)
    assert lines[0] == (
        "Detect 50% against 60% success (10 points) with 80% power, two-sided alpha 0.05. Seeds per condition:"
    )
    assert lines[1] == "  unpaired: 388 (two-proportion z test, pooled normal approximation)"
    assert lines[2].startswith("  paired by seed: 408 at most (McNemar's exact test, the report's), if a seed's outcomes")
    assert "independent (50% of seeds end differently)" in lines[2] and "207 if 25% end differently" in lines[2]
    assert lines[3] == "  this plan: 30 seeds per condition"
    # Rates 0% and 10%: every discordant seed is won under the better condition; nothing to assume.
    forced = detection_lines(0.10, 0.0, 5)[2]
    assert forced.startswith("  paired by seed: 78 (McNemar's exact test") and "as these rates force" in forced


def test_the_forecast_prints_them(tmp_path, capsys):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:
        run_main(["--games", "4", "--out", str(out), "--dry-run", "--detect", "0.10"])
    printed = capsys.readouterr().out
    assert stopped.value.code == 0 and not out.exists()
    assert "Forecast: 4 games" in printed
    assert "unpaired: 388 " in printed and "paired by seed: 408 at most" in printed
    assert "this plan: 4 seeds per condition" in printed


@pytest.mark.parametrize(
    "flags, reason",
    [
        (["--detect", "0.10"], "argument --detect: it sizes a sweep in the forecast; give it with --dry-run"),
        (["--dry-run", "--detect", "0.6@0.5"], "argument --detect: no two success rates 0.6 apart have 0.5 as one of them"),
        (["--dry-run", "--detect", "x"], "argument --detect: expected D or D@BASE"),
    ],
)
def test_refused_in_one_line(tmp_path, capsys, flags, reason):
    with pytest.raises(SystemExit) as stopped:
        run_main(["--games", "4", "--out", str(tmp_path / "run"), *flags])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and reason in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()
