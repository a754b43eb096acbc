"""The report's document model: sections made of paragraphs, tables and figures, rendered three ways."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

# table cells, estimates with their interval and p-values are formatted by metaeval.formatting (re-exported here
# under the report's short names)
from metaeval.formatting import cell as fmt, estimate_interval as fmt_ci, p_text  # noqa: F401


@dataclass
class Table:
    """A table of already formatted cells; ``numeric[i]`` right-aligns column ``i``; ``links[r]`` (when given) is
    the relative URL row ``r``'s last cell links to ("" for none)."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric: list[bool] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.numeric:
            self.numeric = [False] * len(self.columns)
        for i, r in enumerate(self.rows):
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.caption!r}: row {i} has {len(r)} cells, expected {len(self.columns)}")


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
