"""Numbers as text: the one place that decides how a figure is printed (terminal lines, Markdown/HTML tables, the
plain parts of the LaTeX tables).

No dependencies (the lowest layer: every layer may import it).  Every function takes the marker a missing value
prints as (``missing=``), because the outputs differ on purpose: tables print ``-``, sentences ``n/a``, aligned
terminal columns a padded ``   n/a``.  A value is *missing* when it is ``None`` or NaN (``x != x``); infinities are
printed (``inf``), they are not missing.

* :func:`fixed` - fixed decimals, optionally signed and padded: ``0.912``, ``+0.214``, ``' 0.912'``;
  :func:`significant` - significant digits: ``0.0123``.
* :func:`interval` - a confidence interval ``[0.85, 0.97]`` (the empty string when either bound is ``None``).
* :func:`estimate_interval` - an estimate with its interval ``0.912 [0.85, 0.97]``.
* :func:`plus_minus` / :func:`mean_se` - a mean with its standard error: ``0.0234 ± 0.0078`` (the separator is the
  caller's: ``' ± '`` in reports, ``'+-'`` in aligned terminal columns).
* :func:`p_value` - a p-value in a table cell: ``0.042``, ``<0.001``; :func:`p_text` - in a sentence, as a bound
  when tiny: ``p = 0.042``, ``p < 1e-11``.
* :func:`percent` - a share as a percentage ``12.3%``; :func:`text` - ``str(x)`` or the missing marker;
  :func:`cell` - any table cell (booleans yes/no, integers as they are, floats with fixed decimals).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

#: the marker of a missing value in tables
DASH = "-"
#: the marker of a missing value in sentences
NA = "n/a"


def is_missing(x: Any) -> bool:
    """``None`` or NaN (any float-like that is not equal to itself)."""
    return x is None or (not isinstance(x, (str, bytes)) and x != x)


def fixed(x: Any, digits: int = 3, *, signed: bool = False, width: int | None = None, missing: str = DASH) -> str:
    """``x`` with ``digits`` decimals (``format(float(x), '[+][width].{digits}f')``); ``missing`` when ``x`` is
    missing.  ``signed`` prints ``+`` before non-negative values; ``width`` right-aligns the number (and
    ``missing``) in that many characters."""
    if is_missing(x):
        return missing.rjust(width or 0)
    return format(float(x), f"{'+' if signed else ''}{width or ''}.{digits}f")


def significant(x: Any, digits: int = 3, *, missing: str = NA) -> str:
    """``x`` with ``digits`` significant digits (``format(float(x), '.{digits}g')``: ``0.0123``, ``1.2e-05``);
    ``missing`` when missing."""
    return missing if is_missing(x) else format(float(x), f".{digits}g")


def interval(ci: Sequence[Any] | None, digits: int = 2, *, signed: bool = False, missing: str = "",
             point_missing: str = NA, lead: str = "") -> str:
    """``[lo, hi]`` with ``digits`` decimals, after ``lead`` (``' '`` to follow an estimate in a sentence); ``missing``
    (default: nothing) unless ``ci`` is a pair of two non-``None`` bounds.  A NaN bound prints as ``point_missing``."""
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return missing
    lo, hi = (fixed(b, digits, signed=signed, missing=point_missing) for b in ci)
    return f"{lead}[{lo}, {hi}]"


def estimate_interval(est: Any, ci: Sequence[Any] | None, digits: int = 3, ci_digits: int = 2) -> str:
    """``0.912 [0.85, 0.97]``: the estimate as a table :func:`cell` and its :func:`interval` (the estimate alone when
    there is no interval); ``n/a`` when the estimate is missing."""
    if is_missing(est):
        return NA
    shown = interval(ci, ci_digits, point_missing=DASH)
    return f"{cell(est, digits)} {shown}" if shown else cell(est, digits)


def plus_minus(mean: Any, se: Any, digits: int = 4, *, signed: bool = False, sep: str = " ± ",
               missing: str = DASH) -> str:
    """``mean<sep>se`` with ``digits`` decimals (``signed``: the mean with its sign); the mean alone when ``se`` is
    ``None``; ``missing`` when the mean is missing."""
    if is_missing(mean):
        return missing
    m = fixed(mean, digits, signed=signed)
    return m if se is None else f"{m}{sep}{fixed(se, digits, missing=NA)}"


def mean_se(d: Any, digits: int = 4, *, signed: bool = False, sep: str = " ± ", missing: str = DASH) -> str:
    """:func:`plus_minus` of a ``{"mean": ..., "se": ...}`` record (``missing`` when there is none or no mean)."""
    if not d or d.get("mean") is None:
        return missing
    return plus_minus(d["mean"], d.get("se"), digits, signed=signed, sep=sep, missing=missing)


def p_value(p: Any, *, missing: str = DASH) -> str:
    """A p-value in a table cell: three decimals, ``<0.001`` below 0.001; ``missing`` when missing."""
    if is_missing(p):
        return missing
    return "<0.001" if float(p) < 0.001 else f"{float(p):.3f}"


def p_text(p: float | None, floor: float = 1e-16) -> str:
    """A p-value as printed in a sentence: ``p = 0.042``, ``p = 0.0012``; below 0.001 as a bound ``p < 1e-k``
    (``k`` the largest with ``p < 10^-k``, at most 16: double precision says nothing finer), ``p n/a`` for None /
    NaN."""
    if is_missing(p):
        return "p n/a"
    if p >= 0.001:
        return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.3f}"
    k = 16 if p < floor else min(16, math.ceil(-math.log10(p)) - 1)
    return f"p < 1e-{k}"


def percent(x: Any, digits: int = 1, *, width: int | None = None, missing: str = NA) -> str:
    """A share (0-1) as a percentage: ``100 x`` with ``digits`` decimals and ``%`` (``width``: the number
    right-aligned in that many characters before the ``%``); ``missing`` (right-aligned in ``width``) when
    missing."""
    if is_missing(x):
        return missing.rjust(width or 0)
    return f"{100 * float(x):{width or ''}.{digits}f}%"


def text(x: Any, missing: str = DASH) -> str:
    """``str(x)``, or ``missing`` for ``None``."""
    return missing if x is None else str(x)


def cell(x: Any, digits: int = 3) -> str:
    """Any value for a table cell: ``-`` for missing, ``yes``/``no`` for booleans, integers as they are, other
    numbers with ``digits`` decimals, anything else as ``str``."""
    if x is None:
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return fixed(v, digits)
