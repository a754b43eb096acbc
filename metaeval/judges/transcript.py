"""Transcripts: one JSON record per judge unit (one batch of the paper's method), with every model call it made.

A record reads::

    {"stage": "assign", "judge": "gpt-4o", "qid": "q01", "run_id": "demo-a",
     "items": ["nugget 1", ...],                 # what was labelled (nuggets, or document ids for relevance)
     "labels": ["support", ...],                  # parsed labels after re-asks (FAILED kept as FAILED)
     "status": "ok" | "partial" | "failed", "reason": null | "...", "reasks": 0,
     "calls": [{"prompt_id": "assign", "prompt_version": "v1", "prompt_sha": "...", "reask": 0,
                "messages": [{"role": "system", "content": "..."}, ...], "raw_reply": "...",
                "latency_s": 0.8, "input_tokens": 412, "output_tokens": 31, "cost_usd": 0.0012,
                "cache_hit": false, "retries": 0, "finish_reason": "stop", "error": null,
                "model": "gpt-4o", "deployment": "gpt-4o"}]}

An offline judge (lexical, replay, simulated) makes no model call: ``calls`` is empty and ``raw`` stays null;
the parsed labels are still there.  Records hold prompts and replies only: the client never puts a key or a
header in a ``CallTrace``, and nothing else is read here.
"""

from __future__ import annotations

from typing import Any, Sequence

CALL_FIELDS: tuple[str, ...] = (
    "prompt_id", "prompt_version", "prompt_sha", "reask", "latency_s", "input_tokens", "output_tokens", "cost_usd",
    "cache_hit", "retries", "finish_reason", "error", "model", "deployment", "sample_index",
)


def call_record(trace: Any) -> dict[str, Any]:
    """One model call of a ``CallTrace`` as a transcript entry (``raw_reply`` = the reply text)."""
    rec = {k: getattr(trace, k, None) for k in CALL_FIELDS}
    rec["messages"] = [dict(m) for m in (getattr(trace, "messages", None) or ())]
    rec["raw_reply"] = getattr(trace, "raw_output", None)
    return rec


def unit_record(result: Any, *, stage: str, qid: str, run_id: str | None = None, items: Sequence[str] = (),
                labels: Sequence[Any] | None = None) -> dict[str, Any]:
    """The transcript record of one judge result (``NuggetsResult``, ``ImportanceResult``, ``AssignResult``,
    ``RelevanceResult``).  ``labels`` default to the result's own (``labels``, ``nuggets`` or ``grades``)."""
    if labels is None:
        labels = (getattr(result, "labels", None) or getattr(result, "nuggets", None)
                  or getattr(result, "grades", None) or ())
    return {
        "stage": stage, "judge": getattr(result, "judge", ""), "qid": qid, "run_id": run_id,
        "items": list(items), "labels": [getattr(x, "value", x) for x in labels],
        "status": getattr(result, "status", None), "reason": getattr(result, "reason", None),
        "reasks": getattr(result, "reasks", 0), "raw": getattr(result, "raw", None),
        "calls": [call_record(t) for t in getattr(result, "traces", ()) or ()],
    }
