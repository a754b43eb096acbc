"""DataFrames as LaTeX ``tabular`` (booktabs) without jinja2 (pandas' ``to_latex`` needs it; we do not).

``to_latex(df, caption=..., label=..., digits=3)``: floats with ``digits`` decimals (``NaN`` -> ``n/a``, never a
number), integers as they are, text with LaTeX's special characters escaped (``& % $ # _ { } ~ ^ \\``), numeric
columns right-aligned.  Wrapped in a ``table`` environment when a caption or label is given.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: Any) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


def _cell(v: Any, digits: int) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return "n/a" if math.isnan(float(v)) else f"{float(v):.{digits}f}"
    return escape(v)


def to_latex(df: "pd.DataFrame", *, caption: str | None = None, label: str | None = None, digits: int = 3,
             columns: Sequence[str] | None = None, index: bool = False) -> str:
    """A booktabs ``tabular`` of ``df`` (``columns`` to pick/order; ``index=True`` adds the index first)."""
    import pandas as pd

    data = df[list(columns)] if columns is not None else df
    if index:
        data = data.reset_index()
    align = "".join("r" if pd.api.types.is_numeric_dtype(data[c]) and not pd.api.types.is_bool_dtype(data[c]) else "l"
                    for c in data.columns)
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule", " & ".join(escape(c) for c in data.columns) + " \\\\",
             "\\midrule"]
    for row in data.itertuples(index=False):
        lines.append(" & ".join(_cell(v, digits) for v in row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if caption is None and label is None:
        return "\n".join(lines) + "\n"
    head = ["\\begin{table}", "\\centering"]
    tail = ([f"\\caption{{{escape(caption)}}}"] if caption else []) + ([f"\\label{{{label}}}"] if label else []) + ["\\end{table}"]
    return "\n".join(head + lines + tail) + "\n"
