import importlib.util
import shutil
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


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def pytest_collection_modifyitems(items):
    """A test marked ``browser`` is skipped where Playwright or the OS's Chromium is missing, one marked
    ``terminal`` where tmux is, before any of its fixtures is built."""
    missing = {
        "browser": "pip install playwright" if importlib.util.find_spec("playwright") is None
        else None if Path(CHROMIUM).exists() else "no Chromium (apt-get install chromium)",
        "terminal": None if shutil.which("tmux") else "tmux is not installed",
    }
    for item in items:
        for marker, reason in missing.items():
            if reason and item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="module")
def browser():
    """The OS's Chromium, headless, through Playwright's synchronous API (a Playwright ``Browser``), one
    for a module's tests (marked ``browser``). Playwright keeps an event loop running on this thread
    while it is open: a module whose fixtures play runs has them set up first (``usefixtures``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()
