"""The command line of ``python -m runners.view RUN_DIR``: write the run's viewer page (``RUN_DIR/view.html``), or serve it live."""

from __future__ import annotations

import contextlib
from pathlib import Path

from engine import RunDirError

from runners.args import OneLineParser, integer
from runners.view.index import RunIndex
from runners.view.page import DEFAULT_EMBED, write_page
from runners.view.serve import make_server
from runners.words import counted


PROG = "python -m runners.view"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    parser = OneLineParser(prog=prog, description="Look at a run in the browser: the games, their filters, each game turn by turn.")
    parser.add_argument("run_dir", type=Path, help="the run directory (finished or still running)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="where to write the page (default RUN_DIR/view.html)")
    parser.add_argument("--embed", type=integer(0), default=DEFAULT_EMBED, metavar="N",
                        help=f"games whose turns the written page holds, first by id (default {DEFAULT_EMBED}); every game is listed")
    parser.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead, every game's turns on demand, following a live run")
    parser.add_argument("--port", type=integer(0), default=8000, help="with --serve: the port (default 8000; 0: any free port)")
    args = parser.parse_args(argv)
    try:
        index = RunIndex(args.run_dir)
    except (RunDirError, OSError, ValueError) as exc:
        parser.error(f"argument run_dir: {exc}")
    if args.serve:
        server = make_server(index, args.port)
        print(f"Serving {args.run_dir} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        with server, contextlib.suppress(KeyboardInterrupt):  # leaving closes the server
            server.serve_forever()
        return 0
    out = args.out or args.run_dir / "view.html"
    try:
        listed, embedded = write_page(index, out, args.embed)
    except OSError as exc:
        parser.error(f"argument --out: cannot write {out}: {exc.strerror or exc} (--out FILE writes the page elsewhere; --serve writes nothing)")
    more = f"; the turns of the first {embedded} (--embed N for more, or --serve)" if embedded < listed else ""
    print(f"Wrote {out}: {counted(listed, 'game')}{more}.")
    return 0
