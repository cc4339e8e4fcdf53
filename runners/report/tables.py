"""The report's tables, one function each (success, turns, scores, sizes, errors, model calls, a
paired comparison, and the human seats of ``seats``), and the list of them a report prints.

Each takes a run's totals (``engine.analysis.totals``), or a list of records, folded first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.analysis import (
    Source, condition_fields, error_counts, paired_comparison, roles_of, score_keys, scores_per_condition, size_units,
    sizes_per_turn, success_by_turn, success_table, totals_of, usage_per_condition,
)
from runners.report.cells import (
    MEAN_INTERVAL, UNIT_NAMES, Table, condition_columns, fixed_note, frac, full_values, key_label, label_cells,
    label_columns, num, p_csv, p_text, pct, score_cell, score_labels, score_notes,
)
from runners.report.seats import humans_table

# ---------------------------------------------------------------------------------------------
# The tables


def success_main(run: Source, rows: Sequence[str]) -> Table:
    run = totals_of(run)
    table = success_table(run, rows)
    frame = table.layout
    header = list(frame.rows) + [key_label(frame.columns, c) if frame.columns else "success %" for c in table.column_keys]
    body = []
    for row in table.row_keys:
        cells = [table.cell(row, column) for column in table.column_keys]
        body.append(list(row) + ["" if c is None else "- (0)" if c.n == 0 else f"{pct(c.rate)} [{pct(c.low)}-{pct(c.high)}] ({c.n})" for c in cells])
    by = " x ".join(frame.rows) + (f" x {', '.join(frame.columns)}" if frame.columns else "")
    note = (
        "Cells: success % [Wilson 95% interval] (n = games that ended without a game error; "
        "those are counted in the errors table). " + fixed_note(run)
    )
    keys = list(frame.rows) + list(frame.columns)
    full = full_values(run, keys)
    extra = [i for i, f in enumerate(keys) if f not in condition_columns(run)]  # such as agents
    csv_header = [keys[i] for i in extra] + condition_columns(run)
    csv_header += ["games", "errors", "n", "successes", "success_rate", "ci_low", "ci_high"]
    csv_rows = [
        [(row + column)[i] for i in extra] + full[row + column]
        + [cell.games, cell.errors, cell.n, cell.successes, frac(cell.rate), frac(cell.low), frac(cell.high)]
        for (row, column), cell in table.cells.items()
    ]
    return Table("success", f"Success rate by {by}", header, body, len(frame.rows), note.strip(), csv_header, csv_rows)


def success_turns(run: Source, fields: Sequence[str]) -> Table:
    run = totals_of(run)
    curves = success_by_turn(run, fields)
    max_turn = len(curves[0].solved_by) if curves else 0
    header = label_columns(fields) + ["n"] + [f"K={k}" for k in range(1, max_turn + 1)]
    rows = [label_cells(fields, c.key) + [str(c.n)] + [pct(r) for r in c.rates] for c in curves]
    full = full_values(run, fields)
    csv_rows = [
        full[c.key] + [c.n, k, solved, frac(solved / c.n if c.n else None)]
        for c in curves
        for k, solved in enumerate(c.solved_by, start=1)
    ]
    note = "Success % within K turns: games solved at turn K or earlier, over games that ended without a game error."
    return Table(
        "success_by_turn", "Success rate at turn K", header, rows, len(label_columns(fields)), note,
        condition_columns(run) + ["n", "K", "solved", "success_rate"], csv_rows, thin_from=len(label_columns(fields)) + 1,
    )


def scores_table(run: Source, fields: Sequence[str]) -> Table | None:
    """Every score the games give, per condition; None when no game gives any."""
    run = totals_of(run)
    kinds = score_keys(run)
    if not kinds:
        return None
    labels = score_labels(run)
    data = scores_per_condition(run, fields)
    header = label_columns(fields) + ["n"] + [labels[k] + (" %" if kinds[k] == "rate" else "") for k in kinds]
    rows = [label_cells(fields, r.key) + [str(r.n)] + [score_cell(r.scores.get(k), r.n) for k in kinds] for r in data]
    full = full_values(run, fields)
    csv_rows = [
        full[r.key] + [key, labels[key], s.kind, s.n, frac(s.value), frac(s.low), frac(s.high)]
        for r in data
        for key in kinds
        if (s := r.scores.get(key)) is not None
    ]
    note = (
        "The game's scores over the games that ended without error (n): yes/no scores as % of games "
        f"[Wilson 95% interval], numeric scores as mean [{MEAN_INTERVAL}]. A count in parentheses: the "
        "games that gave the score, where fewer than n. " + score_notes(run, kinds)
    ).strip()
    return Table(
        "scores", "Scores, per condition", header, rows, len(label_columns(fields)), note,
        condition_columns(run) + ["score", "label", "kind", "n", "value", "low", "high"], csv_rows,
    )


def sizes_table(run: Source, fields: Sequence[str], unit: str) -> Table:
    run = totals_of(run)
    roles = roles_of(run)
    name = UNIT_NAMES.get(unit, unit)
    data = sizes_per_turn(run, fields, unit)
    header = label_columns(fields) + ["n"]
    for role in roles:
        header += [f"{role} reply {unit}", f"{role} message {unit}", f"{role} message/reply %"]
    rows = []
    for r in data:
        cells = label_cells(fields, r.key) + [str(r.n)]
        for role in roles:
            s = r.roles[role]
            cells += [num(s.reply, 1), num(s.message, 1), pct(s.share)]
        rows.append(cells)
    full = full_values(run, fields)
    csv_rows = [
        full[r.key] + [r.n, role, r.roles[role].turns, frac(r.roles[role].reply), frac(r.roles[role].message), frac(r.roles[role].share)]
        for r in data
        for role in roles
    ]
    note = (
        f"Mean {name} per turn of each agent's whole reply and of its message alone, pooled over the turns; "
        f"message/reply % = mean message / mean reply x 100. n = games that ended without error."
    )
    return Table(
        f"{unit}_per_turn", f"Output per turn, in {name}", header, rows, len(label_columns(fields)), note,
        condition_columns(run) + ["n", "role", "turns", f"mean_reply_{unit}", f"mean_message_{unit}", "message_share"],
        csv_rows,
    )


def errors_table(run: Source, fields: Sequence[str]) -> Table:
    run = totals_of(run)
    roles = roles_of(run)
    data = error_counts(run, fields)
    cut = [role for role in roles if any(r.cut_replies[role] for r in data)]  # shown where the token limit cut a reply
    header = (
        label_columns(fields) + ["games"] + [f"format errors {role}" for role in roles] + [f"cut replies {role}" for role in cut]
        + [f"invalid actions {role}" for role in roles] + ["infra errors", "other errors"]
    )
    rows = []
    for r in data:
        kinds = ", ".join(f"{k} {v}" for k, v in r.other_kinds.items())
        rows.append(
            label_cells(fields, r.key) + [str(r.games)] + [str(r.format_errors[role]) for role in roles]
            + [str(r.cut_replies[role]) for role in cut] + [str(r.invalid_actions[role]) for role in roles]
            + [str(r.infra_errors), f"{r.other_errors} ({kinds})" if kinds else str(r.other_errors)]
        )
    full = full_values(run, fields)
    csv_rows = [
        full[r.key] + [r.games] + [r.format_errors[role] for role in roles] + [r.cut_replies[role] for role in cut]
        + [r.invalid_actions[role] for role in roles]
        + [r.infra_errors, r.other_errors, ";".join(f"{k}:{v}" for k, v in r.other_kinds.items())]
        for r in data
    ]
    note = (
        "Format errors and invalid actions: totals over the games. Cut replies (where there are any): replies "
        "the run's token limit (--max-tokens) cut and that could not be read, the run's doing, not in the format "
        "errors. Infra errors: games lost to the infrastructure. Other errors: games that ended in any other "
        "error. Both are left out of every rate."
    )
    return Table(
        "errors", "Errors", header, rows, len(label_columns(fields)), note,
        condition_columns(run) + ["games"] + [f"format_errors_{role}" for role in roles] + [f"cut_replies_{role}" for role in cut]
        + [f"invalid_actions_{role}" for role in roles] + ["infra_errors", "other_errors", "other_error_kinds"],
        csv_rows,
    )


def usage_table(run: Source, fields: Sequence[str]) -> Table | None:
    run = totals_of(run)
    data = usage_per_condition(run, fields)
    if not data:
        return None
    money = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    header = label_columns(fields) + ["games", "calls", "prompt tokens", "reply tokens", "cost $", "$ per game", "$ per success"]
    rows = [
        label_cells(fields, r.key) + [
            str(r.games), str(r.calls), f"{r.prompt_tokens:,}", f"{r.completion_tokens:,}", money(r.cost),
            money(r.cost / r.games if r.cost is not None and r.games else None), money(r.cost_per_success),
        ]
        for r in data
    ]
    full = full_values(run, fields)
    csv_rows = [
        full[r.key] + [r.games, r.calls, r.prompt_tokens, r.completion_tokens, "" if r.cost is None else round(r.cost, 6)]
        for r in data
    ]
    note = "Every game's model calls, games that ended in an error included (they were paid for). Cost: - when a model has no price."
    return Table(
        "usage", "Model calls and cost", header, rows, len(label_columns(fields)), note,
        condition_columns(run) + ["games", "calls", "prompt_tokens", "completion_tokens", "cost_usd"], csv_rows,
    )


def signed_pp(x: float) -> str:
    return f"{100 * x:+.1f}"


def paired_table(run: Source, compare_field: str, a: str, b: str) -> Table:
    run = totals_of(run, compare=(compare_field, a, b))
    comparison = paired_comparison(run, compare_field, a, b)
    fields = comparison.fields
    label_a, label_b = f"{compare_field}={a}", f"{compare_field}={b}"
    header = label_columns(fields) + [
        "pairs", f"success % {label_a}", f"success % {label_b}", f"{b} - {a} (points)", "95% interval",
        f"{a} only / {b} only", "McNemar p", "unpaired",
    ]
    rows, csv_rows = [], []
    for r in comparison.rows:
        if r.pairs:
            diff, interval, p = signed_pp(r.difference), f"[{signed_pp(r.low)}, {signed_pp(r.high)}]", p_text(r.p_value)
        else:
            diff, interval, p = "-", "-", "-"
        rows.append(
            label_cells(fields, r.key)
            + [str(r.pairs), pct(r.rate_a), pct(r.rate_b), diff, interval, f"{r.a_only} / {r.b_only}", p, str(r.unpaired)]
        )
        csv_rows.append(
            list(r.key) + [compare_field, a, b, r.pairs, r.both, r.a_only, r.b_only, r.neither, r.unpaired,
                           frac(r.rate_a), frac(r.rate_b), frac(r.difference if r.pairs else None),
                           frac(r.low if r.pairs else None), frac(r.high if r.pairs else None),
                           p_csv(r.p_value) if r.pairs else ""]
        )
    note = (
        f"Games with {label_a} and with {label_b} paired by seed within each combination of the other fields. "
        f"Difference of success rates {b} - {a} in percentage points, 95% interval by Newcombe's hybrid score "
        "method for paired proportions. McNemar p: McNemar's exact test (two-sided binomial test of the pairs "
        f"won under {a} only against those won under {b} only). Pairs with a game error on either side are left "
        "out (unpaired)."
    )
    return Table(
        "paired", f"Paired comparison: {label_b} against {label_a}", header, rows, len(label_columns(fields)), note,
        list(fields) + ["field", "a", "b", "pairs", "both", "a_only", "b_only", "neither", "unpaired",
                        "success_rate_a", "success_rate_b", "difference", "ci_low", "ci_high", "mcnemar_p"],
        csv_rows,
    )


def build_tables(run: Source, rows: Sequence[str], compare: tuple[str, str, str] | None,
                 names: Mapping[str, str] | None = None) -> list[Table]:
    """The report's tables; ``names``: a study's names of its conditions (the human seats table shows them)."""
    run = totals_of(run, compare=compare)
    fields = condition_fields(run)
    tables = [success_main(run, rows), success_turns(run, fields), scores_table(run, fields), humans_table(run, rows, names)]
    tables += [sizes_table(run, fields, unit) for unit in size_units(run)]
    tables += [errors_table(run, fields), usage_table(run, fields)]
    if compare is not None:
        tables.append(paired_table(run, *compare))
    return [t for t in tables if t is not None]  # a run without scores, people or usage has no such table
