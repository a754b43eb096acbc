"""The sweep's terminal table (``fit_table``): the Markdown's columns aligned to the terminal's width, numbers never
cut, names shortened only with an ellipsis and given in full in a legend, text wrapped at spaces."""

from __future__ import annotations

import re

from metaeval.report.render_text import ELLIPSIS, fit_table, shorten
from metaeval.study.summary import SUMMARY_COLUMNS, SUMMARY_NUMERIC

CELLS = ["lexical__auto_auto", "lexical_strict__human_auto", "simulated_fig6__human_auto"]
ROWS = [[c, "152", "0", "1721", "0 (0.0%)", "0.0000", "0.857 [0.67, 1.00]", "0.738 [0.61, 0.84]",
         "0.594 [0.44, 0.74]", "raw kept (unstable: methods within noise); MAE raw 0.107, ppi_pp 0.096; "
         "intervals by ppi_pp"] for c in CELLS]


def _table(width: int) -> str:
    return fit_table(list(SUMMARY_COLUMNS), [list(r) for r in ROWS], list(SUMMARY_NUMERIC), width)


def test_a_wide_terminal_gets_one_block_with_the_full_names():
    out = _table(260)
    lines = out.splitlines()
    assert all(len(ln) <= 260 for ln in lines)
    assert ELLIPSIS not in out and "names shortened" not in out
    assert sum(1 for ln in lines if ln.startswith("cell")) == 1  # one header line, one block
    for c in CELLS:
        row = next(ln for ln in lines if ln.startswith(c))
        # numbers right-aligned in their column, each whole on the row
        assert "0.857 [0.67, 1.00]   0.738 [0.61, 0.84]   0.594 [0.44, 0.74]" in row and " 1721 " in row


def test_narrow_terminals_keep_every_number_whole_and_explain_every_shortened_name():
    for width in (120, 100, 80, 60):
        out = _table(width)
        lines = out.splitlines()
        assert all(len(ln) <= width for ln in lines), (width, max(lines, key=len))
        body = "\n".join(lines)
        for number in ("0.857 [0.67, 1.00]", "0.738 [0.61, 0.84]", "0.594 [0.44, 0.74]", "0 (0.0%)", "0.0000",
                       "1721", "0.107", "0.096"):
            assert body.count(number) >= len(CELLS), (width, number)  # never cut, never wrapped inside
        words = set(re.findall(r"\S+", ROWS[0][9]))
        for w in words:  # the text column wraps at spaces, never inside a word
            assert w in body.split() or any(w in ln for ln in lines), (width, w)
        legend = {}
        if "names shortened" in out:
            for ln in lines[lines.index(f"names shortened ({ELLIPSIS}):") + 1:]:
                short, full = ln.strip().split(" = ")
                legend[short] = full
        for c in CELLS:  # a row name is the cell or, shortened with an ellipsis, in the legend
            shown = {ln.split()[0] for ln in lines if ln.split() and (ln.split()[0] == c or ELLIPSIS in ln.split()[0])}
            assert c in shown or c in legend.values(), (width, c)
        for short, full in legend.items():
            head, tail = short.split(ELLIPSIS)
            assert full.startswith(head) and full.endswith(tail) and len(short) < len(full)


def test_a_skipped_cell_is_a_line_under_the_table_not_a_row_of_blanks():
    rows = [list(r) for r in ROWS] + [["embedding__auto_auto", "skipped: no torch"] + [""] * 8]
    out = fit_table(list(SUMMARY_COLUMNS), rows, list(SUMMARY_NUMERIC), 100)
    assert "embedding__auto_auto: skipped: no torch" in out.splitlines()


def test_shortened_names_stay_unique():
    names = ["judge_a_prompt_v1__human_auto", "judge_a_prompt_v2__human_auto", "judge_a_prompt_v3__human_auto"]
    got = shorten(names, 16)
    assert len(set(got.values())) == 3 and all(len(s) == 16 and ELLIPSIS in s for s in got.values())


def test_a_shortened_name_keeps_the_part_where_the_names_differ():
    """Issue 32's prompt grid: the two cells differ only in the prompt; shortened at the sweep table's 25 columns the
    cut went through the middle and both rows read ``testserver__…__human_auto`` / ``testserver__v…_human_auto``."""
    names = ["testserver__v1__human_auto", "testserver__v2_json__human_auto"]
    got = shorten(names, 25)
    assert got == {"testserver__v1__human_auto": "testserver…v1__human_auto",
                   "testserver__v2_json__human_auto": "tests…v2_json__human_auto"}
    got = shorten(["judge_a_prompt_v1__human_auto", "judge_a_prompt_v2__human_auto"], 16)
    assert sorted(got.values()) == ["j…v1__human_auto", "j…v2__human_auto"]
    # no common word to cut into: the middle, as before
    assert shorten(["lexical_strict__human_auto", "simulated_fig6__human_auto"], 25) == {
        "lexical_strict__human_auto": "lexical_stri…__human_auto",
        "simulated_fig6__human_auto": "simulated_fi…__human_auto"}
    # a column of one name (compare's A column beside B = testserver__v2_json__human_auto): its first word is cut
    assert shorten(["testserver__v1__human_auto"] * 3, 25) == {"testserver__v1__human_auto": "testserver…v1__human_auto"}
    assert shorten(["testserver__v1__human_auto"], 20) == {"testserver__v1__human_auto": "tests…v1__human_auto"}
    out = fit_table(list(SUMMARY_COLUMNS), [[n] + ROWS[0][1:] for n in names], list(SUMMARY_NUMERIC), 100)
    rows = [ln.split()[0] for ln in out.splitlines() if ln.startswith("test")]
    assert any("v1" in r for r in rows) and any("v2_json" in r for r in rows), out


def test_the_reports_page_shows_the_short_forms_shorten_gives():
    """docs/reports.md says where the cut goes and quotes two short forms: they are what :func:`shorten` gives."""
    from pathlib import Path

    page = " ".join((Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text().split())
    got = shorten(["testserver__v1__human_auto", "testserver__v2_json__human_auto"], 25)
    assert f"`{got['testserver__v1__human_auto']}`, `{got['testserver__v2_json__human_auto']}`" in page
    assert "ellipsis in the middle and listed" not in page
