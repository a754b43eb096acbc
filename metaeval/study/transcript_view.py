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
    df = reference.labels  # each column as one list: iterating a pandas column yields its values one call at a time
    cols = (df[c].tolist() for c in ("qid", "run_id", "nugget", "support", "importance"))
    for qid, run, text, sup, imp in zip(*cols):
        out.setdefault((str(qid), str(run), str(text)), (str(sup), str(imp)))
    return out


def answer_index(*label_sets: "LabelSet | None") -> dict[tuple[str, str], str]:
    """``(qid, run_id) -> answer text`` from the label sets that carry it (the first that has an answer wins)."""
    out: dict[tuple[str, str], str] = {}
    for ls in label_sets:
        ans = getattr(ls, "answers", None)
        if ans is None or "answer_text" not in getattr(ans, "columns", ()):
            continue
        for qid, run, text in zip(ans["qid"].tolist(), ans["run_id"].tolist(), ans["answer_text"].tolist()):
            if isinstance(text, str) and text:
                out.setdefault((str(qid), str(run)), text)
    return out


def transcript_view(records: Iterable[dict[str, Any]], reference: "LabelSet | None", cell: str,
                    queries: dict[str, str] | None = None,
                    answers: dict[tuple[str, str], str] | None = None) -> dict[str, Any]:
    """The viewer's document: one unit per transcript record, in the sweep's order.

    ``units[i]``: ``stage``, ``qid``, ``query``, ``run_id``, ``answer`` (an assignment unit's answer text from
    ``answers``, so that a label can be judged in the viewer even when an offline judge sent no prompt), ``status``,
    ``reason``, ``reasks``, ``rows`` (per item: ``item``, ``judge`` label, ``human`` label and ``importance`` or
    ``None``), ``outputs`` (what a unit made that is not one label per item: the nuggets a creation unit wrote),
    ``disagree`` (some item's judge label differs from its human label), ``calls`` (:data:`CALL_FIELDS` of each
    model call, re-asks included), ``batch`` / ``batches`` (the judge labels an answer's nuggets in batches of at
    most ``batch_size`` items, one unit per batch: this unit is batch ``batch`` of ``batches`` of its topic and run).
    """
    human = human_index(reference)
    queries = queries or {}
    answers = answers or {}
    records = list(records)
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
            "answer": answers.get((qid, str(run))) if stage == "assign" and run is not None else None,
            "status": rec.get("status"), "reason": rec.get("reason"), "reasks": rec.get("reasks", 0),
            "rows": rows, "outputs": outputs, "disagree": any(r["human"] is not None and r["judge"] != r["human"] for r in rows),
            "calls": [{k: c.get(k) for k in CALL_FIELDS} for c in rec.get("calls") or []],
        })
    count: dict[tuple[Any, str, Any], int] = {}
    for u in units:  # batch k of n of the same (stage, topic, run)
        key = (u["stage"], u["qid"], u["run_id"])
        count[key] = count.get(key, 0) + 1
        u["batch"] = count[key]
    for u in units:
        u["batches"] = count[(u["stage"], u["qid"], u["run_id"])]
    sizes = [len(u["rows"]) for u in units if u["stage"] == "assign"]
    return {"format": FORMAT, "version": 1, "cell": cell, "has_reference": bool(human),
            "batch_size": max(sizes) if sizes else None,
            "n_units": len(units), "n_disagree": sum(u["disagree"] for u in units), "units": units}


def view_json(view: dict[str, Any]) -> str:
    """``view`` as the JSON text of ``transcript_view.json``: :meth:`metaeval.layout.ResultsLayout.json_text` on one
    line with every ``<`` written ``\\u003c``, so that the report's viewer page embeds the file's text as it is
    inside its ``<script type="application/json">`` (:func:`metaeval.report.viewer.viewer_html`) without a second
    encoding of a document of megabytes."""
    from metaeval.layout import ResultsLayout

    return ResultsLayout.json_text(view, indent=None, html_safe=True)
