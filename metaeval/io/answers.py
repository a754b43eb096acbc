"""TREC RAG 2024 answer runs (the track's submission format), one line per (run, topic)::

    {"run_id": str, "topic_id": str, "topic": str, "references": [docid, ...], "response_length": int,
     "answer": [{"text": str, "citations": [int, ...]}, ...]}

``citations`` index into ``references``.  An ``Answer``'s text is its sentences joined by single spaces (unstripped), as in the
NIST nugget file.
"""

from __future__ import annotations

import os
from typing import Iterable

from metaeval.errors import FormatError
from metaeval.io.jsonl import iter_jsonl, optional, require, write_jsonl
from metaeval.types import Answer


def read_answers(path: str | os.PathLike) -> list[Answer]:
    """Read a run file; raises ``FormatError`` (file, line, field) for structural problems, duplicate
    (topic_id, run_id), or a citation that points past ``references``."""
    path = str(path)
    out: list[Answer] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, obj in iter_jsonl(path):
        run_id = require(obj, "run_id", str, path, lineno)
        qid = str(require(obj, "topic_id", (str, int), path, lineno))
        refs = optional(obj, "references", list, path, lineno, default=[])
        parts = require(obj, "answer", list, path, lineno)
        rlen = optional(obj, "response_length", int, path, lineno)
        if (qid, run_id) in seen:
            raise FormatError(path, lineno, "topic_id/run_id", f"duplicate ({qid}, {run_id}), first on line {seen[(qid, run_id)]}")
        seen[(qid, run_id)] = lineno
        sentences: list[str] = []
        citations: list[tuple[int, ...]] = []
        for i, part in enumerate(parts):
            if not isinstance(part, dict):
                raise FormatError(path, lineno, f"answer[{i}]", f"expected an object, got {type(part).__name__}")
            sentences.append(require(part, "text", str, path, lineno, f"answer[{i}]."))
            cits = optional(part, "citations", list, path, lineno, default=[], prefix=f"answer[{i}].")
            for c in cits:
                if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < len(refs):
                    raise FormatError(path, lineno, f"answer[{i}].citations", f"citation {c!r} is not an index into references (0..{len(refs) - 1})")
            citations.append(tuple(cits))
        out.append(
            Answer(
                run_id=run_id, qid=qid, text=" ".join(sentences), sentences=tuple(sentences),
                citations=tuple(citations), response_length=rlen, references=tuple(str(r) for r in refs),
                topic=str(obj.get("topic") or ""),
            )
        )
    return out


def write_answers(answers: Iterable[Answer], path: str | os.PathLike) -> int:
    """Write answers in the track format (an answer without sentences is written as one sentence)."""

    def records():
        for a in answers:
            sents = a.sentences or (a.text,)
            cits = a.citations or tuple(() for _ in sents)
            yield {
                "run_id": a.run_id, "topic_id": a.qid, "topic": a.topic, "references": list(a.references),
                "response_length": a.response_length if a.response_length is not None else len(a.text.split()),
                "answer": [{"text": s, "citations": list(c)} for s, c in zip(sents, cits)],
            }

    return write_jsonl(path, records())
