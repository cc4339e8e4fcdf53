"""The built site opened from disk (file://, no server), as the docs offer: its search works. In a
module of its own: the browser's event loop stays open through the module's tests."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_docs import site  # noqa: F401 - the site, built with mkdocs build --strict


@pytest.mark.browser
@pytest.mark.slow
def test_search_works_on_the_site_opened_from_disk(site, browser):  # noqa: F811 - the fixture imported above
    """The site opened as files (file://, no server), as the docs offer: a search finds pages, and the
    page fetches nothing from the network (the worker's shim is the site's own)."""
    assert not re.search(r'<script[^>]+src="https?:', (site / "index.html").read_text())
    page = browser.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    try:
        page.goto((site / "index.html").as_uri())
        page.locator(".md-search__input").fill("einstein")
        page.wait_for_selector(".md-search-result__item", timeout=30_000)
        assert page.locator(".md-search-result__item").count() >= 3
        assert re.match(r"\d+ matching documents", page.locator(".md-search-result__meta").inner_text())
    finally:
        page.close()
    assert [url for url in asked if not url.startswith(("file:", "data:", "blob:", "about:"))] == []
