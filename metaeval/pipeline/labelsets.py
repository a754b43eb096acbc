"""A cell's label set from its stored job outputs: the dataset's answers with the nugget lists the cell used and
the labels its judge gave (FAILED where a job failed or a label is missing, the reason kept as the raw value)."""

from __future__ import annotations

from typing import Any

from metaeval.errors import ConfigError
from metaeval.pipeline.grid import Cell
from metaeval.types import FAILED, IMPORTANCE_ORDER, SUPPORT_ORDER



def human_nuggets(dataset: Any, qid: str, with_importance: bool = False) -> list:
    """The dataset's human nuggets of topic ``qid`` in nugget-id order (texts, or (text, importance) pairs)."""
    nug = dataset.nuggets
    if nug is None:
        raise ConfigError(f"dataset {dataset.name!r} has no human nuggets")
    g = nug[nug["qid"] == qid].sort_values("nugget_id")
    if with_importance:
        return [(t, str(i)) for t, i in zip(g["nugget"], g["importance"])]
    return list(g["nugget"])


def cell_fingerprints(c: Cell) -> dict[str, str]:
    """What a calibration model fitted on the cell's labels depends on (``metaeval.study.calibration_workflow.model``):
    ``judge_spec``, the hash of the judge's identity (kind, deployment, options: ``Cell.judge_id``) and
    ``prompt_version``, the hash of its prompt templates (``Cell.prompt_id``; ``none`` for an unprompted judge).
    A cell whose labels are the dataset's own human labels records ``human`` for both."""
    if c.strategy.assignment == "human":
        return {"judge_spec": "human", "prompt_version": "human"}
    return {"judge_spec": c.judge_id, "prompt_version": c.prompt_id}


def cell_label_set(dataset: Any, c: Cell, nugget_lists: dict, index: dict, outs: dict, sample: int = 0) -> Any:
    """The cell's labels as a LabelSet (same answers as the dataset; FAILED where a job failed); ``sample`` k > 0:
    the judge's k-th draw (``sweep.samples``), named ``<cell>~s<k>``."""
    from metaeval.types import build_label_set

    if c.strategy.assignment == "human":
        ls = dataset.labels
        return ls.with_labels(ls.labels["support"], name=c.id, provenance={"cell": c.id, **cell_fingerprints(c)})
    rows, answers = [], []
    for a in dataset.answers:
        nuggets = nugget_lists.get((c.id, a.qid), [])
        rec = outs.get(index.get((c.id, a.qid, a.run_id) + ((sample,) if sample else ()), ""))
        out = rec["output"] if rec else {}
        labels = list(out.get("labels", []))
        reasons = [f.get("reason") for f in out.get("failures", []) if f.get("reason")]
        raw = None if labels else (out.get("error") or "not run")
        why = raw or (reasons[0] if reasons else None)  # kept as the raw value of FAILED labels
        labels = labels + ["FAILED"] * (len(nuggets) - len(labels))
        for i, ((text, imp), lab) in enumerate(zip(nuggets, labels)):
            imp_v = imp if imp in IMPORTANCE_ORDER else FAILED  # anything else is FAILED, its raw value kept
            sup_v = lab if lab in SUPPORT_ORDER else FAILED
            rows.append((a.qid, a.run_id, i, text, imp_v, sup_v, imp, lab if sup_v != "FAILED" else (why or lab), -1))
        answers.append((a.qid, a.run_id, a.text, a.response_length, -1))
    name = f"{c.id}~s{sample}" if sample else c.id
    prov = {"cell": c.describe(), **cell_fingerprints(c), **({"sample": sample} if sample else {})}
    return build_label_set(name, rows, answers, topics=dict(dataset.topics), provenance=prov)
