"""``asymgames cache stats|prune``: the response cache's entries counted, the old and the damaged
removed, the rest still answering, the file shrunk by ``--vacuum``."""

from __future__ import annotations

import sqlite3
import time

from asymgames import cli
from engine.backends.cache import FILE_NAME, Entry, ResponseStore

DAY = 24 * 3600


def _kept(folder, count: int, age_days: float, first: int = 0) -> None:
    """``count`` entries kept ``age_days`` ago."""
    store = ResponseStore(folder / FILE_NAME)
    for n in range(first, first + count):
        store.put(n.to_bytes(32, "big"), Entry("x" * 2000, 100, 0, 20))
    store.close()
    db = sqlite3.connect(folder / FILE_NAME, isolation_level=None)
    db.execute("UPDATE replies SET created = ? WHERE key >= ? AND key < ?",
               (time.time() - age_days * DAY, first.to_bytes(32, "big"), (first + count).to_bytes(32, "big")))
    db.close()


def test_prune_removes_old_and_damaged_entries_and_the_rest_still_answer(tmp_path, capsys):
    _kept(tmp_path, 30, age_days=40)
    _kept(tmp_path, 20, age_days=1, first=100)
    db = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    db.execute("UPDATE replies SET crc = crc + 1 WHERE key = ?", ((101).to_bytes(32, "big"),))  # damaged
    db.close()
    assert cli.main(["cache", "stats", "--cache-dir", str(tmp_path)]) == 0
    assert "50 entries" in capsys.readouterr().out
    assert cli.main(["cache", "prune", "--cache-dir", str(tmp_path), "--older-than", "30"]) == 0
    assert "removed 30 old and 1 damaged entries; 19 left" in capsys.readouterr().out
    store = ResponseStore(tmp_path / FILE_NAME, writable=False)
    assert store.get((0).to_bytes(32, "big")) is None and store.get((101).to_bytes(32, "big")) is None
    assert store.get((100).to_bytes(32, "big")) == Entry("x" * 2000, 100, 0, 20)
    store.close()
    assert cli.main(["cache", "prune", "--cache-dir", str(tmp_path), "--older-than", "12h"]) == 0
    assert "removed 19 old and 0 damaged entries; 0 left" in capsys.readouterr().out


def test_vacuum_gives_the_space_back(tmp_path, capsys):
    _kept(tmp_path, 400, age_days=10)
    assert cli.main(["cache", "prune", "--cache-dir", str(tmp_path), "--older-than", "5d"]) == 0
    kept = capsys.readouterr().out
    assert "400 old" in kept
    size = (tmp_path / FILE_NAME).stat().st_size
    assert cli.main(["cache", "prune", "--cache-dir", str(tmp_path), "--vacuum"]) == 0
    assert "0 left" in capsys.readouterr().out
    assert (tmp_path / FILE_NAME).stat().st_size < size / 10


def test_no_cache_yet(tmp_path, capsys):
    assert cli.main(["cache", "stats", "--cache-dir", str(tmp_path)]) == 0
    assert "0 entries" in capsys.readouterr().out
    assert cli.main(["cache", "prune", "--cache-dir", str(tmp_path), "--older-than", "1"]) == 0
    assert "nothing to prune" in capsys.readouterr().out
    assert not (tmp_path / FILE_NAME).exists()
