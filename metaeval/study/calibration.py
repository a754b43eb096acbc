"""THE calibrate workflow (sweep cells and ``metaeval calibrate``): one function, one ``calibration.json`` schema.

First version (moved from pipeline/calibrate_cells.py): leave-topics-out validation of the label-level methods;
being replaced by the honest workflow of issue 12 (text pairing, score-level methods, raw as a candidate,
nested selection, cross-fitted leaderboards, bounded intervals).  The returned keys are the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from metaeval.types import LabelSet

SCHEMA = "metaeval.calibration/2"


def calibrate_study(reference: "LabelSet", judge: "LabelSet", settings: dict[str, Any] | None, *, seed: int) -> dict[str, Any]:
    """Calibrate ``judge`` against ``reference``; returns the JSON-ready calibration.json dict (keys: schema,
    pairing, candidates, selection, leaderboard, recommendation, by_metric)."""
    from metaeval.calibration.validate import DEFAULT_METHODS, cross_validate
    from metaeval.io.jsonl import to_jsonable

    settings = dict(settings or {})
    methods = settings.get("methods") or list(DEFAULT_METHODS)
    folds = min(int(settings.get("folds", 5)), len(set(reference.labels["qid"])))
    cv = cross_validate(reference, judge, methods=methods, folds=folds, seed=seed)
    metric = settings.get("metric", "v_strict")
    cands = {"none": {"level": "score", "status": "ok"}}
    for m, per in cv["methods"].items():
        f = per.get(metric, {})
        cands[m] = {"level": "label", "status": "ok", "outer": {"mae": f.get("mae_after"), "coverage": f.get("coverage"),
                                                                  "mean_ci_width": f.get("mean_ci_width")}}
    return to_jsonable({"schema": SCHEMA, "metric": metric, "pairing": None, "candidates": cands, "selection": None,
                        "leaderboard": None, "recommendation": "first version: selection not yet implemented",
                        "validation": cv})
