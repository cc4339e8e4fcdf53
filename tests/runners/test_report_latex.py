"""The report's LaTeX is fit for a paper: booktabs rules, tables that fit a page (split by a field
when long, thinned or scaled when wide), en-dash ranges and escaped special characters. No TeX is
installed here, so the structure is checked; where pdflatex is installed, the tables compile."""

import re
import shutil
import subprocess

import pytest

from runners.report.latex import MAX_ROWS, MAX_THINNED, PAGE_CHARS, split_rows, to_latex
from runners.report.cells import Table

OUTER = re.compile(r"\\begin\{tabular\}\{([lr]+)\}(.*?)\\end\{tabular\}\n", re.S)


def outer_tables(tex: str) -> list[tuple[str, list[str], list[str]]]:
    """Each top-level tabular: its column spec, its header line(s) and its body rows."""
    found = []
    for spec, inside in OUTER.findall(tex):
        head, body = inside.split("\\midrule\n")
        rows = [line for line in body.split("\\bottomrule")[0].splitlines() if line.strip()]
        found.append((spec, [line for line in head.replace("\\toprule", "").splitlines() if line.strip()], rows))
    return found


def top_level_cells(row: str) -> list[str]:
    """A row's cells: split at the & outside nested tabulars, not at escaped \\&."""
    cells, depth, current = [], 0, ""
    for token in re.split(r"(\\begin\{tabular\}|\\end\{tabular\}|\\&|&)", row.removesuffix(" \\\\")):
        depth += token == "\\begin{tabular}"
        depth -= token == "\\end{tabular}"
        if token == "&" and depth == 0:
            cells.append(current)
            current = ""
        else:
            current += token
    return cells + [current]


def big_table() -> Table:
    """240 conditions: 4 games x 6 sizes x 10 agent pairs, with special characters in labels."""
    rows = []
    for game in ("g_one", "g_two", "50%", "x&y"):
        for size in (3, 5, 10, 20, 40, 80):
            for pair in range(10):
                low, high = pair * 5.0, pair * 5.0 + 30.1
                rows.append([game, str(size), f"openai:model-{pair} / vllm:org/model-{pair}", f"{pair * 10:.1f} [{low:.1f}-{high:.1f}] (12)"])
    return Table("success", "Success rate by game_name & size", ["game", "N", "agents", "success %"], rows, 3, note="50% of # cells & more_notes")


def test_a_long_table_is_split_by_a_field_into_tables_that_fit_a_page():
    table = big_table()
    tex = to_latex([table])
    tables = outer_tables(tex)
    assert all(len(rows) <= MAX_ROWS for _, _, rows in tables)
    assert sum(len(rows) for _, _, rows in tables) == 240
    # Split by the label with the fewest values (game: 4, N: 6): 60 rows each, then in parts of 30.
    captions = re.findall(r"\\caption\{(.*)\}", tex)
    assert len(captions) == len(tables) == 8
    assert captions[0] == "Success rate by game\\_name \\& size, n = 12 in every cell (game=g\\_one, part 1 of 2)"
    assert any("game=50\\%" in c for c in captions) and any("game=x\\&y" in c for c in captions)
    labels = re.findall(r"\\label\{(.*)\}", tex)
    assert len(set(labels)) == len(labels) == 8
    for spec, _, rows in tables:
        assert len(spec) == 3  # the split column is in the caption, not in the table
        assert all(len(top_level_cells(row)) == len(spec) for row in rows)


def test_booktabs_rules_en_dash_ranges_and_escaping():
    tex = to_latex([big_table()])
    blocks = tex.split("\\begin{table}")[1:]
    for block in blocks:
        assert block.count("\\toprule") == block.count("\\midrule") == block.count("\\bottomrule") == 1
        assert "\\hline" not in block
    assert "[0.0--30.1]" in tex and not re.search(r"\[\d+\.\d-\d", tex)
    assert "\\_" in tex and "50\\%" in tex and "x\\&y" in tex and "\\#" in tex
    assert not re.search(r"(?<!\\)[%#_]", tex.split("\n", 1)[1])  # nothing unescaped after the preamble comment
    # Model names shortened to their shortest unique tails in the labels.
    assert "& openai:model-3 / org/model-3 &" in tex and "vllm:" not in tex
    unescaped = re.sub(r"(?<!\\)\\[{}]", "", tex)
    assert unescaped.count("{") == unescaped.count("}")


def test_wide_tables_are_thinned_or_scaled_to_the_text_width():
    turns = Table("success_by_turn", "Success rate at turn K", ["feedback", "agents", "n"] + [f"K={k}" for k in range(1, 41)],
                  [["own", "share_everything", "20"] + [f"{k:.1f}" for k in range(40)]], 2, thin_from=3)
    tex = to_latex([turns])
    (spec, head, rows), = outer_tables(tex)
    assert len(spec) <= 3 + MAX_THINNED and "K=1 " in head[0] + " " and "K=40" in head[0]
    assert "some K left out" in tex and "\\resizebox{" not in tex
    narrow = Table("t", "narrow", ["a", "b"], [["x", "1"]], 1)
    assert "\\resizebox{" not in to_latex([narrow])
    wide = Table("w", "wide", ["label"] + [f"a long header {i}" for i in range(12)], [["x"] + ["123456.78"] * 12], 1)
    part, = split_rows(wide)
    assert part.width() > PAGE_CHARS and "\\resizebox{\\textwidth}{!}{%" in to_latex([wide])


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_tables_compile(tmp_path):
    body = to_latex([big_table()])
    (tmp_path / "t.tex").write_text(
        "\\documentclass{article}\\usepackage{booktabs}\\usepackage{graphicx}\\begin{document}\n" + body + "\n\\end{document}\n"
    )
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
