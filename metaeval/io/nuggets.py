"""castorini/nuggetizer nugget-creation output: one line per topic, ``{qid, query, nuggets: [{text, importance}]}``.

Returned as a ``NuggetTable`` DataFrame with columns ``qid, nugget_id, nugget, importance, importance_raw, line``.
``importance`` may be absent (nuggets as created, before importance labelling): it is then ``FAILED`` with an empty
raw value and *not* reported as a problem.  Unknown importance values are FAILED, counted and warned about.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from metaeval.errors import FormatError
from metaeval.io.assignments import report_problems
from metaeval.io.jsonl import iter_jsonl, optional, require, write_jsonl
from metaeval.types import LabelProblem, make_importance_categorical, parse_importance

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)

NUGGET_COLUMNS = ("qid", "nugget_id", "nugget", "importance", "importance_raw", "line")


def read_nuggets(path: str | os.PathLike, problems: list[LabelProblem] | None = None) -> "pd.DataFrame":
    """Read a nugget-creation file.  ``topics`` (qid -> query) are in ``df.attrs["topics"]``."""
    import pandas as pd

    path = str(path)
    rows: list[tuple] = []
    topics: dict[str, str] = {}
    found: list[LabelProblem] = [] if problems is None else problems
    seen: dict[str, int] = {}
    empty: list[str] = []
    for lineno, obj in iter_jsonl(path):
        qid = str(require(obj, "qid", (str, int), path, lineno))
        if qid in seen:
            raise FormatError(path, lineno, "qid", f"duplicate topic {qid}, first on line {seen[qid]}")
        seen[qid] = lineno
        query = optional(obj, "query", str, path, lineno, default="")
        if query:
            topics[qid] = query
        items = require(obj, "nuggets", list, path, lineno)
        if not items:
            empty.append(f"{qid} (line {lineno})")
        for i, nug in enumerate(items):
            if not isinstance(nug, dict):
                raise FormatError(path, lineno, f"nuggets[{i}]", f"expected an object, got {type(nug).__name__}")
            text = require(nug, "text", str, path, lineno, f"nuggets[{i}].")
            raw = nug.get("importance")
            imp = parse_importance(raw)
            if imp.value == "FAILED" and raw is not None:
                found.append(LabelProblem(path, lineno, f"nuggets[{i}].importance", raw))
            rows.append((qid, i, text, imp.value, raw if isinstance(raw, str) else None, lineno))
    report_problems(path, found)
    _report_empty_topics(path, empty, rows)
    df = pd.DataFrame.from_records(rows, columns=list(NUGGET_COLUMNS))
    df["importance"] = make_importance_categorical(df["importance"])
    df.attrs["topics"] = topics
    return df


def _report_empty_topics(path: str, empty: list[str], rows: list[tuple], show: int = 5) -> None:
    """One warning naming topics with no nugget, and topics whose nuggets carry importance labels but none vital
    (their answers score 0 on V under the default no-vital policy)."""
    labelled = {r[0] for r in rows if r[3] != "FAILED" or r[4] is not None}  # importance given
    no_vital = sorted(labelled - {r[0] for r in rows if r[3] == "vital"})
    parts = []
    if empty:
        parts.append(f"{len(empty)} topic(s) have no nuggets: {', '.join(empty[:show])}" + (f" (+{len(empty) - show} more)" if len(empty) > show else ""))
    if no_vital:
        parts.append(f"{len(no_vital)} topic(s) have no vital nugget: {', '.join(no_vital[:show])}" + (f" (+{len(no_vital) - show} more)" if len(no_vital) > show else ""))
    if parts:
        log.warning("%s: %s", path, "; ".join(parts))


def write_nuggets(nuggets: "pd.DataFrame", path: str | os.PathLike, topics: dict[str, str] | None = None, with_importance: bool = True) -> int:
    """Write a nugget table in nuggetizer's creation format (``with_importance=False`` drops importance, as
    nuggets are handed to assessors before importance labelling)."""
    topics = topics if topics is not None else nuggets.attrs.get("topics", {})

    def records():
        for qid, g in nuggets.groupby("qid", sort=False):
            items = []
            for n in g.sort_values("nugget_id").itertuples(index=False):
                item = {"text": n.nugget}
                if with_importance:
                    raw = getattr(n, "importance_raw", None)
                    item["importance"] = raw if (n.importance == "FAILED" and isinstance(raw, str)) else str(n.importance)
                items.append(item)
            yield {"qid": qid, "query": topics.get(qid, ""), "nuggets": items}

    return write_jsonl(path, records())
