"""Document collections as JSONL: ``{docid, text, title?, qid?}`` per line.

MS MARCO V2.1 segment files use ``segment`` for the text and ``docid`` for the id; both spellings are read.
"""

from __future__ import annotations

import os

from metaeval.errors import FormatError
from metaeval.io.jsonl import iter_jsonl, optional, require
from metaeval.types import Document


def read_documents(path: str | os.PathLike) -> tuple[dict[str, Document], dict[str, list[str]]]:
    """Return ``(docid -> Document, qid -> [docid, ...])``; the second map holds documents that name a ``qid``."""
    path = str(path)
    docs: dict[str, Document] = {}
    by_topic: dict[str, list[str]] = {}
    for lineno, obj in iter_jsonl(path):
        docid = str(require(obj, "docid", (str, int), path, lineno))
        key = "text" if "text" in obj else "segment"
        text = require(obj, key, str, path, lineno)
        title = optional(obj, "title", str, path, lineno, default="")
        if docid in docs:
            raise FormatError(path, lineno, "docid", f"duplicate document {docid}")
        docs[docid] = Document(docid=docid, text=text, title=title)
        if obj.get("qid") is not None:
            by_topic.setdefault(str(obj["qid"]), []).append(docid)
    return docs, by_topic
