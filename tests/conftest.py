import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Caches games keep on disk (planned optima) go to a directory of the test session, never the user's."""
    monkeypatch.setenv("ASYMGAMES_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
