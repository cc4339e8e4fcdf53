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
  ``totals``: what a report keeps of a run, per condition, one record at a time (memory set by the conditions, not the games).
  ``measures``: success, scores, sizes, errors, model calls and cost. ``paired``: two values of a field compared by seed.
  ``seats`` (and ``humans``): the games with a person in a seat, with the game's human-study scores and the turns they took.
  ``played``: the analyses that read the games played turn by turn. ``power``: how many seeds a comparison needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Loaded on first use: a run imports ``stats`` alone, a report the rest.
_EXPORTS = {
    "AGENTS": "conditions", "Group": "conditions", "Layout": "conditions", "ReportError": "conditions",
    "ValueOrder": "conditions", "agents_label": "conditions", "condition_fields": "conditions",
    "field_names": "conditions", "field_values": "conditions", "group_by": "conditions",
    "label_fields": "conditions", "layout": "conditions", "observed_values": "conditions",
    "roles_of": "conditions", "size_field": "conditions", "Condition": "conditions", "conditions_of": "conditions",
    "values_of": "conditions", "ConditionTotals": "totals", "RunTotals": "totals", "totals_of": "totals",
    "HumanRow": "seats", "StudyColumn": "seats", "has_human": "seats", "human_seats": "seats",
    "SIZE_UNITS": "measures", "ErrorsRow": "measures", "ScoresRow": "measures", "SizesRow": "measures",
    "SuccessCell": "measures", "SuccessSeries": "measures", "SuccessTable": "measures",
    "TurnCurve": "measures", "TurnSizes": "measures", "UsageRow": "measures", "completed": "measures",
    "error_counts": "measures", "score_keys": "measures", "scores_per_condition": "measures",
    "size_units": "measures", "sizes_per_turn": "measures", "success_by_turn": "measures",
    "success_cell": "measures", "success_series": "measures", "success_table": "measures",
    "usage_per_condition": "measures",
    "PairedComparison": "paired", "PairedRow": "paired", "paired_comparison": "paired",
    "paired_difference_interval": "paired",
    "Results": "reading", "read_results": "reading", "ReadCounts": "reading", "read_totals": "reading",
    "recorded_games": "reading", "ABSENT": "humans", "human_roles": "humans", "is_absent": "humans",
    "RunAnalyses": "played", "run_analyses": "played", "Source": "totals",
    "ConditionSummary": "stats", "ScoreSummary": "stats", "wilson_interval": "stats",
    "ALPHA": "power", "BASE_RATE": "power", "POWER": "power", "compared_rates": "power",
    "independent_discordance": "power", "paired_seeds": "power", "unpaired_seeds": "power",
}

__all__ = [
    "AGENTS", "SIZE_UNITS", "Condition", "ConditionTotals", "ErrorsRow", "Group", "HumanRow", "Layout", "PairedComparison",
    "PairedRow", "ReadCounts", "ReportError", "Results", "RunTotals", "ScoresRow", "SizesRow", "StudyColumn", "SuccessCell", "SuccessSeries", "SuccessTable",
    "TurnCurve", "TurnSizes", "UsageRow", "ValueOrder", "agents_label", "completed", "condition_fields", "error_counts",
    "field_names", "field_values", "group_by", "has_human", "human_seats", "label_fields", "layout", "observed_values",
    "paired_comparison", "paired_difference_interval", "read_results", "roles_of", "score_keys",
    "scores_per_condition", "size_field", "size_units", "sizes_per_turn", "success_by_turn", "success_cell",
    "success_series", "success_table", "usage_per_condition", "conditions_of", "read_totals", "totals_of", "values_of",
    "recorded_games", "ABSENT", "human_roles", "is_absent", "RunAnalyses", "run_analyses", "Source",
    "ConditionSummary", "ScoreSummary", "wilson_interval", "ALPHA", "BASE_RATE", "POWER", "compared_rates",
    "independent_discordance", "paired_seeds", "unpaired_seeds",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"engine.analysis.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
