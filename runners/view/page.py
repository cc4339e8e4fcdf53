"""The viewer's one HTML page: the run's data and (in a written file) the details of some games as
JSON blocks, with the hand-written script and style inlined, so the page needs nothing but itself:
no network, no CDN. A game's JSON is parsed only when the game is opened; a served page fetches it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runners.view.index import RunIndex

ASSETS = Path(__file__).parent
DEFAULT_EMBED = 300


_HTML_SENSITIVE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def _json(data: Any) -> str:
    """JSON that can sit in a <script> block whatever its strings hold: no ``<``, ``>`` or ``&`` at
    all (written as JSON escapes, which JSON.parse reads back), so neither ``</script>`` nor
    ``<!--<script`` (which makes the HTML parser read on past the next ``</script>``) can occur."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_HTML_SENSITIVE)


def detail_or_failure(index: RunIndex, game_id: int) -> dict | None:
    """A game's detail; a game the viewer cannot rebuild says why instead of stopping the page."""
    try:
        return index.detail(game_id)
    except Exception as exc:  # noqa: BLE001 - one game's problem is shown with that game
        return {"id": game_id, "failed": f"{type(exc).__name__}: {exc}"}


def page_html(data: dict, details: dict[int, dict | None], served: bool) -> str:
    run = dict(data, served=served, embedded=len(details))
    blocks = "".join(f'<script type="application/json" id="g{gid}">{_json(d)}</script>\n' for gid, d in details.items())
    title = f"run {data['name']}".replace("<", "&lt;").replace("&", "&amp;")
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1"><link rel=icon href="data:,">'
        f"<title>{title}</title><style>{(ASSETS / 'viewer.css').read_text()}</style></head>\n<body>\n"
        '<header id=summary></header><main><section id=list><div id=filters class=filters></div><div id=rows></div></section><section id=game hidden></section></main>\n'
        f'<script type="application/json" id=run>{_json(run)}</script>\n{blocks}'
        f"<script>{(ASSETS / 'viewer.js').read_text()}</script>\n</body></html>\n"
    )


def write_page(index: RunIndex, out: Path, embed: int = DEFAULT_EMBED) -> tuple[int, int]:
    """Write the page of ``index``'s run to ``out`` with the details of its first ``embed`` games by
    id; (games listed, games with details)."""
    index.refresh()
    data = index.data()
    ids = [row[0] for row in data["rows"]][:embed]
    details = {gid: detail_or_failure(index, gid) for gid in ids}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page_html(data, details, served=False), encoding="utf-8")
    return len(data["rows"]), len(details)
