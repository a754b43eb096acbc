"""Per-query evaluation outputs of ``trec_eval -q`` and ``ir_measures`` (one file per run) -> long score table.

Two whitespace-separated three-column layouts are read:

* ``trec_eval``: ``measure  qid  value`` (e.g. ``ndcg_cut_10   2024-105741   0.6131``), with a ``runid  all
  NAME`` line naming the run;
* ``ir_measures``: ``qid  measure  value`` (e.g. ``2024-105741   nDCG@10   0.6131``).

The layout is detected per file (``fmt="auto"``): a ``runid`` line or ``all`` in the second column means
trec_eval, ``all`` in the first column ir_measures; otherwise the column with fewer distinct values holds the
measure names, and on a tie the column whose values have no letter (``2024-105741``) holds the query ids;
anything still ambiguous is an error (pass ``fmt``).  Aggregate rows (qid ``all``) and non-numeric bookkeeping measures (``runid``, ``relstring``) are
skipped; any other non-numeric value is an error naming the file, line and field.  The run id is the ``runid``
line's name, else the file name without its extensions.  The result is the long table
``run_id, qid, metric, value`` that :mod:`metaeval.analysis` reads, so relevance-judgment studies (LLM vs NIST
qrels) use the same tau code as nugget studies.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from metaeval.errors import FormatError
from metaeval.io.fields import first_time, parse_number

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

FORMATS = ("auto", "trec_eval", "ir_measures")
_SKIP_MEASURES = {"runid", "relstring"}


def _rows(path: str) -> list[tuple[int, list[str]]]:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise FormatError(path, 0, "", "no such file") from None
    except UnicodeDecodeError:
        raise FormatError(path, 0, "", "not UTF-8 text") from None
    rows = []
    for no, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise FormatError(path, no, "", f"expected 3 whitespace-separated fields (measure qid value), got {len(parts)}")
        rows.append((no, parts))
    if not rows:
        raise FormatError(path, 0, "", "empty file")
    return rows


def detect_layout(rows: list[tuple[int, list[str]]], path: str = "") -> str:
    """``trec_eval`` or ``ir_measures`` for the parsed rows of one file (see the module docstring)."""
    first = {p[0] for _, p in rows}
    second = {p[1] for _, p in rows}
    if "runid" in first or "all" in second:
        return "trec_eval"
    if "all" in first:
        return "ir_measures"
    if len(first) < len(second):
        return "trec_eval"
    if len(second) < len(first):
        return "ir_measures"
    first_ids, second_ids = (not any(ch.isalpha() for v in col for ch in v) for col in (first, second))
    if second_ids and not first_ids:
        return "trec_eval"
    if first_ids and not second_ids:
        return "ir_measures"
    raise FormatError(path, 0, "", "cannot tell trec_eval (measure qid value) from ir_measures (qid measure value); pass fmt")


def read_trec_eval(path: str | os.PathLike, run_id: str | None = None, fmt: str = "auto") -> "pd.DataFrame":
    """One run's per-query file -> long table ``run_id, qid, metric, value`` (aggregate ``all`` rows dropped)."""
    import pandas as pd

    path = str(path)
    if fmt not in FORMATS:
        raise FormatError(path, 0, "", f"unknown per-query format {fmt!r}; expected one of {', '.join(FORMATS)}")
    rows = _rows(path)
    layout = detect_layout(rows, path) if fmt == "auto" else fmt
    name = run_id
    out: dict[tuple[str, str], float] = {}
    lines: dict[tuple[str, str], int] = {}
    for no, parts in rows:
        measure, qid, value = (parts[0], parts[1], parts[2]) if layout == "trec_eval" else (parts[1], parts[0], parts[2])
        if measure == "runid":
            name = name or value
            continue
        if measure in _SKIP_MEASURES or qid == "all":
            continue
        val = parse_number(value, float, path, no, "value", f"measure {measure!r}, query {qid!r}")
        first_time(lines, (qid, measure), path, no, "qid/measure", f"value for query {qid!r}, measure {measure!r}")
        out[(qid, measure)] = val
    if not out:
        raise FormatError(path, 0, "", "no per-query values (was trec_eval run without -q?)")
    name = name or Path(path).name.split(".")[0]
    return pd.DataFrame(
        [(name, q, m, v) for (q, m), v in out.items()], columns=["run_id", "qid", "metric", "value"]
    )


def read_trec_eval_dir(folder: str | os.PathLike, fmt: str = "auto", pattern: str = "*") -> "pd.DataFrame":
    """Every file matching ``pattern`` in ``folder`` (one run each; hidden files skipped) -> one long table."""
    import pandas as pd

    folder = str(folder)
    if not Path(folder).is_dir():
        raise FormatError(folder, 0, "", "not a folder of per-query evaluation files")
    files = sorted(p for p in Path(folder).glob(pattern) if p.is_file() and not p.name.startswith("."))
    if not files:
        raise FormatError(folder, 0, "", f"no files matching {pattern!r}")
    frames, seen = [], {}
    for f in files:
        df = read_trec_eval(f, fmt=fmt)
        rid = df["run_id"].iloc[0]
        if rid in seen:
            raise FormatError(str(f), 0, "runid", f"run {rid!r} also in {seen[rid]}")
        seen[rid] = str(f)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)
