"""What the transcript viewer of a cell shows (``cells/<cell>/transcript_view.json``), joined once by the study.

The sweep writes one transcript record per judge unit (``cells/<cell>/transcripts.jsonl``: the items, the parsed
labels, every model call with its rendered messages and raw reply).  The report renders a viewer page per cell
(:mod:`metaeval.report.viewer`) but never loads the dataset, so the study joins here what the viewer needs: for every
assignment item the human label and importance of the same (topic, run, nugget text) in the reference, and whether
the judge's label differs from it (``disagree``).  Items are matched by their exact text, as
:func:`metaeval.io.transcripts.assignment_replies` matches them; a judge that made its own nuggets (``auto_auto``)
has no human label for them (``human`` is ``None``: nothing is paired by position).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

FORMAT = "metaeval-transcript-view"
#: call fields the viewer shows (the messages and the raw reply, and what the call cost)
CALL_FIELDS = ("prompt_id", "prompt_version", "reask", "sample_index", "model", "latency_s", "input_tokens",
               "output_tokens", "cost_usd", "cache_hit", "retries", "finish_reason", "error", "messages", "raw_reply")


def human_index(reference: "LabelSet | None") -> dict[tuple[str, str, str], tuple[str, str]]:
    """``(qid, run_id, nugget text) -> (support label, importance)`` of the reference (first occurrence kept)."""
    if reference is None:
        return {}
    out: dict[tuple[str, str, str], tuple[str, str]] = {}
    df = reference.labels
    for qid, run, text, sup, imp in zip(df["qid"], df["run_id"], df["nugget"], df["support"], df["importance"]):
        out.setdefault((str(qid), str(run), str(text)), (str(sup), str(imp)))
    return out


def transcript_view(records: Iterable[dict[str, Any]], reference: "LabelSet | None", cell: str,
                    queries: dict[str, str] | None = None) -> dict[str, Any]:
    """The viewer's document: one unit per transcript record, in the sweep's order.

    ``units[i]``: ``stage``, ``qid``, ``query``, ``run_id``, ``status``, ``reason``, ``reasks``, ``rows`` (per item:
    ``item``, ``judge`` label, ``human`` label and ``importance`` or ``None``), ``outputs`` (what a unit made that
    is not one label per item: the nuggets a creation unit wrote), ``disagree`` (some item's judge label
    differs from its human label), ``calls`` (:data:`CALL_FIELDS` of each model call, re-asks included).
    """
    human = human_index(reference)
    queries = queries or {}
    units = []
    for rec in records:
        stage, qid, run = rec.get("stage"), str(rec.get("qid")), rec.get("run_id")
        items, labels = [str(x) for x in rec.get("items") or []], [str(x) for x in rec.get("labels") or []]
        rows, outputs = [], []
        if len(items) == len(labels):  # assignment, importance: one label per item
            for text, label in zip(items, labels):
                h = human.get((qid, str(run), text)) if stage == "assign" else None
                rows.append({"item": text, "judge": label, "human": h[0] if h else None,
                             "importance": h[1] if h else None})
        else:  # creation (documents in, nuggets out), or a unit that failed before labelling: nothing is paired
            rows = [{"item": text, "judge": None, "human": None, "importance": None} for text in items]
            outputs = labels
        units.append({
            "id": len(units), "stage": stage, "qid": qid, "query": queries.get(qid, ""), "run_id": run,
            "status": rec.get("status"), "reason": rec.get("reason"), "reasks": rec.get("reasks", 0),
            "rows": rows, "outputs": outputs, "disagree": any(r["human"] is not None and r["judge"] != r["human"] for r in rows),
            "calls": [{k: c.get(k) for k in CALL_FIELDS} for c in rec.get("calls") or []],
        })
    return {"format": FORMAT, "version": 1, "cell": cell, "has_reference": bool(human),
            "n_units": len(units), "n_disagree": sum(u["disagree"] for u in units), "units": units}
