"""Tables as LaTeX you can paste into a paper, written by pandas' ``Styler.to_latex`` (booktabs rules, caption,
label, float environment); this module only turns cell text into LaTeX and picks the width.

* :func:`latex_text` - plain text as LaTeX: the special characters ``& % $ # _ { } ~ ^ \\`` escaped, and the
  comparison and arrow signs written as math (``>=`` -> ``$\\geq$``, ``<=`` -> ``$\\leq$``, ``->`` -> ``$\\rightarrow$``,
  ``+-``/``±`` -> ``$\\pm$``, ``<``/``>`` -> ``$<$``/``$>$``): under LaTeX's default OT1 font encoding a raw ``>``
  prints as an inverted question mark.  ``breakable=True`` lets identifiers (run ids, file names) break after
  ``_ . - /``.
* :func:`stack` - an estimate over its interval, two lines in one cell (keeps interval tables one column wide).
* :func:`latex_table` - a DataFrame of already formatted cells as a ``table`` (or ``table*``) float whose
  ``tabularx`` is exactly ``\\linewidth`` wide: text columns wrap, numeric ones are right-aligned, so a table never
  runs into the margin; a table whose numeric columns alone would not fit one column of a two-column page
  spans both (``table*``).  Needs ``\\usepackage{booktabs,tabularx}`` (:data:`PREAMBLE`).
* :func:`to_latex` - the public ``metaeval.to_latex(df, ...)``: numbers formatted with ``digits`` decimals
  (``NaN`` -> ``n/a``), a plain booktabs ``tabular`` (wrapped in a ``table`` when a caption or label is given).
"""

from __future__ import annotations

import math
import numbers
import re
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: the packages the tables need, for a document's preamble
PREAMBLE = "\\usepackage{booktabs}\n\\usepackage{tabularx}\n"

_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"$<$", ">": r"$>$",
            "|": r"\textbar{}", "±": r"$\pm$", "…": r"\ldots{}", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\rightarrow$",
            "×": r"$\times$", "τ": r"$\tau$", "–": "--", "—": "---", "−": "$-$", "\n": " "}
# two-character signs first (so '->' is never '-' then '$>$')
_SIGNS = re.compile(r">=|<=|->|\+-|[\\&%$#_{}~^<>|±…≥≤→×τ–—−\n]")
_SIGN_TEX = {">=": r"$\geq$", "<=": r"$\leq$", "->": r"$\rightarrow$", "+-": r"$\pm$"}
_BREAK_AFTER = re.compile(r"(\\_|[./-])(?=[^\s])")

#: the em of \small and of \scriptsize text in an 11pt document (10pt and 8pt type; for choosing ``table`` or
#: ``table*``): a character is about half an em (digits exactly), punctuation and spaces less, capitals more
_PT_PER_CHAR, _PT_PER_SCRIPT_CHAR = 10.0, 8.0
#: Computer Modern Roman widths of the lowercase letters in ems (cmr10); digits are 0.5 em
_LOWER_EM = dict(zip("abcdefghijklmnopqrstuvwxyz", (.5, .556, .444, .556, .444, .306, .5, .556, .278, .306, .528, .278,
                                                     .833, .556, .5, .556, .528, .392, .394, .389, .556, .528, .722,
                                                     .528, .528, .444)))
_NARROW = set(".,;:[]()|!' ")
#: a two-column page: one column and the full text width of the narrowest layout the tables are checked in, the
#: article class at 11pt, twocolumn (ACM sigconf: 241 pt columns, 506 pt text, 9pt type)
COLUMN_PT, TEXT_PT = 229.5, 469.0
#: above this many rows a table is set in \footnotesize instead of \small, across both columns (~55 rows fit a page)
LONG_ROWS = 30
_COLSEP_PT = 8.0  # 2 x \tabcolsep (4pt in these tables)


def latex_text(text: Any, *, breakable: bool = False) -> str:
    """``text`` as LaTeX (escaped, math signs); ``breakable`` adds break points after ``_ . - /`` for identifiers."""
    out = _SIGNS.sub(lambda m: _SIGN_TEX.get(m.group(0)) or _ESCAPES[m.group(0)], str(text))
    if breakable:
        out = _BREAK_AFTER.sub(lambda m: m.group(1) + r"\allowbreak{}", out)
    return out


def stack(estimate: str, interval: str) -> str:
    """Two lines in one cell: the estimate over its (smaller) interval, both already LaTeX."""
    if not interval:
        return estimate
    return f"\\begin{{tabular}}[t]{{@{{}}r@{{}}}}{estimate}\\\\{{\\scriptsize {interval}}}\\end{{tabular}}"


def _em(text: str) -> float:
    """Width of ``text`` in ems (Computer Modern proportions, roughly): in math a command (``\\pm``, ``\\tau``)
    counts as one letter and a minus sign as a capital; other markup counts nothing."""
    text = re.sub(r"\$([^$]*)\$", lambda m: re.sub(r"\\[a-zA-Z]+", "x", m.group(1)).replace("-", "M"), text)
    text = re.sub(r"\\[a-zA-Z]+|[{}]", "", text)
    return sum(_LOWER_EM.get(ch) or (0.3 if ch in _NARROW else 0.72 if ch.isupper() else 0.5) for ch in text)


def _natural_pt(cells: Sequence[str]) -> float:
    """Width estimate of the widest cell (LaTeX markup dropped; a stacked cell counts its longest line)."""
    def line(x: str) -> float:
        per = _PT_PER_SCRIPT_CHAR if "\\scriptsize" in x else _PT_PER_CHAR
        return _em(x) * per

    def plain(s: str) -> float:
        s = re.sub(r"\\begin\{tabular\}\[t\]\{@\{\}r@\{\}\}|\\end\{tabular\}|\\allowbreak\{\}", "", s)
        return max(line(x) for x in s.split("\\\\"))
    return max((plain(c) for c in cells), default=0.0)


def _longest_word_pt(cells: Sequence[str]) -> float:
    """Width estimate of the longest unbreakable piece of text (split at spaces and ``\\allowbreak``)."""
    words = [w for c in cells for w in re.split(r"\s+|\\allowbreak\{\}", c)]
    return max((_em(w) for w in words), default=0) * _PT_PER_CHAR


def latex_table(df: "pd.DataFrame", *, numeric: Sequence[bool], caption: str, label: str,
                min_text_pt: float = 30.0, wide: bool | None = None, size: str | None = None) -> str:
    """A ``table`` float of ``df``'s cells (already LaTeX: see :func:`latex_text`), ``tabularx`` at ``\\linewidth``.

    Text columns (``numeric[i]`` false) become ragged-right ``X`` columns of equal width that share what the numeric
    columns leave; the float is ``table*`` (both columns of a two-column page) when the numeric columns at their
    natural width plus, per text column, the longest word of any text cell (at least ``min_text_pt``) exceed one
    column, or when ``wide`` says so.  Header cells are LaTeX too.  ``size``: the font size command of the table
    (default ``\\small``, ``\\footnotesize`` above :data:`LONG_ROWS` rows).
    """
    numeric = list(numeric)
    if len(numeric) != df.shape[1]:
        raise ValueError(f"{label}: {len(numeric)} alignments for {df.shape[1]} columns")
    column = [[str(df.columns[i])] + [str(x) for x in df.iloc[:, i]] for i in range(df.shape[1])]
    need = sum(_natural_pt(column[i]) + _COLSEP_PT for i, n in enumerate(numeric) if n)
    word = max([min_text_pt] + [_longest_word_pt(column[i]) for i, n in enumerate(numeric) if not n])
    need += sum(word + _COLSEP_PT for n in numeric if not n)
    if wide is None:  # a long table spans both columns too, so that its text cells do not wrap it off the page
        wide = need > COLUMN_PT or len(df) > LONG_ROWS
    spec = "".join("r" if n else r">{\raggedright\arraybackslash}X" for n in numeric)
    if all(numeric):  # tabularx needs an X column: the last one takes the slack, right-aligned
        spec = spec[:-1] + r">{\raggedleft\arraybackslash}X"
    body = _styler(df).to_latex(column_format=spec, hrules=True, caption=caption, label=label,
                                position_float="centering", environment="table*" if wide else "table")
    # the outer tabular (Styler writes it first and closes it last; stacked cells nest their own) becomes tabularx
    size = size or ("\\footnotesize" if len(df) > LONG_ROWS else "\\small")  # a long table still fits one page
    body = body.replace("\\begin{tabular}{", size + "\\setlength{\\tabcolsep}{4pt}\n\\begin{tabularx}{\\linewidth}{", 1)
    head, _, tail = body.rpartition("\\end{tabular}")
    body = head + "\\end{tabularx}" + tail
    return f"% generated by metaeval; needs \\usepackage{{booktabs,tabularx}}\n{body}"


def _styler(df: "pd.DataFrame"):
    """A Styler that writes the cells as they are (already LaTeX), no index."""
    return df.style.hide(axis="index").format(escape=None)


def _cell(v: Any, digits: int) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return "n/a" if math.isnan(float(v)) else f"{float(v):.{digits}f}"
    return latex_text(v)


def to_latex(df: "pd.DataFrame", *, caption: str | None = None, label: str | None = None, digits: int = 3,
             columns: Sequence[str] | None = None, index: bool = False) -> str:
    """A booktabs ``tabular`` of ``df`` (``columns`` to pick/order; ``index=True`` adds the index first)."""
    import pandas as pd

    data = df[list(columns)] if columns is not None else df
    if index:
        data = data.reset_index()
    align = "".join("r" if pd.api.types.is_numeric_dtype(data[c]) and not pd.api.types.is_bool_dtype(data[c]) else "l"
                    for c in data.columns)
    cells = pd.DataFrame([[_cell(v, digits) for v in row] for row in data.itertuples(index=False)],
                         columns=[latex_text(c) for c in data.columns])
    kw: dict[str, Any] = {"column_format": align, "hrules": True}
    if caption is not None or label is not None:
        kw.update(caption=None if caption is None else latex_text(caption), label=label, position_float="centering",
                  environment="table")
    return _styler(cells).to_latex(**kw)
