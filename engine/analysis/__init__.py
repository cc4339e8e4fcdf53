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
  ``branches``: a branch run against the run it branches: what each message was worth.
  ``games``: one row per game, with its condition fields and scores (``games.csv``, ``games_df``).
"""

from __future__ import annotations

from engine.lazy import lazy_exports

# Loaded on first use: a run imports ``stats`` alone, a report the rest.
_EXPORTS = {
    "AGENTS": ".conditions", "Group": ".conditions", "Layout": ".conditions", "ReportError": ".conditions",
    "ValueOrder": ".conditions", "agents_label": ".conditions", "condition_fields": ".conditions",
    "field_names": ".conditions", "field_values": ".conditions", "group_by": ".conditions",
    "label_fields": ".conditions", "layout": ".conditions", "observed_values": ".conditions",
    "roles_of": ".conditions", "size_field": ".conditions", "Condition": ".conditions", "conditions_of": ".conditions",
    "values_of": ".conditions", "ConditionTotals": ".totals", "RunTotals": ".totals", "totals_of": ".totals",
    "HumanRow": ".seats", "StudyColumn": ".seats", "has_human": ".seats", "human_seats": ".seats",
    "SIZE_UNITS": ".measures", "ErrorsRow": ".measures", "ScoresRow": ".measures", "SizesRow": ".measures",
    "SuccessCell": ".measures", "SuccessSeries": ".measures", "SuccessTable": ".measures",
    "TurnCurve": ".measures", "TurnSizes": ".measures", "UsageRow": ".measures",
    "error_counts": ".measures", "score_keys": ".measures", "scores_per_condition": ".measures",
    "size_units": ".measures", "sizes_per_turn": ".measures", "success_by_turn": ".measures",
    "success_cell": ".measures", "success_series": ".measures", "success_table": ".measures",
    "usage_per_condition": ".measures",
    "PairedComparison": ".paired", "PairedRow": ".paired", "paired_comparison": ".paired",
    "paired_difference_interval": ".paired",
    "Results": ".reading", "read_results": ".reading", "ReadCounts": ".reading", "read_totals": ".reading",
    "recorded_games": ".reading", "ABSENT": ".humans", "human_roles": ".humans", "is_absent": ".humans",
    "RunAnalyses": ".played", "run_analyses": ".played", "Source": ".totals",
    "GAMES_FILE": ".games", "game_row": ".games", "games_df": ".games", "write_games_csv": ".games",
    "ConditionSummary": ".stats", "ScoreSummary": ".stats", "wilson_interval": ".stats",
    "ALPHA": ".power", "BASE_RATE": ".power", "POWER": ".power", "compared_rates": ".power",
    "independent_discordance": ".power", "paired_seeds": ".power", "unpaired_seeds": ".power",
    "Advantage": ".branches", "BranchReport": ".branches", "BranchRow": ".branches", "Mattered": ".branches",
    "advantages": ".branches", "condition_of": ".branches", "leave_one_out": ".branches", "message_kinds": ".branches",
    "reached": ".branches", "value_of_information": ".branches",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
