"""The report's document model: sections made of paragraphs, tables and figures, rendered three ways."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

# table cells, estimates with their interval and p-values are formatted by metaeval.formatting (re-exported here
# under the report's short names)
from metaeval.formatting import cell as fmt, estimate_interval as fmt_ci, p_text  # noqa: F401
from metaeval.formatting import NA, fixed, interval, is_missing, mean_se
from metaeval.study.records import MeanSE


class Cell(str):
    """A table cell that keeps the figures behind its text.

    The string itself is what HTML, Markdown and the terminal print; the attributes are the raw values, so that the
    LaTeX renderer (:func:`metaeval.report.render_latex.tex_cell`) typesets the same figure its own way (``$-$``,
    the interval below the estimate, bold, superscripts).  A plain ``str`` cell is text (escaped for LaTeX);
    ``tex`` (when not empty) is that cell's LaTeX as it is.
    """

    tex: str = ""

    def __new__(cls, text: str, tex: str = ""):
        self = super().__new__(cls, text)
        self.tex = tex
        return self

    def __reduce__(self):  # copies and pickles keep the text and the figures (not through ``__new__``'s arguments)
        return _rebuild, (type(self), str(self), dict(self.__dict__))


def _rebuild(cls: type, text: str, state: dict[str, Any]) -> Cell:
    obj = str.__new__(cls, text)
    obj.__dict__.update(state)
    return obj


class Num(Cell):
    """A number: ``digits`` decimals (``tex_digits`` in LaTeX, default the same), ``signed`` with a ``+``;
    ``missing`` for None / NaN; ``sup`` a superscript letter in LaTeX (the rank-sets' groups)."""

    def __new__(cls, x: Any, digits: int = 3, *, signed: bool = False, tex_digits: int | None = None,
                missing: str = "-", sup: str = ""):
        self = super().__new__(cls, fixed(x, digits, signed=signed, missing=missing))
        self.x, self.digits, self.signed, self.sup = x, digits, signed, sup
        self.tex_digits = digits if tex_digits is None else tex_digits
        return self


class Est(Cell):
    """An estimate with its interval, ``0.912 [0.85, 0.97]`` (``n/a`` when the estimate is undefined; the estimate
    alone without an interval).  ``ci_signed`` signs the bounds too; the ``tex_`` digits are the paper's."""

    def __new__(cls, x: Any, ci: Any, digits: int = 3, ci_digits: int = 2, *, signed: bool = False,
                ci_signed: bool = False, tex_digits: int | None = None, tex_ci_digits: int | None = None):
        lo, hi = (list(ci) + [None, None])[:2] if ci else (None, None)
        text = NA if is_missing(x) else fixed(x, digits, signed=signed) + interval(
            [lo, hi], ci_digits, signed=ci_signed, lead=" ")
        self = super().__new__(cls, text)
        self.x, self.lo, self.hi, self.signed, self.ci_signed = x, lo, hi, signed, ci_signed
        self.digits, self.ci_digits = digits, ci_digits
        self.tex_digits = digits if tex_digits is None else tex_digits
        self.tex_ci_digits = ci_digits if tex_ci_digits is None else tex_ci_digits
        return self


class PlusMinus(Cell):
    """A mean with its standard error (a :class:`~metaeval.study.records.MeanSE` or a ``{mean, se}`` mapping), ``0.1067 ± 0.0235`` (``-`` without a mean); the ``tex_`` digits are the
    paper's."""

    def __new__(cls, d: Any, digits: int = 4, *, signed: bool = False, tex_digits: int | None = None):
        if isinstance(d, MeanSE):  # the results schema's record
            d = {"mean": d.mean, "se": d.se}
        mean, se = (d.get("mean"), d.get("se")) if d else (None, None)
        self = super().__new__(cls, mean_se(d, digits, signed=signed))
        self.mean, self.se, self.digits, self.signed = mean, se, digits, signed
        self.tex_digits = digits if tex_digits is None else tex_digits
        return self


class Ident(Cell):
    """An identifier (run id, cell id): LaTeX may break it after ``_ . - /``."""


class Config(Ident):
    """A judge configuration (its cell id; ``reference``: the reference label source itself); the LaTeX renderer
    writes its judge, prompt and nugget-source columns instead (:class:`metaeval.report.render_latex.Names`)."""

    def __new__(cls, cell: str, reference: bool = False):
        self = super().__new__(cls, cell)
        self.reference = reference
        return self


class Method(Cell):
    """A calibration method by its display name: ``shown`` (the point the leaderboard shows: `` (shown)`` in text,
    bold in LaTeX) or ``intervals`` (the interval method when it is another: a dagger in LaTeX)."""

    def __new__(cls, name: str, key: str = "", *, shown: bool = False, intervals: bool = False, text: str = ""):
        self = super().__new__(cls, text or name + (" (shown)" if shown else ""))
        self.name, self.key, self.shown, self.intervals = name, key or name, shown, intervals
        return self


class Span(Cell):
    """A range of ranks ``lo-hi`` (one number when they are equal; an en dash in LaTeX)."""

    def __new__(cls, lo: int, hi: int):
        self = super().__new__(cls, str(lo) if lo == hi else f"{lo}-{hi}")
        self.lo, self.hi = lo, hi
        return self


#: where a column or row shows: everywhere (""), only in the report (HTML, Markdown, terminal) or only in the paper
WHERE = ("", "report", "paper")


@dataclass
class Paper:
    """What the LaTeX paper set needs beyond the cells: the file stem ``name`` (``tab:metaeval-<name>``), the LaTeX
    ``caption`` (at most three lines in an 11pt two-column article) and the plain-text ``details`` for the folder's
    README; ``layout``: ``"board"`` (one column up to ``render_latex.STACK_MAX_ROWS`` rows, else two halves side by
    side across both columns), ``"column"`` (one column), ``""`` (one column or both, by the widths);
    ``stacked``: intervals below their estimates (else beside); ``rows``: the paper's rows, by index, in its order
    (None: all rows as the report has them)."""

    name: str
    caption: str
    details: str = ""
    layout: str = ""
    stacked: bool = True
    rows: list[int] | None = None
    #: the paper's column order, by index (columns it does not list follow in their own order)
    order: list[int] | None = None


@dataclass
class Table:
    """A table, defined once: its columns and cells (:class:`Cell` values or plain text), rendered to HTML, Markdown
    and the terminal (:meth:`shown`: the report's columns and rows) and, when ``paper`` is set, to LaTeX
    (:mod:`metaeval.report.render_latex`).  ``numeric[i]`` right-aligns column ``i``; ``links[r]`` (when given) is
    the relative URL row ``r``'s last cell links to ("" for none); ``tex_columns[i]`` is column ``i``'s LaTeX header
    ("" for the name, escaped); ``where[i]`` says where column ``i`` shows (:data:`WHERE`); ``report_rows`` the rows
    the report shows, by index (None: all)."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: list[bool] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    tex_columns: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    report_rows: list[int] | None = None
    paper: Paper | None = None

    def __post_init__(self) -> None:
        n = len(self.columns)
        self.numeric = self.numeric or [False] * n
        self.tex_columns = self.tex_columns or [""] * n
        self.where = self.where or [""] * n
        for what in ("numeric", "tex_columns", "where"):
            if len(getattr(self, what)) != n:
                raise ValueError(f"table {self.caption!r}: {len(getattr(self, what))} {what} for {n} columns")
        for i, r in enumerate(self.rows):
            if len(r) != n:
                raise ValueError(f"table {self.caption!r}: row {i} has {len(r)} cells, expected {n}")

    def view(self, target: str) -> tuple[list[int], list[int]]:
        """``(columns, rows)`` by index that ``target`` (``"report"`` or ``"paper"``) shows, in its order."""
        cols = [i for i, w in enumerate(self.where) if w in ("", target)]
        if target == "paper" and self.paper and self.paper.order:
            first = self.paper.order
            cols.sort(key=lambda i: (first.index(i), 0) if i in first else (len(first), i))
        order = self.report_rows if target == "report" else (self.paper.rows if self.paper else None)
        return cols, list(range(len(self.rows))) if order is None else list(order)

    def shown(self) -> "Table":
        """The table as the report shows it (HTML, Markdown, terminal): its report columns and rows only."""
        cols, rows = self.view("report")
        if len(cols) == len(self.columns) and rows == list(range(len(self.rows))):
            return self
        return Table([self.columns[i] for i in cols], [[self.rows[r][i] for i in cols] for r in rows], self.caption,
                     [self.numeric[i] for i in cols], [self.links[r] for r in rows] if self.links else [])


@dataclass
class Figure:
    """A figure: an SVG document (``svg``, the report's own plots; inlined in the HTML page) or PNG bytes (``png``);
    ``name`` is its file stem in ``report_files/`` (``.svg`` or ``.png``).  A section may give ``svg`` as a
    :class:`metaeval.report.plots.Drawing` still to be drawn; the built report holds its text."""

    name: str
    title: str
    png: bytes = b""
    caption: str = ""
    svg: Any = ""

    @property
    def suffix(self) -> str:
        return "svg" if self.svg else "png"

    @property
    def file_name(self) -> str:
        return f"{self.name}.{self.suffix}"

    @property
    def content(self) -> bytes:
        return self.svg.encode("utf-8") if self.svg else self.png


@dataclass
class Text:
    """A paragraph (``kind='p'``), a note (``'note'``), preformatted text (``'pre'``) or the verdict line
    (``'pass'`` / ``'fail'``: a coloured banner in HTML)."""

    text: str
    kind: str = "p"


@dataclass
class Detail:
    """A collapsible block (HTML ``<details>``, closed unless ``open``; a sub-heading elsewhere) holding other blocks."""

    summary: str
    blocks: list["Block"] = field(default_factory=list)
    open: bool = True


@dataclass
class Items:
    """A bulleted list of plain-text items (the report's plain-language summary)."""

    items: list[str]


@dataclass
class Rendered:
    """A block another section module rendered already (its own escaping): HTML and Markdown of the same content."""

    html: str
    md: str


Block = Union[Table, Figure, Text, Detail, Rendered, Items]


@dataclass
class Section:
    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Report:
    title: str
    sections: list[Section]
    data: dict[str, Any]
    verdict: dict[str, Any]
    #: further pages written beside the report, by path relative to the results folder (the transcript viewers)
    pages: dict[str, str] = field(default_factory=dict)

    def walk(self, kind: type) -> list[Any]:
        """Every block of type ``kind``, in page order, details included."""
        out: list[Any] = []

        def go(blocks: list[Block]) -> None:
            for b in blocks:
                if isinstance(b, kind):
                    out.append(b)
                if isinstance(b, Detail):
                    go(b.blocks)

        for s in self.sections:
            go(s.blocks)
        return out

    @property
    def figures(self) -> list[Figure]:
        """Every figure, in page order, details included."""
        return self.walk(Figure)
