"""Reading transcripts (``cells/<cell>/transcripts.jsonl``, ``*.transcripts.jsonl`` of ``metaeval assign``).

Records are written by ``metaeval.judges.transcript.unit_record`` (one per judge unit, with its model calls).
``assignment_replies(records)`` indexes the assignment units by ``(qid, run_id, nugget text)`` so that a report
can show, for a pair where judge and reference disagree, what the judge actually said::

    {("q01", "demo-a", "Cats purr with the larynx"): {"label": "partial_support", "raw_reply": "...",
                                                     "reasks": 0, "status": "ok", "reason": None, "position": 3,
                                                     "prompt": "assign@v1", "model": "gpt-4o"}}

``raw_reply`` is the reply of the unit's last call (after re-asks), or ``None`` for a judge that makes no model
call (lexical, replay).  ``position`` is the nugget's 1-based place in that call's list, as the prompt numbered it.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from metaeval.io.jsonl import iter_jsonl


def read_transcripts(path: str | os.PathLike) -> list[dict[str, Any]]:
    """All records of a transcript file (``FormatError`` naming file and line for a malformed one)."""
    return [obj for _, obj in iter_jsonl(str(path))]


def assignment_replies(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """``(qid, run_id, nugget text) -> what the judge said`` for every assignment unit (see the module docstring).
    A nugget that occurs twice in one answer's units keeps its first occurrence."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for rec in records:
        if rec.get("stage") != "assign":
            continue
        calls = rec.get("calls") or []
        last = calls[-1] if calls else {}
        prompt = f"{last.get('prompt_id')}@{last.get('prompt_version')}" if last.get("prompt_id") else None
        labels = rec.get("labels") or []
        for i, text in enumerate(rec.get("items") or []):
            key = (str(rec.get("qid")), str(rec.get("run_id")), str(text))
            if key in out:
                continue
            out[key] = {"label": labels[i] if i < len(labels) else None, "raw_reply": last.get("raw_reply"),
                        "reasks": rec.get("reasks", 0), "status": rec.get("status"), "reason": rec.get("reason"),
                        "position": i + 1, "prompt": prompt, "model": last.get("model")}
    return out
