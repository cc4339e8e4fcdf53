"""Report on a run: tables on the terminal and as Markdown, CSV and LaTeX, plots, and one HTML page.

``cli``: the command (``python -m runners.report RUN_DIR``). ``tables``: the tables as text.
``formats``: the output formats. ``plots``: the PNG plots. The numbers are ``engine.analysis``'s.
"""

from runners.report.cli import build_parser, main

__all__ = ["build_parser", "main"]
