"""Classic TREC files: topics (``qid<TAB>text``) and qrels (``qid iter docid grade``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from metaeval.errors import FormatError
from metaeval.io.fields import first_time, parse_number
from metaeval.io.jsonl import iter_lines, open_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def read_topics(path: str | os.PathLike) -> dict[str, str]:
    """Read a TSV of ``qid<TAB>query``; duplicate qids and lines without a tab are errors."""
    path = str(path)
    topics: dict[str, str] = {}
    lines: dict[str, int] = {}
    for lineno, line in _lines(path):
        parts = line.split("\t", 1)
        if len(parts) != 2 or not parts[0].strip():
            raise FormatError(path, lineno, "qid", "expected 'qid<TAB>text'")
        qid, text = parts[0].strip(), parts[1].strip()
        if qid in topics:
            raise FormatError(path, lineno, "qid", f"duplicate topic {qid}, first on line {lines[qid]}")
        topics[qid], lines[qid] = text, lineno
    if not topics:
        raise FormatError(path, 0, "", "empty file (no topics)")
    return topics


def write_topics(topics: dict[str, str], path: str | os.PathLike) -> None:
    with open_text(path, "wt") as fh:
        for qid, text in topics.items():
            fh.write(f"{qid}\t{' '.join(text.split())}\n")


def read_qrels(path: str | os.PathLike) -> "pd.DataFrame":
    """Read TREC qrels (whitespace-separated ``qid iter docid grade``) into ``qid, docid, grade``."""
    import pandas as pd

    path = str(path)
    rows = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in _lines(path):
        parts = line.split()
        if len(parts) != 4:
            raise FormatError(path, lineno, "", f"expected 4 fields 'qid iter docid grade', got {len(parts)}")
        qid, _, docid, grade = parts
        g = parse_number(grade, int, path, lineno, "grade")
        first_time(seen, (qid, docid), path, lineno, "docid", f"judgment for ({qid}, {docid})")
        rows.append((qid, docid, g))
    if not rows:
        raise FormatError(path, 0, "", "empty file (no judgments)")
    return pd.DataFrame.from_records(rows, columns=["qid", "docid", "grade"])


def write_qrels(qrels: "pd.DataFrame", path: str | os.PathLike) -> None:
    with open_text(path, "wt") as fh:
        for r in qrels.itertuples(index=False):
            fh.write(f"{r.qid} 0 {r.docid} {int(r.grade)}\n")


def _lines(path: str):
    """Non-blank lines with their numbers (non-UTF-8 bytes and a missing file raise ``FormatError``)."""
    for lineno, line in iter_lines(path):
        if line.strip():
            yield lineno, line
