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
