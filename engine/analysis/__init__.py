"""The numbers of a run's report, as pure functions over game records, whatever the game.

Conventions used throughout:

- A *condition* is a set of games with equal ``spec.condition_fields()``. The fields are named as
  there (game, the game's own labels, feedback, T, h, one field per role, extensions), plus
  ``agents``: the roles' policies in one label ("X" when every role plays X, else "X / Y").
- Games that ended in an error say nothing about the agents: an infrastructure error
  (``error.kind == "infra_error"``, such as a failed API call) or any other game error is counted
  apart and left out of every rate, as in the runners' summary. A model's bad output is not a game
  error: it is a format error inside a scored game.
- Scores and behaviour measures (sizes per turn) use the games that ended without any error, since
  a game cut short by an error has an incomplete log.

- ``stats``: success and scores per condition with their intervals. ``reading``: the results file. ``conditions``: fields, their order, the table layout.
  ``measures``: success, scores, sizes, errors, model calls and cost. ``paired``: two values of a field compared by seed.
  ``seats``: the games with a person in a seat, with the game's human-study scores and the turns they took.
"""

from engine.analysis.conditions import (
    AGENTS, Group, Layout, ReportError, ValueOrder, agents_label, condition_fields, field_names, field_values,
    group_by, label_fields, layout, observed_values, roles_of, size_field,
)
from engine.analysis.seats import HumanRow, StudyColumn, has_human, human_seats
from engine.analysis.measures import (
    SIZE_UNITS, ErrorsRow, ScoresRow, SizesRow, SuccessCell, SuccessSeries, SuccessTable, TurnCurve, TurnSizes,
    UsageRow, completed, error_counts, score_keys, scores_per_condition, size_units, sizes_per_turn,
    success_by_turn, success_cell, success_series, success_table, usage_per_condition,
)
from engine.analysis.paired import PairedComparison, PairedRow, paired_comparison, paired_difference_interval
from engine.analysis.reading import Results, read_results

__all__ = [
    "AGENTS", "SIZE_UNITS", "ErrorsRow", "Group", "HumanRow", "Layout", "PairedComparison", "PairedRow",
    "ReportError", "Results", "ScoresRow", "SizesRow", "StudyColumn", "SuccessCell", "SuccessSeries", "SuccessTable",
    "TurnCurve", "TurnSizes", "UsageRow", "ValueOrder", "agents_label", "completed", "condition_fields", "error_counts",
    "field_names", "field_values", "group_by", "has_human", "human_seats", "label_fields", "layout", "observed_values",
    "paired_comparison", "paired_difference_interval", "read_results", "roles_of", "score_keys",
    "scores_per_condition", "size_field", "size_units", "sizes_per_turn", "success_by_turn", "success_cell",
    "success_series", "success_table", "usage_per_condition",
]
