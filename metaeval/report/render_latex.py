"""The report's tables as LaTeX for a paper: :func:`render` typesets one :class:`~metaeval.report.model.Table` (the
same object HTML, Markdown and the terminal render) as a float written by :func:`metaeval.io.latex.latex_table`.

Everything the paper set does differently from the report is here, and only here:

* numbers with a typeset minus sign (``$-$0.012``), intervals in brackets with two decimals under their estimate
  (``Table.paper.stacked``) or beside it, ``mean`` over ``$\\pm$ se`` (:func:`num`, :func:`interval`, :func:`tex_cell`);
* a judge configuration (:class:`~metaeval.report.model.Config`) as its judge, prompt (when any judge has one) and
  nugget-source columns, never the internal cell id (:class:`Names`, from ``report.json``'s ``usage``);
* the shown calibration method in bold, the interval method (when it is another) with a dagger, the rank-sets'
  group letters as superscripts;
* a leaderboard (``layout="board"``) one column wide up to :data:`STACK_MAX_ROWS` rows, a longer one in two halves
  side by side across both columns in ``\\scriptsize`` (45 runs: 23 lines) instead of a page-high float.

Captions (``Table.paper.caption``, at most three lines) cite the keys of the shipped ``metaeval.bib`` with
``\\citep``/``\\citet``; each table's full description (``Table.paper.details``) goes in the folder's README.
"""

from __future__ import annotations

from typing import Any, Mapping

from metaeval.formatting import NA, fixed, interval as fmt_interval
from metaeval.io.latex import latex_table, latex_text, stack
from metaeval.measures import DEFAULT_PRIMARY, find_measure
from metaeval.report.model import Cell, Config, Est, Ident, Method, Num, PlusMinus, Span, Table

#: where a cell's nuggets come from (the judge assigns them to the answers in every judged strategy)
NUGGET_SOURCE = {"auto_auto": "judge's own", "human_auto": "human", "human_judge_importance": "human, judge importance",
                 "human_human": "human (reference)"}
#: up to this many runs a leaderboard is one column wide (each interval below its estimate); a longer one is set in
#: two halves side by side across both columns
STACK_MAX_ROWS = 24
#: above this many letter groups the rank-set table leaves the superscripts out (the caption says so)
LETTERS_MAX = 12
#: BibTeX keys of ``metaeval.bib`` (shipped beside the tables)
CITE_NUGGETS, CITE_PPI, CITE_PPI_PP, CITE_KENDALL = ("pradeep2025greatnuggetrecall", "angelopoulos2023ppi",
                                                     "angelopoulos2023ppipp", "kendall1938tau")
#: the citation of a calibration method's interval, by method key
CITE_METHOD = {"ppi": CITE_PPI, "ppi_pp": CITE_PPI_PP}


def num(x: Any, digits: int = 3, signed: bool = False) -> str:
    """A number as LaTeX: :func:`metaeval.formatting.fixed` (``n/a`` when missing) with the minus sign typeset
    (``$-$``)."""
    return fixed(x, digits, signed=signed, missing=NA).replace("-", "$-$")


def interval(lo: Any, hi: Any, digits: int = 2, signed: bool = False) -> str:
    """``[lo, hi]`` as LaTeX (:func:`metaeval.formatting.interval`, the minus sign typeset); ``""`` when a bound is
    missing."""
    return fmt_interval([lo, hi], digits, signed=signed).replace("-", "$-$")


def tex_cell(c: Any, stacked: bool = True) -> str:
    """One cell as LaTeX: a :class:`~metaeval.report.model.Cell` from its figures, plain text escaped."""
    if isinstance(c, Cell) and c.tex:
        return c.tex
    if isinstance(c, Est):
        e, i = num(c.x, c.tex_digits, c.signed), interval(c.lo, c.hi, c.tex_ci_digits, c.ci_signed)
        if e == "n/a" or not i:
            return e
        return stack(e, i) if stacked else f"{e} {i}"
    if isinstance(c, PlusMinus):
        if c.mean is None:
            return "n/a"
        e = num(c.mean, c.tex_digits, c.signed)
        if c.se is None:
            return e
        se = f"$\\pm$ {num(c.se, c.tex_digits)}"
        return stack(e, se) if stacked else f"{e} {se}"
    if isinstance(c, Num):
        sup = f"$^{{\\mathrm{{{c.sup}}}}}$" if c.sup else ""
        return num(c.x, c.tex_digits, c.signed) + ("" if num(c.x) == "n/a" else sup)
    if isinstance(c, Method):
        name = latex_text(c.name)
        return f"\\textbf{{{name}}}" if c.shown else name + ("$^\\dagger$" if c.intervals else "")
    if isinstance(c, Span):
        return str(c.lo) if c.lo == c.hi else f"{c.lo}--{c.hi}"
    if isinstance(c, Ident):
        return latex_text(c, breakable=True)
    return latex_text(c)


class Names:
    """How the paper names things, from a report's data (``report.json``): the metric (as typeset: V with subscript
    strict), the dataset, and each judge configuration by judge, prompt (when any judge has one) and where its
    nuggets come from."""

    def __init__(self, data: Mapping[str, Any]):
        self.metric = str(data.get("metric") or DEFAULT_PRIMARY)  # report.json records the metric it rendered
        known = find_measure(self.metric)
        self.metric_tex = known.latex if known is not None else latex_text(self.metric)
        self.metric_plain = getattr(known, "display", None) or self.metric
        self.cells = {r["cell"]: r for r in data.get("usage") or []}
        self.prompts = any((r.get("prompt") or "none") != "none" for r in self.cells.values())
        prov = data.get("provenance")  # the report's provenance section (absent from a partial report's data)
        ds: Mapping[str, Any] = prov["dataset"] if prov else {}
        config = prov.get("config") if prov else None  # the composed configuration, as the study echoed it
        composed = config.get("dataset") if isinstance(config, Mapping) else None  # its dataset group
        name = (composed.get("name") if isinstance(composed, Mapping) else None) or ds.get("name") or "the dataset"
        self.data_plain = f"{name} ({ds.get('topics', '?')} topics, {ds.get('runs', '?')} runs"
        self.data_plain += "; synthetic data)" if data.get("synthetic") else ")"
        self.data_phrase = latex_text(self.data_plain)

    def _usage(self, cell: str) -> Mapping[str, Any]:
        """The cell's row of the report's usage table (none for a cell it does not list: named by its id)."""
        return self.cells[cell] if cell in self.cells else {}

    def head(self) -> list[str]:
        """The header of a configuration's name columns."""
        return ["judge"] + (["prompt"] if self.prompts else []) + ["nuggets"]

    def columns(self, c: Config) -> list[str]:
        """judge, [prompt,] nuggets - the readable parts of a cell id (the reference: ``human (reference)``)."""
        if c.reference:
            return ["human (reference)"] + [""] * (len(self.head()) - 1)
        r = self._usage(str(c))
        cols = [latex_text(r.get("judge") or str(c), breakable=True)]
        if self.prompts:
            p = r.get("prompt") or "none"
            cols.append("--" if p == "none" else latex_text(p, breakable=True))
        s = r.get("strategy") or ""
        return cols + [latex_text(NUGGET_SOURCE.get(s, s))]

    def plain(self, cell: str) -> str:
        """A configuration in words: ``judge lexical, prompt v1, human nuggets``."""
        r = self._usage(cell)
        s = NUGGET_SOURCE.get(r.get("strategy") or "", r.get("strategy") or "")
        p = r.get("prompt") or "none"
        return f"judge {r.get('judge') or cell}" + ("" if p == "none" else f", prompt {p}") + f", {s} nuggets"

    def phrase(self, cell: str) -> str:
        return latex_text(self.plain(cell))


def render(t: Table, names: Names | None = None) -> str:
    """``t`` as a LaTeX float (its paper columns and rows, :meth:`Table.view`); ``names`` for its configurations.

    Numeric columns are right-aligned, a configuration column becomes its name columns; a ``board`` longer than
    :data:`STACK_MAX_ROWS` rows is set in two halves side by side (first half on the left) in ``\\scriptsize``.
    """
    import pandas as pd

    p = t.paper
    if p is None:
        raise ValueError(f"table {t.caption!r} is not a paper table")
    cols, order = t.view("paper")
    head: list[str] = []
    numeric: list[bool] = []
    for i in cols:
        if any(isinstance(t.rows[r][i], Config) for r in order):
            if names is None:
                raise ValueError(f"{p.name}: judge configurations need the report's names")
            head += names.head()
            numeric += [False] * len(names.head())
        else:
            head.append(t.tex_columns[i] or latex_text(t.columns[i]))
            numeric.append(t.numeric[i])
    rows = []
    for r in order:
        line: list[str] = []
        for i in cols:
            c = t.rows[r][i]
            line += names.columns(c) if isinstance(c, Config) and names is not None else [tex_cell(c, p.stacked)]
        rows.append(line)
    kw: dict[str, Any] = {}
    if p.layout == "column" or (p.layout == "board" and len(rows) <= STACK_MAX_ROWS):
        kw["wide"] = False
    elif p.layout == "board":
        half = (len(rows) + 1) // 2
        left, right = rows[:half], rows[half:] + [[""] * len(head)] * (2 * half - len(rows))
        head, numeric, rows = head + head, numeric + numeric, [a + b for a, b in zip(left, right)]
        kw.update(wide=True, size="\\scriptsize")
    return latex_table(pd.DataFrame(rows, columns=head), numeric=numeric, caption=p.caption,
                       label=f"tab:metaeval-{p.name}", **kw)


def details(t: Table) -> str:
    """The README's description of ``t`` (a board set in two halves says which ranks are where)."""
    p = t.paper
    if p is None:
        return ""
    n = len(t.view("paper")[1])
    if p.layout == "board" and n > STACK_MAX_ROWS and p.details:
        half = (n + 1) // 2
        return p.details + f" Set in two halves side by side: ranks 1-{half} on the left, {half + 1}-{n} on the right."
    return p.details
