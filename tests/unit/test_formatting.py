"""metaeval.formatting: the one number-formatting module (every printed figure goes through it)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from metaeval import formatting as f

NAN = float("nan")


@pytest.mark.parametrize("x, kw, out", [
    (0.91234, {}, "0.912"), (0.5, {"digits": 1}, "0.5"), (0.214, {"signed": True}, "+0.214"),
    (-0.2, {"signed": True}, "-0.200"), (3, {}, "3.000"), (np.float64(0.25), {"digits": 2}, "0.25"),
    (None, {}, "-"), (NAN, {}, "-"), (np.nan, {"missing": "n/a"}, "n/a"),
    (0.5, {"width": 6}, " 0.500"), (None, {"width": 6, "missing": "n/a"}, "   n/a"), (math.inf, {}, "inf"),
])
def test_fixed(x, kw, out):
    assert f.fixed(x, **kw) == out


def test_interval_and_estimate():
    assert f.interval([0.851, 0.97]) == "[0.85, 0.97]"
    assert f.interval([-0.2, 0.1], 3, signed=True) == "[-0.200, +0.100]"
    assert f.interval([0.1, None]) == "" and f.interval(None, missing="-") == "-" and f.interval([1.0]) == ""
    assert f.interval([0.1, 0.2], lead=" ") == " [0.10, 0.20]" and f.interval(None, lead=" ") == ""
    assert f.interval([NAN, 0.2]) == "[n/a, 0.20]"
    assert f.estimate_interval(0.912, [0.85, 0.97]) == "0.912 [0.85, 0.97]"
    assert f.estimate_interval(0.912, None) == "0.912" and f.estimate_interval(None, [0.1, 0.2]) == "n/a"
    assert f.estimate_interval(NAN, [0.1, 0.2]) == "n/a"


def test_plus_minus_and_mean_se():
    assert f.plus_minus(0.0234, 0.0078) == "0.0234 ± 0.0078"
    assert f.plus_minus(0.26, 0.041, 3, sep="+-") == "0.260+-0.041"
    assert f.plus_minus(-0.03, None, signed=True) == "-0.0300" and f.plus_minus(NAN, 0.1) == "-"
    assert f.mean_se({"mean": 0.05, "se": 0.01}, signed=True, sep=" +- ") == "+0.0500 +- 0.0100"
    assert f.mean_se({}, missing="n/a") == "n/a" and f.mean_se(None) == "-" and f.mean_se({"mean": None}) == "-"


@pytest.mark.parametrize("p, out", [(0.042, "p = 0.042"), (0.0012, "p = 0.0012"), (5e-12, "p < 1e-11"),
                                    (1e-300, "p < 1e-16"), (0.0, "p < 1e-16"), (None, "p n/a"), (NAN, "p n/a")])
def test_p_text(p, out):
    assert f.p_text(p) == out


def test_p_value_percent_text_cell_significant():
    assert f.p_value(0.0004) == "<0.001" and f.p_value(0.0421) == "0.042" and f.p_value(None) == "-"
    assert f.p_value(NAN, missing="n/a") == "n/a"
    assert f.percent(0.1234) == "12.3%" and f.percent(None) == "n/a" and f.percent(None, missing="-") == "-"
    assert f.percent(0.032, width=6) == "   3.2%" and f.percent(None, width=6) == "   n/a"
    assert f.text(None) == "-" and f.text(7) == "7" and f.text("x", missing="n/a") == "x"
    assert [f.cell(x) for x in (None, True, False, 12, 0.5, "abc", NAN)] == ["-", "yes", "no", "12", "0.500", "abc", "-"]
    assert f.significant(0.012345) == "0.0123" and f.significant(None) == "n/a" and f.significant(1.5e-7) == "1.5e-07"


def test_report_names_are_the_formatting_functions():
    """The report's short names (``fmt``, ``fmt_ci``, ``p_text``, ``dash``, ``pct``) are this module's functions,
    not copies."""
    from metaeval.report import context, model

    assert (model.fmt, model.fmt_ci, model.p_text) == (f.cell, f.estimate_interval, f.p_text)
    assert (context.dash, context.pct) == (f.text, f.percent)


def _formats_numbers(fn) -> bool:
    """Whether a function formats numbers itself: an f-string field with a format spec (``{x:.3f}``) or a call
    of ``format(...)``."""
    import ast

    for node in ast.walk(fn):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "format":
            return True
    return False


def test_no_private_number_formatters_left():
    """The private formatters this module replaced (``_f``/``_f2``/``_fmt``/``_pm``/``_ms``/``_pct``/``_ci``/``_p``/
    ``_n``/``_plain``, returning ``str``) may remain only as thin calls of it: none formats a number itself."""
    import ast

    root = Path(f.__file__).parent
    name = re.compile(r"^_(f[0-9]?|fmt|pm|ms|pct|ci|p|n|plain|s)$")
    found = []
    for p in root.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and name.match(node.name) and node.returns is not None \
                    and ast.unparse(node.returns).strip("'\"") == "str" and _formats_numbers(node):
                found.append(f"{p.relative_to(root)}:{node.lineno} {node.name}")
    assert not found, found


def test_the_formatter_scan_sees_a_private_formatter():
    import ast

    fn = ast.parse("def _f2(x) -> str:\n    return '-' if x is None else f'{x:.2f}'\n").body[0]
    assert _formats_numbers(fn) and not _formats_numbers(ast.parse("def _s(x) -> str:\n    return text(x)\n").body[0])
