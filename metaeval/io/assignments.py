"""Nugget-assignment JSONL: NIST's TREC 2024 RAG export and castorini/nuggetizer's assignment output.

Both formats share one schema, one line per (topic, run)::

    {"qid": str, "query": str, "run_id": str, "answer_text": str, "response_length": int,
     "nuggets": [{"text": str, "importance": "vital"|"okay", "assignment": "support"|"partial_support"|"not_support"}]}

Structural problems (malformed JSON, a missing field, a wrong type, a duplicate (qid, run_id), an empty file)
raise ``FormatError`` naming file, line and field.  An *unknown label value* (nuggetizer files contain e.g.
importance ``"failed"`` or assignment ``"established"``) is data, not an error: it is kept as ``FAILED`` with its
raw text, counted in ``LabelSet.problems`` and reported in one warning naming the first few lines.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterable

from metaeval.errors import FormatError
from metaeval.io.jsonl import iter_jsonl, optional, require, write_jsonl
from metaeval.types import LabelProblem, LabelSet, build_label_set, parse_importance, parse_support

log = logging.getLogger(__name__)


def read_assignments(path: str | os.PathLike, name: str | None = None) -> LabelSet:
    """Read a NIST / nuggetizer nugget-assignment file into a ``LabelSet``.

    ``nugget_id`` is the nugget's position in the line's list (NIST lists are identical across the runs of a
    topic, so positions identify nuggets).  ``name`` defaults to the file's stem.
    """
    path = str(path)
    rows: list[tuple] = []
    answers: list[tuple] = []
    topics: dict[str, str] = {}
    problems: list[LabelProblem] = []
    seen: dict[tuple[str, str], int] = {}
    topic_lists: dict[str, tuple[int, list[str]]] = {}  # qid -> (first line, its nugget texts)
    for lineno, obj in iter_jsonl(path):
        qid = _id(require(obj, "qid", (str, int), path, lineno))
        run_id = require(obj, "run_id", str, path, lineno)
        query = optional(obj, "query", str, path, lineno, default="")
        text = optional(obj, "answer_text", str, path, lineno, default="")
        rlen = optional(obj, "response_length", int, path, lineno)
        nuggets = require(obj, "nuggets", list, path, lineno)
        key = (qid, run_id)
        if key in seen:
            raise FormatError(path, lineno, "qid/run_id", f"duplicate (qid, run_id) = {key}, first seen on line {seen[key]}")
        seen[key] = lineno
        if query:
            topics.setdefault(qid, query)
        answers.append((qid, run_id, text, rlen, lineno))
        texts = [n.get("text") if isinstance(n, dict) else None for n in nuggets]
        if qid not in topic_lists:
            topic_lists[qid] = (lineno, texts)
        else:
            _check_same_nuggets(path, lineno, qid, run_id, texts, *topic_lists[qid])
        for i, nug in enumerate(nuggets):
            prefix = f"nuggets[{i}]."
            if not isinstance(nug, dict):
                raise FormatError(path, lineno, f"nuggets[{i}]", f"expected an object, got {type(nug).__name__}")
            ntext = require(nug, "text", str, path, lineno, prefix)
            imp_raw = nug.get("importance")
            sup_raw = nug.get("assignment")
            imp = parse_importance(imp_raw)
            sup = parse_support(sup_raw)
            if imp.value == "FAILED":
                problems.append(LabelProblem(path, lineno, prefix + "importance", imp_raw))
            if sup.value == "FAILED":
                problems.append(LabelProblem(path, lineno, prefix + "assignment", sup_raw))
            rows.append((qid, run_id, i, ntext, imp.value, sup.value, _raw(imp_raw), _raw(sup_raw), lineno))
    report_problems(path, problems)
    _report_empty_topics(path, answers, rows)
    return build_label_set(
        name or Path(path).name.split(".")[0],
        rows,
        answers,
        topics=topics,
        provenance={"path": os.path.abspath(path), "format": "assignments"},
        problems=problems,
    )


def _check_same_nuggets(path: str, lineno: int, qid: str, run_id: str, texts: list, first_line: int, first: list) -> None:
    """Every run of a topic must carry the topic's nugget list: same texts, same order, same length (nuggets are
    identified by their position, so a differing list would silently pair different nuggets across runs)."""
    if texts == first:
        return
    n = min(len(texts), len(first))
    k = next((i for i in range(n) if texts[i] != first[i]), n)
    if k < n:
        what = f"nuggets[{k}] is {_clip(texts[k])} but line {first_line} has {_clip(first[k])}"
    else:
        what = f"{len(texts)} nuggets but line {first_line} has {len(first)}"
    raise FormatError(path, lineno, f"nuggets[{k}]" if k < n else "nuggets",
                      f"topic {qid} (run {run_id}): {what}; every run of a topic must list the same nuggets in the "
                      f"same order")


def _clip(text: Any, n: int = 60) -> str:
    s = repr(text)
    return s if len(s) <= n else s[: n - 4] + "...'"


def write_assignments(labels: LabelSet, path: str | os.PathLike) -> int:
    """Write a label set in the shared NIST / nuggetizer assignment schema (FAILED labels keep their raw text
    when it was read from a file, so a read-write round trip is lossless)."""
    return write_jsonl(path, assignment_records(labels))


def assignment_records(labels: LabelSet) -> Iterable[dict[str, Any]]:
    """One record per answer (in ``labels.answers`` order), its nuggets in ``nugget_id`` order.  Columns are
    converted once, not per row (a 20k-label file takes milliseconds, not seconds)."""
    lab = labels.labels.sort_values(["qid", "run_id", "nugget_id"], kind="stable")
    n = len(lab)
    text = lab["nugget"].tolist()
    imp = [_out(a, b) for a, b in zip(lab["importance"].astype(object).tolist(), lab["importance_raw"].tolist())] if n else []
    sup = [_out(a, b) for a, b in zip(lab["support"].astype(object).tolist(), lab["support_raw"].tolist())] if n else []
    spans: dict[tuple[Any, Any], tuple[int, int]] = {}
    keys = list(zip(lab["qid"].tolist(), lab["run_id"].tolist()))
    start = 0
    for i in range(1, n + 1):
        if i == n or keys[i] != keys[start]:
            spans[keys[start]] = (start, i)
            start = i
    topics = labels.topics
    for row in labels.answers.itertuples(index=False):
        a, b = spans.get((row.qid, row.run_id), (0, 0))
        nuggets = [{"text": text[k], "importance": imp[k], "assignment": sup[k]} for k in range(a, b)]
        rec: dict[str, Any] = {"query": topics.get(row.qid, ""), "qid": row.qid, "run_id": row.run_id,
                               "answer_text": row.answer_text or "", "nuggets": nuggets}
        if row.response_length is not None and row.response_length == row.response_length:
            rec["response_length"] = int(row.response_length)
        yield rec


def report_problems(path: str, problems: list[LabelProblem], show: int = 5) -> None:
    """Log one warning summarising unknown labels: how many, and the first few lines and values."""
    if not problems:
        return
    first = "; ".join(f"line {p.line} {p.field}={p.value!r}" for p in problems[:show])
    more = f" (+{len(problems) - show} more)" if len(problems) > show else ""
    log.warning("%s: %d unknown label value(s) kept as FAILED: %s%s", path, len(problems), first, more)


def _report_empty_topics(path: str, answers: list[tuple], rows: list[tuple], show: int = 5) -> None:
    """One warning naming answers that carry no nugget and topics with no vital nugget: both score 0 on V (and
    the former on A and W) under the default ``no_vital="zero"`` policy, which is rarely what a reader expects."""
    with_nuggets = {(r[0], r[1]) for r in rows}
    empty = [(a[0], a[1], a[4]) for a in answers if (a[0], a[1]) not in with_nuggets]
    has_vital = {r[0] for r in rows if r[4] == "vital"}
    no_vital = sorted({r[0] for r in rows} - has_vital)
    parts = []
    if empty:
        first = ", ".join(f"line {line} ({qid}, {run})" for qid, run, line in empty[:show])
        parts.append(f"{len(empty)} answer(s) have no nuggets: {first}" + (f" (+{len(empty) - show} more)" if len(empty) > show else ""))
    if no_vital:
        parts.append(f"{len(no_vital)} topic(s) have no vital nugget: {', '.join(no_vital[:show])}"
                     + (f" (+{len(no_vital) - show} more)" if len(no_vital) > show else ""))
    if parts:
        log.warning("%s: %s; their V scores are 0 under the default no-vital policy 'zero' ('exclude' skips them)",
                    path, "; ".join(parts))


def _id(value: Any) -> str:
    return str(value)


def _raw(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else repr(value)


def _out(label: Any, raw: Any) -> str:
    if label == "FAILED" and isinstance(raw, str):
        return raw
    return str(label)
