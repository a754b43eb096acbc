"""One table, defined once, rendered four ways: the sections' table functions build a ``Table`` whose HTML,
Markdown, terminal and LaTeX renderings show the same columns and the same figures; the paper set renders the
sections' own tables (a column added to a section's table appears in every output)."""

from __future__ import annotations

import pickle
import re
from html import escape

from metaeval.report.model import Config, Est, Ident, Method, Num, Paper, PlusMinus, Span, Table
from metaeval.report.render_html import _table as html_table
from metaeval.report.render_latex import Names, interval, num, render, tex_cell
from metaeval.report.render_md import _table as md_table
from metaeval.report.render_text import text_table

DATA = {"metric": "v_strict", "provenance": {"dataset": {"name": "x", "topics": 7, "runs": 2}},
        "usage": [{"cell": "lex__human_auto", "judge": "lex", "prompt": "none", "strategy": "human_auto"},
                  {"cell": "gpt__v1__auto_auto", "judge": "gpt-4o", "prompt": "v1", "strategy": "auto_auto"}],
        "tau": [{"cell": c, "metric": "v_strict", "level": lv, "tau": t, "ci_low": t - 0.31, "ci_high": t + 0.12}
                for c, t in (("lex__human_auto", 0.5), ("gpt__v1__auto_auto", -0.25))
                for lv in ("run", "topic_avg", "pooled")]}


def _spec() -> Table:
    rows = [[Config("lex__human_auto"), Ident("run_a"), Est(-0.2291, [-0.28, -0.18], signed=True), Num(0.8123, 2),
             PlusMinus({"mean": 0.1067, "se": 0.0235}, tex_digits=3), Method("PPI++", "ppi_pp", shown=True),
             Span(1, 3)],
            [Config("gpt__v1__auto_auto"), Ident("run_b"), Est(0.05, [-0.01, 0.11], signed=True), Num(None),
             PlusMinus(None), Method("raw", "raw"), Span(2, 2)]]
    return Table(["cell", "run", "bias [95% CI]", "kappa", "MAE ± SE", "method", "rank-set"], rows, "a table",
                 [False, False, True, True, True, False, True], tex_columns=["", "", "bias", "$\\kappa$", "MAE", "", ""],
                 paper=Paper("t", "cap"))


def _cells(t: Table) -> list[str]:
    return [str(c) for r in t.rows for c in r]


def test_one_spec_shows_the_same_columns_and_values_in_html_markdown_terminal_and_latex():
    t = _spec()
    html, md, text = html_table(t), "\n".join(md_table(t)), text_table(t, width=200)
    tex = render(t, Names(DATA))
    for col in t.columns:
        assert f"<th>{col}</th>" in html and f" {col} " in md and col.split()[0] in text
    for col in ("bias", "$\\kappa$", "MAE", "method", "rank-set", "judge", "prompt", "nuggets"):
        assert col in tex.split("\\midrule")[0], col  # the configuration column is judge / prompt / nuggets
    for cell in _cells(t):  # every figure in every rendering: the text three ways, its LaTeX form in the paper
        assert cell in md and cell in text and escape(cell) in html, cell
    assert "$-$0.229\\\\" in tex and "[$-$0.28, $-$0.18]" in tex and "+0.050" in tex and "0.81" in tex
    assert "0.107" in tex and "$\\pm$ 0.024" in tex and "\\textbf{PPI++}" in tex and "1--3" in tex
    assert "lex & -- & human" in tex and "gpt-\\allowbreak{}4o & v1 & judge's own" in tex and "lex__human" not in tex
    # the same numbers: the LaTeX is the text with the minus sign typeset (and the paper's own digits)
    assert tex_cell(Est(-0.2291, [-0.28, -0.18], signed=True), stacked=False) == "$-$0.229 [$-$0.28, $-$0.18]"
    assert num(-0.5) == "$-$0.500" and interval(None, 1) == ""


def test_report_only_and_paper_only_columns_and_rows():
    t = _spec()
    t.where = ["", "", "", "report", "paper", "", ""]
    t.report_rows, t.paper.rows = [1], [1, 0]
    shown = t.shown()
    assert "MAE ± SE" not in shown.columns and "kappa" in shown.columns and len(shown.rows) == 1
    md, tex = "\n".join(md_table(t)), render(t, Names(DATA))
    assert "MAE" not in md and "run_a" not in md and "0.81" not in tex and "$\\kappa$" not in tex
    assert tex.index("run\\_\\allowbreak{}b") < tex.index("run\\_\\allowbreak{}a")  # the paper's own order


def test_a_column_added_to_a_sections_table_appears_in_every_renderer():
    from metaeval.report.latex import _Paper
    from metaeval.report.ranking_section import tau_table

    def with_column(t: Table) -> Table:
        t.columns.append("topics")
        t.numeric.append(True)
        t.tex_columns.append("")
        t.where.append("")
        for r, n in zip(t.rows, ("41", "37")):
            r.append(Num(int(n), 0))
        return t

    names = Names(DATA)
    section = with_column(tau_table(DATA["tau"], "v_strict", ["lex__human_auto", "gpt__v1__auto_auto"], names))
    md, tex = "\n".join(md_table(section)), render(section, names)
    assert "| topics |" in md and "topics" in tex.split("\\midrule")[0]
    assert all(n in md and n in tex and n in html_table(section) for n in ("41", "37"))
    # and the paper set renders exactly that function's table: the same header and values as the report's
    paper = _Paper(DATA)
    tau = paper.tables()["tau"]
    assert tau.columns == tau_table(DATA["tau"], "v_strict", list(names.cells)).columns
    assert _cells(tau.shown()) == _cells(tau_table(DATA["tau"], "v_strict", list(names.cells)).shown())
    tex = paper.all()["tau"]
    for c in _cells(tau)[1:]:
        if c != "lex__human_auto" and c != "gpt__v1__auto_auto":
            e, i = re.match(r"(\S+) (\[.*\])", c).groups()
            assert e.replace("-", "$-$") in tex and i.replace("-", "$-$") in tex, c


def test_cells_are_strings_that_survive_a_copy():
    e = Est(0.5, [0.1, 0.9], signed=True)
    back = pickle.loads(pickle.dumps(e))
    assert back == "+0.500 [0.10, 0.90]" and type(back) is Est and back.lo == 0.1
    assert str(Method("ppi", shown=True)) == "ppi (shown)" and str(Span(4, 4)) == "4" and str(Num(None)) == "-"
    assert str(PlusMinus({"mean": -0.01, "se": 0.002}, signed=True)) == "-0.0100 ± 0.0020"
