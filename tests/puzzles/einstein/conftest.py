"""Every Einstein test plans into its own cache directory, never the user's."""

import pytest

from puzzles.einstein import optima


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_CACHE", str(tmp_path / "cache"))
    optima.forget()
    yield tmp_path / "cache"
    optima.forget()
