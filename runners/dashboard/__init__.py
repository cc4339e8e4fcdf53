"""What a run shows: the live dashboard and status lines (``display``; its content ``content``, laid
out to the terminal by ``layout`` and ``widths``), the table at the end (``final_table``), and
spending (``spending``: the forecast and the cost line)."""

from runners.dashboard.content import Section, counters_section, render_dashboard, score_cell
from runners.dashboard.display import ProgressDisplay, model_line, status_line, wide_console
from runners.dashboard.final_table import SummaryTable

__all__ = [
    "ProgressDisplay", "Section", "counters_section", "model_line", "render_dashboard", "score_cell",
    "status_line", "SummaryTable", "wide_console",
]
