"""Build results-schema records (``metaeval.study.records``) for tests from short dicts, through the schema's own
decoder: a field the schema does not know, or a value of the wrong type, fails the test like it fails a file.

Only what a test leaves out is filled in: a metric's missing tau levels or intervals (undefined: null), an
analysis' ``name`` (the cell's), and a summary's required top-level fields.
"""

from __future__ import annotations

import copy
from typing import Any

from metaeval.study.records import (LEVELS, CellSummary, Provenance, StudyCell, StudyDoc, Summary, decode,
                                    encode)

PROVENANCE = Provenance(metaeval="0.0.test", python="3.11", platform="test", recorded_at="2026-01-01T00:00:00Z",
                        packages={"metaeval": "0.0.test"}, git=None)


def cell_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its analysis' missing levels and name filled in (a new dict)."""
    doc = copy.deepcopy(doc)
    a = doc.get("analysis")
    if isinstance(a, dict):
        a.setdefault("name", doc.get("cell"))
        a.setdefault("metrics", {})
        for m in a["metrics"].values():
            for lv in LEVELS:
                m.setdefault(lv, {"tau": None, "ci": [None, None]})
                m[lv].setdefault("ci", [None, None])
    return doc


def cell(doc: dict[str, Any]) -> CellSummary:
    """A :class:`CellSummary` from a short dict (see the module docstring)."""
    return decode(CellSummary, cell_doc(doc), "<test>", "cell")


def cells(*docs: dict[str, Any]) -> list[CellSummary]:
    return [cell(d) for d in docs]


def summary_doc(cell_docs: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    """A ``summary.json`` document as the study writes it (format, schema_version, provenance) around ``cell_docs``."""
    doc = {"format": Summary.FORMAT, "schema_version": Summary.SCHEMA_VERSION, "evaluation_key": "k",
           "evaluation_reused": False, "experiment": "test", "primary_metric": "v_strict",
           "provenance": encode(PROVENANCE), **top}
    doc["cells"] = [cell_doc(c) for c in cell_docs]
    return doc


def summary(cell_docs: list[dict[str, Any]], **top: Any) -> Summary:
    return Summary.from_json(summary_doc(cell_docs, **top), "<test>")


def study_cell(doc: dict[str, Any]) -> StudyCell:
    """A :class:`StudyCell` from a short dict (an empty leaderboard and shared nuggets unless given)."""
    full = {"shares_reference_nuggets": True, "leaderboard": {"level": 0.95, "n_boot": 0, "seed": 0, "metrics": {}},
            **doc}
    return decode(StudyCell, full, "<test>", "cell")


def study_doc(cells_: dict[str, dict[str, Any]], **top: Any) -> dict[str, Any]:
    """A ``study/study.json`` document as the study writes it."""
    doc = {"format": StudyDoc.FORMAT, "schema_version": StudyDoc.SCHEMA_VERSION, "metrics": ["v_strict"],
           "primary_metric": "v_strict", "variant": "b", "bootstrap": 0, "seed": 0, "provenance": encode(PROVENANCE),
           **top}
    doc["cells"] = {cid: encode(study_cell(c)) for cid, c in cells_.items()}
    return doc


# ------------------------------------------------------------------ a cell's calibration block, from a short dict
_MEAN = {"mean": None, "se": None}


def _fill(defaults: dict[str, Any], given: dict[str, Any] | None) -> dict[str, Any]:
    """``given`` over ``defaults``, in the defaults' key order (the writer's); a key ``given`` adds that the schema
    does not know is kept, so that the decoder refuses it as it refuses a file's."""
    given = dict(given or {})
    return {**{k: given.get(k, v) for k, v in defaults.items()}, **{k: v for k, v in given.items() if k not in defaults}}


def held_out_doc(doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """A candidate's ``held_out`` block (figures a test leaves out are undefined)."""
    doc = dict(doc or {})
    doc["tau"] = _fill({"run": None, "topic_avg": None, "pooled": None}, doc.get("tau"))
    return _fill({"mae": _MEAN, "bias": None, "rmse": None, "diff_vs_raw": _MEAN, "tau": None, "tau_diff_vs_raw": _MEAN,
                  "wins": 0, "splits": 0, "fit_topics": None, "held_out_topics": None, "n_estimates": 0,
                  "point": "point estimate", "intervals": "", "coverage": None, "coverage_worst_run": None,
                  "mean_ci_width": None, "zero_width": None, "qualifies": False}, doc)


def calibration_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A cell's calibration block (``CellCalibration``'s JSON, as ``calibrate_study`` writes it) from a short dict:
    what a test leaves out of the settings, pairing, candidates, selection and leaderboard is filled in (a new dict)."""
    doc = copy.deepcopy(doc)
    metric = doc.get("metric", "v_strict")
    sel = _fill({"method": "raw", "verdict": None, "why": "", "intervals_by": "ppi_pp", "intervals": "",
                 "intervals_why": "", "rule": "", "n_topics": 0, "n_applied": 0, "splits": 0, "fit_topics": None,
                 "held_out_topics": None, "beats_raw": False, "wins": {}, "nested_mae": _MEAN,
                 "nested_diff_vs_raw": _MEAN, "nested_tau_diff_vs_raw": _MEAN, "nested_choices": {},
                 "nested_splits": 0, "raw_mae": _MEAN, "held_out_mae": _MEAN, "note": ""}, doc.get("selection"))
    cands = {}
    for name, c in (doc.get("candidates") or {}).items():
        c = _fill({"level": "score", "status": "ok", "reason": None}, c)
        if "held_out" in c:
            c["held_out"] = held_out_doc(c["held_out"])
        cands[name] = c
    lb = dict(doc.get("leaderboard") or {})
    lb["rows"] = [_fill({"run_id": "", "human_estimate": None, "human_estimate_ci": None, "human_estimate_rank": None,
                         "human_labelled": None, "human_labelled_rank": None, "judge_score": None,
                         "judge_score_ci": None, "judge_score_rank": None, "n_human_labelled": 0, "n_judge_only": 0}, r)
                  for r in lb.get("rows") or []]
    lb = _fill({"metric": metric, "estimand": "", "estimated_by": sel["method"], "intervals_by": "ppi_pp",
                "chosen": sel["method"], "intervals_why": "", "human_labelled_topics": 0, "judge_only_topics": 0,
                "columns": {}, "rows": []}, lb)
    out = _fill({"schema": "metaeval.calibration/4", "metric": metric, "reference": "human", "judge": "judge", "seed": 0,
                 "analysis_seed": 0,
                 "settings": _fill({"folds": 5, "repeats": 20, "nested_splits": 10, "min_topics": 10, "methods": [],
                                    "metrics": [metric], "level": 0.95, "min_coverage": 0.95, "n_boot": 1000,
                                    "n_boot_t": 999, "folds_used": None, "splits": 20, "fit_topics": None,
                                    "held_out_topics": None}, doc.get("settings")),
                 "pairing": _fill({"key": "(qid, run_id, normalised nugget text)", "matched": 0, "judge_pairs": 0,
                                   "reference_pairs": 0, "duplicate_texts": 0, "coverage": 1.0, "min_coverage": 0.95,
                                   "label_level": "ok", "refusal": None}, doc.get("pairing")),
                 "topics": _fill({"human_labelled": [], "judge_only": []}, doc.get("topics")),
                 "method_names": {}, "candidates": cands, "selection": sel, "leaderboard": lb, "recommendation": "",
                 "by_metric": {}}, {k: v for k, v in doc.items()
                                    if k not in ("settings", "pairing", "topics", "candidates", "selection", "leaderboard")})
    return out


def calibration(doc: dict[str, Any]) -> "CellCalibration":
    """A :class:`CellCalibration` from a short dict (see :func:`calibration_doc`)."""
    from metaeval.study.records import CellCalibration

    return decode(CellCalibration, calibration_doc(doc), "<test>", "calibration")
