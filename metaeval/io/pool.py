"""Candidate pools in castorini/nuggetizer's (Ragnarök's) request format, the input of nugget creation::

    {"query": {"qid": str, "text": str},
     "candidates": [{"docid": str, "doc": {"segment": str, "title"?: str}, "judgment"?: int, ...}, ...]}

As nuggetizer's ``create_nuggets.py`` does, a candidate with a ``judgment`` of 0 or less is left out (no judgment:
kept).  Structural problems raise ``FormatError`` naming file, line and field.
"""

from __future__ import annotations

import os

from metaeval.errors import FormatError
from metaeval.io.jsonl import iter_jsonl, optional, require
from metaeval.types import Document, Topic


def read_pool(path: str | os.PathLike) -> list[tuple[Topic, list[Document]]]:
    """One ``(Topic, documents)`` per line, in file order; duplicate qids are an error."""
    path = str(path)
    out: list[tuple[Topic, list[Document]]] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        query = require(obj, "query", dict, path, lineno)
        qid = str(require(query, "qid", (str, int), path, lineno, "query."))
        text = require(query, "text", str, path, lineno, "query.")
        if qid in seen:
            raise FormatError(path, lineno, "query.qid", f"duplicate topic {qid}, first on line {seen[qid]}")
        seen[qid] = lineno
        docs = []
        for i, cand in enumerate(require(obj, "candidates", list, path, lineno)):
            prefix = f"candidates[{i}]."
            if not isinstance(cand, dict):
                raise FormatError(path, lineno, f"candidates[{i}]", f"expected an object, got {type(cand).__name__}")
            judgment = cand.get("judgment")
            if judgment is not None and not isinstance(judgment, (int, float)):
                raise FormatError(path, lineno, prefix + "judgment", f"expected a number, got {judgment!r}")
            if judgment is not None and judgment <= 0:
                continue
            docid = str(require(cand, "docid", (str, int), path, lineno, prefix))
            doc = require(cand, "doc", dict, path, lineno, prefix)
            segment = require(doc, "segment", str, path, lineno, prefix + "doc.")
            title = optional(doc, "title", str, path, lineno, default="", prefix=prefix + "doc.")
            docs.append(Document(docid=docid, text=segment, title=title))
        out.append((Topic(qid, text), docs))
    if not out:
        raise FormatError(path, 0, "", "empty file (no topics)")
    return out
